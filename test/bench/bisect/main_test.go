package main

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
)

func testConfig() config {
	return config{Candidates: 8, Cases: []int{10, 20, 0}, Bisections: 2, Seed: 1, Steps: []string{"read-only-count"}, Threads: 8,
		Quota: 0.4, Busy: 1, BusyIn: "server", Load: "null", Magnitude: 0.05, MagnitudeRule: "Estimated", MaxPValue: 0.05,
		Confidence: 0.9, Repeats: 3, Parallelism: 1, MaxCells: 200}
}

// TestCellOrder: repeats outermost, the points in order, reversed in odd
// rounds.
func TestCellOrder(t *testing.T) {
	got := cellOrder([]int{0, 4, 9}, 2, 1)
	want := []cellRef{{9, 0}, {4, 0}, {0, 0}, {9, 1}, {4, 1}, {0, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("round 1: %v, want %v", got, want)
	}
	if got := cellOrder([]int{0, 9}, 1, 2); !slices.Equal(got, []cellRef{{0, 0}, {9, 0}}) {
		t.Errorf("round 2: %v", got)
	}
}

// TestBisectionCases: culprits among the builds that can be the first bad
// one; builds from the culprit on at the slowed quota; the busy loop in
// every other round of null bisections only, from round 0 in every other
// one.
func TestBisectionCases(t *testing.T) {
	c := testConfig()
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[int]bool{}
	for i := range 400 {
		b := newBisection(c, i, 10, i, rng)
		if b.culprit < 1 || b.culprit > c.Candidates+1 {
			t.Fatalf("culprit %d outside 1..%d", b.culprit, c.Candidates+1)
		}
		seen[b.culprit] = true
		if b.scale(b.culprit-1) != 100 || b.scale(b.culprit) != 90 || b.scale(c.Candidates+1) != 90 {
			t.Fatalf("culprit %d: scales %d %d", b.culprit, b.scale(b.culprit-1), b.scale(b.culprit))
		}
		if b.busyIn(0) || b.busyIn(1) {
			t.Fatal("a slowdown bisection ran the busy loop under -load null")
		}
	}
	if len(seen) != c.Candidates+1 {
		t.Errorf("culprits drawn: %v", seen)
	}
	for i, first := range []bool{false, true} {
		b := newBisection(c, i, 0, i, rng)
		if b.culprit != 0 || b.scale(c.Candidates+1) != 100 {
			t.Errorf("null bisection: culprit %d", b.culprit)
		}
		if b.busyIn(0) != first || b.busyIn(1) == first || b.busyIn(2) != first {
			t.Errorf("null bisection %d: busy in rounds 0–2: %v %v %v", i, b.busyIn(0), b.busyIn(1), b.busyIn(2))
		}
	}
}

// fakeServer measures cells in a synthetic world and logs them as the live
// source does: log-normal noise of a CV, the quota's slowdown exactly, the
// busy loop multiplying a round's throughput.
type fakeServer struct {
	rng  *rand.Rand
	cv   float64
	busy float64
	log  *logWriter
}

var fakeKey = bisect.Key{Step: "read-only-count", Threads: 8, Metric: analysis.MetricThroughput}

func (f *fakeServer) round(_ context.Context, b *bisection, ri int, r bisect.Round) error {
	return f.log.round(b, ri, r)
}

func (f *fakeServer) cell(_ context.Context, b *bisection, ri int, ref cellRef) (map[bisect.Key]float64, string, error) {
	q := 1500 * float64(b.scale(ref.point)) / 100 * math.Exp(f.rng.NormFloat64()*f.cv)
	if b.busyIn(ri) {
		q *= f.busy
	}
	v := map[bisect.Key]float64{fakeKey: q}
	failed := ""
	if b.index == 0 && ri == 0 && ref.point == 0 && ref.repeat == 2 {
		failed = "a cell that failed" // the round goes on without it
		v = nil
	}
	_, err := f.log.cell(b, ri, ref, v, failed, 12, 0.98)
	return v, failed, err
}

// writeFakeLog runs c's bisections on a fake server into a log, as run
// does on the real one.
func writeFakeLog(t *testing.T, c config) (string, []*bisection) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lw := &logWriter{f: f}
	if err := lw.write(configRec{Type: recConfig, Started: "test", Config: c}); err != nil {
		t.Fatal(err)
	}
	src := &fakeServer{rng: rand.New(rand.NewPCG(7, 7)), cv: 0.03, busy: 0.7, log: lw}
	rng := rand.New(rand.NewPCG(c.Seed, 1))
	var done []*bisection
	for i := range c.Bisections {
		for _, s := range c.Cases {
			b := newBisection(c, len(done), s, i, rng)
			if err := lw.write(bisectionRec{Type: recBisection, Bisection: b.index, Slowdown: s, Culprit: b.culprit}); err != nil {
				t.Fatal(err)
			}
			if err := search(context.Background(), c, b, src); err != nil {
				t.Fatal(err)
			}
			if err := lw.write(b.result()); err != nil {
				t.Fatal(err)
			}
			done = append(done, b)
		}
	}
	// An unfinished bisection: its start and one cell.
	_ = lw.write(bisectionRec{Type: recBisection, Bisection: len(done), Slowdown: 10, Culprit: 4})
	return path, done
}

// TestReplayReachesTheLoggedDecisions: a log replayed with its own rule
// reaches every logged outcome, build, cell count and round count; the
// pool measures the quotas' slowdowns and the busy loop's shift; another
// rule replays from the same cells as far as they go.
func TestReplayReachesTheLoggedDecisions(t *testing.T) {
	c := testConfig()
	path, done := writeFakeLog(t, c)
	l, err := readLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.bisections) != len(done)+1 || l.config.Repeats != 3 {
		t.Fatalf("read %d bisections, config %+v", len(l.bisections), l.config)
	}
	got, check, err := replayAll(context.Background(), l, l.config)
	if err != nil {
		t.Fatal(err)
	}
	if !check.sameRule || check.compared != len(done) || check.matched != len(done) || check.incomplete != 1 {
		t.Fatalf("replay check %+v, want all %d matched and 1 incomplete", check, len(done))
	}
	right := 0
	for i, b := range got {
		if b.outcome != done[i].outcome || b.named != done[i].named || !sameFloat(b.confidence, done[i].confidence) {
			t.Errorf("bisection %d: replayed %s %d %v, ran %s %d %v", i, b.outcome, b.named, b.confidence, done[i].outcome, done[i].named, done[i].confidence)
		}
		if b.right() {
			right++
		}
		if b.slowdown == 0 && b.localized() {
			t.Errorf("null bisection %d Localized", i)
		}
	}
	if right < 3 {
		t.Errorf("%d of 4 slowdown bisections right at a 3 %% CV", right)
	}
	p := newPool(l)
	if d := math.Exp(p.delta[90][fakeKey]); math.Abs(d-0.9) > 0.03 {
		t.Errorf("realised ratio at 90 %%: %.3f", d)
	}
	if d := math.Exp(p.delta[80][fakeKey]); math.Abs(d-0.8) > 0.03 {
		t.Errorf("realised ratio at 80 %%: %.3f", d)
	}
	if s := math.Exp(p.busyShift[fakeKey]); p.busyRounds[0] == 0 || p.busyRounds[1] == 0 || math.Abs(s-0.7) > 0.05 {
		t.Errorf("busy shift %.3f over %v idle and busy rounds", s, p.busyRounds)
	}
	if sd := p.sigma[fakeKey]; sd < 0.02 || sd > 0.04 || p.failed == 0 {
		t.Errorf("noise %.3f, %d failed cells", sd, p.failed)
	}

	// A stricter confidence asks for rounds or points the log lacks in
	// some bisections: those end "exhausted", none fails.
	strict := l.config
	strict.Confidence = 0.999
	got, check, err = replayAll(context.Background(), l, strict)
	if err != nil || check.sameRule || len(got) != len(done) {
		t.Fatalf("strict replay: %v, %+v, %d", err, check, len(got))
	}

	reportHas(t, l, done, &check, 20,
		"real bisections (every cell on the server):",
		"resampled bisections (20 per case, seed 1;",
		"goal (resampled), right build at 10 % ≥ 0.90: ",
		"goal (resampled), null bisections Localized ≤ α 0.05: ",
		"stated probability of the named build")
}

// reportHas checks that the report of bs (resample per case) has every
// line in wants.
func reportHas(t *testing.T, l *runLog, bs []*bisection, check *replayCheck, resample int, wants ...string) {
	t.Helper()
	var out bytes.Buffer
	report(&out, l.config, l, bs, check, resample, 0)
	for _, want := range wants {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// TestFiguresFromARealLog: the committed log of the run docs/benchmarks.md
// quotes (9 real bisections, 1 h 20 min) replays to every logged decision,
// and its figures are the ones quoted: the real bisections per case, the
// realised slowdown and the busy loop's shift, and resampled searches
// that find the 10 % slowdown.
func TestFiguresFromARealLog(t *testing.T) {
	l, got, check := replayTestdata(t, "run-2026-11-26.jsonl")
	if !check.sameRule || check.compared != 9 || check.matched != 9 || check.incomplete != 0 {
		t.Fatalf("replay %+v, want 9 of 9 matched", check)
	}
	for _, tt := range []struct{ slowdown, n, localized, right int }{{10, 5, 5, 5}, {20, 2, 2, 2}, {0, 2, 0, 0}} {
		s := summarize(got, tt.slowdown)
		if s.n != tt.n || s.localized != tt.localized || s.right != tt.right {
			t.Errorf("%s: %d bisections, %d Localized, %d right; want %d, %d, %d", caseName(tt.slowdown), s.n, s.localized, s.right, tt.n, tt.localized, tt.right)
		}
	}
	p := newPool(l)
	k := bisect.Key{Step: "read-only-count", Threads: 8, Metric: analysis.MetricThroughput}
	if r := math.Exp(p.delta[90][k]); r < 0.89 || r > 0.905 || p.deltaRounds[90] != 27 {
		t.Errorf("realised ratio at 90 %%: %.3f over %d rounds", r, p.deltaRounds[90])
	}
	if s := math.Exp(p.busyShift[k]); s < 0.8 || s > 0.83 {
		t.Errorf("busy / idle %.3f", s)
	}

	bs, err := resampleAll(context.Background(), l.config, p, 30)
	if err != nil {
		t.Fatal(err)
	}
	if s := summarize(bs, 10); s.n != 30 || s.right < 26 {
		t.Errorf("resampled at 10 %%: %d of %d right", s.right, s.n)
	}
	if s := summarize(bs, 0); s.localized > 0 {
		t.Errorf("resampled null: %d of %d Localized", s.localized, s.n)
	}
	reportHas(t, l, got, &check, 30,
		"the log's rule and limits; 9 of 9 bisections reach the logged outcome, build, cells and rounds",
		"quota 90 %: realised ratio 0.897 [0.890, 0.904] over 27 rounds",
		"goal (real), right build at 10 % ≥ 0.90: 5 / 5 = 1.00 [0.48, 1.00]; met: yes",
		"goal (real), null bisections Localized ≤ α 0.05: 0 / 2 = 0.00 [0.00, 0.84]; met: yes",
		"resampled bisections (30 per case, seed 1;")
}

// TestNullFiguresFromARealLog: the second run's log (9 null bisections,
// the busy loop in the server's CPU group every other round) replays to
// its decisions: none Localized, the busy rounds about a quarter slower.
func TestNullFiguresFromARealLog(t *testing.T) {
	l, got, check := replayTestdata(t, "run-2026-11-26-null.jsonl")
	if check.compared != 9 || check.matched != 9 {
		t.Fatalf("replay %+v, want 9 of 9 matched", check)
	}
	if s := summarize(got, 0); s.n != 9 || s.localized != 0 || s.rounds != 19 {
		t.Errorf("null: %d bisections, %d Localized, %d rounds", s.n, s.localized, s.rounds)
	}
	p := newPool(l)
	k := bisect.Key{Step: "read-only-count", Threads: 8, Metric: analysis.MetricThroughput}
	if s := math.Exp(p.busyShift[k]); s < 0.75 || s > 0.79 || p.busyRounds != [2]int{11, 8} {
		t.Errorf("busy / idle %.3f over %v rounds", s, p.busyRounds)
	}
}

// replayTestdata replays a committed log with its own rule.
func replayTestdata(t *testing.T, name string) (*runLog, []*bisection, replayCheck) {
	t.Helper()
	l, err := readLog(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	got, check, err := replayAll(context.Background(), l, l.config)
	if err != nil {
		t.Fatal(err)
	}
	return l, got, check
}
