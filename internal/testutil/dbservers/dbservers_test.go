package dbservers

import (
	"context"
	"slices"
	"testing"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// The command line carries every field under the agent's flag names and
// the script's account, so the benchmarks measure what they asked for.
func TestAgentLocalCommand(t *testing.T) {
	a := AgentLocal{
		Bin: "/bin/agent", Sysbench: "/bin/sysbench", Engine: agentapi.Postgres, Port: 5544, PasswordFile: "/w/pw",
		Steps: []string{"point-query", "read-write"}, TableSize: 1000, Seconds: 7, Warmup: 2, Threads: 4, FlushWait: 9, Out: "/w/out",
	}
	args := a.Command(context.Background()).Args
	if args[0] != "/bin/agent" || args[1] != "local" {
		t.Fatalf("command %v, want /bin/agent local ...", args[:2])
	}
	for flag, want := range map[string]string{
		"--engine": "postgres", "--host": "127.0.0.1", "--port": "5544", "--user": User, "--password-file": "/w/pw",
		"--database": Database, "--steps": "point-query,read-write", "--tables": "1", "--table-size": "1000",
		"--read-seconds": "7", "--write-seconds": "7", "--warmup-seconds": "2", "--threads": "4", "--flush-wait": "9",
		"--sysbench": "/bin/sysbench", "--out": "/w/out",
	} {
		i := slices.Index(args, flag)
		if i < 0 || i+1 >= len(args) {
			t.Errorf("%s missing in %v", flag, args)
			continue
		}
		if got := args[i+1]; got != want {
			t.Errorf("%s %s, want %s", flag, got, want)
		}
	}
}
