package changepoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// The cross-check against Apache Otava runs only when OTAVA_PYTHON names a
// python interpreter that has apache-otava installed:
//
//	python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
//	OTAVA_PYTHON=/tmp/otava/bin/python go test -run OtavaCrossCheck -v ./pkg/changepoint/

type otavaCP struct {
	Index        int     `json:"index"`
	PValue       float64 `json:"pvalue"`
	MeanBefore   float64 `json:"mean_before"`
	MeanAfter    float64 `json:"mean_after"`
	StddevBefore float64 `json:"stddev_before"`
	StddevAfter  float64 `json:"stddev_after"`
}

type otavaOutput struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Results    []struct {
		Name         string    `json:"name"`
		ChangePoints []otavaCP `json:"change_points"`
		Weak         []int     `json:"weak"`
	} `json:"results"`
}

type namedValues struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

func otavaPython(t testing.TB) string {
	py := os.Getenv("OTAVA_PYTHON")
	if py == "" {
		t.Skip("OTAVA_PYTHON not set; see the comment in otava_test.go")
	}
	return py
}

// crossCheckScript is relative to this package's directory, where go test
// runs the test binary (make test builds with -trimpath, so the test's own
// file name from runtime.Caller would not be a path on disk).
func crossCheckScript() string {
	return filepath.Join("..", "..", "hack", "otava-crosscheck.py")
}

// runOtava runs the script in json mode on series with Otava's defaults.
func runOtava(t testing.TB, series []namedValues) otavaOutput {
	res, err := otavaJSON(otavaPython(t), t.TempDir(), series)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func otavaJSON(py, dir string, series []namedValues) (otavaOutput, error) {
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	doc := map[string]any{
		"options": map[string]any{"window_len": DefaultWindowLen, "max_pvalue": DefaultMaxPValue, "min_magnitude": 0.0},
		"series":  series,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return otavaOutput{}, err
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		return otavaOutput{}, err
	}
	return otavaExec(py, "json", in, out)
}

func execOtava(t testing.TB, mode, in, out string) otavaOutput {
	res, err := otavaExec(otavaPython(t), mode, in, out)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func otavaExec(py, mode, in, out string) (otavaOutput, error) {
	cmd := exec.Command(py, crossCheckScript(), mode, in, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return otavaOutput{}, fmt.Errorf("otava-crosscheck.py %s: %v\n%s", mode, err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return otavaOutput{}, err
	}
	var res otavaOutput
	return res, json.Unmarshal(b, &res)
}

// crossCheckSeries is a mix of the shapes the detector meets: steps, several
// shifts, outliers anywhere, noise only, constants, short series.
func crossCheckSeries() []namedValues {
	var out []namedValues
	add := func(name string, xs []float64) { out = append(out, namedValues{name, xs}) }
	for seed := range uint64(40) {
		pos := 5 + int(seed*13)%190
		add(fmt.Sprintf("step-%d", seed), synth(seed, 0.01, segment{pos, 1000}, segment{200 - pos, 950}))
		add(fmt.Sprintf("noise-%d", seed), synth(100+seed, 0.02, segment{150 + int(seed)*5, 1000}))
		add(fmt.Sprintf("outlier-%d", seed), withOutliers(synth(200+seed, 0.01, segment{100, 1000}), 1.5, int(seed*7)%100))
		add(fmt.Sprintf("shifts-%d", seed), synth(300+seed, 0.015,
			segment{20 + int(seed), 1000}, segment{30, 930}, segment{5 + int(seed)%7, 1010}, segment{60, 1080}))
		add(fmt.Sprintf("short-%d", seed), synth(400+seed, 0.01, segment{1 + int(seed)/4, 10}, segment{1 + int(seed)%5, 12}))
	}
	add("constant", constant(80, 42))
	add("constant-then-shift", append(constant(30, 100), constant(30, 110)...))
	for i, xs := range benchSuite(32, 1000) {
		add(fmt.Sprintf("bench-%02d", i), xs)
	}
	return out
}

func TestOtavaCrossCheck(t *testing.T) {
	series := crossCheckSeries()
	res := runOtava(t, series)
	if len(res.Results) != len(series) {
		t.Fatalf("Otava returned %d results for %d series", len(res.Results), len(series))
	}
	d, err := NewDetector(OtavaOptions())
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool {
		return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	}
	var totalPoints, mismatched, statMismatch int
	for i, s := range series {
		got, err := d.DetectSeries(Series{Name: s.Name, Values: s.Values})
		if err != nil {
			t.Fatal(err)
		}
		want := res.Results[i].ChangePoints
		totalPoints += len(want)
		wantIdx := []int{}
		for _, c := range want {
			wantIdx = append(wantIdx, c.Index)
		}
		if !slices.Equal(wantIdx, indices(got.ChangePoints)) {
			mismatched++
			t.Errorf("%s: change points %v, Otava %v (weak: ours %v, Otava %v)",
				s.Name, indices(got.ChangePoints), wantIdx, indices(got.Weak), res.Results[i].Weak)
			continue
		}
		for j, w := range want {
			g := got.ChangePoints[j]
			pOK := math.Abs(g.PValue-w.PValue) <= 1e-9*math.Max(w.PValue, 1e-300) || math.Abs(g.PValue-w.PValue) < 1e-12
			if !pOK || !near(g.MeanBefore, w.MeanBefore) || !near(g.MeanAfter, w.MeanAfter) ||
				!near(g.StddevBefore, w.StddevBefore) || !near(g.StddevAfter, w.StddevAfter) {
				statMismatch++
				t.Errorf("%s @%d: ours p=%g means %g/%g sd %g/%g; Otava p=%g means %g/%g sd %g/%g", s.Name, w.Index,
					g.PValue, g.MeanBefore, g.MeanAfter, g.StddevBefore, g.StddevAfter,
					w.PValue, w.MeanBefore, w.MeanAfter, w.StddevBefore, w.StddevAfter)
			}
		}
	}
	t.Logf("Otava 0.8.0 cross-check: %d series, %d change points; index mismatches in %d series, statistic mismatches %d",
		len(series), totalPoints, mismatched, statMismatch)
}

// TestOtavaCrossCheckCSV writes series with WriteOtavaCSV, has Otava load the
// file with its own CSV importer and analyse it with its defaults, and
// compares with DetectSeries under OtavaOptions.
func TestOtavaCrossCheckCSV(t *testing.T) {
	otavaPython(t)
	// Otava's CSV importer keeps only the last 365 days by default.
	t0 := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Second)
	n := 240
	var series []Series
	for m, factor := range []float64{0.9, 0.95, 1.06, 1.1} {
		xs := synth(uint64(600+m), 0.01, segment{80 + 10*m, 1000}, segment{n - 80 - 10*m, 1000 * factor})
		series = append(series, Series{Name: fmt.Sprintf("step_%d", m), Values: xs})
	}
	times := make([]time.Time, n)
	labels := make([]string, n)
	for i := range n {
		times[i] = t0.Add(time.Duration(i) * time.Hour)
		labels[i] = fmt.Sprintf("v1.%d", i)
	}
	series[0].Times, series[0].Labels = times, labels
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.json")
	var buf bytes.Buffer
	if err := WriteOtavaCSV(&buf, series); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res := execOtava(t, "csv", in, out)
	d, _ := NewDetector(OtavaOptions())
	for i, s := range series {
		got, err := d.DetectSeries(s)
		if err != nil {
			t.Fatal(err)
		}
		wantIdx := []int{}
		for _, c := range res.Results[i].ChangePoints {
			wantIdx = append(wantIdx, c.Index)
		}
		if res.Results[i].Name != s.Name || !slices.Equal(wantIdx, indices(got.ChangePoints)) {
			t.Errorf("%s: ours %v, Otava (%s, via CSV) %v", s.Name, indices(got.ChangePoints), res.Results[i].Name, wantIdx)
		}
		if len(wantIdx) == 0 {
			t.Errorf("%s: Otava found no change point; the CSV path is not exercised", s.Name)
		}
	}
}

// TestOtavaSpeed times Otava and this package on the benchmark data set
// (32 metrics × 1,000 runs) and logs the ratio.
func TestOtavaSpeed(t *testing.T) {
	data := benchSuite(32, 1000)
	var nv []namedValues
	series := make([]Series, len(data))
	for i, xs := range data {
		nv = append(nv, namedValues{fmt.Sprintf("m%02d", i), xs})
		series[i] = Series{Name: nv[i].Name, Values: xs}
	}
	res := runOtava(t, nv)
	bench := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			if _, err := DetectAll(series, OtavaOptions()); err != nil {
				b.Fatal(err)
			}
		}
	})
	ours := time.Duration(bench.NsPerOp())
	t.Logf("32 metrics × 1,000 runs, Otava settings: Otava 0.8.0 %.3f s, dbbench %v (GOMAXPROCS %d): %.0f× faster",
		res.Seconds, ours, runtime.GOMAXPROCS(0), res.Seconds/ours.Seconds())
}
