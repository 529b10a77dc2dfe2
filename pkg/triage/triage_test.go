package triage

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/attribution"
	"github.com/dbbench/dbbench/pkg/results"
)

var nights = NewOrder([]string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"})

// slowdown is update-index@1 of cell db-11.4-base changing at n6 (n5 the
// last run before it).
var slowdown = Change{Cell: "db-11.4-base-r1", Combination: "db-11.4-base", Step: "update-index", Threads: 1, LastBefore: "n5", Since: "n6"}

func TestCovers(t *testing.T) {
	ack := func(f func(*Ack)) Ack {
		a := Ack{Name: "a", Suite: "s", Run: "n6", Resolution: ResolutionAcknowledged, Reason: "known"}
		if f != nil {
			f(&a)
		}
		return a
	}
	tests := []struct {
		name string
		ack  Ack
		c    Change
		want bool
	}{
		{"the change point's first run, every step", ack(nil), slowdown, true},
		{"a later run whose verdict reported it", ack(func(a *Ack) { a.Run = "n8" }), slowdown, true},
		{"the last run before the change is the old level", ack(func(a *Ack) { a.Run = "n5" }), slowdown, false},
		{"an earlier run", ack(func(a *Ack) { a.Run = "n2" }), slowdown, false},
		{"a later change is not covered by an ack of the earlier one",
			ack(func(a *Ack) { a.Run = "n6" }), Change{Cell: slowdown.Cell, Step: "update-index", Threads: 1, LastBefore: "n8", Since: "n9"}, false},
		{"an ack of the level after the next change covers that one, not this one",
			ack(func(a *Ack) { a.Run = "n9" }), Change{Cell: slowdown.Cell, Step: "update-index", Threads: 1, LastBefore: "n5", Since: "n6", Until: "n8"}, false},
		{"an ack of the level before the next change",
			ack(func(a *Ack) { a.Run = "n7" }), Change{Cell: slowdown.Cell, Step: "update-index", Threads: 1, LastBefore: "n5", Since: "n6", Until: "n8"}, true},
		{"the step named", ack(func(a *Ack) { a.Step = "update-index"; a.Threads = 1 }), slowdown, true},
		{"another step", ack(func(a *Ack) { a.Step = "point-query" }), slowdown, false},
		{"another thread count", ack(func(a *Ack) { a.Step = "update-index"; a.Threads = 8 }), slowdown, false},
		{"the cell by name", ack(func(a *Ack) { a.Cell = "db-11.4-base-r1" }), slowdown, true},
		{"the cell by combination", ack(func(a *Ack) { a.Cell = "db-11.4-base" }), slowdown, true},
		{"another cell", ack(func(a *Ack) { a.Cell = "db-10.11-base" }), slowdown, false},
		{"throughput by default", ack(func(a *Ack) { a.Metric = "Throughput" }), slowdown, true},
		{"another metric", ack(func(a *Ack) { a.Metric = "P99Latency" }), slowdown, false},
		{"a run out of the window covers nothing", ack(func(a *Ack) { a.Run = "n0" }), slowdown, false},
		{"no last run known: only the first run of the change",
			ack(nil), Change{Cell: "c", Step: "s", Threads: 1, LastBefore: "gone", Since: "n6"}, true},
		{"no last run known, another run",
			ack(func(a *Ack) { a.Run = "n7" }), Change{Cell: "c", Step: "s", Threads: 1, LastBefore: "gone", Since: "n6"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Covers(tt.ack, tt.c, nights); got != tt.want {
				t.Errorf("Covers = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchTakesTheFirstByName(t *testing.T) {
	acks := []Ack{{Name: "z", Run: "n6"}, {Name: "b", Run: "n7", Step: "point-query"}, {Name: "m", Run: "n7"}}
	got, ok := Match(acks, slowdown, nights)
	if !ok || got.Name != "m" {
		t.Errorf("Match = %v %v, want m", got.Name, ok)
	}
	if _, ok := Match(nil, slowdown, nights); ok {
		t.Error("Match of no acks found one")
	}
}

func manifest(run string, cells ...results.ManifestCell) *results.Manifest {
	return &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: run, Suite: "s"}, Cells: cells}
}

func cell(name, version string, qps map[string]map[int]float64) results.ManifestCell {
	return results.ManifestCell{Cell: results.Cell{Name: name, Database: "db", Version: version, Config: "base", Engine: "mariadb"}, Phase: "Succeeded", QPS: qps}
}

func TestCheck(t *testing.T) {
	qps := map[string]map[int]float64{"update-index": {1: 100, 8: 700}, "point-query": {1: 900}}
	runs := []*results.Manifest{manifest("n1", cell("db-11.4-base-r1", "11.4", qps)), manifest("n2", cell("db-11.4-base-r1", "11.4", qps))}
	ok := Ack{Name: "a", Suite: "s", Run: "n2", Reason: "r", Resolution: ResolutionAcknowledged}
	with := func(f func(*Ack)) Ack { a := ok; f(&a); return a }
	tests := []struct {
		name    string
		ack     Ack
		runs    []*results.Manifest
		wantErr string
	}{
		{"the whole run", ok, runs, ""},
		{"a step and thread count", with(func(a *Ack) { a.Step, a.Threads = "update-index", 8 }), runs, ""},
		{"a cell by combination", with(func(a *Ack) { a.Cell = "db-11.4-base" }), runs, ""},
		{"no runs", ok, nil, `suite "s" has no runs`},
		{"no such run", with(func(a *Ack) { a.Run = "n9" }), runs, `run "n9" is not a run of suite "s" (runs there: n1, n2)`},
		{"no such step", with(func(a *Ack) { a.Step = "oltp-read" }), runs, `step "oltp-read" is not measured by run "n2" of suite "s" (steps there: point-query, update-index)`},
		{"no such cell", with(func(a *Ack) { a.Cell = "pg" }), runs, `cell "pg" is not measured by run "n2" of suite "s" (cells there: db-11.4-base-r1)`},
		{"no such thread count of the step", with(func(a *Ack) { a.Step, a.Threads = "point-query", 8 }), runs, `threads "8" is not measured by run "n2" of suite "s" (thread counts there: 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.ack, tt.runs)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrNotFound) {
				t.Errorf("Check = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestAckDocument(t *testing.T) {
	a := Ack{Name: "slow-commits", Namespace: "bench", UID: "u", Suite: "s", Run: "n6", Step: "update-index", Threads: 1,
		Resolution: ResolutionAcknowledged, Reason: "durable commits, MDEV-1", Link: "https://jira.example/MDEV-1"}
	data, err := MarshalAck(a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalAck(data)
	a.SchemaVersion = AckSchemaV1
	if err != nil || !cmp.Equal(a, got) {
		t.Fatalf("round trip: %v %s", err, cmp.Diff(a, got))
	}
	for _, tt := range []struct{ name, data, want string }{
		{"not JSON", "<html>", "not a JSON document"},
		{"another version", `{"schemaVersion":"dbbench.io/ack/v2"}`, "dbbench.io/ack/v2"},
		{"a foreign JSON object", `{"hello":"world"}`, "schema"},
		{"missing fields", `{"schemaVersion":"dbbench.io/ack/v1","name":"x","resolution":"Acknowledged"}`, "suite, run, reason required"},
		{"unknown resolution", `{"schemaVersion":"dbbench.io/ack/v1","name":"x","suite":"s","run":"r","reason":"y","resolution":"Maybe"}`, `resolution "Maybe"`},
	} {
		if _, err := UnmarshalAck([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestVerdictDocument(t *testing.T) {
	v := Verdict{Run: "n7", Suite: "s", Against: "ChangePoints", Status: "True", Reason: "Regressed", Message: "m",
		Regressed: []VerdictPair{{Cell: "c", Step: "update-index", Threads: 1, ChangePercent: "-80.1", Since: "n6", LastBefore: "n5",
			BuildChanged: []attribution.Change{{Field: attribution.FieldImage, Before: "x:t5", After: "x:t6"}}}}}
	data, err := MarshalVerdict(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalVerdict(data)
	v.SchemaVersion = VerdictSchemaV1
	if err != nil || !cmp.Equal(v, got) {
		t.Fatalf("round trip: %v %s", err, cmp.Diff(v, got))
	}
	if _, err := UnmarshalVerdict([]byte(`{"schemaVersion":"dbbench.io/run-verdict/v1"}`)); err == nil {
		t.Error("a verdict without a run was accepted")
	}
	if s := got.Regressed[0].String(); s != "c update-index@1 -80.1%" {
		t.Errorf("String = %q", s)
	}
}

func TestScope(t *testing.T) {
	for _, tt := range []struct {
		a    Ack
		want string
	}{
		{Ack{Run: "n7"}, "the changes of run n7"},
		{Ack{Run: "n6", Step: "update-index", Threads: 1}, "update-index@1 from run n6"},
		{Ack{Run: "n6", Cell: "c", Step: "s", Metric: "P99Latency"}, "c s P99Latency from run n6"},
		{Ack{Run: "n6", Threads: 4}, "every step@4 from run n6"},
	} {
		if got := tt.a.Scope(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.a, got, tt.want)
		}
	}
}

func TestCombination(t *testing.T) {
	for _, tt := range []struct {
		c    results.Cell
		want string
	}{
		{results.Cell{Name: "db-11.4-base-r2", Database: "db", Version: "11.4", Config: "base"}, "db-11.4-base"},
		{results.Cell{Name: "x-r3", Engine: "mariadb"}, "x"},
		{results.Cell{Name: "x-rr"}, "x-rr"},
	} {
		if got := combination(tt.c); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.c, got, tt.want)
		}
	}
}
