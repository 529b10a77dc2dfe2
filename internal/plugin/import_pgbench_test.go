package plugin

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pgbench16 is pgbench 16's output of `pgbench -P 1 -T 3 -c 2 -j 2 -S`
// with stderr and stdout together, in the format of printResults and
// printProgressReport (src/bin/pgbench/pgbench.c).
const pgbench16 = `pgbench (16.4 (Debian 16.4-1.pgdg120+2))
starting vacuum...end.
progress: 1.0 s, 20012.5 tps, lat 0.099 ms stddev 0.031, 0 failed
progress: 2.0 s, 21034.0 tps, lat 0.095 ms stddev 0.029, 0 failed
progress: 3.0 s, 20998.1 tps, lat 0.095 ms stddev 0.030, 0 failed
transaction type: <builtin: select only>
scaling factor: 10
query mode: simple
number of clients: 2
number of threads: 2
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 62045
number of failed transactions: 0 (0.000%)
latency average = 0.096 ms
latency stddev = 0.030 ms
initial connection time = 4.512 ms
tps = 20681.330122 (without initial connection time)
`

func TestParsePgbench(t *testing.T) {
	cases := []struct {
		name, text string
		want       *pgbenchOutput
		wantErr    string
	}{{
		name: "16 with progress",
		text: pgbench16,
		want: &pgbenchOutput{Version: "16.4", Script: "<builtin: select only>", Clients: 2, Threads: 2, DurationSeconds: 3,
			Processed: 62045, TPS: 20681.330122, LatencyAvgMs: 0.096, Progress: []pgbenchProgress{{1, 20012.5, 0.099, 0}, {2, 21034.0, 0.095, 0}, {3, 20998.1, 0.095, 0}}},
	}, {
		// pgbench 13 and before: no failures, two tps lines, -t mode.
		name: "13, -t",
		text: "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 10\nquery mode: simple\nnumber of clients: 10\nnumber of threads: 1\n" +
			"number of transactions per client: 1000\nnumber of transactions actually processed: 10000/10000\n" +
			"tps = 85.184871 (including connections establishing)\ntps = 85.296346 (excluding connections establishing)\n",
		want: &pgbenchOutput{Script: "<builtin: TPC-B (sort of)>", Clients: 10, Threads: 1, Processed: 10000, TPS: 85.296346},
	}, {
		name: "client and server versions differ, failures",
		text: "pgbench (17.2, server 16.4)\nprogress: 1.0 s, 812.0 tps, lat 1.231 ms stddev 0.400, 3 failed\n" +
			"transaction type: <builtin: simple update>\nnumber of clients: 1\nduration: 1 s\nnumber of transactions actually processed: 812\n" +
			"number of failed transactions: 3 (0.368%)\nlatency average = 1.231 ms\ntps = 811.9 (without initial connection time)\n",
		want: &pgbenchOutput{Version: "17.2", ServerVersion: "16.4", Script: "<builtin: simple update>", Clients: 1, DurationSeconds: 1,
			Processed: 812, Failed: 3, TPS: 811.9, LatencyAvgMs: 1.231, Progress: []pgbenchProgress{{1, 812, 1.231, 3}}},
	}, {
		name:    "killed: no summary",
		text:    "pgbench (16.4)\nstarting vacuum...end.\nprogress: 1.0 s, 20012.5 tps, lat 0.099 ms stddev 0.031, 0 failed\n",
		wantErr: "no final report (was the run killed?)",
	}, {
		name:    "unreadable line",
		text:    strings.Replace(pgbench16, "tps = 20681.330122", "tps = many", 1),
		wantErr: `pgbench output line 18: tps: "many" is not a number: "tps = many (without initial connection time)"`,
	}, {
		name:    "unreadable progress",
		text:    strings.Replace(pgbench16, "progress: 2.0 s, 21034.0 tps", "progress: 2.0 s, fast tps", 1),
		wantErr: `pgbench output line 4: progress: "fast" is not a number: "progress: 2.0 s, fast tps, lat 0.095 ms stddev 0.029, 0 failed"`,
	}, {
		name:    "pgbench failed",
		text:    "pgbench (16.4)\npgbench: error: connection to server on socket \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory\n",
		wantErr: `pgbench failed, line 2: pgbench: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: No such file or directory`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !isPgbench([]byte(tc.text)) {
				t.Fatal("not recognised as pgbench output")
			}
			got, err := parsePgbench([]byte(tc.text))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	for _, s := range []string{vmstatText, myCnfText, "progress report of the migration\n", mustRead(t, fxPoint2)} {
		if isPgbench([]byte(s)) {
			t.Errorf("%.40q taken for pgbench output", s)
		}
	}
}

// TestImportPgbench: a folder per server version of pgbench logs imports
// with no flag: steps named after pgbench's built-in scripts, threads from
// "number of clients:", TPS from the progress lines after the warm-up.
func TestImportPgbench(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runCmd(t, noCluster{}, "import", "testdata/pgbench", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr:\n%s", stderr)
	}
	docs := readDocs(t, out)
	var cells []string
	for c := range docs {
		cells = append(cells, c)
	}
	sort.Strings(cells)
	if d := cmp.Diff([]string{"postgres-16.4", "postgres-17.2"}, cells); d != "" {
		t.Fatalf("cells (-want +got):\n%s\n%s", d, stdout)
	}
	want := []string{"pgbench-select-only@8", "pgbench-tpcb-like@1", "pgbench-tpcb-like@8"}
	for _, c := range cells {
		if d := cmp.Diff(want, stepNames(docs[c])); d != "" {
			t.Errorf("%s steps (-want +got):\n%s", c, d)
		}
	}
	checkContains(t, "stdout", stdout, stdout, []string{
		"note: layout: pgbench output, any file name (13 files; -v shows each step's name)",
		"note: skipped 7 files that are not pgbench runs: 2 PostgreSQL configuration, 3 not benchmark output, 2 vmstat output (-v lists them)",
	})
	// The README beside the cell folders is no cell.
	if strings.Contains(stdout, "cell pgbench") {
		t.Errorf("a note on the README:\n%s", stdout)
	}
	d := docs["postgres-16.4"]
	if d.Cell.Engine != "postgres" || d.Cell.Version != "16.4" {
		t.Errorf("cell %+v", d.Cell)
	}
	raw, err := parsePgbench([]byte(mustRead(t, "testdata/pgbench/postgres-16.4/pgbench.tpcb-like.c8.log")))
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, p := range raw.Progress[10:] {
		sum += p.TPS
	}
	steady := sum / float64(len(raw.Progress)-10)
	s := d.Steps[2]
	if math.Abs(s.SteadyTPS-steady) > 1e-9 || math.Abs(s.SteadyQPS-7*steady) > 1e-9 || s.SteadySamples != 20 || s.FinalTPS != raw.TPS ||
		s.Transactions != raw.Processed || s.Queries != 7*raw.Processed || s.LatencyAvgMs != raw.LatencyAvgMs || len(s.Series.TPS) != 30 {
		t.Errorf("tpcb-like@8: steady %v/%v (want %v tps, 7 statements each), samples %d, final %v, latency %v, series %d",
			s.SteadyTPS, s.SteadyQPS, steady, s.SteadySamples, s.FinalTPS, s.LatencyAvgMs, len(s.Series.TPS))
	}
	if sel := d.Steps[0]; sel.SteadyQPS != sel.SteadyTPS {
		t.Errorf("select-only: qps %v, tps %v: one statement per transaction", sel.SteadyQPS, sel.SteadyTPS)
	}
	if d.Provenance.SysbenchVersion != "" {
		t.Errorf("sysbench version %q in a pgbench import", d.Provenance.SysbenchVersion)
	}
	// -v names the steps after the transaction type.
	_, stderr, err = runCmd(t, noCluster{}, "import", "testdata/pgbench", "--out", t.TempDir(), "-v")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "stderr", stderr, stderr, []string{"layout: pgbench output, any file name (13 files)\n",
		"  <builtin: TPC-B (sort of)> -> pgbench-tpcb-like\n", "  <builtin: select only> -> pgbench-select-only\n"})
}
