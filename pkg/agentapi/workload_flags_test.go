package agentapi

import (
	"flag"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkloadFlags(t *testing.T) {
	base := func() Workload {
		return Workload{Steps: []string{"point-query"}, Tables: 1, TableSize: 10000, ReadSeconds: 60, WriteSeconds: 60,
			WarmupSeconds: 10, Threads: []int{1}, PreparedStatements: true}
	}
	with := func(f func(*Workload)) Workload { w := base(); f(&w); return w }
	for _, tc := range []struct {
		name     string
		args     []string
		from     func(*Workload) // changes to base before the flags
		want     Workload
		parseErr string
		applyErr string
	}{
		{name: "no flags keep the plan", want: base()},
		{name: "every scalar knob", args: []string{"--tables=3", "--table-size=500", "--read-seconds=5", "--write-seconds=6",
			"--warmup-seconds=2", "--threads=1, 4,", "--ps=false", "--flush-wait=9"},
			want: with(func(w *Workload) {
				w.Tables, w.TableSize, w.ReadSeconds, w.WriteSeconds, w.WarmupSeconds = 3, 500, 5, 6, 2
				w.Threads, w.PreparedStatements, w.FlushWaitSeconds = []int{1, 4}, false, 9
			})},
		{name: "0 is not given", args: []string{"--tables=0", "--table-size=0", "--flush-wait=0"}, want: base()},
		{name: "last value wins, 0 included", args: []string{"--tables=5", "--tables=0", "--read-seconds=0", "--read-seconds=7"},
			want: with(func(w *Workload) { w.ReadSeconds = 7 })},
		{name: "warm-up 0 is a value, -1 is not given", args: []string{"--warmup-seconds=0"}, want: with(func(w *Workload) { w.WarmupSeconds = 0 })},
		{name: "warm-up -1", args: []string{"--warmup-seconds=-1"}, want: base()},
		{name: "flags override a plan file's values", args: []string{"--ps=true", "--tables=2"},
			from: func(w *Workload) { w.PreparedStatements, w.Tables = false, 8 },
			want: with(func(w *Workload) { w.Tables = 2 })},
		{name: "a TPC-C knob creates the TPC-C settings", args: []string{"--tpcc-warehouses=4", "--tpcc-isolation=RC"},
			want: with(func(w *Workload) { w.TPCC = &TPCC{Warehouses: 4, Isolation: "RC"} })},
		{name: "TPC-C knobs keep the plan's other TPC-C settings", args: []string{"--tpcc-seconds=30", "--tpcc-tables=2", "--tpcc-fk"},
			from: func(w *Workload) { w.TPCC = &TPCC{Warehouses: 2, Threads: []int{8}, Isolation: "SER"} },
			want: with(func(w *Workload) {
				w.TPCC = &TPCC{Warehouses: 2, Tables: 2, DurationSeconds: 30, Threads: []int{8}, Isolation: "SER", UseForeignKeys: true}
			})},
		{name: "--tpcc-fk=false does not create TPC-C settings", args: []string{"--tpcc-fk=false"}, want: base()},
		{name: "--tpcc-fk=false keeps the plan's foreign keys", args: []string{"--tpcc-fk=false"},
			from: func(w *Workload) { w.TPCC = &TPCC{UseForeignKeys: true} },
			want: with(func(w *Workload) { w.TPCC = &TPCC{UseForeignKeys: true} })},
		{name: "bad number", args: []string{"--tables=x"}, parseErr: "-tables"},
		{name: "bad boolean", args: []string{"--ps=maybe"}, parseErr: "-ps"},
		{name: "bad thread list", args: []string{"--threads=1,x"}, applyErr: `--threads: "x" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f WorkloadFlags
			err := f.Parse(tc.args...)
			if tc.parseErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.parseErr) {
					t.Fatalf("Parse: %v, want an error naming %s", err, tc.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := base()
			if tc.from != nil {
				tc.from(&w)
			}
			err = f.Apply(&w)
			if tc.applyErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.applyErr) {
					t.Fatalf("Apply: %v, want %q", err, tc.applyErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, w); d != "" {
				t.Errorf("workload (-want +got):\n%s", d)
			}
		})
	}
}

// notLocalKnobs are Workload fields without a WorkloadFlags flag, and why.
var notLocalKnobs = map[string]string{
	"Steps":                          "--steps names a step set or list (LocalOptions.Steps)",
	"Custom":                         "--custom names script files (LocalOptions.Custom)",
	"TPCC.Threads":                   "local mode runs TPC-C at --threads",
	"FixedRate.Steps":                "local mode's --steps lists the steps, so fixed-rate runs follow every step",
	"Adaptive.BetweenRunCVPercentAt": "the controller fills it from the suite's history (status.adaptive); local mode has no suite, and --adaptive-between-run-cv sets the one figure",
}

// Every workload knob can be set in local mode, and every flag sets a knob:
// a field added to Workload without its flag fails here.
func TestEveryWorkloadKnobHasAFlag(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	new(WorkloadFlags).AddFlags(fs)
	base := Workload{PreparedStatements: true}
	covered := map[string]string{}
	fs.VisitAll(func(fl *flag.Flag) {
		for _, v := range []string{"7", "true", "false"} {
			var f WorkloadFlags
			if f.Parse("--"+fl.Name+"="+v) != nil {
				continue
			}
			w := base
			if err := f.Apply(&w); err != nil {
				t.Fatalf("--%s=%s: %v", fl.Name, v, err)
			}
			if changed := changedFields(reflect.ValueOf(base), reflect.ValueOf(w), ""); len(changed) > 0 {
				for _, c := range changed {
					covered[c] = fl.Name
				}
				return
			}
		}
		t.Errorf("--%s sets no Workload field", fl.Name)
	})
	for _, field := range fields(reflect.TypeOf(Workload{}), "") {
		if _, ok := notLocalKnobs[field]; !ok && covered[field] == "" {
			t.Errorf("Workload.%s has no local-mode flag: add one in WorkloadFlags.AddFlags, or to notLocalKnobs with the reason", field)
		}
	}
	for field := range notLocalKnobs {
		if flagName := covered[field]; flagName != "" {
			t.Errorf("Workload.%s is in notLocalKnobs but --%s sets it", field, flagName)
		}
	}
}

// fields lists the leaf fields of a struct type, descending into pointers
// to structs ("TPCC.Warehouses").
func fields(typ reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			out = append(out, fields(f.Type.Elem(), prefix+f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	return out
}

// changedFields lists the leaf fields that differ between a and b.
func changedFields(a, b reflect.Value, prefix string) []string {
	var out []string
	for i := 0; i < a.NumField(); i++ {
		f := a.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			za, zb := reflect.New(f.Type.Elem()).Elem(), reflect.New(f.Type.Elem()).Elem()
			if !fa.IsNil() {
				za = fa.Elem()
			}
			if !fb.IsNil() {
				zb = fb.Elem()
			}
			out = append(out, changedFields(za, zb, prefix+f.Name+".")...)
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			out = append(out, prefix+f.Name)
		}
	}
	return out
}
