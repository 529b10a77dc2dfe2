//go:build amd64 && !purego

package changepoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestKernelsMatchGo: the AVX kernels give the pure-Go loops' results bit
// for bit: the tables of windows of every length (full builds and slides)
// and the first hit of the column scans, thresholds among the sums.
func TestKernelsMatchGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX")
	}
	var k rowKernel
	for _, f := range []struct {
		name string
		off  uintptr
		want uintptr
	}{
		{"x", unsafe.Offsetof(k.x), 0}, {"r", unsafe.Offsetof(k.r), 32}, {"z", unsafe.Offsetof(k.z), 64},
		{"n", unsafe.Offsetof(k.n), 72}, {"next", unsafe.Offsetof(k.next), 80}, {"w0", unsafe.Offsetof(k.w0), 88},
		{"w1", unsafe.Offsetof(k.w1), 96}, {"w2", unsafe.Offsetof(k.w2), 104}, {"w3", unsafe.Offsetof(k.w3), 112},
		{"inv", unsafe.Offsetof(k.inv), 120}, {"col", unsafe.Offsetof(k.col), 128}, {"colStride", unsafe.Offsetof(k.colStride), 136},
	} {
		if f.off != f.want {
			t.Fatalf("rowKernel.%s at offset %d, kernels_amd64.s reads it at %d", f.name, f.off, f.want)
		}
	}
	defer func() { useAVX = true }()
	rng := rand.New(rand.NewPCG(10, 10))
	var avx, ref window
	for trial := range 300 {
		xs, wl := windowedSeries(rng, trial)
		avx.forget()
		ref.forget()
		eachWindow(rng, trial, len(xs), wl, func(start, end int) {
			useAVX = true
			avx.slide(xs, start, end, 1)
			useAVX = false
			ref.slide(xs, start, end, 1)
			sameTables(t, fmt.Sprintf("trial %d, window [%d, %d), AVX", trial, start, end), &avx, &ref)
		})
	}
	for trial := range 20000 {
		n := rng.IntN(70)
		v, a, b := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			v[i], a[i], b[i] = rng.Float64(), rng.Float64(), rng.Float64()
			if trial%4 == 0 {
				v[i], a[i], b[i] = math.Round(4*v[i]), math.Round(4*a[i]), math.Round(4*b[i])
			}
		}
		thr := func(c []float64) float64 {
			if n == 0 || rng.IntN(5) == 0 {
				return rng.Float64()
			}
			i := rng.IntN(n)
			return v[i] + c[i] // a sum itself: ties
		}
		thrA, thrB := thr(a), thr(b)
		useAVX = true
		got := scan2(v, a, b, thrA, thrB)
		useAVX = false
		if want := scan2(v, a, b, thrA, thrB); got != want {
			t.Fatalf("scan2 of %d values, thresholds %v %v: %d with AVX, %d in Go", n, thrA, thrB, got, want)
		}
	}
}
