package agent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// Server is a SQL connection to the database under test, used for everything
// that is not the benchmark itself: the readiness wait, provenance, the
// flush, row counts.
type Server struct {
	Engine   agentapi.Engine
	Host     string
	Port     int
	Database string
	User     string
	Password string
	// AdminUser and AdminPassword, when set, are used for the flush's
	// global settings.
	AdminUser     string
	AdminPassword string

	db *sql.DB
}

// ConnectErrorKind classifies why the server could not be used.
type ConnectErrorKind string

const (
	ConnRefused         ConnectErrorKind = "connection refused"
	ConnTimeout         ConnectErrorKind = "timed out"
	ConnBadCredentials  ConnectErrorKind = "bad credentials"
	ConnUnknownDatabase ConnectErrorKind = "unknown database"
	ConnOther           ConnectErrorKind = "error"
)

// ConnectError says why WaitReady gave up.
type ConnectError struct {
	Kind    ConnectErrorKind
	Addr    string
	Waited  time.Duration
	Attempt int
	Err     error
}

func (e *ConnectError) Error() string {
	switch e.Kind {
	case ConnBadCredentials:
		return fmt.Sprintf("server %s rejected the credentials (check the user and password): %v", e.Addr, e.Err)
	case ConnUnknownDatabase:
		return fmt.Sprintf("server %s has no such database (create it, or fix server.database): %v", e.Addr, e.Err)
	case ConnRefused:
		return fmt.Sprintf("server %s refused connections for %s (%d attempts; is it running and listening there?): %v",
			e.Addr, e.Waited.Round(time.Second), e.Attempt, e.Err)
	case ConnTimeout:
		return fmt.Sprintf("server %s did not answer within %s (%d attempts): %v", e.Addr, e.Waited.Round(time.Second), e.Attempt, e.Err)
	}
	return fmt.Sprintf("server %s not usable after %s (%d attempts): %v", e.Addr, e.Waited.Round(time.Second), e.Attempt, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// Retryable reports whether waiting longer could help.
func (e *ConnectError) Retryable() bool {
	return e.Kind != ConnBadCredentials && e.Kind != ConnUnknownDatabase
}

func (s *Server) addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

func (s *Server) open() (*sql.DB, error) {
	if s.Engine == agentapi.Postgres {
		dsn := fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable connect_timeout=5",
			pgQuote(s.Host), s.Port, pgQuote(s.User), pgQuote(s.Password), pgQuote(s.Database))
		return sql.Open("pgx", dsn)
	}
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = s.addr()
	cfg.User = s.User
	cfg.Passwd = s.Password
	cfg.DBName = s.Database
	cfg.Timeout = 5 * time.Second
	cfg.AllowNativePasswords = true
	return sql.Open("mysql", cfg.FormatDSN())
}

func pgQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) + "'"
}

// classify maps a driver error to a kind.
func classify(err error) ConnectErrorKind {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1045, 1044, 1698:
			return ConnBadCredentials
		case 1049:
			return ConnUnknownDatabase
		}
		return ConnOther
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return ConnBadCredentials
		case "3D000":
			return ConnUnknownDatabase
		}
		return ConnOther
	}
	if errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused") {
		return ConnRefused
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout") {
		return ConnTimeout
	}
	return ConnOther
}

// readyPollInterval is how often WaitReady tries the server. The client pod
// starts while the server initialises, so every cell waits here, on
// average half an interval after the server could answer: at a second that
// was half a second of every cell's start-up. A refused connection costs
// the server nothing.
const readyPollInterval = 250 * time.Millisecond

// WaitReady polls the server with a real query (SELECT 1) until it answers or
// the timeout passes. Bad credentials and an unknown database end the wait at
// once: waiting does not fix them.
func (s *Server) WaitReady(ctx context.Context, timeout time.Duration) error {
	start := time.Now()
	var last *ConnectError
	attempt := 0
	err := wait.PollUntilContextTimeout(ctx, readyPollInterval, timeout, true, func(context.Context) (bool, error) {
		attempt++
		// The caller's context, not the poll's: a query in flight is not cut
		// at the deadline, so the last error is the server's, not ours.
		err := s.ping(ctx)
		if err == nil {
			return true, nil
		}
		last = &ConnectError{Kind: classify(err), Addr: s.addr(), Waited: time.Since(start), Attempt: attempt, Err: err}
		if !last.Retryable() {
			return false, last
		}
		return false, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

func (s *Server) ping(ctx context.Context) error {
	if s.db == nil {
		db, err := s.open()
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(2)
		db.SetConnMaxIdleTime(time.Minute)
		s.db = db
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var one int
	return s.db.QueryRowContext(cctx, "SELECT 1").Scan(&one)
}

// Close closes the connection pool.
func (s *Server) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Version returns the server's version string.
func (s *Server) Version(ctx context.Context) (string, error) {
	var v string
	q := "SELECT VERSION()"
	if s.Engine == agentapi.Postgres {
		q = "SHOW server_version"
	}
	err := s.db.QueryRowContext(ctx, q).Scan(&v)
	return v, err
}

// Variables returns every global server variable (SHOW GLOBAL VARIABLES, or
// pg_settings).
func (s *Server) Variables(ctx context.Context) (map[string]string, error) {
	q := "SHOW GLOBAL VARIABLES"
	if s.Engine == agentapi.Postgres {
		q = "SELECT name, setting FROM pg_settings"
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		vars[k] = v.String
	}
	return vars, rows.Err()
}

// CountRows returns the average number of rows of sbtest1..N.
func (s *Server) CountRows(ctx context.Context, tables int) (float64, error) {
	var total int64
	for t := 1; t <= tables; t++ {
		var n int64
		if err := s.db.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM sbtest%d", t)).Scan(&n); err != nil {
			return 0, fmt.Errorf("counting rows of sbtest%d: %w", t, err)
		}
		total += n
	}
	return float64(total) / float64(tables), nil
}

// SumNextOrderID returns SUM(d_next_o_id) over the TPC-C district tables:
// its growth over a run is the exact number of committed new-orders.
func (s *Server) SumNextOrderID(ctx context.Context, sets int) (int64, error) {
	var total int64
	for t := 1; t <= sets; t++ {
		var n sql.NullInt64
		if err := s.db.QueryRowContext(ctx, fmt.Sprintf("SELECT SUM(d_next_o_id) FROM district%d", t)).Scan(&n); err != nil {
			return 0, fmt.Errorf("reading district%d: %w", t, err)
		}
		total += n.Int64
	}
	return total, nil
}

// FlushReport says what the engine flush did.
type FlushReport struct {
	Method  string  `json:"method"`
	Seconds float64 `json:"seconds"`
	// DirtyPctBefore/After are InnoDB's dirty pages as % of the buffer pool.
	DirtyPctBefore float64 `json:"dirtyPctBefore,omitempty"`
	DirtyPctAfter  float64 `json:"dirtyPctAfter,omitempty"`
	// ReachedTarget is false when the wait hit its cap first.
	ReachedTarget bool `json:"reachedTarget"`
}

// Flush writes dirty data to disk so the next step starts from a clean state:
// InnoDB: lower innodb_max_dirty_pages_pct (and _lwm) and wait until dirty
// pages are at most ~1 % of the buffer pool or maxWait passes, then restore the
// settings; PostgreSQL: VACUUM (ANALYZE) of the sbtest tables and CHECKPOINT.
func (s *Server) Flush(ctx context.Context, tables []string, maxWait time.Duration) (FlushReport, error) {
	start := time.Now()
	if s.Engine == agentapi.Postgres {
		r := FlushReport{Method: "VACUUM (ANALYZE) + CHECKPOINT", ReachedTarget: true}
		for _, t := range tables {
			if _, err := s.db.ExecContext(ctx, "VACUUM (ANALYZE) "+t); err != nil {
				return r, fmt.Errorf("VACUUM (ANALYZE) %s: %w", t, err)
			}
		}
		if _, err := s.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
			return r, fmt.Errorf("CHECKPOINT: %w", err)
		}
		r.Seconds = time.Since(start).Seconds()
		return r, nil
	}
	r := FlushReport{Method: "innodb_max_dirty_pages_pct=0 until dirty pages <= 1%"}
	db := s.db
	if s.AdminUser != "" {
		admin := *s
		admin.User, admin.Password = s.AdminUser, s.AdminPassword
		adb, err := admin.open()
		if err != nil {
			return r, fmt.Errorf("admin connection: %w", err)
		}
		defer adb.Close()
		db = adb
	}
	// One connection, so the SET GLOBALs and the restore happen in order.
	conn, err := db.Conn(ctx)
	if err != nil {
		return r, fmt.Errorf("flush connection: %w", err)
	}
	defer conn.Close()
	get := func(name string) (string, error) {
		var k, v string
		err := conn.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE '"+name+"'").Scan(&k, &v)
		return v, err
	}
	pct, err := get("innodb_max_dirty_pages_pct")
	if err != nil {
		return r, fmt.Errorf("reading innodb_max_dirty_pages_pct (is this InnoDB?): %w", err)
	}
	lwm, lwmErr := get("innodb_max_dirty_pages_pct_lwm")
	restore := func() {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = conn.ExecContext(rctx, "SET GLOBAL innodb_max_dirty_pages_pct = "+pct)
		if lwmErr == nil {
			_, _ = conn.ExecContext(rctx, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = "+lwm)
		}
	}
	lowered := true
	if lwmErr == nil {
		if _, err := conn.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0"); err != nil {
			if !accessDenied(err) {
				return r, fmt.Errorf("lowering innodb_max_dirty_pages_pct_lwm: %w", err)
			}
			lowered = false
		}
	}
	if lowered {
		if _, err := conn.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
			if !accessDenied(err) {
				return r, fmt.Errorf("lowering innodb_max_dirty_pages_pct: %w", err)
			}
			lowered = false
		}
	}
	if lowered {
		defer restore()
	} else {
		// Without the privilege, InnoDB's own background flushing is all
		// there is; the wait and its outcome are recorded as such.
		r.Method = "waited for InnoDB background flushing (no privilege to lower innodb_max_dirty_pages_pct)"
	}
	dirty := func() (float64, error) {
		st := map[string]float64{}
		rows, err := conn.QueryContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_%'")
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return 0, err
			}
			f, _ := strconv.ParseFloat(v, 64)
			st[strings.ToLower(k)] = f
		}
		total := st["innodb_buffer_pool_pages_total"]
		if total == 0 {
			return 0, nil
		}
		return 100 * st["innodb_buffer_pool_pages_dirty"] / total, rows.Err()
	}
	r.DirtyPctBefore, err = dirty()
	if err != nil {
		return r, fmt.Errorf("reading dirty pages: %w", err)
	}
	// Reading at least once, then every second until the target or maxWait;
	// running out of time is an outcome the report records, not an error.
	var readErr error
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Until(start.Add(maxWait)), true, func(context.Context) (bool, error) {
		d, err := dirty()
		if err != nil {
			readErr = fmt.Errorf("reading dirty pages: %w", err)
			return false, readErr
		}
		r.DirtyPctAfter = d
		r.ReachedTarget = d <= 1
		return r.ReachedTarget, nil
	})
	switch {
	case readErr != nil:
		return r, readErr
	case ctx.Err() != nil:
		return r, ctx.Err()
	case err != nil && !wait.Interrupted(err):
		return r, err
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// accessDenied reports a MySQL/MariaDB privilege error (1227: SUPER or
// SYSTEM_VARIABLES_ADMIN needed; 1045/1044/1142: denied).
func accessDenied(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1227, 1044, 1045, 1142:
			return true
		}
	}
	return false
}
