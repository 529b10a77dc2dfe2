package plugin

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/results"
)

// withCounters gives a document's steps engine counters per op, from
// perOp[step] (a 10-s window at the step's QPS).
func withCounters(d *results.Document, perOp map[string]map[string]float64) *results.Document {
	for i := range d.Steps {
		s := &d.Steps[i]
		c, ok := perOp[s.Step]
		if !ok || s.SteadyQPS == 0 {
			continue
		}
		ops := s.SteadyQPS * 10
		delta := map[string]float64{}
		for n, v := range c {
			delta[n] = v * ops
		}
		s.Counters = &results.Counters{Source: "SHOW GLOBAL STATUS", Seconds: 10, OpsPerSecond: s.SteadyQPS, OpsBasis: "steadyQps",
			Operations: ops, PerOp: c, Delta: delta}
	}
	return d
}

// compare lists, for the step whose QPS moved (point-query on 11.4, -10 %),
// the counters per op that moved most, and leaves the steps that did not
// move out.
func TestCompareCounterMoves(t *testing.T) {
	root := t.TempDir()
	for _, run := range []struct {
		name  string
		scale float64
		reads float64
	}{{"before", 1, 0}, {"after", 0.9, 0.3}} {
		docs := twoCells(run.name, "s", t0, run.scale)
		for _, d := range docs {
			withCounters(d, map[string]map[string]float64{
				"point-query": {"Innodb_buffer_pool_reads": run.reads, "Innodb_buffer_pool_read_requests": 4, "Handler_read_key": 1},
				"update-one":  {"Innodb_os_log_written": 300 * run.scale},
			})
		}
		writeDocs(t, filepath.Join(root, run.name), docs...)
	}
	out, _, err := runCmd(t, noCluster{}, "compare", "before", "after", "--from-dir", root)
	if err != nil {
		t.Fatal(err)
	}
	want := `after vs before: engine counters per op that moved most, for steps whose QPS moved (1 threads)
cell               step         QPS after/before  counter                   before per op  after per op  after/before
mariadb-11-4-base  point-query  0.90              Innodb_buffer_pool_reads  0              0.3000        inf
`
	if !strings.Contains(out, want) {
		t.Errorf("compare lacks\n%s\nin:\n%s", want, out)
	}
	if !strings.Contains(out, "Engine counters per operation: point-query, 1 threads --- relative to before/mariadb-10-11-base") {
		t.Errorf("merged report lacks the counters tables:\n%s", out)
	}
	js, _, err := runCmd(t, noCluster{}, "compare", "before", "after", "--from-dir", root, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		CounterMoves []struct {
			Counter string  `json:"counter"`
			B       float64 `json:"b"`
		} `json:"counterMoves"`
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("json: %v", err)
	}
	if len(res.CounterMoves) != 1 || res.CounterMoves[0].Counter != "Innodb_buffer_pool_reads" || res.CounterMoves[0].B != 0.3 {
		t.Errorf("counterMoves %+v", res.CounterMoves)
	}
}
