package agent

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// closedPort is a local port where nothing listens: connections are refused.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestWaitReadyPollsUntilTimeout: a refused connection is retried every
// readyPollInterval until the timeout, and the error says what the last attempt met and
// how many there were; a cancelled context stops the wait at once.
func TestWaitReadyPollsUntilTimeout(t *testing.T) {
	for _, tt := range []struct {
		name        string
		engine      agentapi.Engine
		timeout     time.Duration
		cancel      bool
		minAttempts int
		maxAttempts int
		maxElapsed  time.Duration
		wantKind    ConnectErrorKind
	}{
		// The first try at once, then one per interval (fewer when the
		// machine is slow to wake the poll, one more when the last tick
		// meets the timeout).
		{"mysql, 2.5s", agentapi.MySQL, 2500 * time.Millisecond, false, 3, 2 + int(2500*time.Millisecond/readyPollInterval), 8 * time.Second, ConnRefused},
		{"postgres, 1.5s", agentapi.Postgres, 1500 * time.Millisecond, false, 2, 2 + int(1500*time.Millisecond/readyPollInterval), 8 * time.Second, ConnRefused},
		{"cancelled context", agentapi.MySQL, time.Hour, true, 1, 1, 5 * time.Second, ConnOther},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{Engine: tt.engine, Host: "127.0.0.1", Port: closedPort(t), Database: "sbtest", User: "sb", Password: "pw"}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			start := time.Now()
			err := s.WaitReady(ctx, tt.timeout)
			elapsed := time.Since(start)
			var ce *ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("WaitReady = %v, want a *ConnectError", err)
			}
			if ce.Kind != tt.wantKind {
				t.Errorf("Kind = %q, want %q (%v)", ce.Kind, tt.wantKind, ce.Err)
			}
			if tt.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("WaitReady on a cancelled context = %v, want it to wrap context.Canceled", err)
			}
			if ce.Attempt < tt.minAttempts || ce.Attempt > tt.maxAttempts {
				t.Errorf("Attempt = %d, want %d..%d", ce.Attempt, tt.minAttempts, tt.maxAttempts)
			}
			if elapsed > tt.maxElapsed {
				t.Errorf("WaitReady took %v, want under %v", elapsed, tt.maxElapsed)
			}
		})
	}
}
