//go:build amd64 && !purego

package changepoint

import "golang.org/x/sys/cpu"

// useAVX selects the AVX kernels of kernels_amd64.s. They compute what
// the pure-Go loops compute, with the same floating-point operations in
// the same order (TestKernelsMatchGo), only four rows or four τ per
// instruction.
var useAVX = cpu.X86.HasAVX

// fourRowsAVX is fourRowsGo for k's rows and columns.
//
//go:noescape
func fourRowsAVX(k *rowKernel)

// scan2AVX returns the first i < n (a multiple of 4) with v[i] + a[i] <
// thrA or v[i] + b[i] < thrB, or n.
//
//go:noescape
func scan2AVX(v, a, b *float64, n int, thrA, thrB float64) int
