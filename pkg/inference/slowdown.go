package inference

import (
	"fmt"
	"math"
)

// Test is the result of a one-sided test of "B is slower than A by more
// than Magnitude".
type Test struct {
	// Ratio is the geometric-mean ratio exp(mean ln B − mean ln A): < 1
	// means B is slower.
	Ratio     float64 `json:"ratio"`
	Magnitude float64 `json:"magnitude"`
	// T is the statistic (mean ln B − mean ln A − ln(1 − Magnitude)) / se:
	// strongly negative when B is slower by more than Magnitude.
	T  float64 `json:"t"`
	DF float64 `json:"df"`
	// P is the one-sided p-value P(T' <= T) under the null hypothesis
	// "B/A >= 1 − Magnitude" at its boundary: small means B is slower by
	// more than Magnitude.
	P      float64 `json:"p"`
	Method Method  `json:"method"`
	NA     int     `json:"nA"`
	NB     int     `json:"nB"`
}

func logsOf(side string, xs []float64, minRuns int) ([]float64, error) {
	if len(xs) < minRuns {
		return nil, fmt.Errorf("%s: %d runs, need at least %d: %w", side, len(xs), minRuns, ErrTooFew)
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s[%d] = %v: log throughput needs a finite value > 0: %w", side, i, x, ErrInvalid)
		}
		out[i] = math.Log(x)
	}
	return out, nil
}

func checkMagnitude(m float64) error {
	if !(m >= 0 && m < 1) {
		return fmt.Errorf("magnitude %v: must be in [0, 1): %w", m, ErrInvalid)
	}
	return nil
}

// oneSided returns the test's T and p from the log difference, its
// standard error and df.
func oneSided(d, se, df, magnitude float64) (t, p float64) {
	shift := d - math.Log1p(-magnitude)
	switch {
	case se > 0:
		t = shift / se
		return t, tCDF(t, df)
	case shift < 0:
		return math.Inf(-1), 0
	case shift > 0:
		return math.Inf(1), 1
	}
	// Exactly at the boundary with no noise: not evidence of a slowdown.
	return 0, 1
}

// Slowdown tests whether B is slower than A by more than magnitude (0.05
// = 5 %) from the runs of each side: Welch's t-test on log throughput,
// one-sided, null hypothesis "exp(E ln B − E ln A) >= 1 − magnitude".
//
// Model: the runs are independent (a fresh server and data load each);
// per-run throughput is log-normal on each side, so a multiplicative noise
// with a constant CV is normal on the log scale; the two sides may have
// different variances (Welch–Satterthwaite df). It needs at least 2 runs
// per side; with one run per side use SlowdownKnownNoise. The p-value is
// per test: a run's many (step, threads) tests need Adjust.
func Slowdown(a, b []float64, magnitude float64) (Test, error) {
	if err := checkMagnitude(magnitude); err != nil {
		return Test{}, err
	}
	la, err := logsOf("a", a, 2)
	if err != nil {
		return Test{}, err
	}
	lb, err := logsOf("b", b, 2)
	if err != nil {
		return Test{}, err
	}
	ma, va := meanVar(la)
	mb, vb := meanVar(lb)
	na, nb := float64(len(la)), float64(len(lb))
	sa, sb := va/na, vb/nb
	df := satterthwaiteDF(sa, len(la), sb, len(lb), 1)
	d := mb - ma
	t, p := oneSided(d, math.Sqrt(sa+sb), df, magnitude)
	return Test{Ratio: math.Exp(d), Magnitude: magnitude, T: t, DF: df, P: p, Method: MethodWelchLog,
		NA: len(la), NB: len(lb)}, nil
}

// PairedSlowdown is Slowdown for paired runs: a[i] and b[i] ran in one
// block (on one node, one after the other), so the test is the one-sided
// t-test of the mean of ln(b[i]/a[i]) against ln(1 − magnitude), with
// pairs − 1 df.
//
// Model: ln throughput = block + side + error, the block effect shared by
// a pair, the errors independent and normal with one variance per side;
// the blocks independent. The per-pair log ratios are then independent
// normals around the sides' log ratio whatever the block effects are,
// which is why pairing wins when blocks (nodes, times) differ. It needs
// two pairs or more.
func PairedSlowdown(a, b []float64, magnitude float64) (Test, error) {
	if err := checkMagnitude(magnitude); err != nil {
		return Test{}, err
	}
	if len(a) != len(b) {
		return Test{}, fmt.Errorf("paired: a has %d values and b %d, pairs need equal counts: %w", len(a), len(b), ErrInvalid)
	}
	la, err := logsOf("a", a, 2)
	if err != nil {
		return Test{}, err
	}
	lb, err := logsOf("b", b, 2)
	if err != nil {
		return Test{}, err
	}
	d := make([]float64, len(la))
	for i := range la {
		d[i] = lb[i] - la[i]
	}
	m, v := meanVar(d)
	n := float64(len(d))
	t, p := oneSided(m, math.Sqrt(v/n), n-1, magnitude)
	return Test{Ratio: math.Exp(m), Magnitude: magnitude, T: t, DF: n - 1, P: p, Method: MethodPairedLog,
		NA: len(la), NB: len(lb)}, nil
}

// SlowdownKnownNoise is Slowdown for runs with few repeats (one per side
// is enough): the variance of log throughput comes from a noise floor
// measured on earlier runs (NoiseFloor.SigmaLog with NoiseFloor.DF degrees
// of freedom), not from the runs being judged. The statistic is
// (mean ln B − mean ln A − ln(1 − magnitude)) / (σ̂·√(1/nA + 1/nB)),
// Student's t with the floor's df.
//
// Model: the runs being judged are independent of each other and of the
// runs the floor was measured on; log throughput is normal with the
// floor's variance on both sides (equal variance, the floor's); the floor
// is still valid (same suite, same nodes, same step length). When the
// floor underestimates the noise — a shorter step, a noisier node pool —
// the test is anti-conservative: re-measure the floor after such changes.
func SlowdownKnownNoise(a, b []float64, magnitude float64, floor NoiseFloor) (Test, error) {
	if err := checkMagnitude(magnitude); err != nil {
		return Test{}, err
	}
	if err := floor.validate(); err != nil {
		return Test{}, err
	}
	la, err := logsOf("a", a, 1)
	if err != nil {
		return Test{}, err
	}
	lb, err := logsOf("b", b, 1)
	if err != nil {
		return Test{}, err
	}
	ma, _ := meanVar(la)
	mb, _ := meanVar(lb)
	se := floor.SigmaLog * math.Sqrt(1/float64(len(la))+1/float64(len(lb)))
	df := float64(floor.DF)
	d := mb - ma
	t, p := oneSided(d, se, df, magnitude)
	return Test{Ratio: math.Exp(d), Magnitude: magnitude, T: t, DF: df, P: p, Method: MethodNoiseFloor,
		NA: len(la), NB: len(lb)}, nil
}

// SlowdownOfEstimate is Slowdown for an estimate that was not computed
// from two plain samples: d is the estimated mean ln B − mean ln A (a
// contrast of a blocked or otherwise fitted model), se its standard error
// and df the degrees of freedom of that error. The statistic is
// (d − ln(1 − magnitude)) / se against Student's t with df, one-sided as
// Slowdown's. The model behind d and se is the caller's; the test is valid
// when d is normal with that standard error, estimated independently of d
// with df degrees of freedom.
func SlowdownOfEstimate(d, se, df, magnitude float64) (Test, error) {
	if err := checkMagnitude(magnitude); err != nil {
		return Test{}, err
	}
	if math.IsNaN(d) || math.IsInf(d, 0) || !(se >= 0) || math.IsInf(se, 0) || !(df > 0) {
		return Test{}, fmt.Errorf("estimate %v, standard error %v, df %v: need a finite estimate, se >= 0 and df > 0: %w", d, se, df, ErrInvalid)
	}
	t, p := oneSided(d, se, df, magnitude)
	return Test{Ratio: math.Exp(d), Magnitude: magnitude, T: t, DF: df, P: p, Method: MethodBlocked}, nil
}
