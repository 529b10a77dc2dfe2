package results

import (
	"bytes"
	"math"
	"os"
	"testing"
)

// withCounters gives every step of d the counters of a 10-s window at its
// steady QPS: 2 log bytes and 0.5 row reads per operation.
func withCounters(d *Document) *Document {
	for i := range d.Steps {
		s := &d.Steps[i]
		ops := s.SteadyQPS * 10
		s.Counters = &Counters{Source: "SHOW GLOBAL STATUS", Seconds: 10, OpsPerSecond: s.SteadyQPS, OpsBasis: "steadyQps", Operations: ops,
			PerOp:   map[string]float64{"Innodb_os_log_written": 2, "Innodb_rows_read": 0.5},
			Delta:   map[string]float64{"Innodb_os_log_written": 2 * ops, "Innodb_rows_read": 0.5 * ops},
			Missing: []string{"No_such_counter"}}
	}
	return d
}

// A document an agent wrote before counters existed reads and validates
// as it is: the field is additive and optional within v1.
func TestReadDocumentBeforeCounters(t *testing.T) {
	b, err := os.ReadFile("testdata/v1-before-counters.json")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"counters"`)) {
		t.Fatal("fixture has counters; it must be a document from before them")
	}
	d, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("older v1 document: %v", err)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("older v1 document: %v", err)
	}
	if len(d.Steps) != 4 {
		t.Fatalf("%d steps, want 4", len(d.Steps))
	}
	for i, s := range d.Steps {
		if s.Counters != nil || s.Hardware == nil {
			t.Errorf("steps[%d]: counters %+v, hardware %v", i, s.Counters, s.Hardware != nil)
		}
	}
	// And the current writer's document with counters reads back whole.
	cur, err := Marshal(withCounters(d))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	if c := back.Steps[3].Counters; c == nil || c.PerOp["Innodb_os_log_written"] != 2 || c.Delta["Innodb_rows_read"] != 0.5*c.Operations {
		t.Errorf("counters after a round trip: %+v", c)
	}
}

func TestValidateCounters(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(c *Counters)
		want   []string
	}{
		{"valid", func(*Counters) {}, nil},
		{"divisor", func(c *Counters) { c.Operations *= 2 }, []string{"steps[0].counters.operations:", "steps[0].counters.perOp.Innodb_rows_read: 0.5 is not delta / operations"}},
		{"per op without operations", func(c *Counters) { c.OpsPerSecond, c.Operations, c.Delta = 0, 0, nil },
			[]string{"steps[0].counters.perOp: set while operations is 0"}},
		{"per op without its delta", func(c *Counters) { delete(c.Delta, "Innodb_rows_read") }, []string{"steps[0].counters.perOp.Innodb_rows_read: has no delta"}},
		{"not finite", func(c *Counters) { c.PerOp["Innodb_rows_read"] = math.NaN(); c.Delta = nil },
			[]string{"steps[0].counters.perOp.Innodb_rows_read: must be a finite number"}},
		{"negative", func(c *Counters) { c.PerOp["Innodb_rows_read"] = -1; c.Delta = nil }, []string{"steps[0].counters.perOp.Innodb_rows_read:"}},
		{"bad name", func(c *Counters) { c.PerOp["rows read"] = 1; c.Delta = nil }, []string{"steps[0].counters.perOp.rows read: is not a valid name"}},
		{"no source", func(c *Counters) { c.Source = "" }, []string{"steps[0].counters.source:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := withCounters(testDocument(1, []int{1, 2}, 5))
			tc.mutate(d.Steps[0].Counters)
			checkValidate(t, d, tc.want)
		})
	}
}

// The compact form keeps the per-op values and their divisor, not the
// deltas (per-op × operations); when even that overflows the budget it
// drops the counters, which the full form keeps.
func TestCompactCounters(t *testing.T) {
	full := withCounters(testDocument(3, []int{1, 2}, 30))
	c, _, err := Compact(full, CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range c.Steps {
		if s.Counters == nil || s.Counters.Delta != nil || len(s.Counters.PerOp) != 2 || s.Counters.Operations != full.Steps[i].Counters.Operations {
			t.Errorf("steps[%d] compact counters %+v", i, s.Counters)
		}
		if full.Steps[i].Counters.Delta == nil {
			t.Fatalf("Compact modified the full document's steps[%d]", i)
		}
	}
	// A budget the summaries fit but the counters do not.
	_, plain, err := Compact(testDocument(3, []int{1, 2}, 30), CompactOptions{Resolutions: []int{}})
	if err != nil {
		t.Fatal(err)
	}
	c, b, err := Compact(full, CompactOptions{Resolutions: []int{}, MaxBytes: len(plain) + 10})
	if err != nil {
		t.Fatalf("budget %d: %v", len(plain)+10, err)
	}
	for i, s := range c.Steps {
		if s.Counters != nil {
			t.Errorf("steps[%d] kept counters over the budget (%d bytes)", i, len(b))
		}
	}
}
