package regression

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

// vcell is a manifest cell of combination maria-11.8-default with the
// given repeat, QPS per step at 4 threads and, when sd > 0, a per-second
// spread of 60 samples with that stddev.
func vcell(repeat int, image string, qps map[string]float64, sd float64) results.ManifestCell {
	name := "maria-11.8-default"
	if repeat > 0 {
		name = fmt.Sprintf("%s-r%d", name, repeat)
	}
	c := results.ManifestCell{
		Cell:          results.Cell{Name: name, Database: "maria", Engine: "mariadb", Version: "11.8", Config: "default", Repeat: repeat},
		Phase:         "Succeeded",
		ServerVersion: "11.8.3-MariaDB", ServerSettingsSHA256: "sha256:settings", ImageDigest: image,
		QPS: map[string]map[int]float64{},
	}
	for step, q := range qps {
		c.QPS[step] = map[int]float64{4: q}
		if sd > 0 {
			if c.QPSSpread == nil {
				c.QPSSpread = map[string]map[int]results.Spread{}
			}
			c.QPSSpread[step] = map[int]results.Spread{4: {Samples: 60, Stddev: sd}}
		}
	}
	return c
}

func vmanifest(name string, cells ...results.ManifestCell) *results.Manifest {
	return &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: name, Suite: "nightly"},
		WorkloadSHA256: "sha256:workload", Cells: cells}
}

// repeats makes n cells whose QPS of each step is base[step] × factors[i].
func repeats(image string, base map[string]float64, factors []float64, sd float64) []results.ManifestCell {
	var out []results.ManifestCell
	for i, f := range factors {
		q := map[string]float64{}
		for s, v := range base {
			q[s] = v * f
		}
		out = append(out, vcell(i+1, image, q, sd))
	}
	return out
}

func TestJudgeRunsChoosesTheMethod(t *testing.T) {
	steps := map[string]float64{"point-query": 1000, "insert": 500}
	floor := func(df int) *results.NoiseFloors {
		return &results.NoiseFloors{Points: []results.NoisePoint{
			{Step: "point-query", Threads: 4, SigmaLog: 0.03, CV: 0.03, DF: df, Runs: df + 2, Sets: 2},
			{Step: "insert", Threads: 4, SigmaLog: 0.03, CV: 0.03, DF: df, Runs: df + 2, Sets: 2},
		}}
	}
	slower := map[string]float64{"point-query": 1000, "insert": 400} // insert −20 %
	tests := []struct {
		name        string
		base, cur   *results.Manifest
		floor       *results.NoiseFloors
		wantMethod  VerdictMethod
		wantDetail  string
		wantRegress []string // "step change" of the regressed points
	}{
		{
			// Per-second samples say "different" (a 7 % gap with a
			// stddev of 5 over 60 samples), the repeats overlap.
			name:       "A/A-like repeats: between runs, not regressed",
			base:       vmanifest("a", repeats("sha256:i", steps, []float64{1.0, 0.9, 1.08}, 5)...),
			cur:        vmanifest("b", repeats("sha256:i", steps, []float64{0.93, 1.02, 0.88}, 5)...),
			wantMethod: MethodBetweenRuns, wantDetail: "between runs (3+3 repeats)",
		},
		{
			name:        "tight repeats, a 20 % slowdown",
			base:        vmanifest("a", repeats("sha256:i", steps, []float64{1.0, 1.005, 0.995}, 5)...),
			cur:         vmanifest("b", repeats("sha256:i", slower, []float64{1.0, 0.995, 1.004}, 5)...),
			wantMethod:  MethodBetweenRuns,
			wantDetail:  "between runs (3+3 repeats)",
			wantRegress: []string{"insert -20.0%"},
		},
		{
			name:        "one run per side with a floor of 12 df",
			base:        vmanifest("a", vcell(0, "sha256:i", steps, 5)),
			cur:         vmanifest("b", vcell(0, "sha256:i", slower, 5)),
			floor:       floor(12),
			wantMethod:  MethodNoiseFloor,
			wantDetail:  "noise floor CV 3.0 % over 12 df",
			wantRegress: []string{"insert -20.0%"},
		},
		{
			name:        "a floor of 3 df is not enough: per-second fallback",
			base:        vmanifest("a", vcell(0, "sha256:i", steps, 5)),
			cur:         vmanifest("b", vcell(0, "sha256:i", slower, 5)),
			floor:       floor(MinFloorDF - 1),
			wantMethod:  MethodPerSecond,
			wantDetail:  "per-second fallback",
			wantRegress: []string{"insert -20.0%"},
		},
		{
			name:        "no floor, no spread: magnitude only",
			base:        vmanifest("a", vcell(0, "sha256:i", steps, 0)),
			cur:         vmanifest("b", vcell(0, "sha256:i", slower, 0)),
			wantMethod:  MethodMagnitudeOnly,
			wantDetail:  "magnitude only",
			wantRegress: []string{"insert -20.0%"},
		},
		{
			// A 3 % gap on one run per side: the floor (CV 3 %) calls it
			// noise where the per-second test would not.
			name:       "floor: a small gap is noise",
			base:       vmanifest("a", vcell(0, "sha256:i", steps, 5)),
			cur:        vmanifest("b", vcell(0, "sha256:i", map[string]float64{"point-query": 970, "insert": 485}, 5)),
			floor:      floor(30),
			wantMethod: MethodNoiseFloor, wantDetail: "noise floor CV 3.0 % over 30 df",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := JudgeRuns(tt.cur, tt.base, VerdictOptions{MinMagnitude: 0.05, Alpha: 0.05, Floor: tt.floor})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Points) != 2 {
				t.Fatalf("%d points compared, want 2: %+v", len(v.Points), v.Points)
			}
			for _, p := range v.Points {
				if p.Method != tt.wantMethod || p.Detail != tt.wantDetail {
					t.Errorf("%s: method %s (%s), want %s (%s)", p.Step, p.Method, p.Detail, tt.wantMethod, tt.wantDetail)
				}
			}
			var got []string
			for _, p := range v.Regressed {
				got = append(got, fmt.Sprintf("%s %+.1f%%", p.Step, p.ChangePercent))
			}
			if diff := cmp.Diff(tt.wantRegress, got); diff != "" {
				t.Errorf("regressed (-want +got):\n%s\npoints: %+v", diff, v.Points)
			}
			if mc := v.Methods(); len(mc) != 1 || mc[0].Method != tt.wantMethod || mc[0].Points != 2 || mc[0].Detail != tt.wantDetail {
				t.Errorf("method counts %+v", mc)
			}
			if !strings.Contains(v.Summary(), "2 "+tt.wantDetail) {
				t.Errorf("summary %q does not name %q", v.Summary(), tt.wantDetail)
			}
		})
	}
}

// The per-second test, the verdict's old unit, calls the A/A-like pair
// above different; the between-run test does not. This pins down why the
// verdict changed.
func TestPerSecondTestOverCallsTheAAPair(t *testing.T) {
	steps := map[string]float64{"point-query": 1000, "insert": 500}
	base := vmanifest("a", vcell(0, "sha256:i", steps, 5))
	cur := vmanifest("b", vcell(0, "sha256:i", map[string]float64{"point-query": 930, "insert": 465}, 5))
	old, _ := CompareManifests(cur, base, 0.05, 0.05)
	if len(old) != 2 {
		t.Fatalf("per-second Welch flagged %d of 2 points of a 7 %% gap, expected both: %+v", len(old), old)
	}
	fl := &results.NoiseFloors{Points: []results.NoisePoint{
		{Step: "point-query", Threads: 4, SigmaLog: 0.08, CV: 0.08, DF: 12, Runs: 16, Sets: 4},
		{Step: "insert", Threads: 4, SigmaLog: 0.08, CV: 0.08, DF: 12, Runs: 16, Sets: 4},
	}}
	v, err := JudgeRuns(cur, base, VerdictOptions{MinMagnitude: 0.05, Floor: fl})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Regressed) != 0 {
		t.Errorf("with an 8 %% run-to-run floor a 7 %% gap is noise, got %+v", v.Regressed)
	}
}

func TestJudgeRunsMultiplicity(t *testing.T) {
	// 20 steps, each 18 % slower on one run per side with a 5 % floor of
	// 20 df: each test of "slower by more than 5 %" alone has p ≈ 0.025;
	// under Holm none survives.
	base, cur := map[string]float64{}, map[string]float64{}
	var points []results.NoisePoint
	for i := range 20 {
		s := fmt.Sprintf("step-%02d", i)
		base[s], cur[s] = 1000, 820
		points = append(points, results.NoisePoint{Step: s, Threads: 4, SigmaLog: 0.05, CV: 0.05, DF: 20, Runs: 24, Sets: 4})
	}
	fl := &results.NoiseFloors{Points: points}
	a, b := vmanifest("a", vcell(0, "i", base, 0)), vmanifest("b", vcell(0, "i", cur, 0))
	counts := map[inference.Correction]int{}
	for _, c := range []inference.Correction{inference.CorrectionNone, inference.CorrectionHolm, inference.CorrectionBH, ""} {
		v, err := JudgeRuns(b, a, VerdictOptions{MinMagnitude: 0.05, Alpha: 0.05, Correction: c, Floor: fl})
		if err != nil {
			t.Fatal(err)
		}
		if v.Tests != 20 {
			t.Errorf("%q: family of %d tests, want 20", c, v.Tests)
		}
		counts[c] = len(v.Regressed)
		if c == "" && v.Correction != inference.CorrectionHolm {
			t.Errorf("default correction %q, want holm", v.Correction)
		}
	}
	if counts[inference.CorrectionNone] != 20 || counts[inference.CorrectionHolm] != 0 || counts[""] != 0 {
		t.Errorf("regressed per correction %v: want 20 uncorrected, 0 under Holm", counts)
	}
	// BH: every p is equal, so all or none; p ≈ 0.025 < 0.05 → all.
	if counts[inference.CorrectionBH] != 20 {
		t.Errorf("BH regressed %d, want 20 (equal p-values below α)", counts[inference.CorrectionBH])
	}
	if _, err := JudgeRuns(b, a, VerdictOptions{Correction: "bonferroni"}); err == nil {
		t.Errorf("an unknown correction was accepted")
	}
}

// A/A runs of 32 steps, one run per side judged with a noise floor of 15
// df measured on other A/A runs of the same model, and 3 repeats per side:
// the share of runs with any regressed point must stay within α (plus
// three binomial standard errors).
func TestJudgeRunsAAFalsePositiveRate(t *testing.T) {
	const trials, steps, alpha = 400, 32, 0.05
	rng := rand.New(rand.NewPCG(11, 17))
	cvs := make([]float64, steps)
	for i := range cvs {
		cvs[i] = 0.03 + 0.15*float64(i)/steps
	}
	draw := func(name string, n int) *results.Manifest {
		var cells []results.ManifestCell
		for r := range n {
			q := map[string]float64{}
			for i, cv := range cvs {
				q[fmt.Sprintf("s%02d", i)] = 1000 * math.Exp(math.Sqrt(math.Log1p(cv*cv))*rng.NormFloat64())
			}
			rep := r + 1
			if n == 1 {
				rep = 0
			}
			cells = append(cells, vcell(rep, "sha256:i", q, 0))
		}
		return vmanifest(name, cells...)
	}
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/trials)
	for _, tc := range []struct {
		name   string
		n      int
		floors bool
		rule   MagnitudeRule // with a 5 % magnitude; "": magnitude 0
	}{
		{"3 repeats per side", 3, false, ""},
		{"1 run per side, floor of 15 df", 1, true, ""},
		{"3 repeats per side, estimated magnitude 5 %", 3, false, MagnitudeEstimated},
	} {
		opts := VerdictOptions{Alpha: alpha, MagnitudeRule: tc.rule}
		if tc.rule != "" {
			opts.MinMagnitude = 0.05
		}
		bad := 0
		for range trials {
			var fl *results.NoiseFloors
			if tc.floors {
				// An A/A set of 16 earlier runs: 15 df.
				var hist []*results.Manifest
				for j := range 16 {
					hist = append(hist, draw(fmt.Sprintf("h%02d", j), 1))
				}
				fl = SuiteNoise(hist, nil, alpha)
			}
			opts.Floor = fl
			v, err := JudgeRuns(draw("b", tc.n), draw("a", tc.n), opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.floors && v.Points[0].Method != MethodNoiseFloor {
				t.Fatalf("method %s, want the floor (floor %+v)", v.Points[0].Method, fl.Points[0])
			}
			if len(v.Regressed) > 0 {
				bad++
			}
		}
		rate := float64(bad) / trials
		t.Logf("%s: %d / %d A/A runs regressed (%.3f)", tc.name, bad, trials, rate)
		if rate > limit {
			t.Errorf("%s: A/A false-positive rate %.3f over %.3f", tc.name, rate, limit)
		}
	}
}

// TestDetectableIsFoundWithItsPower: a true change of the size
// PointVerdict.Detectable reports (for the noise and repeats of the test)
// is called regressed about DetectablePower of the time, for throughput
// and latency, between runs and against a floor: the conversion from the
// design's effect beyond the null's boundary to a true change is right.
// One step, so the level is α itself.
func TestDetectableIsFoundWithItsPower(t *testing.T) {
	const trials, alpha, magnitude = 600, 0.05, 0.05
	tests := []struct {
		name   string
		metric analysis.Metric
		cv     float64
		n      int
		floor  int // floor df; 0: between runs
		rule   MagnitudeRule
	}{
		{"between runs 3+3, CV 5 %", analysis.MetricThroughput, 0.05, 3, 0, ""},
		{"between runs 5+5, CV 2 %", analysis.MetricThroughput, 0.02, 5, 0, ""},
		{"noise floor 1+1, CV 3 %, 30 df", analysis.MetricThroughput, 0.03, 1, 30, ""},
		{"p99 between runs 6+6, CV 20 %", analysis.MetricP99Latency, 0.20, 6, 0, ""},
		{"estimated: between runs 10+10, CV 5 %", analysis.MetricThroughput, 0.05, 10, 0, MagnitudeEstimated},
		{"estimated: noise floor 1+1, CV 3 %, 30 df", analysis.MetricThroughput, 0.03, 1, 30, MagnitudeEstimated},
		{"estimated: p99 between runs 6+6, CV 10 %", analysis.MetricP99Latency, 0.10, 6, 0, MagnitudeEstimated},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := MethodBetweenRuns
			if tt.floor > 0 {
				method = MethodNoiseFloor
			}
			change := detectable(PointVerdict{Method: method, Metric: tt.metric, CV: tt.cv, NBefore: tt.n, NAfter: tt.n, floorDF: tt.floor}, alpha, magnitude, tt.rule)
			if !(change > magnitude && change < 1) {
				t.Fatalf("detectable %v: want beyond the magnitude", change)
			}
			var fl *results.NoiseFloors
			if tt.floor > 0 {
				s := math.Sqrt(math.Log1p(tt.cv * tt.cv))
				fl = &results.NoiseFloors{Points: []results.NoisePoint{{Step: "s", Threads: 4, SigmaLog: s, CV: tt.cv, DF: tt.floor, Runs: tt.floor + 2, Sets: 2}}}
			}
			rng := rand.New(rand.NewPCG(uint64(i), 23))
			sigma := math.Sqrt(math.Log1p(tt.cv * tt.cv))
			draw := func(name string, factor float64) *results.Manifest {
				var cells []results.ManifestCell
				for r := range tt.n {
					rep := r + 1
					if tt.n == 1 {
						rep = 0
					}
					x := 1000 * factor * math.Exp(sigma*rng.NormFloat64())
					c := vcell(rep, "sha256:i", map[string]float64{"s": x}, 0)
					if tt.metric == analysis.MetricP99Latency {
						c.LatencyP99Ms = map[string]map[int]float64{"s": {4: x / 100}}
					}
					cells = append(cells, c)
				}
				return vmanifest(name, cells...)
			}
			worse := 1 - change // throughput falls by change
			if tt.metric.LowerIsBetter() {
				worse = 1 + change // latency rises by change
			}
			found := 0
			for range trials {
				v, err := JudgeRuns(draw("b", worse), draw("a", 1), VerdictOptions{Alpha: alpha, MinMagnitude: magnitude, MagnitudeRule: tt.rule, Floor: fl, Metrics: []analysis.Metric{tt.metric}})
				if err != nil {
					t.Fatal(err)
				}
				if len(v.Points) != 1 || v.Points[0].Method != method || !(v.Points[0].Detectable > 0) {
					t.Fatalf("points %+v: want one %s point with a detectable change", v.Points, method)
				}
				if len(v.Regressed) > 0 {
					found++
				}
			}
			rate := float64(found) / trials
			t.Logf("detectable %.1f %%: found in %d / %d (%.3f; power %.2f by design)", 100*change, found, trials, rate, DetectablePower)
			// Welch's test has fewer df than the design's pooled test
			// (3+3 at CV 5 %: 0.73 over 1,500 trials), and a floor known
			// exactly more: a few points either way, beyond 4 binomial
			// standard errors.
			if tol := 0.04 + 4*math.Sqrt(DetectablePower*(1-DetectablePower)/trials); math.Abs(rate-DetectablePower) > tol {
				t.Errorf("found in %.3f of trials, want %.2f ± %.3f", rate, DetectablePower, tol)
			}
		})
	}
}

// TestMagnitudeRules: where the two rules part. Tested asks the slowdown to
// be significantly beyond the magnitude, Estimated asks it to be
// significantly beyond 0 and measured at the magnitude or more.
func TestMagnitudeRules(t *testing.T) {
	steps := map[string]float64{"s": 1000}
	// Five repeats with a CV of about 3 %, and ten with about 1 %.
	noisy := []float64{1.03, 0.97, 1.0, 1.04, 0.96}
	tight := []float64{1.01, 0.99, 1.0, 1.005, 0.995, 1.01, 0.99, 1.0, 1.005, 0.995}
	scaled := func(fs []float64, by float64) []float64 {
		out := make([]float64, len(fs))
		for i, f := range fs {
			out[i] = f * by
		}
		return out
	}
	tests := []struct {
		name      string
		base, cur []float64
		magnitude float64
		rule      MagnitudeRule
		want      bool
	}{
		{"7 % slower, CV 3 %, 5+5: not significantly beyond 5 %", noisy, scaled(noisy, 0.93), 0.05, MagnitudeTested, false},
		{"the same, estimated: significant and 7 % >= 5 %", noisy, scaled(noisy, 0.93), 0.05, MagnitudeEstimated, true},
		{"the default rule is Tested", noisy, scaled(noisy, 0.93), 0.05, "", false},
		{"4 % slower, CV 1 %, 10+10, estimated: under the magnitude", tight, scaled(tight, 0.96), 0.05, MagnitudeEstimated, false},
		{"the same at magnitude 0: regressed under either rule", tight, scaled(tight, 0.96), 0, MagnitudeTested, true},
		{"the same at magnitude 0, estimated", tight, scaled(tight, 0.96), 0, MagnitudeEstimated, true},
		{"an A/A pair, estimated", noisy, scaled(noisy, 1), 0.05, MagnitudeEstimated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := JudgeRuns(vmanifest("b", repeats("sha256:i", steps, tt.cur, 0)...), vmanifest("a", repeats("sha256:i", steps, tt.base, 0)...),
				VerdictOptions{MinMagnitude: tt.magnitude, MagnitudeRule: tt.rule})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Points) != 1 || v.Points[0].Method != MethodBetweenRuns {
				t.Fatalf("points %+v: want one between-run point", v.Points)
			}
			if got := len(v.Regressed) > 0; got != tt.want {
				t.Errorf("regressed %v, want %v (%s, p %.4g)", got, tt.want, v.Points[0], v.Points[0].AdjustedP)
			}
			want := tt.rule
			if want == "" {
				want = MagnitudeTested
			}
			if v.MagnitudeRule != want {
				t.Errorf("verdict's rule %q, want %q", v.MagnitudeRule, want)
			}
		})
	}
	if _, err := JudgeRuns(vmanifest("b"), vmanifest("a"), VerdictOptions{MagnitudeRule: "Loose"}); !errors.Is(err, inference.ErrInvalid) {
		t.Errorf("an unknown rule: %v, want ErrInvalid", err)
	}
}

// TestLeastSensitiveSkipsUntestedPoints: the verdict's least sensitive
// point is the largest Detectable among tested points; a magnitude-only
// point has none.
func TestLeastSensitiveSkipsUntestedPoints(t *testing.T) {
	v := &Verdict{Points: []PointVerdict{
		{Step: "a", Detectable: 0.12},
		{Step: "b", Detectable: math.NaN()},
		{Step: "c", Detectable: 0.31},
		{Step: "d", Detectable: 0.2},
	}}
	if p, ok := v.LeastSensitive(); !ok || p.Step != "c" {
		t.Errorf("least sensitive %+v, %v: want c", p, ok)
	}
	if _, ok := (&Verdict{Points: []PointVerdict{{Step: "b", Detectable: math.NaN()}}}).LeastSensitive(); ok {
		t.Error("a verdict with no tested point has a least sensitive point")
	}
	mo, err := JudgeRuns(vmanifest("b", vcell(0, "sha256:i", map[string]float64{"s": 900}, 0)),
		vmanifest("a", vcell(0, "sha256:i", map[string]float64{"s": 1000}, 0)), VerdictOptions{MinMagnitude: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(mo.Points) != 1 || mo.Points[0].Method != MethodMagnitudeOnly || !math.IsNaN(mo.Points[0].Detectable) {
		t.Errorf("magnitude-only points %+v: want a NaN detectable", mo.Points)
	}
}
