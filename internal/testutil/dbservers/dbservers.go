// Package dbservers drives hack/dbservers.sh, which starts real MariaDB,
// PostgreSQL and MySQL servers on the loopback interface, for the agent's
// real-database tests and the fidelity benchmark (test/bench/fidelity).
package dbservers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// The account and database hack/dbservers.sh creates on every server.
const (
	User     = "dbbench"
	Password = "dbbench-pw"
	Database = "sbtest"
)

// PortEnv are the script's per-engine port overrides; an engine missing
// here is one the script cannot start.
var PortEnv = map[agentapi.Engine]string{agentapi.MariaDB: "DBBENCH_MARIADB_PORT", agentapi.Postgres: "DBBENCH_POSTGRES_PORT",
	agentapi.MySQL: "DBBENCH_MYSQL_PORT"}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Script runs `hack/dbservers.sh action e` of the checkout at repo, with
// env as its environment (nil: this process's), its output on stderr.
func Script(repo, action string, e agentapi.Engine, env []string) error {
	cmd := exec.Command("bash", filepath.Join(repo, "hack", "dbservers.sh"), action, string(e))
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// Start starts a server of engine e from the checkout at repo with its data
// under dbRoot, on a free loopback port, for a benchmark that wants a server
// nothing else uses. It sets DBBENCH_DB_ROOT and the engine's port variable
// in this process's environment, so later calls of the script (and the
// caller) find that server. stop stops it, best effort; a start that fails
// is stopped before Start returns.
func Start(repo string, e agentapi.Engine, dbRoot string) (port int, stop func(), err error) {
	env, ok := PortEnv[e]
	if !ok {
		return 0, nil, fmt.Errorf("hack/dbservers.sh cannot start %q", e)
	}
	if port, err = FreePort(); err != nil {
		return 0, nil, err
	}
	os.Setenv("DBBENCH_DB_ROOT", dbRoot)
	os.Setenv(env, strconv.Itoa(port))
	stop = func() { _ = Script(repo, "stop", e, nil) }
	if err := Script(repo, "start", e, nil); err != nil {
		stop()
		return 0, nil, fmt.Errorf("hack/dbservers.sh start %s: %w", e, err)
	}
	return port, stop, nil
}

// RepoRoot is the main module's directory (go list -m), for the benchmark
// commands run with go run from anywhere in the checkout.
func RepoRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// AgentLocal is one `dbbench-agent local` run against a hack/dbservers.sh
// server on the loopback interface, with the script's account, for the
// benchmarks that measure the agent (test/bench/fidelity, verdicts).
type AgentLocal struct {
	Bin, Sysbench   string
	Engine          agentapi.Engine
	Port            int
	PasswordFile    string
	Steps           []string
	TableSize       int64
	Seconds, Warmup int // each step's read and write seconds; warm-up seconds
	Threads         int
	FlushWait       int // cap of the post-load flush, seconds
	Out             string
}

// Command is the agent's command line, on one table.
func (a AgentLocal) Command(ctx context.Context) *exec.Cmd {
	secs := strconv.Itoa(a.Seconds)
	return exec.CommandContext(ctx, a.Bin, "local",
		"--engine", string(a.Engine), "--host", "127.0.0.1", "--port", strconv.Itoa(a.Port),
		"--user", User, "--password-file", a.PasswordFile, "--database", Database,
		"--steps", strings.Join(a.Steps, ","), "--tables", "1", "--table-size", strconv.FormatInt(a.TableSize, 10),
		"--read-seconds", secs, "--write-seconds", secs, "--warmup-seconds", strconv.Itoa(a.Warmup),
		"--threads", strconv.Itoa(a.Threads), "--flush-wait", strconv.Itoa(a.FlushWait),
		"--sysbench", a.Sysbench, "--out", a.Out)
}
