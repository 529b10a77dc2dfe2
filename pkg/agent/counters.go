package agent

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// Engine counters: the server's own cumulative counters (SHOW GLOBAL STATUS,
// PostgreSQL's pg_stat_* views) read at both ends of the measured window and
// divided by the operations in it, the same operations the hardware metrics
// are per (docs/explain.md, "Engine counters").

// mysqlCounters is the default set for MySQL and MariaDB: buffer pool
// traffic, InnoDB I/O and redo, row operations, handler calls and the
// statement features that cost (temporary tables, scans, sort passes).
var mysqlCounters = []string{
	"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_write_requests",
	"Innodb_buffer_pool_pages_flushed", "Innodb_data_read", "Innodb_data_reads", "Innodb_data_written",
	"Innodb_data_writes", "Innodb_data_fsyncs", "Innodb_os_log_written", "Innodb_os_log_fsyncs",
	"Innodb_log_writes", "Innodb_row_lock_waits", "Innodb_row_lock_time",
	"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Handler_read_key", "Handler_read_next", "Handler_read_prev", "Handler_read_first", "Handler_read_rnd",
	"Handler_read_rnd_next", "Handler_write", "Handler_update", "Handler_delete", "Handler_commit",
	"Created_tmp_tables", "Created_tmp_disk_tables", "Select_scan", "Select_full_join", "Sort_merge_passes",
	"Sort_rows", "Questions", "Bytes_received", "Bytes_sent",
}

// PostgreSQL statistics views the counters come from; the catalog says
// which of them the server has (pg_stat_wal from 14, pg_stat_io from 16,
// pg_stat_checkpointer from 17).
const (
	pgDatabase     = "pg_stat_database"
	pgWAL          = "pg_stat_wal"
	pgBgwriter     = "pg_stat_bgwriter"
	pgCheckpointer = "pg_stat_checkpointer"
	pgIO           = "pg_stat_io"
)

var pgViews = []string{pgDatabase, pgWAL, pgBgwriter, pgCheckpointer, pgIO}

// postgresCounters is the default set for PostgreSQL, named view.column
// (pg_stat_io: view.backend_type.object.column, spaces as underscores,
// summed over the I/O contexts). A name the server's version lacks is left
// out without a word: the set spans versions 13 to 18.
var postgresCounters = []string{
	"pg_stat_database.blks_read", "pg_stat_database.blks_hit", "pg_stat_database.tup_returned",
	"pg_stat_database.tup_fetched", "pg_stat_database.tup_inserted", "pg_stat_database.tup_updated",
	"pg_stat_database.tup_deleted", "pg_stat_database.xact_commit", "pg_stat_database.xact_rollback",
	"pg_stat_database.temp_files", "pg_stat_database.temp_bytes", "pg_stat_database.deadlocks",
	"pg_stat_wal.wal_records", "pg_stat_wal.wal_fpi", "pg_stat_wal.wal_bytes", "pg_stat_wal.wal_buffers_full",
	"pg_stat_wal.wal_write", "pg_stat_wal.wal_sync",
	"pg_stat_bgwriter.checkpoints_timed", "pg_stat_bgwriter.checkpoints_req", "pg_stat_bgwriter.buffers_checkpoint",
	"pg_stat_bgwriter.buffers_clean", "pg_stat_bgwriter.maxwritten_clean", "pg_stat_bgwriter.buffers_backend",
	"pg_stat_bgwriter.buffers_backend_fsync", "pg_stat_bgwriter.buffers_alloc",
	"pg_stat_checkpointer.num_timed", "pg_stat_checkpointer.num_requested", "pg_stat_checkpointer.buffers_written",
	"pg_stat_io.client_backend.relation.reads", "pg_stat_io.client_backend.relation.hits",
	"pg_stat_io.client_backend.relation.writes", "pg_stat_io.client_backend.relation.extends",
	"pg_stat_io.client_backend.relation.evictions", "pg_stat_io.client_backend.relation.fsyncs",
	"pg_stat_io.client_backend.relation.writebacks",
	"pg_stat_io.checkpointer.relation.writes", "pg_stat_io.checkpointer.relation.fsyncs",
	"pg_stat_io.background_writer.relation.writes",
	"pg_stat_io.autovacuum_worker.relation.reads", "pg_stat_io.autovacuum_worker.relation.writes",
	"pg_stat_io.client_backend.wal.writes", "pg_stat_io.client_backend.wal.fsyncs",
	"pg_stat_io.walwriter.wal.writes", "pg_stat_io.walwriter.wal.fsyncs",
}

// pgIOKeys are pg_stat_io's key columns; pgIONotCounters are its columns
// that are not cumulative (op_bytes is the I/O unit, 8192).
var (
	pgIOKeys        = []string{"backend_type", "object", "context"}
	pgIONotCounters = []string{"op_bytes", "stats_reset"}
)

// DefaultCounters returns the engine's default counter names.
func DefaultCounters(e agentapi.Engine) []string {
	if e == agentapi.Postgres {
		return slices.Clone(postgresCounters)
	}
	return slices.Clone(mysqlCounters)
}

// counterSnapshot is every numeric counter the server reported at one
// instant, by lower-case name, with the server's own spelling.
type counterSnapshot struct {
	at     time.Time
	values map[string]float64
	names  map[string]string
}

func (s *counterSnapshot) set(name string, v float64) {
	k := strings.ToLower(name)
	s.values[k] = v
	s.names[k] = name
}

// parseCounter reads a counter's text value; ok is false for anything that
// is not a finite number (status variables that are text, NULLs, times).
func parseCounter(v sql.NullString) (float64, bool) {
	if !v.Valid {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v.String), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// counterQuerier is what a snapshot reads through (*sql.DB in the agent).
type counterQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readRows reads a query's column names and every row as text.
func readRows(ctx context.Context, q counterQuerier, query string) ([]string, [][]sql.NullString, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]sql.NullString
	for rows.Next() {
		row := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, row)
	}
	return cols, out, rows.Err()
}

// mysqlStatus turns SHOW GLOBAL STATUS rows (name, value) into a snapshot.
func mysqlStatus(s *counterSnapshot, rows [][]sql.NullString) {
	for _, r := range rows {
		if len(r) < 2 || !r[0].Valid {
			continue
		}
		if v, ok := parseCounter(r[1]); ok {
			s.set(r[0].String, v)
		}
	}
}

// pgViewRow adds the numeric columns of a one-row view (pg_stat_database
// filtered to this database, pg_stat_wal, ...) as view.column.
func pgViewRow(s *counterSnapshot, view string, cols []string, rows [][]sql.NullString) {
	for _, r := range rows {
		for i, c := range cols {
			if v, ok := parseCounter(r[i]); ok {
				s.set(view+"."+c, v)
			}
		}
	}
}

// pgIORows sums pg_stat_io's numeric columns over the I/O contexts of each
// (backend type, object) and adds them as
// pg_stat_io.backend_type.object.column, spaces replaced by underscores.
func pgIORows(s *counterSnapshot, cols []string, rows [][]sql.NullString) {
	key := map[string]int{}
	for i, c := range cols {
		if slices.Contains(pgIOKeys, c) {
			key[c] = i
		}
	}
	bt, okB := key["backend_type"]
	obj, okO := key["object"]
	if !okB || !okO {
		return
	}
	under := strings.NewReplacer(" ", "_")
	sums := map[string]float64{}
	for _, r := range rows {
		prefix := pgIO + "." + under.Replace(r[bt].String) + "." + under.Replace(r[obj].String) + "."
		for i, c := range cols {
			if slices.Contains(pgIOKeys, c) || slices.Contains(pgIONotCounters, c) {
				continue
			}
			if v, ok := parseCounter(r[i]); ok {
				sums[prefix+c] += v
			}
		}
	}
	for k, v := range sums {
		s.set(k, v)
	}
}

// counterReader reads snapshots of one server.
type counterReader struct {
	engine agentapi.Engine
	db     counterQuerier
	// views are the PostgreSQL statistics views the server has.
	views []string
}

// detect finds which statistics views a PostgreSQL server has, by catalog
// presence rather than version number (forks and betas keep their word).
func (c *counterReader) detect(ctx context.Context) error {
	if c.engine != agentapi.Postgres {
		return nil
	}
	_, rows, err := readRows(ctx, c.db, "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "+
		"WHERE n.nspname = 'pg_catalog' AND c.relname IN ('"+strings.Join(pgViews, "','")+"')")
	if err != nil {
		return fmt.Errorf("finding the pg_stat views: %w", err)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r[0].String] = true
	}
	c.views = nil
	for _, v := range pgViews {
		if have[v] {
			c.views = append(c.views, v)
		}
	}
	return nil
}

// source names what a snapshot reads, for the results.
func (c *counterReader) source() string {
	if c.engine == agentapi.Postgres {
		return strings.Join(c.views, ",")
	}
	return "SHOW GLOBAL STATUS"
}

// snapshot reads every counter once; its time is the middle of the reads.
func (c *counterReader) snapshot(ctx context.Context) (*counterSnapshot, error) {
	s := &counterSnapshot{values: map[string]float64{}, names: map[string]string{}}
	start := time.Now()
	defer func() { s.at = start.Add(time.Since(start) / 2) }()
	if c.engine != agentapi.Postgres {
		_, rows, err := readRows(ctx, c.db, "SHOW GLOBAL STATUS")
		if err != nil {
			return nil, fmt.Errorf("SHOW GLOBAL STATUS: %w", err)
		}
		mysqlStatus(s, rows)
		return s, nil
	}
	for _, v := range c.views {
		q := "SELECT * FROM pg_catalog." + v
		if v == pgDatabase {
			q += " WHERE datname = current_database()"
		}
		cols, rows, err := readRows(ctx, c.db, q)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", v, err)
		}
		if v == pgIO {
			pgIORows(s, cols, rows)
		} else {
			pgViewRow(s, v, cols, rows)
		}
	}
	return s, nil
}

// clientBackends counts the client connections to this database other than
// the one asking: PostgreSQL backends flush their statistics when they exit,
// so the window's end waits for sysbench's to be gone.
func (c *counterReader) clientBackends(ctx context.Context) (int, error) {
	_, rows, err := readRows(ctx, c.db, "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE datname = current_database() "+
		"AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("pg_stat_activity: %d rows", len(rows))
	}
	n, _ := parseCounter(rows[0][0])
	return int(n), nil
}

// pgExitWait bounds the wait for sysbench's backends to exit.
const pgExitWait = 5 * time.Second

// counterHook snapshots the engine's counters at the measured window's
// bounds (windowBounds: when the warm-up ends and when sysbench returns,
// the collector's window) and records their growth per operation. It goes
// last among a run's hooks, so the divisor is the one the kind's hooks
// chose. It never fails a run: a counter that cannot be read is logged and
// the run has no counters.
type counterHook struct {
	reader *counterReader
	extra  []string
	// minSeconds is the shortest window worth recording: half the step's
	// measured time, so that a run ending as its window opens does not
	// divide two nearly equal snapshots by almost nothing.
	minSeconds float64
	logf       func(format string, args ...any)

	// baseBackends is the number of other client backends before sysbench
	// connected (PostgreSQL).
	baseBackends int
	ready        bool
	start, end   *counterSnapshot
	// endAt is when sysbench returned: the window's end for the divisor,
	// whatever the end snapshot then waited for.
	endAt time.Time
}

// counterHook returns the run's counters hook, or nil when the agent has no
// server connection (tests of the measured run alone).
func (a *Agent) counterHook(s RunStep) windowHook {
	if a.srv == nil || a.srv.db == nil {
		return nil
	}
	return &counterHook{reader: &counterReader{engine: a.srv.Engine, db: a.srv.db},
		extra: a.Plan.Workload.ExtraCounters, minSeconds: float64(s.Seconds) / 2, logf: a.logf}
}

func (h *counterHook) before(ctx context.Context, _ *stepRun) error {
	if err := h.reader.detect(ctx); err != nil {
		h.logf("engine counters: %v", err)
		return nil
	}
	if h.reader.engine == agentapi.Postgres {
		n, err := h.reader.clientBackends(ctx)
		if err != nil {
			h.logf("engine counters: counting client backends: %v", err)
			return nil
		}
		h.baseBackends = n
	}
	h.ready = true
	return nil
}

func (h *counterHook) windowStart(ctx context.Context) {
	if !h.ready {
		return
	}
	s, err := h.reader.snapshot(ctx)
	if err != nil {
		if ctx.Err() == nil {
			h.logf("engine counters at the window's start: %v", err)
		}
		return
	}
	h.start = s
}

func (h *counterHook) windowEnd(ctx context.Context) {
	h.endAt = time.Now()
	if h.start == nil {
		return
	}
	if h.reader.engine == agentapi.Postgres {
		h.waitBackendsGone(ctx)
	}
	s, err := h.reader.snapshot(ctx)
	if err != nil {
		h.logf("engine counters at the window's end: %v", err)
		return
	}
	h.end = s
}

// waitBackendsGone polls until the client backends are back to their
// number before the run, or pgExitWait passes (then the last second's
// statistics of the backends still there may be missing).
func (h *counterHook) waitBackendsGone(ctx context.Context) {
	deadline := time.Now().Add(pgExitWait)
	for {
		n, err := h.reader.clientBackends(ctx)
		if err != nil || n <= h.baseBackends {
			return
		}
		if time.Now().After(deadline) {
			h.logf("engine counters: %d client backend(s) still connected %s after the run", n-h.baseBackends, pgExitWait)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (h *counterHook) after(_ context.Context, r *stepRun) {
	if h.start == nil || h.end == nil {
		return
	}
	secs := h.endAt.Sub(h.start.at).Seconds()
	if secs < h.minSeconds || !(secs > 0) {
		h.logf("engine counters: window of %.2f s is under half the step's measured time; not recorded", secs)
		return
	}
	r.Result.Counters = countersOf(h.start, h.end, DefaultCounters(h.reader.engine), h.extra, secs, r.Ops, r.OpsBasis, h.reader.source())
}

// countersOf computes the counters of one window: for each default and
// extra name both snapshots have, its growth and the growth per operation,
// operations being opsPerSecond × seconds. Extra names the server does not
// report are listed as missing; a counter that fell (a reset, or a gauge
// asked for as an extra) as decreased, without a value.
func countersOf(start, end *counterSnapshot, defaults, extra []string, seconds, opsPerSecond float64, basis, source string) *results.Counters {
	c := &results.Counters{Source: source, Seconds: seconds, OpsPerSecond: opsPerSecond, OpsBasis: basis,
		Operations: opsPerSecond * seconds, Delta: map[string]float64{}}
	seen := map[string]bool{}
	add := func(name string, requested bool) {
		k := strings.ToLower(name)
		if seen[k] {
			return
		}
		seen[k] = true
		b, okB := start.values[k]
		e, okE := end.values[k]
		if !okB || !okE {
			if requested {
				c.Missing = append(c.Missing, name)
			}
			return
		}
		name = end.names[k]
		if e < b {
			c.Decreased = append(c.Decreased, name)
			return
		}
		c.Delta[name] = e - b
	}
	for _, n := range defaults {
		add(n, false)
	}
	for _, n := range extra {
		add(n, true)
	}
	if c.Operations > 0 {
		c.PerOp = make(map[string]float64, len(c.Delta))
		for n, d := range c.Delta {
			c.PerOp[n] = d / c.Operations
		}
	}
	return c
}
