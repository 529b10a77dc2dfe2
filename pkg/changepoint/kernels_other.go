//go:build !amd64 || purego

package changepoint

// useAVX is false where there are no AVX kernels: the pure-Go loops run.
const useAVX = false

func fourRowsAVX(*rowKernel) { panic("changepoint: no AVX kernels") }

func scan2AVX(_, _, _ *float64, _ int, _, _ float64) int { panic("changepoint: no AVX kernels") }
