package matrix

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

func run(name string, repeats int32, dbs ...dbbenchv1alpha1.DatabaseSpec) *dbbenchv1alpha1.BenchmarkRun {
	return &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-1"},
		Spec:       dbbenchv1alpha1.BenchmarkRunSpec{Databases: dbs, Workload: dbbenchv1alpha1.WorkloadSpec{Repeats: repeats}},
	}
}

func db(name string, engine dbbenchv1alpha1.Engine, versions []string, configs ...string) dbbenchv1alpha1.DatabaseSpec {
	d := dbbenchv1alpha1.DatabaseSpec{Name: name, Engine: engine, Versions: versions}
	for _, c := range configs {
		d.Configs = append(d.Configs, dbbenchv1alpha1.ConfigVariant{Name: c})
	}
	return d
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name       string
		run        *dbbenchv1alpha1.BenchmarkRun
		wantNames  []string
		wantImages []string
	}{
		{
			name:       "one database, default config",
			run:        run("r", 1, db("maria", "mariadb", []string{"10.11", "11.8"})),
			wantNames:  []string{"maria-10.11-default", "maria-11.8-default"},
			wantImages: []string{"mariadb:10.11", "mariadb:11.8"},
		},
		{
			name:      "versions × configs in spec order",
			run:       run("r", 1, db("my", "mysql", []string{"8.0", "8.4", "9.7"}, "a", "b")),
			wantNames: []string{"my-8.0-a", "my-8.0-b", "my-8.4-a", "my-8.4-b", "my-9.7-a", "my-9.7-b"},
		},
		{
			name: "repeats are the outer loop",
			run:  run("r", 2, db("pg", "postgres", []string{"16", "17"})),
			wantNames: []string{
				"pg-16-default-r1", "pg-17-default-r1", "pg-16-default-r2", "pg-17-default-r2",
			},
			wantImages: []string{"postgres:16", "postgres:17", "postgres:16", "postgres:17"},
		},
		{
			name: "several databases and a custom image template",
			run: func() *dbbenchv1alpha1.BenchmarkRun {
				r := run("r", 1, db("maria", "mariadb", []string{"11.8"}), db("pg", "postgres", []string{"17"}))
				r.Spec.Databases[1].Image = "registry.example/pg:{version}-bookworm"
				return r
			}(),
			wantNames:  []string{"maria-11.8-default", "pg-17-default"},
			wantImages: []string{"mariadb:11.8", "registry.example/pg:17-bookworm"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := Expand(tt.run)
			var names, images []string
			for i, c := range cells {
				names = append(names, c.Name)
				images = append(images, c.Image)
				if c.Index != i {
					t.Errorf("cell %s has index %d, want %d", c.Name, c.Index, i)
				}
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if tt.wantImages != nil {
				if diff := cmp.Diff(tt.wantImages, images); diff != "" {
					t.Errorf("images (-want +got):\n%s", diff)
				}
			}
			// Expansion is deterministic.
			if diff := cmp.Diff(cells, Expand(tt.run)); diff != "" {
				t.Errorf("second expansion differs:\n%s", diff)
			}
		})
	}
}

func TestExpandAdaptiveRounds(t *testing.T) {
	precise := func(rounds int32) *dbbenchv1alpha1.BenchmarkRun {
		r := run("r", 1, db("maria", "mariadb", []string{"10.11", "11.8"}, "a", "b"))
		r.Spec.Workload.Precision = &dbbenchv1alpha1.PrecisionSpec{TargetPercent: intstr.FromInt32(2), MinRepeats: 2, MaxRepeats: 4}
		if rounds > 0 {
			r.Status.Precision = &dbbenchv1alpha1.PrecisionStatus{Rounds: rounds}
		}
		return r
	}
	fwd := []string{"maria-10.11-a", "maria-10.11-b", "maria-11.8-a", "maria-11.8-b"}
	rev := []string{"maria-11.8-b", "maria-11.8-a", "maria-10.11-b", "maria-10.11-a"}
	round := func(n int, combs []string) []string {
		out := make([]string, len(combs))
		for i, c := range combs {
			out[i] = fmt.Sprintf("%s-r%d", c, n)
		}
		return out
	}
	tests := []struct {
		name string
		run  *dbbenchv1alpha1.BenchmarkRun
		want []string
	}{
		{"before any status: minRepeats rounds, the second reversed", precise(0), slices.Concat(round(1, fwd), round(2, rev))},
		{"status adds a third round, forward again", precise(3), slices.Concat(round(1, fwd), round(2, rev), round(3, fwd))},
		{"status beyond maxRepeats is capped", precise(9), slices.Concat(round(1, fwd), round(2, rev), round(3, fwd), round(4, rev))},
		{"status below minRepeats keeps minRepeats", precise(1), slices.Concat(round(1, fwd), round(2, rev))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := Expand(tt.run)
			var names []string
			for i, c := range cells {
				names = append(names, c.Name)
				if c.Index != i || c.Name != fmt.Sprintf("%s-r%d", c.Combination, c.Repeat) {
					t.Errorf("cell %d: %+v", i, c)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
	r := precise(3)
	if Rounds(r) != 3 || MaxRounds(r) != 4 || len(ExpandRounds(r, MaxRounds(r))) != 16 {
		t.Errorf("rounds %d, max %d, cells at max %d", Rounds(r), MaxRounds(r), len(ExpandRounds(r, MaxRounds(r))))
	}
	if got := BaselineName(r); got != "maria-10.11-a-r1" {
		t.Errorf("baseline with precision %q, want the first round's cell", got)
	}
	// Fixed repeats keep their order: no reversal.
	fixed := run("r", 2, db("pg", "postgres", []string{"16", "17"}))
	if got := Expand(fixed)[2].Name; got != "pg-16-default-r2" {
		t.Errorf("fixed repeats reordered: third cell %s", got)
	}
}

// A blocked run's blocks are its repeats, every second one reversed, so
// that each block runs its cells in the order its scheduler follows.
func TestExpandBlocks(t *testing.T) {
	r := run("r", 3, db("pg", "postgres", []string{"16", "17", "18"}))
	r.Spec.Placement.Blocks = dbbenchv1alpha1.BlocksRepeats
	var got []string
	for _, c := range Expand(r) {
		got = append(got, fmt.Sprintf("%s/b%d", c.Name, c.Block))
	}
	want := []string{
		"pg-16-default-r1/b1", "pg-17-default-r1/b1", "pg-18-default-r1/b1",
		"pg-18-default-r2/b2", "pg-17-default-r2/b2", "pg-16-default-r2/b2",
		"pg-16-default-r3/b3", "pg-17-default-r3/b3", "pg-18-default-r3/b3",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("blocked cells (-want +got):\n%s", d)
	}
	r.Spec.Placement.Blocks = dbbenchv1alpha1.BlocksNone
	for _, c := range Expand(r) {
		if c.Block != 0 {
			t.Errorf("unblocked run: cell %s in block %d", c.Name, c.Block)
		}
	}
	if got := BaselineName(r); got != "pg-16-default-r1" {
		t.Errorf("baseline %q", got)
	}
}

func TestObjectBaseIsAShortUniqueDNSLabel(t *testing.T) {
	seen := map[string]string{}
	longRun := strings.Repeat("nightly-regression-suite-", 3)
	for _, runName := range []string{"r", "MyRun", longRun} {
		for _, cell := range []string{"maria-10.11-default", "maria-10.11-default-r2", "maria-10.1-1default", strings.Repeat("x", 80) + "-a", strings.Repeat("x", 80) + "-b", "9.7_weird..name"} {
			base := ObjectBase(runName, "uid", cell)
			if len(base) > MaxObjectBaseLen {
				t.Errorf("ObjectBase(%q, %q) = %q: %d > %d characters", runName, cell, base, len(base), MaxObjectBaseLen)
			}
			if errs := validation.IsDNS1035Label(base + "-client-a10"); len(errs) > 0 {
				t.Errorf("ObjectBase(%q, %q) = %q is not a DNS-1035 label: %v", runName, cell, base, errs)
			}
			key := runName + "/" + cell
			if other, dup := seen[base]; dup {
				t.Errorf("ObjectBase collision: %s and %s both give %q", other, key, base)
			}
			seen[base] = key
		}
	}
	if ObjectBase("r", "uid-a", "c") == ObjectBase("r", "uid-b", "c") {
		t.Error("a re-created run (new UID) must not reuse its predecessor's child names")
	}
}

func TestBaselineName(t *testing.T) {
	r := run("r", 1, db("maria", "mariadb", []string{"10.5", "11.8"}, "small", "big"))
	if got := BaselineName(r); got != "maria-10.5-small" {
		t.Errorf("default baseline %q", got)
	}
	r.Spec.Baseline = &dbbenchv1alpha1.BaselineSpec{Database: "maria", Version: "11.8"}
	if got := BaselineName(r); got != "maria-11.8-small" {
		t.Errorf("baseline with version %q", got)
	}
	r.Spec.Workload.Repeats = 3
	r.Spec.Baseline = &dbbenchv1alpha1.BaselineSpec{Database: "maria", Config: "big", Repeat: 2}
	if got := BaselineName(r); got != "maria-10.5-big-r2" {
		t.Errorf("baseline with repeats %q", got)
	}
	r.Spec.Baseline = &dbbenchv1alpha1.BaselineSpec{Database: "nope"}
	if got := BaselineName(r); got != "" {
		t.Errorf("unknown database gave %q", got)
	}
}

func TestSteps(t *testing.T) {
	std, err := Steps(dbbenchv1alpha1.WorkloadSpec{})
	if err != nil || len(std) != 32 || std[0] != "update-inlist" || std[31] != "insert" {
		t.Fatalf("standard steps: %d %v (%v)", len(std), std, err)
	}
	ext, err := Steps(dbbenchv1alpha1.WorkloadSpec{StepSet: dbbenchv1alpha1.StepSetExtended})
	if err != nil || len(ext) != 42 || !strings.HasSuffix(ext[0], ".pre") {
		t.Fatalf("extended steps: %d %v (%v)", len(ext), ext, err)
	}
	own, _ := Steps(dbbenchv1alpha1.WorkloadSpec{Steps: []string{"insert", "point-query"}})
	if diff := cmp.Diff([]string{"insert", "point-query"}, own); diff != "" {
		t.Error(diff)
	}
	if _, err := Steps(dbbenchv1alpha1.WorkloadSpec{StepSet: "bogus"}); err == nil || !strings.Contains(err.Error(), "workload.stepSet") {
		t.Errorf("bogus step set: %v", err)
	}
}

func TestPreflightCellsAreOnePerPairWithTheirOwnObjects(t *testing.T) {
	tests := []struct {
		name      string
		run       *dbbenchv1alpha1.BenchmarkRun
		wantPairs []string
	}{
		{
			name:      "one repeat: a pair per cell, same names",
			run:       run("r", 1, db("my", "mysql", []string{"8.0", "8.4"}, "a", "b")),
			wantPairs: []string{"my-8.0-a", "my-8.0-b", "my-8.4-a", "my-8.4-b"},
		},
		{
			name:      "repeats do not multiply pairs",
			run:       run("r", 3, db("pg", "postgres", []string{"16", "17"}), db("maria", "mariadb", []string{"11.8"}, "bp")),
			wantPairs: []string{"pg-16-default", "pg-17-default", "maria-11.8-bp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := Expand(tt.run)
			bases := map[string]bool{}
			for _, c := range cells {
				bases[c.ObjectBase] = true
			}
			var names []string
			for i, p := range PreflightCells(tt.run) {
				names = append(names, p.Name)
				if !p.Preflight || p.Index != i || p.Repeat != 1 {
					t.Errorf("pair %s: preflight %v index %d repeat %d, want true, %d, 1", p.Name, p.Preflight, p.Index, p.Repeat, i)
				}
				if bases[p.ObjectBase] {
					t.Errorf("pair %s shares object base %s with a cell", p.Name, p.ObjectBase)
				}
				if errs := validation.IsDNS1035Label(p.ObjectBase); len(errs) > 0 || len(p.ObjectBase) > MaxObjectBaseLen {
					t.Errorf("pair %s object base %q: %v", p.Name, p.ObjectBase, errs)
				}
			}
			if diff := cmp.Diff(tt.wantPairs, names); diff != "" {
				t.Errorf("pairs (-want +got):\n%s", diff)
			}
		})
	}
}
