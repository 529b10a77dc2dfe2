package inference

import (
	"errors"
	"math"
	"testing"

	"github.com/dbbench/dbbench/pkg/stats"
)

func near(got, want, tol float64) bool {
	if math.IsInf(want, 0) || math.IsNaN(want) {
		return got == want || (math.IsNaN(got) && math.IsNaN(want))
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// t quantile of Student's t with 1 df at 0.975: tan(π(0.975 − 0.5)).
var t975df1 = math.Tan(math.Pi * 0.475)

func TestFiellerExactDenominator(t *testing.T) {
	// With no variance in A, Fieller's interval is B's t interval divided
	// by mean(A), with nB − 1 df (here 1: a closed-form quantile).
	a := []float64{200, 200, 200}
	b := []float64{180, 190}
	iv, err := FiellerRatio(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(50.0 / 2) // sample variance 50, n 2
	wantLo, wantHi := (185-t975df1*se)/200, (185+t975df1*se)/200
	if !near(iv.Low, wantLo, 1e-9) || !near(iv.High, wantHi, 1e-9) || !near(iv.Estimate, 0.925, 1e-12) || iv.DF != 1 {
		t.Errorf("Fieller = %+v, want [%v, %v] with df 1", iv, wantLo, wantHi)
	}
	if iv.Method != MethodFieller || iv.FiellerUnbounded {
		t.Errorf("method %q unbounded %v", iv.Method, iv.FiellerUnbounded)
	}
}

func TestFiellerEndpointsSolvePivot(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
	}{
		{"equal n", []float64{1000, 1040, 960}, []float64{900, 950, 880}},
		{"unequal n and spread", []float64{1000, 1100}, []float64{800, 820, 790, 830, 805}},
		{"b faster", []float64{500, 520, 480, 510}, []float64{700, 690, 720}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iv, err := RatioOfMeans(tc.a, tc.b, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			ma, _ := momentsOf("a", tc.a, 2)
			mb, _ := momentsOf("b", tc.b, 2)
			crit := stats.StudentQuantile(0.975, iv.DF)
			for _, th := range []float64{iv.Low, iv.High} {
				piv := math.Abs(mb.mean-th*ma.mean) / math.Sqrt(mb.varMean+th*th*ma.varMean)
				if !near(piv, crit, 1e-9) {
					t.Errorf("pivot at %v = %v, want the t quantile %v", th, piv, crit)
				}
			}
			if !(iv.Low < iv.Estimate && iv.Estimate < iv.High) {
				t.Errorf("estimate %v outside %v", iv.Estimate, iv)
			}
			// The p-value of ratio 1 agrees with the interval.
			if (iv.PRatioOne < 0.05) == iv.Contains(1) {
				t.Errorf("p(ratio 1) = %v but interval %v", iv.PRatioOne, iv)
			}
		})
	}
}

func TestFiellerUnboundedFallsBackToDelta(t *testing.T) {
	a := []float64{10, 1000} // mean(A) is not distinguishable from 0
	b := []float64{500, 520}
	f, err := FiellerRatio(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !f.FiellerUnbounded || !math.IsInf(f.Low, -1) || !math.IsInf(f.High, 1) {
		t.Errorf("FiellerRatio = %+v, want unbounded", f)
	}
	iv, err := RatioOfMeans(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := DeltaRatio(a, b, 0.95)
	if !iv.FiellerUnbounded || iv.Method != MethodDelta || iv.Low != d.Low || iv.High != d.High {
		t.Errorf("RatioOfMeans = %+v, want the delta interval %+v flagged unbounded", iv, d)
	}
	if math.IsInf(iv.Low, 0) || math.IsInf(iv.High, 0) {
		t.Errorf("fallback is not finite: %+v", iv)
	}
}

func TestDeltaMatchesFiellerForSmallNoise(t *testing.T) {
	a := []float64{1000, 1001, 999, 1000.5}
	b := []float64{900, 900.4, 899.6}
	f, _ := FiellerRatio(a, b, 0.95)
	d, _ := DeltaRatio(a, b, 0.95)
	if !near(f.Low, d.Low, 1e-5) || !near(f.High, d.High, 1e-5) {
		t.Errorf("fieller %v and delta %v differ with 0.1 %% noise", f, d)
	}
	if f.High-f.Low > 0.01 {
		t.Errorf("fieller %v too wide", f)
	}
}

func TestRatioErrors(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		level float64
		want  error
	}{
		{"one run", []float64{1}, []float64{1, 2}, 0.95, ErrTooFew},
		{"negative", []float64{1, -2}, []float64{1, 2}, 0.95, ErrInvalid},
		{"nan", []float64{1, 2}, []float64{math.NaN(), 2}, 0.95, ErrInvalid},
		{"zero mean", []float64{0, 0}, []float64{1, 2}, 0.95, ErrInvalid},
		{"level", []float64{1, 2}, []float64{1, 2}, 1, ErrInvalid},
	}
	for _, tc := range tests {
		for name, f := range map[string]func([]float64, []float64, float64) (Interval, error){
			"RatioOfMeans": RatioOfMeans, "FiellerRatio": FiellerRatio, "DeltaRatio": DeltaRatio} {
			if _, err := f(tc.a, tc.b, tc.level); !errors.Is(err, tc.want) {
				t.Errorf("%s %s: err %v, want %v", name, tc.name, err, tc.want)
			}
		}
	}
}

func TestPairedLogRatio(t *testing.T) {
	// Log ratios ln 0.9 ± 0.01: mean ln 0.9, se 0.01, 1 df.
	a := []float64{1000, 2000}
	b := []float64{1000 * 0.9 * math.Exp(0.01), 2000 * 0.9 * math.Exp(-0.01)}
	iv, err := PairedLogRatio(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	h := t975df1 * 0.01
	if !near(iv.Estimate, 0.9, 1e-12) || !near(iv.Low, 0.9*math.Exp(-h), 1e-9) || !near(iv.High, 0.9*math.Exp(h), 1e-9) {
		t.Errorf("paired = %+v, want 0.9 [%v, %v]", iv, 0.9*math.Exp(-h), 0.9*math.Exp(h))
	}
	if iv.Method != MethodPairedLog || iv.DF != 1 {
		t.Errorf("method %q df %v", iv.Method, iv.DF)
	}
	// The pairing cancels a slot effect that would swamp an unpaired
	// interval: slot levels 1000 and 2000, the same 0.9 ratio in each.
	un, _ := RatioOfMeans(a, b, 0.95)
	if un.High-un.Low < 10*(iv.High-iv.Low) {
		t.Errorf("unpaired %v not much wider than paired %v", un, iv)
	}
	for _, bad := range [][2][]float64{{{1, 2}, {1}}, {{1}, {1}}, {{0, 1}, {1, 1}}} {
		if _, err := PairedLogRatio(bad[0], bad[1], 0.95); err == nil {
			t.Errorf("PairedLogRatio(%v, %v) accepted", bad[0], bad[1])
		}
	}
}

// Student's t with 2 df has the closed-form CDF 1/2 + t / (2√(2 + t²)).
func cdf2(t float64) float64 { return 0.5 + t/(2*math.Sqrt(2+t*t)) }

func TestSlowdown(t *testing.T) {
	a := []float64{100 * math.Exp(-0.01), 100 * math.Exp(0.01)}
	b := []float64{80 * math.Exp(-0.01), 80 * math.Exp(0.01)}
	got, err := Slowdown(a, b, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	// ln-variances 0.0002 each: se √0.0002, Satterthwaite df 2.
	wantT := (math.Log(0.8) - math.Log(0.95)) / math.Sqrt(0.0002)
	if !near(got.T, wantT, 1e-9) || !near(got.DF, 2, 1e-12) || !near(got.P, cdf2(wantT), 1e-9) || !near(got.Ratio, 0.8, 1e-12) {
		t.Errorf("Slowdown = %+v, want t %v df 2 p %v", got, wantT, cdf2(wantT))
	}
	if got.Method != MethodWelchLog {
		t.Errorf("method %q", got.Method)
	}
	// B faster: no evidence of a slowdown.
	if up, _ := Slowdown(b, a, 0.05); up.P < 0.5 {
		t.Errorf("a speed-up gives p %v", up.P)
	}
	// No noise at all: decided by the sign alone.
	flat, _ := Slowdown([]float64{100, 100}, []float64{90, 90}, 0.05)
	if flat.P != 0 {
		t.Errorf("noiseless 10 %% slowdown beyond 5 %%: p %v", flat.P)
	}
	flat, _ = Slowdown([]float64{100, 100}, []float64{97, 97}, 0.05)
	if flat.P != 1 {
		t.Errorf("noiseless 3 %% slowdown within 5 %%: p %v", flat.P)
	}
	if _, err := Slowdown([]float64{100}, b, 0.05); !errors.Is(err, ErrTooFew) {
		t.Errorf("one run: %v", err)
	}
	if _, err := Slowdown(a, b, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("magnitude 1: %v", err)
	}
}

func TestSlowdownKnownNoise(t *testing.T) {
	floor := NoiseFloor{SigmaLog: 0.05, DF: 2}
	got, err := SlowdownKnownNoise([]float64{100}, []float64{90}, 0.05, floor)
	if err != nil {
		t.Fatal(err)
	}
	wantT := (math.Log(0.9) - math.Log(0.95)) / (0.05 * math.Sqrt2)
	if !near(got.T, wantT, 1e-12) || got.DF != 2 || !near(got.P, cdf2(wantT), 1e-9) || got.Method != MethodNoiseFloor {
		t.Errorf("SlowdownKnownNoise = %+v, want t %v p %v", got, wantT, cdf2(wantT))
	}
	if _, err := SlowdownKnownNoise([]float64{100}, []float64{90}, 0.05, NoiseFloor{SigmaLog: 0.05}); !errors.Is(err, ErrInvalid) {
		t.Errorf("floor without df: %v", err)
	}
}

func TestAdjust(t *testing.T) {
	nan := math.NaN()
	p := []float64{0.01, 0.04, 0.03, 0.005, nan}
	// R: p.adjust(c(.01, .04, .03, .005), "holm") and "BH".
	tests := []struct {
		c    Correction
		want []float64
	}{
		{CorrectionHolm, []float64{0.03, 0.06, 0.06, 0.02, nan}},
		{"", []float64{0.03, 0.06, 0.06, 0.02, nan}},
		{CorrectionBH, []float64{0.02, 0.04, 0.04, 0.02, nan}},
		{CorrectionNone, p},
	}
	for _, tc := range tests {
		got, err := Adjust(tc.c, p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if !near(got[i], tc.want[i], 1e-12) {
				t.Errorf("%q: adjusted %v, want %v", tc.c, got, tc.want)
				break
			}
		}
	}
	if _, err := Adjust("bonferroni", p); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown correction: %v", err)
	}
}

func TestNoisePool(t *testing.T) {
	var m NoiseModel
	k := Key{Step: "point-query", Threads: 16}
	if err := m.AddRepeats(k, []float64{100, 110, 90}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddPair(k, 100, 120); err != nil {
		t.Fatal(err)
	}
	if err := m.AddRepeats(Key{"insert", 1}, []float64{5}); !errors.Is(err, ErrTooFew) {
		t.Errorf("one repeat: %v", err)
	}
	l := []float64{math.Log(100), math.Log(110), math.Log(90)}
	ml := (l[0] + l[1] + l[2]) / 3
	ss := 0.0
	for _, x := range l {
		ss += (x - ml) * (x - ml)
	}
	d := math.Log(1.2)
	ss += d * d / 2
	f, ok := m.Floor(k)
	if !ok || f.DF != 3 || f.Runs != 5 || f.Sets != 2 || !near(f.SigmaLog, math.Sqrt(ss/3), 1e-12) {
		t.Errorf("floor %+v, want σ %v df 3 runs 5 sets 2", f, math.Sqrt(ss/3))
	}
	if keys := m.Keys(); len(keys) != 1 || keys[0] != k {
		t.Errorf("keys %v", keys)
	}
	if _, ok := m.Floor(Key{"insert", 1}); ok {
		t.Errorf("insert has no evidence but a floor")
	}
	fc, err := FloorFromCV(0.07, 9)
	if err != nil || !near(fc.CV(), 0.07, 1e-12) || fc.DF != 9 {
		t.Errorf("FloorFromCV(0.07, 9) = %+v, %v", fc, err)
	}
}

func TestNoncentralTReducesToCentral(t *testing.T) {
	for _, nu := range []float64{1, 2, 4, 10, 60} {
		for _, x := range []float64{-3, -0.5, 0, 1.2, 4} {
			got := noncentralTCDF(x, nu, 0)
			want := stats.StudentCDF(x, nu)
			if !near(got, want, 1e-7) {
				t.Errorf("noncentral t(ν=%v, λ=0) CDF(%v) = %v, want %v", nu, x, got, want)
			}
		}
	}
	// Shifted: with ν → ∞ it is the normal CDF of x − λ.
	if got, want := noncentralTCDF(1, 1e7, 2.5), normalCDF(-1.5); !near(got, want, 1e-5) {
		t.Errorf("large ν: %v, want %v", got, want)
	}
}

func TestPowerAndMDE(t *testing.T) {
	z := stats.NormalQuantile
	// A floor with ~infinite df makes the test a z-test with closed forms.
	d := Design{CV: 0.05, FloorDF: 10_000_000}
	sigma := math.Sqrt(math.Log1p(0.05 * 0.05))
	n := 3
	se := sigma * math.Sqrt(2/float64(n))
	got, err := d.MDE(n, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	want := -math.Expm1(-(z(0.95) + z(0.8)) * se)
	if !near(got, want, 1e-5) {
		t.Errorf("z-test MDE = %v, want %v", got, want)
	}
	p, _ := d.Power(n, 0.1)
	if wantP := normalCDF(-math.Log(0.9)/se - z(0.95)); !near(p, wantP, 1e-5) {
		t.Errorf("z-test power = %v, want %v", p, wantP)
	}
	// Estimating the variance costs power: fewer df, larger MDE.
	est := Design{CV: 0.05}
	mEst, _ := est.MDE(n, 0.8)
	if mEst <= got {
		t.Errorf("MDE with 4 df %v not above the z-test's %v", mEst, got)
	}
	// Power at the MDE is the power asked for.
	if p, _ := est.Power(n, mEst); !near(p, 0.8, 1e-6) {
		t.Errorf("power at MDE = %v", p)
	}
	two := Design{CV: 0.05, TwoSided: true}
	if m2, _ := two.MDE(n, 0.8); m2 <= mEst {
		t.Errorf("two-sided MDE %v not above one-sided %v", m2, mEst)
	}
	// The estimate rule: found when the log slowdown is beyond both the
	// test's critical difference and ln(1/(1 − m)). A magnitude below the
	// critical difference changes nothing; one above it costs power.
	for _, tc := range []struct {
		name string
		m    float64
	}{{"magnitude under the critical difference", 0.01}, {"magnitude above it", 0.05}} {
		e := Design{CV: 0.05, FloorDF: 10_000_000, MinEstimate: tc.m}
		p, err := e.Power(n, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		bar := math.Max(-math.Log1p(-tc.m), z(0.95)*se)
		if want := normalCDF((-math.Log(0.9) - bar) / se); !near(p, want, 1e-5) {
			t.Errorf("estimate rule, %s: power %v, want %v", tc.name, p, want)
		}
		mde, err := e.MDE(n, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		if want := -math.Expm1(-(bar + z(0.8)*se)); !near(mde, want, 1e-5) {
			t.Errorf("estimate rule, %s: MDE %v, want %v", tc.name, mde, want)
		}
	}
	for _, bad := range []Design{{CV: 0}, {CV: 0.1, Alpha: 1}, {CV: 0.1, FloorDF: -1}, {CV: 0.1, MinEstimate: 1},
		{CV: 0.1, MinEstimate: -0.1}, {CV: 0.1, MinEstimate: 0.05, TwoSided: true}} {
		if _, err := bad.MDE(3, 0.8); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := est.MDE(1, 0.8); !errors.Is(err, ErrTooFew) {
		t.Errorf("one run without a floor: %v", err)
	}
}

func TestRequiredRepeats(t *testing.T) {
	tests := []struct {
		name      string
		cv, hw    float64
		floorDF   int
		max, want int
	}{
		// z-limit: n = ⌈2(1.95996·σ / ln 1.05)²⌉ = ⌈32.1⌉.
		{"known noise", 0.10, 0.05, 10_000_000, 100, 33},
		// Estimated variance: the t quantile with 2n − 2 df adds one run.
		{"estimated noise", 0.10, 0.05, 0, 100, 34},
		{"quiet step", 0.01, 0.05, 0, 100, 2},
	}
	for _, tc := range tests {
		got, err := RequiredRepeats(tc.cv, tc.hw, 0.95, tc.floorDF, tc.max)
		if err != nil || got != tc.want {
			t.Errorf("%s: RequiredRepeats = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := RequiredRepeats(0.18, 0.01, 0.95, 0, 10); !errors.Is(err, ErrTooFew) {
		t.Errorf("±1 %% at CV 18 %% in 10 runs: %v", err)
	}
}

// A floor stored with an earlier run and added back must pool exactly as
// the evidence it was measured on.
func TestNoisePoolAddFloor(t *testing.T) {
	k := Key{Step: "insert", Threads: 4}
	var direct, split NoiseModel
	sets := [][]float64{{100, 108, 95}, {210, 190}, {50, 52, 49, 55}}
	for _, s := range sets {
		if err := direct.AddRepeats(k, s); err != nil {
			t.Fatal(err)
		}
	}
	var earlier NoiseModel
	for _, s := range sets[:2] {
		if err := earlier.AddRepeats(k, s); err != nil {
			t.Fatal(err)
		}
	}
	stored, _ := earlier.Floor(k)
	if err := split.AddFloor(k, stored); err != nil {
		t.Fatal(err)
	}
	if err := split.AddRepeats(k, sets[2]); err != nil {
		t.Fatal(err)
	}
	want, _ := direct.Floor(k)
	got, _ := split.Floor(k)
	if got.DF != want.DF || got.Runs != want.Runs || got.Sets != want.Sets || !near(got.SigmaLog, want.SigmaLog, 1e-12) {
		t.Errorf("floor via a stored floor %+v, want %+v", got, want)
	}
	if err := split.AddFloor(k, NoiseFloor{SigmaLog: 0.1, DF: 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a floor with 0 df: %v, want ErrInvalid", err)
	}
}
