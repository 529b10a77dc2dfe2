package analysis

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// countersDataset: three cells, point-query with counters in two of them,
// insert with counters in all three.
func countersDataset(t *testing.T) *Dataset {
	t.Helper()
	ds := NewDataset("c")
	add := func(cell, step string, qps float64, c map[string]float64) {
		t.Helper()
		if err := ds.Add(Observation{Cell: cell, Step: step, Threads: 1, QPS: qps, Counters: c}); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "point-query", 1000, map[string]float64{"Innodb_buffer_pool_read_requests": 4, "Innodb_buffer_pool_reads": 0, "Handler_write": 0})
	add("b", "point-query", 800, map[string]float64{"Innodb_buffer_pool_read_requests": 5, "Innodb_buffer_pool_reads": 0.5, "Handler_write": 0})
	add("c", "point-query", 900, nil)
	add("a", "insert", 100, map[string]float64{"Innodb_os_log_written": 600})
	add("b", "insert", 100, map[string]float64{"Innodb_os_log_written": 540})
	add("c", "insert", 100, map[string]float64{"pg_stat_wal.wal_bytes": 900})
	return ds
}

func TestEngineCounters(t *testing.T) {
	ds := countersDataset(t)
	for _, tc := range []struct {
		name       string
		opts       CounterOptions
		wantCells  []string
		wantRows   []string
		wantPerOp  map[string][]string // name -> per-op per cell, as printed
		wantRatios map[string][]string
		allZero    int
		noCounters []string
	}{
		{
			name:       "zero everywhere left out, a cell without counters noted, 0 base gives inf",
			opts:       CounterOptions{Step: "point-query", Threads: 1},
			wantCells:  []string{"a", "b", "c"},
			wantRows:   []string{"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads"},
			wantPerOp:  map[string][]string{"Innodb_buffer_pool_reads": {"0", "0.5000", "missing"}},
			wantRatios: map[string][]string{"Innodb_buffer_pool_read_requests": {"1.25", "missing"}, "Innodb_buffer_pool_reads": {"inf", "missing"}},
			allZero:    1, noCounters: []string{"c"},
		},
		{
			name:       "base first; engines with other names are missing for each other",
			opts:       CounterOptions{Step: "insert", Threads: 1, Base: "b"},
			wantCells:  []string{"b", "a", "c"},
			wantRows:   []string{"Innodb_os_log_written", "pg_stat_wal.wal_bytes"},
			wantPerOp:  map[string][]string{"Innodb_os_log_written": {"540.0", "600.0", "missing"}, "pg_stat_wal.wal_bytes": {"missing", "missing", "900.0"}},
			wantRatios: map[string][]string{"Innodb_os_log_written": {"1.11", "missing"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, err := EngineCounters(ds, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ct.Cells, tc.wantCells) || ct.AllZero != tc.allZero || !slices.Equal(ct.NoCounters, tc.noCounters) {
				t.Errorf("cells %v allZero %d noCounters %v", ct.Cells, ct.AllZero, ct.NoCounters)
			}
			var names []string
			for _, r := range ct.Rows {
				names = append(names, r.Name)
			}
			if !slices.Equal(names, tc.wantRows) {
				t.Fatalf("rows %v, want %v", names, tc.wantRows)
			}
			ts := ct.Tables()
			if len(ts) != 2 || !strings.HasPrefix(ts[0].Title, "Engine counters per operation: "+tc.opts.Step) {
				t.Fatalf("tables %+v", ts)
			}
			rowOf := func(tb Table, name string) []string {
				for _, r := range tb.Rows {
					if r[0] == name {
						return r[1:]
					}
				}
				return nil
			}
			for n, want := range tc.wantPerOp {
				if got := rowOf(ts[0], n); !slices.Equal(got, want) {
					t.Errorf("%s absolute %v, want %v", n, got, want)
				}
			}
			for n, want := range tc.wantRatios {
				if got := rowOf(ts[1], n); !slices.Equal(got, want) {
					t.Errorf("%s relative %v, want %v", n, got, want)
				}
			}
		})
	}
	if _, err := EngineCounters(ds, CounterOptions{Step: "scan", Threads: 1}); !errors.Is(err, ErrNoSuchStep) {
		t.Errorf("unknown step: %v", err)
	}
	if _, err := EngineCounters(ds, CounterOptions{Step: "insert", Threads: 1, Base: "zz"}); !errors.Is(err, ErrNoSuchCell) {
		t.Errorf("unknown base: %v", err)
	}
}

func TestAddRefusesBadCounters(t *testing.T) {
	ds := NewDataset("x")
	err := ds.Add(Observation{Cell: "a", Step: "s", Threads: 1, QPS: 1, Counters: map[string]float64{"Handler_write": math.NaN()}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Handler_write") {
		t.Errorf("NaN counter: %v", err)
	}
}

func TestCounterMoves(t *testing.T) {
	mk := func(name string, qps float64, c map[string]float64, q2 float64) *Dataset {
		ds := NewDataset(name)
		for _, o := range []Observation{
			{Cell: "m", Step: "insert", Threads: 1, QPS: qps, Counters: c},
			{Cell: "m", Step: "point-query", Threads: 1, QPS: q2, Counters: map[string]float64{"Innodb_rows_read": 1}},
		} {
			if err := ds.Add(o); err != nil {
				t.Fatal(err)
			}
		}
		return ds
	}
	a := mk("a", 1000, map[string]float64{"Innodb_os_log_written": 500, "Innodb_data_fsyncs": 0.01, "Handler_write": 1, "Sort_merge_passes": 0, "Innodb_row_lock_waits": 0}, 5000)
	b := mk("b", 800, map[string]float64{"Innodb_os_log_written": 600, "Innodb_data_fsyncs": 0.04, "Handler_write": 1, "Sort_merge_passes": 0, "Innodb_row_lock_waits": 0.2}, 5100)
	mv := CounterMoves(a, b, 1, CounterMoveOptions{Top: 10})
	var got []string
	for _, m := range mv {
		if m.Step != "insert" || m.QPS.Value != 0.8 {
			t.Errorf("move %+v: only insert moved (0.8), point-query by 2 %%", m)
		}
		got = append(got, m.Counter+"="+m.Ratio.String())
	}
	// From 0 first, then x4, then x1.2; unchanged (Handler_write) and 0/0
	// never listed.
	if want := []string{"Innodb_row_lock_waits=inf", "Innodb_data_fsyncs=4.00", "Innodb_os_log_written=1.20"}; !slices.Equal(got, want) {
		t.Errorf("moves %v, want %v", got, want)
	}
	tb := CounterMovesTable(mv, "a", "b")
	if len(tb.Rows) != 3 || !slices.Equal(tb.Rows[1], []string{"m", "insert", "0.80", "Innodb_data_fsyncs", "0.01000", "0.04000", "4.00"}) {
		t.Errorf("table rows %q", tb.Rows)
	}
	if mv := CounterMoves(a, b, 1, CounterMoveOptions{MinChange: 0.5}); len(mv) != 0 {
		t.Errorf("nothing moved by 50 %%, got %+v", mv)
	}
}
