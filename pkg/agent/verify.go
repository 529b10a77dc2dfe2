package agent

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/dbconfig"
	"github.com/dbbench/dbbench/pkg/results"
)

// Verifying the config variant: once the server answers and before any data
// is loaded, the agent compares every setting the variant's text asks for
// with the value the server reports (pkg/dbconfig does the parsing and the
// comparison). A setting the server runs with another value fails the cell as
// a benchmark failure (agentapi.ExitConfigNotApplied): measuring it would publish
// numbers under a variant's name that the variant did not produce.

// LoadServerConfig reads the config variant's text the controller mounts
// beside the plan (agentapi.ServerConfigFile). A missing file is no error: an
// older controller does not mount it, and the agent then verifies nothing.
func LoadServerConfig(planPath string) (string, error) {
	if planPath == "" {
		planPath = filepath.Join(agentapi.TaskDir, agentapi.TaskFile)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(planPath), agentapi.ServerConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the config variant: %w", err)
	}
	return string(b), nil
}

// ServerConfig reads --server-config, the variant's text for a local run
// ("" without the flag).
func (o *LocalOptions) ServerConfig() (string, error) {
	if o.ServerConfigFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(o.ServerConfigFile)
	if err != nil {
		return "", fmt.Errorf("--server-config: %w", err)
	}
	return string(b), nil
}

// checkConfig verifies the variant and records the outcome in the document.
// It returns the failed Result and true when the cell must stop.
func (a *Agent) checkConfig(ctx context.Context) (Result, bool) {
	text := a.ServerConfig
	if strings.TrimSpace(text) == "" {
		if a.Plan.Cell.Config != "" {
			a.logf("config variant %q: no text to verify", a.Plan.Cell.Config)
		}
		return Result{}, false
	}
	pv := &a.doc.Provenance
	pv.ConfigText = text
	engine := configEngine(a.Plan.Server.Engine, pv.ServerVersion)
	eff, err := a.srv.effectiveSettings(ctx, engine, pv.ServerSettings)
	if err != nil {
		return a.fail(ctx, agentapi.ExitServerUnreachable, agentapi.FailureInfrastructure, "", fmt.Errorf("reading the server's effective settings: %w", err)), true
	}
	rep := dbconfig.Verify(dbconfig.Parse(engine, text), pv.ServerVersion, eff)
	pv.ConfigCheck = configCheck(rep)
	a.logf("config variant %q: %d setting(s) verified, %d unverified, %d not in effect", a.Plan.Cell.Config,
		rep.Count(dbconfig.Verified), rep.Count(dbconfig.Unverified), rep.Count(dbconfig.NotApplied))
	for _, c := range rep.Checks {
		if c.Outcome == dbconfig.Unverified {
			a.logf("config variant: line %d %s unverified: %s", c.Line, c.Name, c.Reason)
		}
	}
	for _, m := range rep.Mistakes {
		a.logf("config variant: %s", m)
	}
	if err := rep.Err(); err != nil {
		a.progress.Reason = agentapi.FailureConfigNotApplied
		return a.fail(ctx, agentapi.ExitConfigNotApplied, agentapi.FailureBenchmark, "", err), true
	}
	return Result{}, false
}

// configEngine is the option-file dialect of the server: the plan's engine,
// except that a server reporting itself as MariaDB reads MariaDB's sections
// whatever a local run's --engine said.
func configEngine(e agentapi.Engine, serverVersion string) dbconfig.Engine {
	if e != agentapi.Postgres && strings.Contains(strings.ToLower(serverVersion), "mariadb") {
		return dbconfig.MariaDB
	}
	return dbconfig.Engine(e)
}

func configCheck(rep *dbconfig.Report) *results.ConfigCheck {
	cc := &results.ConfigCheck{}
	for _, c := range rep.Checks {
		s := results.ConfigSetting{Name: c.Name, Line: c.Line, Requested: c.Requested, Normalized: c.Normalized,
			Effective: c.Effective, Source: c.Source, Reason: c.Reason}
		switch c.Outcome {
		case dbconfig.Verified:
			cc.Verified = append(cc.Verified, s)
		case dbconfig.NotApplied:
			cc.NotApplied = append(cc.NotApplied, s)
		default:
			cc.Unverified = append(cc.Unverified, s)
		}
	}
	for _, m := range rep.Mistakes {
		cc.Mistakes = append(cc.Mistakes, m.String())
	}
	return cc
}

// effectiveSettings returns what the server reports for every setting, keyed
// by lower-case name. MySQL/MariaDB: the SHOW GLOBAL VARIABLES already read
// for provenance, with where each value came from when the server says
// (MariaDB information_schema.SYSTEM_VARIABLES.GLOBAL_VALUE_ORIGIN, MySQL
// performance_schema.variables_info: empty while performance_schema is off;
// either may be unreadable, and the origin is only a help for the message).
// PostgreSQL: pg_settings with unit, type, source and pending_restart.
func (s *Server) effectiveSettings(ctx context.Context, engine dbconfig.Engine, vars map[string]string) (map[string]dbconfig.Effective, error) {
	if engine == dbconfig.Postgres {
		return s.pgSettings(ctx)
	}
	out := make(map[string]dbconfig.Effective, len(vars))
	for k, v := range vars {
		out[strings.ToLower(k)] = dbconfig.Effective{Value: v}
	}
	q := "SELECT LOWER(VARIABLE_NAME), GLOBAL_VALUE_ORIGIN FROM information_schema.SYSTEM_VARIABLES"
	if engine == dbconfig.MySQL {
		q = "SELECT LOWER(VARIABLE_NAME), CONCAT(VARIABLE_SOURCE, IF(VARIABLE_PATH <> '', CONCAT(' ', VARIABLE_PATH), '')) FROM performance_schema.variables_info"
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return out, nil
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var origin sql.NullString
		if rows.Scan(&name, &origin) != nil {
			break
		}
		if e, ok := out[name]; ok {
			e.Source = origin.String
			out[name] = e
		}
	}
	return out, nil
}

func (s *Server) pgSettings(ctx context.Context) (map[string]dbconfig.Effective, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, COALESCE(setting, ''), COALESCE(unit, ''), vartype, COALESCE(source, ''),
		COALESCE(sourcefile, ''), COALESCE(sourceline, 0), pending_restart FROM pg_settings`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]dbconfig.Effective{}
	for rows.Next() {
		var p dbconfig.PGSetting
		if err := rows.Scan(&p.Name, &p.Setting, &p.Unit, &p.Vartype, &p.Source, &p.SourceFile, &p.SourceLine, &p.PendingRestart); err != nil {
			return nil, err
		}
		out[strings.ToLower(p.Name)] = dbconfig.Effective{Value: p.Setting, Source: p.Source, PG: &p}
	}
	return out, rows.Err()
}
