// Package dbservers drives hack/dbservers.sh, which starts real MariaDB,
// PostgreSQL and MySQL servers on the loopback interface, for the agent's
// real-database tests and the fidelity benchmark (test/bench/fidelity).
package dbservers

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/dbbench/dbbench/pkg/plan"
)

// PortEnv are the script's per-engine port overrides; an engine missing
// here is one the script cannot start.
var PortEnv = map[plan.Engine]string{plan.MariaDB: "DBBENCH_MARIADB_PORT", plan.Postgres: "DBBENCH_POSTGRES_PORT",
	plan.MySQL: "DBBENCH_MYSQL_PORT"}

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
func Script(repo, action string, e plan.Engine, env []string) error {
	cmd := exec.Command("bash", filepath.Join(repo, "hack", "dbservers.sh"), action, string(e))
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}
