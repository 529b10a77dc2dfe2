package regression

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

// blockedRun is one run of two versions of maria, "11.8" (the baseline)
// and "12.0", a repeat of each per block: cell r of a version ran in
// block r (0: not blocked). QPS of step s at 4 threads is 1000 × node[r]
// × (factor for 12.0) × noise[r][version].
func blockedRun(node []float64, factor float64, noise func(r, v int) float64, blocked bool) *results.Manifest {
	var cells []results.ManifestCell
	for v, version := range []string{"11.8", "12.0"} {
		for r, f := range node {
			q := 1000 * f * noise(r, v)
			if v == 1 {
				q *= factor
			}
			c := vcell(r+1, "sha256:"+version, map[string]float64{"point-query": q}, 0)
			c.Name = fmt.Sprintf("maria-%s-default-r%d", version, r+1)
			c.Version = version
			if blocked {
				c.Block = r + 1
			}
			cells = append(cells, c)
		}
	}
	m := vmanifest("night", cells...)
	m.Baseline = "maria-11.8-default-r1"
	return m
}

// TestJudgeBaselinePairsBlocks: two versions of one blocked run, judged
// against the run's baseline. Nodes 0.7–1.3 × apart, 1 % noise within a
// block, 12.0 10 % slower: paired by block, the slowdown is found; the
// same values without blocks are compared between repeats, whose noise is
// the nodes', and it is not. A cell without a block, or too few blocks,
// falls back to the between-repeat test.
func TestJudgeBaselinePairsBlocks(t *testing.T) {
	node := []float64{0.7, 1.0, 1.3, 0.9}
	quiet := func(r, v int) float64 { return 1 + 0.01*float64((r+v)%2*2-1) }
	opts := VerdictOptions{MinMagnitude: 0.05, MagnitudeRule: MagnitudeEstimated}
	for _, tc := range []struct {
		name         string
		m            *results.Manifest
		wantMethod   VerdictMethod
		wantRegress  bool
		wantNBlocks  int
		wantChangeLo float64 // ChangePercent in [lo, lo+2]
	}{
		{"blocked: paired, found", blockedRun(node, 0.9, quiet, true), MethodPairedBlocks, true, 4, -11},
		{"blocked A/A: paired, not regressed", blockedRun(node, 1, quiet, true), MethodPairedBlocks, false, 4, -1},
		{"not blocked: between repeats, the nodes' noise hides it", blockedRun(node, 0.9, quiet, false), MethodBetweenRuns, false, 4, -11},
		// One cell a side (and no spread, no floor): the magnitude alone.
		{"one block: not paired", blockedRun(node[:1], 0.9, quiet, true), MethodMagnitudeOnly, true, 1, -9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := JudgeBaseline(tc.m, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Points) != 1 {
				t.Fatalf("points %+v, want one: 12.0 against 11.8", v.Points)
			}
			p := v.Points[0]
			if p.Method != tc.wantMethod || (len(v.Regressed) > 0) != tc.wantRegress || p.NBefore != tc.wantNBlocks || p.NAfter != tc.wantNBlocks {
				t.Errorf("method %s, regressed %v, n %d+%d; want %s, %v, %d+%d (%s, p %.3g)", p.Method, len(v.Regressed) > 0, p.NBefore, p.NAfter,
					tc.wantMethod, tc.wantRegress, tc.wantNBlocks, tc.wantNBlocks, p.Detail, p.P)
			}
			if p.ChangePercent < tc.wantChangeLo || p.ChangePercent > tc.wantChangeLo+2 {
				t.Errorf("change %.2f %%, want in [%g, %g]", p.ChangePercent, tc.wantChangeLo, tc.wantChangeLo+2)
			}
			if v.Baseline != "maria-11.8-default" {
				t.Errorf("baseline %q, want the combination maria-11.8-default", v.Baseline)
			}
			if want := "maria-12.0-default"; p.Cell != want && p.Cell != want+"-r1" {
				t.Errorf("point of %q, want the combination %s (or its one cell)", p.Cell, want)
			}
		})
	}

	t.Run("a cell without its block", func(t *testing.T) {
		m := blockedRun(node, 0.9, quiet, true)
		m.Cells[len(m.Cells)-1].Block = 0
		v, err := JudgeBaseline(m, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Points[0].Method; got != MethodBetweenRuns {
			t.Errorf("method %s, want %s: a side with an unblocked cell is not paired", got, MethodBetweenRuns)
		}
	})
	t.Run("a latency is paired as its reciprocal", func(t *testing.T) {
		m := blockedRun(node, 1, quiet, true)
		for i := range m.Cells {
			c := &m.Cells[i]
			lat := 2 / c.QPS["point-query"][4] * 1000 // ms, 1/QPS of each block
			if c.Version == "12.0" {
				lat *= 1.2
			}
			c.LatencyP95Ms = map[string]map[int]float64{"point-query": {4: lat}}
		}
		o := opts
		o.Metrics = []analysis.Metric{analysis.MetricP95Latency}
		v, err := JudgeBaseline(m, o)
		if err != nil {
			t.Fatal(err)
		}
		p := v.Points[0]
		if p.Method != MethodPairedBlocks || len(v.Regressed) != 1 || math.Abs(p.ChangePercent-20) > 1 {
			t.Errorf("%s, change %.2f %%, regressed %d: want a paired +20 %% p95 regressed", p.Method, p.ChangePercent, len(v.Regressed))
		}
	})
	t.Run("the baseline is not a cell", func(t *testing.T) {
		m := blockedRun(node, 0.9, quiet, true)
		m.Baseline = "maria-10.0-default"
		if _, err := JudgeBaseline(m, opts); !errors.Is(err, inference.ErrInvalid) {
			t.Errorf("error %v, want ErrInvalid naming the baseline", err)
		}
	})
}

// TestJudgeBaselineAAFalsePositiveRate: A/A runs of 5 blocks whose node
// effects have a CV of 20 % and whose within-block noise is 3 %: the
// paired verdict calls at most α of them regressed (Tested magnitude 0,
// the strictest: every slower estimate is a candidate), and finds a 10 %
// slowdown where the between-repeat test of the same values cannot.
func TestJudgeBaselineAAFalsePositiveRate(t *testing.T) {
	const trials, blocks, alpha = 600, 5, 0.05
	rng := rand.New(rand.NewPCG(5, 29))
	draw := func(factor float64, blocked bool) *results.Manifest {
		node := make([]float64, blocks)
		for i := range node {
			node[i] = math.Exp(0.2 * rng.NormFloat64())
		}
		e := make([][2]float64, blocks)
		for i := range e {
			e[i] = [2]float64{math.Exp(0.03 * rng.NormFloat64()), math.Exp(0.03 * rng.NormFloat64())}
		}
		return blockedRun(node, factor, func(r, v int) float64 { return e[r][v] }, blocked)
	}
	rate := func(factor float64, blocked bool) float64 {
		n := 0
		for range trials {
			v, err := JudgeBaseline(draw(factor, blocked), VerdictOptions{Alpha: alpha})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Regressed) > 0 {
				n++
			}
		}
		return float64(n) / trials
	}
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/trials)
	aa, found, unpaired := rate(1, true), rate(0.9, true), rate(0.9, false)
	t.Logf("A/A %.3f (limit %.3f); 10 %% slower: paired %.3f, between repeats %.3f", aa, limit, found, unpaired)
	if aa > limit {
		t.Errorf("paired A/A false-positive rate %.3f over %.3f", aa, limit)
	}
	if !(found > 0.9) || !(unpaired < 0.5) {
		t.Errorf("10 %% slower found %.3f of the time paired, %.3f between repeats: want > 0.9 and < 0.5", found, unpaired)
	}
}

// TestJudgeBaselineListsTheBaselinesInvalidValuesOnce: three versions
// judged against one baseline whose repeat 1 has an invalid value: the
// verdict leaves it out once, not once per compared combination.
func TestJudgeBaselineListsTheBaselinesInvalidValuesOnce(t *testing.T) {
	m := blockedRun([]float64{1, 1, 1}, 1, func(int, int) float64 { return 1 }, true)
	for _, c := range blockedRun([]float64{1, 1, 1}, 1, func(int, int) float64 { return 1 }, true).Cells[3:] {
		c.Name, c.Version = strings.Replace(c.Name, "12.0", "12.1", 1), "12.1"
		m.Cells = append(m.Cells, c)
	}
	m.Cells[0].Invalid = map[string]map[int][]results.QualityReason{"point-query": {4: {results.QualityStalled}}}
	v, err := JudgeBaseline(m, VerdictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Pairs(); got != 2 {
		t.Errorf("%d pairs, want 12.0 and 12.1 against 11.8", got)
	}
	if len(v.Invalid) != 1 || v.Invalid[0].Run != RunBaseline || v.Invalid[0].Cell != "maria-11.8-default-r1" {
		t.Errorf("invalid %+v, want the baseline's one value once", v.Invalid)
	}
}
