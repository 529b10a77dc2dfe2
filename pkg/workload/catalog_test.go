package workload

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStandardCatalogMatchesTheMethodology(t *testing.T) {
	steps := Standard()
	if len(steps) != 32 {
		t.Fatalf("%d standard steps, want 32", len(steps))
	}
	groups := map[Group]int{}
	for i, s := range steps {
		groups[s.Group]++
		if s.Script == "" || s.QueriesPerEvent < 1 {
			t.Errorf("step %d %s: script %q, q/evt %d", i+1, s.Name, s.Script, s.QueriesPerEvent)
		}
	}
	// Methodology §2: writes are 1–8 and 31–32; the reads in between.
	want := map[Group]int{GroupWrite: 10, GroupPoint: 9, GroupRangeNoAgg: 5, GroupRangeAgg: 8}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("steps per group (-want +got):\n%s", diff)
	}
	for name, want := range map[string]struct {
		qpe      int
		duration DurationClass
	}{
		"write-only": {6, ReadDuration}, "read-write_range=10": {20, WriteDuration}, "read-only_range=100": {16, ReadDuration},
		"read-only-sum": {13, ReadDuration}, "read-only-count": {1, ReadDuration}, "insert": {1, WriteDuration},
	} {
		s, _ := Lookup(name)
		if s.QueriesPerEvent != want.qpe || s.Duration != want.duration {
			t.Errorf("%s: q/evt %d duration %s, want %d %s", name, s.QueriesPerEvent, s.Duration, want.qpe, want.duration)
		}
	}
	if s, _ := Lookup("scan"); !s.RowsPerSecond {
		t.Error("scan is reported as rows/s")
	}
}

func TestExtendedRunsPreStepsFirst(t *testing.T) {
	ext := Extended()
	if len(ext) != 42 {
		t.Fatalf("%d extended steps, want 42", len(ext))
	}
	for i, s := range ext[:10] {
		if !strings.HasSuffix(s.Name, PreSuffix) || s.Phase != PhasePreWrite || Reported(s.Name) {
			t.Errorf("extended[%d] = %s (%s)", i, s.Name, s.Phase)
		}
	}
	if diff := cmp.Diff(Standard(), ext[10:]); diff != "" {
		t.Errorf("the 32 follow the pre steps:\n%s", diff)
	}
}

func TestResolve(t *testing.T) {
	got, err := Resolve([]string{"insert", "point-query.pre"})
	if err != nil || got[0].Name != "insert" || got[1].Group != GroupPoint {
		t.Fatalf("Resolve: %+v %v", got, err)
	}
	_, err = Resolve([]string{"point-query", "point-querry"})
	if err == nil || !strings.Contains(err.Error(), `steps[1]: "point-querry" is not in the step catalog`) {
		t.Errorf("unknown step error: %v", err)
	}
	_, err = Resolve([]string{"read-only_range=50"})
	if err == nil || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("suggestion missing: %v", err)
	}
	if _, err := BySet("bogus"); err == nil {
		t.Error("unknown set accepted")
	}
}

// The CRD's CEL rule lists the catalog's names (the API server cannot call
// Go); this keeps the two from drifting apart.
func TestCRDStepListMatchesTheCatalog(t *testing.T) {
	types, err := os.ReadFile("../../api/v1alpha1/benchmarkrun_types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`self\.steps\.all\(s, s in \[([^\]]*)\]`).FindSubmatch(types)
	if m == nil {
		t.Fatal("no step list in the workload CEL rule")
	}
	var listed []string
	for _, q := range strings.Split(string(m[1]), ",") {
		listed = append(listed, strings.Trim(q, "'"))
	}
	want := append(Names(), TPCCStep, PgbenchTPCBStep, PgbenchSelectStep)
	sort.Strings(want)
	sort.Strings(listed)
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("CRD step list (-catalog +CRD):\n%s", diff)
	}
	// fixedRate.steps' rule lists the step sets' names (tpcc is in none).
	m = regexp.MustCompile(`self\.fixedRate\.steps\.all\(s, \(has\(self\.steps\) \? s in self\.steps : s in \[([^\]]*)\]`).FindSubmatch(types)
	if m == nil {
		t.Fatal("no step list in the fixedRate.steps CEL rule")
	}
	listed = nil
	for _, q := range strings.Split(string(m[1]), ",") {
		listed = append(listed, strings.Trim(q, "'"))
	}
	sort.Strings(listed)
	want = Names()
	sort.Strings(want)
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("fixedRate.steps CRD step list (-catalog +CRD):\n%s", diff)
	}
}

func TestSplitSuffix(t *testing.T) {
	cases := []struct {
		name, base, suffix string
		reported           bool
	}{
		{"point-query", "point-query", "", true},
		{"point-query.pre", "point-query", ".pre", false},
		{"scan.warm", "scan", ".warm", false},
		// The scripts' warm-up before the .pre steps.
		{"scan.warmpre", "scan", ".warmpre", false},
		{"read-only_range=100.warm", "read-only_range=100", ".warm", false},
		{".pre", ".pre", "", true},
	}
	for _, tc := range cases {
		b, s := SplitSuffix(tc.name)
		if b != tc.base || s != tc.suffix || Reported(tc.name) != tc.reported {
			t.Errorf("%s: %q %q reported %v, want %q %q %v", tc.name, b, s, Reported(tc.name), tc.base, tc.suffix, tc.reported)
		}
	}
}

// TestEveryStepSaysWhatItRuns: docs/catalog.md prints each step's SQL.
func TestEveryStepSaysWhatItRuns(t *testing.T) {
	for _, s := range Extended() {
		if s.SQL == "" {
			t.Errorf("step %s has no SQL description (stepSQL)", s.Name)
		}
	}
}
