package agent

import (
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

func snap(at time.Time, kv map[string]float64) *counterSnapshot {
	s := &counterSnapshot{at: at, values: map[string]float64{}, names: map[string]string{}}
	for k, v := range kv {
		s.set(k, v)
	}
	return s
}

func ns(v string) sql.NullString { return sql.NullString{String: v, Valid: true} }

var null = sql.NullString{}

func TestCountersOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	start := snap(t0, map[string]float64{"Innodb_os_log_written": 1000, "Handler_write": 10, "Threads_running": 9, "Innodb_pages_written": 5})
	end := snap(t0.Add(10*time.Second), map[string]float64{"Innodb_os_log_written": 51000, "Handler_write": 510, "Threads_running": 2, "Innodb_pages_written": 25})
	for _, tc := range []struct {
		name          string
		defaults      []string
		extra         []string
		ops           float64
		wantPerOp     map[string]float64
		wantDelta     map[string]float64
		wantMissing   []string
		wantDecreased []string
	}{
		{
			name:      "defaults per op, a default the server lacks left out silently",
			defaults:  []string{"Innodb_os_log_written", "Handler_write", "Innodb_redo_log_written"},
			ops:       50, // 50 ops/s x 10 s = 500 operations
			wantPerOp: map[string]float64{"Innodb_os_log_written": 100, "Handler_write": 1},
			wantDelta: map[string]float64{"Innodb_os_log_written": 50000, "Handler_write": 500},
		},
		{
			name:        "extras case-insensitive in the server's spelling, unknown ones missing, a falling gauge decreased",
			defaults:    []string{"Handler_write"},
			extra:       []string{"innodb_pages_written", "No_such_counter", "threads_running", "HANDLER_WRITE"},
			ops:         5,
			wantPerOp:   map[string]float64{"Handler_write": 10, "Innodb_pages_written": 0.4},
			wantDelta:   map[string]float64{"Handler_write": 500, "Innodb_pages_written": 20},
			wantMissing: []string{"No_such_counter"}, wantDecreased: []string{"Threads_running"},
		},
		{
			name:      "no throughput: deltas without per-op values",
			defaults:  []string{"Handler_write"},
			ops:       0,
			wantDelta: map[string]float64{"Handler_write": 500},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := countersOf(start, end, tc.defaults, tc.extra, 10, tc.ops, opsBasisSteadyQPS, "SHOW GLOBAL STATUS")
			if c.Operations != tc.ops*10 || c.OpsBasis != opsBasisSteadyQPS || c.Seconds != 10 {
				t.Errorf("divisor: %v operations (%v/s, %q) over %v s", c.Operations, c.OpsPerSecond, c.OpsBasis, c.Seconds)
			}
			if !mapsClose(c.PerOp, tc.wantPerOp) {
				t.Errorf("perOp %v, want %v", c.PerOp, tc.wantPerOp)
			}
			if !mapsClose(c.Delta, tc.wantDelta) {
				t.Errorf("delta %v, want %v", c.Delta, tc.wantDelta)
			}
			if !slices.Equal(c.Missing, tc.wantMissing) || !slices.Equal(c.Decreased, tc.wantDecreased) {
				t.Errorf("missing %v decreased %v, want %v and %v", c.Missing, c.Decreased, tc.wantMissing, tc.wantDecreased)
			}
		})
	}
}

func mapsClose(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || math.Abs(v-w) > 1e-9*math.Max(1, math.Abs(w)) {
			return false
		}
	}
	return true
}

func TestCounterRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill func(*counterSnapshot)
		want map[string]float64
	}{
		{
			name: "SHOW GLOBAL STATUS: numbers kept, text values and NULL names dropped",
			fill: func(s *counterSnapshot) {
				mysqlStatus(s, [][]sql.NullString{
					{ns("Innodb_buffer_pool_reads"), ns("12")}, {ns("Innodb_buffer_pool_dump_status"), ns("Dumping of buffer pool not started")},
					{ns("Ssl_cipher"), ns("")}, {null, ns("3")}, {ns("Uptime"), ns(" 7 ")},
				})
			},
			want: map[string]float64{"innodb_buffer_pool_reads": 12, "uptime": 7},
		},
		{
			name: "one-row view: numeric columns as view.column, timestamps and NULLs dropped",
			fill: func(s *counterSnapshot) {
				pgViewRow(s, pgWAL, []string{"wal_records", "wal_bytes", "wal_sync_time", "stats_reset"},
					[][]sql.NullString{{ns("42"), ns("123456789012"), null, ns("2025-01-01 00:00:00+00")}})
			},
			want: map[string]float64{"pg_stat_wal.wal_records": 42, "pg_stat_wal.wal_bytes": 123456789012},
		},
		{
			// PostgreSQL 16/17: op_bytes is the unit, not a counter; contexts
			// of one (backend type, object) are summed, NULL (not applicable)
			// cells skipped.
			name: "pg_stat_io 16/17 summed over contexts",
			fill: func(s *counterSnapshot) {
				pgIORows(s, []string{"backend_type", "object", "context", "reads", "writes", "op_bytes", "hits", "stats_reset"},
					[][]sql.NullString{
						{ns("client backend"), ns("relation"), ns("normal"), ns("10"), ns("1"), ns("8192"), ns("100"), null},
						{ns("client backend"), ns("relation"), ns("bulkread"), ns("5"), ns("0"), ns("8192"), null, null},
						{ns("client backend"), ns("temp relation"), ns("normal"), ns("2"), ns("3"), ns("8192"), ns("4"), null},
						{ns("checkpointer"), ns("relation"), ns("normal"), null, ns("7"), ns("8192"), null, null},
					})
			},
			want: map[string]float64{
				"pg_stat_io.client_backend.relation.reads": 15, "pg_stat_io.client_backend.relation.writes": 1,
				"pg_stat_io.client_backend.relation.hits": 100, "pg_stat_io.client_backend.temp_relation.reads": 2,
				"pg_stat_io.client_backend.temp_relation.writes": 3, "pg_stat_io.client_backend.temp_relation.hits": 4,
				"pg_stat_io.checkpointer.relation.writes": 7,
			},
		},
		{
			name: "pg_stat_io 18: byte columns and WAL rows",
			fill: func(s *counterSnapshot) {
				pgIORows(s, []string{"backend_type", "object", "context", "reads", "read_bytes", "writes", "write_bytes", "fsyncs"},
					[][]sql.NullString{
						{ns("walwriter"), ns("wal"), ns("normal"), null, null, ns("20"), ns("163840"), ns("20")},
						{ns("client backend"), ns("wal"), ns("normal"), ns("0"), ns("0"), ns("3"), ns("24576"), ns("3")},
					})
			},
			want: map[string]float64{
				"pg_stat_io.walwriter.wal.writes": 20, "pg_stat_io.walwriter.wal.write_bytes": 163840, "pg_stat_io.walwriter.wal.fsyncs": 20,
				"pg_stat_io.client_backend.wal.reads": 0, "pg_stat_io.client_backend.wal.read_bytes": 0,
				"pg_stat_io.client_backend.wal.writes": 3, "pg_stat_io.client_backend.wal.write_bytes": 24576, "pg_stat_io.client_backend.wal.fsyncs": 3,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(time.Time{}, nil)
			tc.fill(s)
			if !mapsClose(s.values, tc.want) {
				t.Errorf("values %v, want %v", s.values, tc.want)
			}
		})
	}
}

// The default sets name what the servers call their counters: the
// PostgreSQL names are of views the reader knows, and the pg_stat_io ones
// have the shape pgIORows produces.
func TestDefaultCounters(t *testing.T) {
	for _, e := range []agentapi.Engine{agentapi.MySQL, agentapi.MariaDB, agentapi.Postgres} {
		names := DefaultCounters(e)
		if len(names) < 20 {
			t.Errorf("%s: %d default counters", e, len(names))
		}
		seen := map[string]bool{}
		for _, n := range names {
			if !agentapi.CounterNameRE.MatchString(n) || seen[strings.ToLower(n)] {
				t.Errorf("%s: default %q is not a valid name or repeats", e, n)
			}
			seen[strings.ToLower(n)] = true
			if e != agentapi.Postgres {
				continue
			}
			parts := strings.Split(n, ".")
			if !slices.Contains(pgViews, parts[0]) || (parts[0] == pgIO) != (len(parts) == 4) || (parts[0] != pgIO && len(parts) != 2) {
				t.Errorf("postgres default %q: not view.column (pg_stat_io: view.backend.object.column)", n)
			}
		}
	}
}

// counterHook.after divides by the operations of its own window at the
// throughput the run's other hooks left, and records nothing for a window
// too short to mean anything.
func TestCounterHookAfter(t *testing.T) {
	t0 := time.Unix(5000, 0)
	for _, tc := range []struct {
		name      string
		window    time.Duration
		ops       float64
		basis     string
		wantPerOp *float64
	}{
		{"rows basis from the scan hook", 20 * time.Second, 1000, opsBasisRowsPerSecond, ptr(2000.0 / 20000)},
		{"window under half the step", 4 * time.Second, 1000, opsBasisSteadyQPS, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged []string
			h := &counterHook{reader: &counterReader{engine: agentapi.MariaDB}, minSeconds: 10,
				logf:  func(f string, a ...any) { logged = append(logged, f) },
				start: snap(t0, map[string]float64{"Innodb_rows_read": 1000}),
				end:   snap(t0.Add(tc.window+time.Second), map[string]float64{"Innodb_rows_read": 3000}),
				endAt: t0.Add(tc.window)}
			res := &results.StepResult{}
			h.after(context.Background(), &stepRun{Result: res, Ops: tc.ops, OpsBasis: tc.basis})
			if tc.wantPerOp == nil {
				if res.Counters != nil || len(logged) != 1 {
					t.Errorf("counters %+v recorded (log %v); want none, logged", res.Counters, logged)
				}
				return
			}
			c := res.Counters
			if c == nil {
				t.Fatalf("no counters (log %v)", logged)
			}
			// The divisor ends when sysbench returned (endAt), not at the
			// end snapshot a second later.
			if c.Seconds != tc.window.Seconds() || c.OpsBasis != tc.basis || c.Source != "SHOW GLOBAL STATUS" {
				t.Errorf("window %v s basis %q source %q", c.Seconds, c.OpsBasis, c.Source)
			}
			if got := c.PerOp["Innodb_rows_read"]; math.Abs(got-*tc.wantPerOp) > 1e-12 {
				t.Errorf("Innodb_rows_read per op %v, want %v", got, *tc.wantPerOp)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// boundsRecorder records when measure tells it the window's bounds.
type boundsRecorder struct {
	mu         sync.Mutex
	start, end time.Time
	starts     int
	endSawOpen bool
}

func (b *boundsRecorder) windowStart(context.Context) {
	time.Sleep(50 * time.Millisecond) // a snapshot takes a moment
	b.mu.Lock()
	defer b.mu.Unlock()
	b.start = time.Now()
	b.starts++
}

func (b *boundsRecorder) windowEnd(context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.end = time.Now()
	b.endSawOpen = b.starts == 1
}

// The bounds hear of the window when the collector does: the start after
// the warm-up (never when the run ends first), the end once the run
// returned and the start is over — with or without a collector.
func TestMeasureBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		warm      int
		run       time.Duration
		collector bool
		wantStart bool
	}{
		{"window opens after the warm-up", 1, 1500 * time.Millisecond, true, true},
		{"no collector", 0, 300 * time.Millisecond, false, true},
		{"run ends within the warm-up", 2, 100 * time.Millisecond, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{}
			if tc.collector {
				a.Collector = &fakeCollector{sampleSeconds: 1}
			}
			b := &boundsRecorder{}
			begin, ranUntil, _, _ := timedMeasure(a, tc.warm, tc.run, b)
			if got := b.starts == 1; got != tc.wantStart {
				t.Fatalf("windowStart called %d times, want started %v", b.starts, tc.wantStart)
			}
			if b.end.IsZero() || b.end.Before(ranUntil) {
				t.Errorf("windowEnd at %v, run ended at %v", b.end, ranUntil)
			}
			if tc.wantStart {
				if d := b.start.Sub(begin); d < time.Duration(tc.warm)*time.Second {
					t.Errorf("windowStart %s after the run began, within the %d-s warm-up", d, tc.warm)
				}
				if !b.endSawOpen {
					t.Error("windowEnd ran before windowStart returned")
				}
			}
		})
	}
}

// Local mode's --counters is the plan's extra counters.
func TestLocalOptionsCounters(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag string
		want []string
	}{
		{"", nil},
		{"Innodb_pages_written, pg_stat_wal.wal_fpi", []string{"Innodb_pages_written", "pg_stat_wal.wal_fpi"}},
	} {
		o := LocalOptions{Engine: "mariadb", Steps: "point-query", PasswordFile: pw, Out: t.TempDir()}
		if err := o.Workload.Parse("--counters=" + tc.flag); err != nil {
			t.Fatal(err)
		}
		p, _, err := o.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Workload.ExtraCounters, tc.want) {
			t.Errorf("--counters %q: extra counters %q, want %q", tc.flag, p.Workload.ExtraCounters, tc.want)
		}
	}
}
