package store

import (
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Backoff is a bounded exponential backoff with jitter. Retry n (n ≥ 1, the
// wait before attempt n+1) waits
//
//	d(n) = min(Max, Initial × Multiplier^(n-1))
//
// shortened by a random fraction of up to Jitter: uniformly in
// [d(n)×(1−Jitter), d(n)]. Jitter spreads the retries of many cells (and
// many runs) after an outage, so they do not hit the store in step.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	// Jitter is in [0, 1]: 0 waits exactly d(n); 1 waits anywhere in
	// [0, d(n)] ("full jitter").
	Jitter float64
	// MaxAttempts bounds the requests made for one object, the first one
	// included; 1 disables retries.
	MaxAttempts int
}

// DefaultBackoff retries 5 times over about 15 s at most (0.5, 1, 2, 4, 8 s,
// each shortened by up to half): long enough to ride out a server restart,
// short enough that a controller's reconcile does not hang on a long outage
// (it keeps the results and tries again later).
func DefaultBackoff() Backoff {
	return Backoff{Initial: 500 * time.Millisecond, Max: 30 * time.Second, Multiplier: 2, Jitter: 0.5, MaxAttempts: 6}
}

// withDefaults fills zero fields from DefaultBackoff.
func (b Backoff) withDefaults() Backoff {
	d := DefaultBackoff()
	if b.Initial <= 0 {
		b.Initial = d.Initial
	}
	if b.Max <= 0 {
		b.Max = d.Max
	}
	if b.Multiplier < 1 {
		b.Multiplier = d.Multiplier
	}
	b.Jitter = math.Min(math.Max(b.Jitter, 0), 1)
	if b.MaxAttempts < 1 {
		b.MaxAttempts = d.MaxAttempts
	}
	return b
}

// steps is the deterministic part of the schedule, d(1), d(2), ... from
// successive Step calls. apimachinery's own jitter only lengthens a wait, so
// it is left at 0 and shorten applies ours: Schedule stays an upper bound of
// the time spent waiting.
func (b Backoff) steps() *wait.Backoff {
	return &wait.Backoff{
		// wait.Backoff returns its first Duration uncapped.
		Duration: min(b.Initial, b.Max),
		Factor:   b.Multiplier,
		Cap:      b.Max,
		// Steps counts the growing waits; Cap ends the growth, and our own
		// MaxAttempts ends the retries.
		Steps: math.MaxInt,
	}
}

// shorten applies the jitter to d for a random number r in [0, 1).
func (b Backoff) shorten(d time.Duration, r float64) time.Duration {
	return time.Duration(float64(d) * (1 - b.Jitter*r))
}

// Delay is the wait before retry n (n ≥ 1) for a random number r in [0, 1):
// r = 0 gives d(n), r → 1 gives d(n)×(1−Jitter).
func (b Backoff) Delay(n int, r float64) time.Duration {
	b = b.withDefaults()
	st := b.steps()
	d := st.Step()
	for i := 1; i < n; i++ {
		d = st.Step()
	}
	return b.shorten(d, r)
}

// Schedule lists the longest waits of every retry, in order: the upper
// bound of what one object's upload can spend waiting is their sum.
func (b Backoff) Schedule() []time.Duration {
	b = b.withDefaults()
	st := b.steps()
	out := make([]time.Duration, 0, b.MaxAttempts-1)
	for n := 1; n < b.MaxAttempts; n++ {
		out = append(out, st.Step())
	}
	return out
}
