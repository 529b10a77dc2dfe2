package store

import (
	"context"
	"math"
	"time"
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

// Delay is the wait before retry n (n ≥ 1) for a random number r in [0, 1):
// r = 0 gives d(n), r → 1 gives d(n)×(1−Jitter).
func (b Backoff) Delay(n int, r float64) time.Duration {
	b = b.withDefaults()
	if n < 1 {
		n = 1
	}
	d := float64(b.Initial) * math.Pow(b.Multiplier, float64(n-1))
	if d > float64(b.Max) || math.IsInf(d, 0) || math.IsNaN(d) {
		d = float64(b.Max)
	}
	return time.Duration(d * (1 - b.Jitter*r))
}

// Schedule lists the longest waits of every retry, in order: the upper
// bound of what one object's upload can spend waiting is their sum.
func (b Backoff) Schedule() []time.Duration {
	b = b.withDefaults()
	out := make([]time.Duration, 0, b.MaxAttempts-1)
	for n := 1; n < b.MaxAttempts; n++ {
		out = append(out, b.Delay(n, 0))
	}
	return out
}

// sleep waits d or until ctx is done, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
