package serverlog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestErrorLines(t *testing.T) {
	cases := []struct {
		name    string
		log     string
		want    []string
		refused bool
	}{
		{
			name: "mariadb misspelled option",
			log: `2026-11-24  3:04:05 0 [Note] Starting MariaDB 10.11.6-MariaDB-0+deb12u1 source revision  as process 1
2026-11-24  3:04:05 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_bufer_pool_size=256M'
2026-11-24  3:04:05 0 [ERROR] Aborting
`,
			want:    []string{"2026-11-24  3:04:05 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_bufer_pool_size=256M'"},
			refused: true,
		},
		{
			name: "mysql unknown option",
			log: `2026-11-24T03:04:05.000000Z 0 [System] [MY-010116] [Server] /usr/sbin/mysqld (mysqld 9.7.0) starting as process 1
2026-11-24T03:04:05.000000Z 0 [ERROR] [MY-000067] [Server] unknown variable 'innodb_bufer_pool_size=256M'.
2026-11-24T03:04:05.000000Z 0 [ERROR] [MY-010119] [Server] Aborting
`,
			want:    []string{"2026-11-24T03:04:05.000000Z 0 [ERROR] [MY-000067] [Server] unknown variable 'innodb_bufer_pool_size=256M'."},
			refused: true,
		},
		{
			name: "postgres unrecognized parameter",
			log: `2026-11-24 03:04:05.000 UTC [1] LOG:  unrecognized configuration parameter "shared_bufers" in file "/etc/postgresql/dbbench.conf" line 1
2026-11-24 03:04:05.000 UTC [1] FATAL:  configuration file "/etc/postgresql/dbbench.conf" contains errors
`,
			want: []string{
				`2026-11-24 03:04:05.000 UTC [1] LOG:  unrecognized configuration parameter "shared_bufers" in file "/etc/postgresql/dbbench.conf" line 1`,
				`2026-11-24 03:04:05.000 UTC [1] FATAL:  configuration file "/etc/postgresql/dbbench.conf" contains errors`,
			},
			refused: true,
		},
		{
			name: "postgres out of memory is not a config refusal",
			log: `2026-11-24 03:04:05.000 UTC [1] FATAL:  could not map anonymous shared memory: Cannot allocate memory
2026-11-24 03:04:05.000 UTC [1] LOG:  database system is shut down
`,
			want:    []string{"2026-11-24 03:04:05.000 UTC [1] FATAL:  could not map anonymous shared memory: Cannot allocate memory"},
			refused: false,
		},
		{
			name:    "only the abort line",
			log:     "2026-11-24  3:04:05 0 [ERROR] Aborting\n2026-11-24  3:04:05 0 [ERROR] Aborting\n",
			want:    []string{"2026-11-24  3:04:05 0 [ERROR] Aborting"},
			refused: false,
		},
		{
			name: "no errors",
			log:  "2026-11-24  3:04:05 0 [Note] ready for connections.\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ErrorLines(tc.log)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ErrorLines (-want +got):\n%s", diff)
			}
			if r := ConfigRefused(got); r != tc.refused {
				t.Errorf("ConfigRefused = %v, want %v", r, tc.refused)
			}
		})
	}
}

func TestErrorLinesKeepsTheFirstFive(t *testing.T) {
	log := ""
	for _, c := range "abcdefg" {
		log += "0 [ERROR] unknown variable '" + string(c) + "=1'\n"
	}
	got := ErrorLines(log)
	if len(got) != maxLines || got[0] != "0 [ERROR] unknown variable 'a=1'" {
		t.Errorf("got %q", got)
	}
}
