package explain

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/results"
)

// doc is one cell's document with step update-index@1 carrying counters
// per op and, when folded is set, a profile at profileThreads.
func doc(perOp map[string]float64, folded string, profileThreads int, qps ...float64) *results.Document {
	q := 1000.0
	if len(qps) > 0 {
		q = qps[0]
	}
	d := &results.Document{Steps: []results.StepResult{{Step: "update-index", Threads: 1, SteadyQPS: q, Counters: &results.Counters{PerOp: perOp}}}}
	if folded != "" {
		d.Steps = append(d.Steps, results.StepResult{Step: "update-index", Threads: profileThreads,
			Profile: &results.Profile{Folded: folded, Samples: 100}})
	}
	return d
}

func TestExplain(t *testing.T) {
	fast := "mariadbd;do_command;mysql_execute_command;ha_innobase::update_row 80\nmariadbd;do_command;log_write_up_to 20\n"
	durable := "mariadbd;do_command;mysql_execute_command;ha_innobase::update_row 40\nmariadbd;do_command;log_write_up_to;os_file_flush 60\n"
	good := []*results.Document{
		doc(map[string]float64{"Innodb_os_log_fsyncs": 0.01, "Handler_update": 1, "Innodb_log_writes": 0.5}, fast, 2),
		doc(map[string]float64{"Innodb_os_log_fsyncs": 0.03, "Handler_update": 1, "Innodb_log_writes": 0.5}, "", 0),
	}
	bad := []*results.Document{
		doc(map[string]float64{"Innodb_os_log_fsyncs": 1.0, "Handler_update": 1.01, "Innodb_log_writes": 1.0, "Binlog_commits": 1}, durable, 2),
	}
	e, err := Explain(good, bad, "update-index", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	// fsyncs ×50 first, then log writes ×2; Handler_update moved 1 %: not
	// listed; Binlog_commits is on one side only.
	if len(e.Counters) != 2 || e.Counters[0].Name != "Innodb_os_log_fsyncs" || math.Abs(e.Counters[0].Ratio-50) > 1e-9 ||
		e.Counters[0].GoodCells != 2 || e.Counters[0].BadCells != 1 || e.Counters[1].Name != "Innodb_log_writes" {
		t.Fatalf("counters %+v", e.Counters)
	}
	// The profiles are at 2 threads: the step's only profiles.
	if e.ProfileThreads != 2 || e.GoodSamples != 100 || e.BadSamples != 100 || len(e.Functions) == 0 {
		t.Fatalf("profiles: threads %d samples %d/%d functions %+v", e.ProfileThreads, e.GoodSamples, e.BadSamples, e.Functions)
	}
	if f := e.Functions[0]; f.Function != "os_file_flush" || math.Abs(f.SelfDelta-0.6) > 1e-9 {
		t.Fatalf("top function %+v, want os_file_flush +60 points", f)
	}
	svg, err := e.FlameGraph("t5 against t4")
	if err != nil || !strings.Contains(string(svg), "os_file_flush") {
		t.Fatalf("flame graph (%v): %d bytes without os_file_flush", err, len(svg))
	}
}

func TestExplainWithoutProfiles(t *testing.T) {
	good := []*results.Document{doc(map[string]float64{"Innodb_os_log_fsyncs": 0}, "", 0)}
	bad := []*results.Document{doc(map[string]float64{"Innodb_os_log_fsyncs": 1}, "", 0)}
	e, err := Explain(good, bad, "update-index", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Counters) != 1 || !math.IsInf(e.Counters[0].Ratio, 1) || len(e.Functions) != 0 || len(e.Notes) != 1 || !strings.Contains(e.Notes[0], "no profile of update-index") {
		t.Fatalf("explanation %+v", e)
	}
	if svg, err := e.FlameGraph("x"); svg != nil || err != nil {
		t.Fatalf("a flame graph without profiles: %d bytes, %v", len(svg), err)
	}
	// Nothing moved and nothing profiled: an error that says so.
	same := []*results.Document{doc(map[string]float64{"Handler_update": 1}, "", 0)}
	if _, err := Explain(same, same, "update-index", 1, 3); !errors.Is(err, ErrNothing) {
		t.Fatalf("error %v, want ErrNothing", err)
	}
}

// A counter bumped a fixed number of times per window (the agent's own
// SHOW GLOBAL STATUS) rises per operation exactly as the throughput falls:
// it is left out and named in a note; a counter that moved further stays.
func TestExplainLeavesOutCountsPerWindow(t *testing.T) {
	good := []*results.Document{doc(map[string]float64{"Created_tmp_tables": 0.00003, "Innodb_data_fsyncs": 0.0006, "Handler_commit": 1}, "", 0, 10000)}
	bad := []*results.Document{doc(map[string]float64{"Created_tmp_tables": 0.0012, "Innodb_data_fsyncs": 1.0, "Handler_commit": 2}, "", 0, 250)}
	e, err := Explain(good, bad, "update-index", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range e.Counters {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "Innodb_data_fsyncs,Handler_commit" {
		t.Fatalf("counters %v, want the fsyncs and commits without the per-window count", names)
	}
	if len(e.Notes) == 0 || !strings.Contains(e.Notes[0], "Created_tmp_tables") {
		t.Fatalf("notes %q do not name the counter left out", e.Notes)
	}
}
