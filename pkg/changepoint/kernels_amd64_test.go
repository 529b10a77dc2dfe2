//go:build amd64 && !purego

package changepoint

import (
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
		n := 2 + rng.IntN(260)
		xs := synth(rng.Uint64(), 0.02, segment{n, 1000})
		if trial%3 == 0 {
			for i := range xs {
				xs[i] = math.Round(xs[i] / 20)
			}
		}
		wl := 2 + rng.IntN(min(n, 120)-1)
		avx.forget()
		ref.forget()
		for start := 0; start < n; start += 1 + rng.IntN(wl) {
			end := min(start+wl, n)
			useAVX = true
			avx.slide(xs, start, end, 1)
			useAVX = false
			ref.slide(xs, start, end, 1)
			L, st := end-start, avx.stride
			for a := 0; a <= L; a++ {
				for b := 0; b <= L; b++ { // W above the diagonal, V below
					if got, want := avx.w[a*st+b], ref.w[a*st+b]; math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("trial %d, window [%d, %d): entry (%d, %d) = %v with AVX, %v in Go", trial, start, end, a, b, got, want)
					}
				}
				if math.Float64bits(avx.rEnd[a]) != math.Float64bits(ref.rEnd[a]) {
					t.Fatalf("trial %d, window [%d, %d): running sum of row %d differs", trial, start, end, a)
				}
			}
		}
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
