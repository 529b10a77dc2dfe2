package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// An external target (agentapi.Server.External) is a server dbbench did not
// start and whose other databases are not its own. The agent connects to
// the user's database (or none), creates a database of its own
// (agentapi.Server.Database, always dbbench_..., agentapi.OwnDatabasePattern), runs
// the load and the steps in it, and drops it when the cell ends, whether it
// succeeded or failed. It never writes outside that database: no flush
// (which sets global variables or checkpoints), no config check (there is
// no variant). If the agent is killed (SIGKILL, OOM, node lost) the drop
// does not run; the next attempt, with the same name, drops the leftover
// before it creates its own, and when there is none the database stays,
// named after the run's UID, for the user to drop.

// ownDatabaseDropTimeout bounds the drop at the end of the cell, which also
// runs when the cell's context is cancelled.
const ownDatabaseDropTimeout = 60 * time.Second

// external reports whether the plan's server is an external target.
func (a *Agent) external() bool { return a.Plan.Server.External != nil }

// initExternal records the target in the provenance before anything runs.
func (a *Agent) initExternal() {
	ext := a.Plan.Server.External
	a.doc.Provenance.External = &results.ExternalTarget{
		Endpoint: ext.Endpoint, Database: a.Plan.Server.Database, NotGuaranteed: results.ExternalCaveats(),
	}
}

// adminServer is a connection to the user's connect database, from which
// the agent creates and drops its own.
func (a *Agent) adminServer() *Server {
	return &Server{Engine: a.Plan.Server.Engine, Host: a.Host, Port: a.Plan.Server.Port,
		Database: a.Plan.Server.External.ConnectDatabase, User: a.User, Password: a.Password}
}

// createOwnDatabase (re)creates the agent's database and moves a.srv to it.
// A leftover of an attempt that was killed before its drop is dropped first:
// the name is the cell's, so it can only be dbbench's.
func (a *Agent) createOwnDatabase(ctx context.Context) error {
	name := a.Plan.Server.Database
	if !agentapi.OwnDatabasePattern.MatchString(name) {
		// Validate refuses such plans; checked again where it matters.
		return fmt.Errorf("server.database %q is not a dbbench database name", name)
	}
	admin := a.adminServer()
	defer admin.Close()
	if err := admin.ping(ctx); err != nil {
		return fmt.Errorf("connecting to %s to create database %s: %w", admin.addr(), name, err)
	}
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name} {
		if _, err := admin.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s (the account needs the right to create and drop databases named dbbench_*): %w", q, err)
		}
	}
	a.logf("external: created database %s on %s", name, admin.addr())
	// From here on every connection of the agent's and of sysbench's uses
	// the new database.
	if err := a.srv.Close(); err != nil {
		a.logf("external: closing the connection to the connect database: %v", err)
	}
	a.srv.db = nil
	a.srv.Database = name
	a.ownCreated = true
	return a.srv.ping(ctx)
}

// dropOwnDatabase drops the agent's database if it created it, once, and
// records the outcome in the provenance. It runs before the final report,
// on success and on failure, with a context of its own so that a cancelled
// cell still cleans up.
func (a *Agent) dropOwnDatabase(ctx context.Context) {
	if !a.ownCreated {
		return
	}
	a.ownCreated = false
	name := a.Plan.Server.Database
	// PostgreSQL refuses to drop a database with open connections: ours go
	// first (sysbench's have ended with their processes).
	if err := a.srv.Close(); err != nil {
		a.logf("external: closing the connection to %s: %v", name, err)
	}
	a.srv.db = nil
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ownDatabaseDropTimeout)
	defer cancel()
	admin := a.adminServer()
	defer admin.Close()
	err := admin.ping(dctx)
	if err == nil {
		_, err = admin.db.ExecContext(dctx, "DROP DATABASE IF EXISTS "+name)
	}
	pv := a.doc.Provenance.External
	if err != nil {
		pv.DropError = err.Error()
		a.logf("external: dropping database %s failed, it is left on the server: %v", name, err)
		return
	}
	pv.Dropped = true
	a.logf("external: dropped database %s", name)
}
