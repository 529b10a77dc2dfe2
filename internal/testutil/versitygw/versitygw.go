// Package versitygw starts a real S3-compatible server for tests: versitygw,
// through hack/s3server.sh (which builds it into the cache once), on a free
// loopback port with a private data directory. Tests that use it run only
// with DBBENCH_REAL_S3=1 and skip with a message otherwise.
package versitygw

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Server is one versitygw process. Dir holds its data (Dir/data/<bucket>/…)
// and log.
type Server struct {
	Dir  string
	Port int

	script, accessKey, secretKey string
}

var installOnce sync.Once

// Start starts a server with the given credentials; it is stopped, and its
// log shown if the test failed, when the test ends.
func Start(t testing.TB, accessKey, secretKey string) *Server {
	t.Helper()
	if os.Getenv("DBBENCH_REAL_S3") != "1" {
		t.Skip("real S3 tests need DBBENCH_REAL_S3=1 (they start versitygw via hack/s3server.sh)")
	}
	script, err := scriptPath()
	if err != nil {
		t.Fatal(err)
	}
	installOnce.Do(func() {
		if out, err := exec.Command(script, "install").CombinedOutput(); err != nil {
			t.Fatalf("hack/s3server.sh install: %v\n%s", err, out)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{Dir: t.TempDir(), Port: port, script: script, accessKey: accessKey, secretKey: secretKey}
	s.Start(t)
	t.Cleanup(func() {
		s.Stop(t)
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(s.Dir, "versitygw.log")); err == nil {
				t.Logf("versitygw.log:\n%s", log)
			}
		}
	})
	return s
}

// Start (re)starts the server on its port and data, as after an outage.
func (s *Server) Start(t testing.TB) { s.run(t, "start", s.Dir, fmt.Sprint(s.Port)) }

// Stop stops the server, keeping its data.
func (s *Server) Stop(t testing.TB) { s.run(t, "stop", s.Dir) }

// Endpoint is the server's URL.
func (s *Server) Endpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", s.Port) }

func (s *Server) run(t testing.TB, args ...string) {
	t.Helper()
	cmd := exec.Command(s.script, args...)
	cmd.Env = append(os.Environ(), "S3_ACCESS_KEY="+s.accessKey, "S3_SECRET_KEY="+s.secretKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/s3server.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// scriptPath finds hack/s3server.sh above the test's working directory.
func scriptPath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "hack", "s3server.sh"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}
