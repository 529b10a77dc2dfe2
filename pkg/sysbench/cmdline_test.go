package sysbench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommand(t *testing.T) {
	cases := []struct {
		name, line string
		ok         bool
		script     string
		verb       string
		options    map[string]string
	}{{
		// What the scripts behind the published studies echo into
		// sb.o.<step>...dop<threads> before running sysbench.
		name:   "seed scripts",
		line:   `LANG=POSIX LD_LIBRARY_PATH=/opt/mysql/lib LUA_PATH=/opt/mytools/lua/?.lua /opt/sysbench/sysbench --db-driver=mysql --range-size=100 --table-size=1000000 --tables=8 --threads=1 --events=0 --warmup-time=5 --time=300 /opt/mytools/lua/oltp_point_select.lua run --mysql-user=root --mysql-password=pw --mysql-host=127.0.0.1 --mysql-db=test --rand-type=uniform --skip-trx`,
		ok:     true,
		script: "/opt/mytools/lua/oltp_point_select.lua", verb: "run",
		options: map[string]string{"db-driver": "mysql", "range-size": "100", "table-size": "1000000", "tables": "8", "threads": "1",
			"events": "0", "warmup-time": "5", "time": "300", "mysql-user": "root", "mysql-password": "pw", "mysql-host": "127.0.0.1",
			"mysql-db": "test", "rand-type": "uniform", "skip-trx": "on"},
	}, {
		name: "plain", line: "sysbench oltp_read_only --tables=2 --table-size=10000 --threads=4 run", ok: true,
		script: "oltp_read_only", verb: "run", options: map[string]string{"tables": "2", "table-size": "10000", "threads": "4"},
	}, {
		name: "banner", line: "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)",
	}, {
		name: "prose", line: "sysbench results of the c8r32 server",
	}, {
		name: "another tool", line: "/usr/bin/time -o sb.time sysbench --threads=1 oltp_point_select.lua run",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := ParseCommand(1, tc.line)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if c.Script != tc.script || c.Verb != tc.verb {
				t.Errorf("script %q verb %q, want %q %q", c.Script, c.Verb, tc.script, tc.verb)
			}
			if d := cmp.Diff(tc.options, c.Options); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseWithCommand: a command line before the banner is kept, and the
// rest parses as without it.
func TestParseWithCommand(t *testing.T) {
	body := readFixture(t, "1.1/read_write.txt")
	out, err := ParseString("/opt/sysbench/sysbench --table-size=1000000 --tables=8 --threads=8 oltp_read_write.lua run\n8 CPUs\n" + body)
	if err != nil {
		t.Fatal(err)
	}
	if rows, ok := out.Command.Int("table-size"); !ok || rows != 1000000 {
		t.Errorf("table-size %d %v, want 1000000", rows, ok)
	}
	if out.Command.Line.Number != 1 || out.Version == nil || out.Final == nil || out.Threads != 8 {
		t.Errorf("command line %d, version %v, final %v, threads %d", out.Command.Line.Number, out.Version, out.Final, out.Threads)
	}
	if _, ok := (*Command)(nil).Option("threads"); ok {
		t.Error("a nil command has options")
	}
}
