package sysbench

import (
	"errors"
	"fmt"
	"math"
)

// SteadyState is the throughput of a step once its warm-up is dropped: the
// mean over the interval samples that start at or after WarmupSeconds.
//
// The means are weighted by interval length, so they equal sysbench's own
// arithmetic (events divided by time) over the kept window when the
// intervals are unequal, and the plain mean of the samples when they are
// all 1 s long.
type SteadyState struct {
	// WarmupSeconds is the warm-up that was asked for.
	WarmupSeconds float64
	// Samples is how many interval samples were averaged; Dropped how many
	// fell inside the warm-up.
	Samples, Dropped int
	// FromSecond and ToSecond bound the averaged window (elapsed seconds).
	FromSecond, ToSecond        float64
	QPS, TPS                    float64
	ReadQPS, WriteQPS, OtherQPS float64
	ErrorsPerSec                float64
	ReconnectsPerSec            float64
}

// Errors SteadyStateOf returns; test with errors.Is.
var (
	ErrNoIntervals   = errors.New("no interval samples (was --report-interval set?)")
	ErrWarmupTooLong = errors.New("the warm-up covers every interval sample")
)

// SteadyStateOf drops the samples of the first warmupSeconds and averages the
// rest. A sample covers (previous Second, Second]; it is kept only if it
// starts at or after the warm-up, so a warm-up of 10 s with 1 s reporting
// drops exactly the samples [ 1s ] to [ 10s ]. A warm-up of 0 keeps every
// sample.
//
// It returns ErrNoIntervals for an empty series, ErrWarmupTooLong when
// nothing is left, and an error for a negative or non-finite warm-up or a
// series whose times do not increase.
func SteadyStateOf(intervals []Interval, warmupSeconds float64) (SteadyState, error) {
	if warmupSeconds < 0 || math.IsNaN(warmupSeconds) || math.IsInf(warmupSeconds, 0) {
		return SteadyState{}, fmt.Errorf("warm-up %g s: must be a finite number >= 0", warmupSeconds)
	}
	if len(intervals) == 0 {
		return SteadyState{}, ErrNoIntervals
	}
	s := SteadyState{WarmupSeconds: warmupSeconds}
	var width, prev float64
	for i, iv := range intervals {
		start := prev
		if iv.Second <= prev {
			return SteadyState{}, fmt.Errorf("interval %d ends at %gs, not after %gs", i+1, iv.Second, prev)
		}
		prev = iv.Second
		if start < warmupSeconds {
			s.Dropped++
			continue
		}
		if s.Samples == 0 {
			s.FromSecond = start
		}
		s.Samples++
		s.ToSecond = iv.Second
		w := iv.Second - start
		width += w
		s.QPS += iv.QPS * w
		s.TPS += iv.TPS * w
		s.ReadQPS += iv.ReadQPS * w
		s.WriteQPS += iv.WriteQPS * w
		s.OtherQPS += iv.OtherQPS * w
		s.ErrorsPerSec += iv.ErrorsPerSec * w
		s.ReconnectsPerSec += iv.ReconnectsPerSec * w
	}
	if s.Samples == 0 {
		return SteadyState{}, fmt.Errorf("warm-up %g s, last sample at %g s: %w", warmupSeconds, prev, ErrWarmupTooLong)
	}
	for _, v := range []*float64{&s.QPS, &s.TPS, &s.ReadQPS, &s.WriteQPS, &s.OtherQPS, &s.ErrorsPerSec, &s.ReconnectsPerSec} {
		*v /= width
	}
	return s, nil
}

// SteadyState is SteadyStateOf(o.Intervals, warmupSeconds).
func (o *Output) SteadyState(warmupSeconds float64) (SteadyState, error) {
	return SteadyStateOf(o.Intervals, warmupSeconds)
}
