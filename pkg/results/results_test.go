package results

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

func TestRoundTripFull(t *testing.T) {
	d := testDocument(3, []int{1, 16}, 30)
	b, err := Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestUnmarshalRefusesOtherVersions(t *testing.T) {
	good, err := Marshal(testDocument(1, []int{1}, 5))
	if err != nil {
		t.Fatal(err)
	}
	swap := func(v string) []byte {
		return []byte(strings.Replace(string(good), `"schemaVersion":"dbbench.io/results/v1"`, v, 1))
	}
	tests := []struct {
		name    string
		in      []byte
		got     string
		wantMsg string
	}{
		{"v2", swap(`"schemaVersion":"dbbench.io/results/v2"`), "dbbench.io/results/v2", "another dbbench version"},
		{"missing", swap(`"schemaVersionX":"x"`), "", "missing"},
		{"manifest", swap(`"schemaVersion":"dbbench.io/results-manifest/v1"`), "dbbench.io/results-manifest/v1", "another document kind"},
		{"foreign", swap(`"schemaVersion":"1.0"`), "1.0", "not a dbbench results document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Unmarshal(tt.in)
			var ue *UnsupportedVersionError
			if !errors.As(err, &ue) {
				t.Fatalf("want *UnsupportedVersionError, got %v", err)
			}
			if ue.Got != tt.got || ue.Want != SchemaV1 || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %+v / %q", ue, err)
			}
		})
	}
	if _, err := Unmarshal([]byte(`[1,2]`)); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("array: %v", err)
	}
	if _, err := UnmarshalManifest(good); err == nil {
		t.Error("UnmarshalManifest accepted a cell document")
	}
}

func TestUnmarshalForwardCompatible(t *testing.T) {
	d := testDocument(1, []int{1}, 5)
	b, _ := Marshal(d)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["aFieldFromV1Point7"] = map[string]any{"x": 1}
	m["steps"].([]any)[0].(map[string]any)["latencyP9999Ms"] = 3.5
	b2, _ := json.Marshal(m)
	got, err := Unmarshal(b2)
	if err != nil {
		t.Fatalf("a v1 document with later optional fields must still read: %v", err)
	}
	if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnmarshalTypeErrorNamesField(t *testing.T) {
	b, _ := Marshal(testDocument(1, []int{1}, 5))
	bad := strings.Replace(string(b), `"threads":1`, `"threads":"one"`, 1)
	_, err := Unmarshal([]byte(bad))
	if err == nil || !strings.Contains(err.Error(), "steps.threads") {
		t.Errorf("error %v does not name steps.threads", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(d *Document)
		want   []string // substrings of the error, each naming a field
	}{
		{"valid", func(d *Document) {}, nil},
		{"schema version", func(d *Document) { d.SchemaVersion = "v1" }, []string{"schemaVersion:"}},
		{"form", func(d *Document) { d.Form = "small" }, []string{"form:"}},
		{"identity", func(d *Document) { d.Run.Name = ""; d.Cell.Name = ""; d.Cell.Engine = "MariaDB"; d.Cell.Attempt = 0 },
			[]string{"run.name: must be set", "cell.name: must be set", "cell.engine:", "cell.attempt:"}},
		{"finished before started", func(d *Document) { d.FinishedAt = ptr(t0.Add(-1)) }, []string{"finishedAt:"}},
		{"failed without class", func(d *Document) { d.Status = Status{Outcome: OutcomeFailed} },
			[]string{"status.failureClass:", "status.error: must be set"}},
		{"class on success", func(d *Document) { d.Status.FailureClass = FailureBenchmark }, []string{"status.failureClass: must be absent"}},
		{"unknown outcome", func(d *Document) { d.Status.Outcome = "Done" }, []string{"status.outcome:"}},
		{"settings digest mismatch", func(d *Document) { d.Provenance.ServerSettings["max_connections"] = "1000" },
			[]string{"provenance.serverSettingsSha256: does not match"}},
		{"a digest of every variable, as written before instance variables were left out", func(d *Document) {
			d.Provenance.ServerSettings["hostname"] = "db-1"
			d.Provenance.ServerSettingsSHA256 = legacySettingsDigest(d.Provenance.ServerSettings)
		}, nil},
		{"bad digest", func(d *Document) { d.Provenance.ServerSettingsSHA256 = "abc" }, []string{"provenance.serverSettingsSha256:"}},
		{"image digest", func(d *Document) { d.Provenance.ImageDigest = "1234" }, []string{"provenance.imageDigest:"}},
		{"load", func(d *Document) { d.Load.InsertsPerSecond = math.NaN(); d.Load.Rows = -1 },
			[]string{"load.insertsPerSecond: must be a finite number", "load.rows: must not be negative"}},
		{"password in load", func(d *Document) { d.Load.Commands[0][2] = "--mysql-password=hunter2" }, []string{"load.commands[0][2]: holds an unredacted password"}},
		{"password in step", func(d *Document) { d.Steps[1].Command = []string{"sysbench", "--pgsql-password", "x"} }, []string{"steps[1].command[2]:"}},
		{"step fields", func(d *Document) {
			d.Steps[0].Threads = 0
			d.Steps[0].SteadyQPS = -1
			d.Steps[0].LatencyP99Ms = ptr(math.Inf(1))
			d.Steps[0].Step = ""
		}, []string{"steps[0].threads:", "steps[0].steadyQps: must not be negative", "steps[0].latencyP99Ms: must be a finite", "steps[0].step: must be set"}},
		{"latency order", func(d *Document) { d.Steps[0].LatencyMaxMs = 0.1 }, []string{"steps[0].latencyMaxMs: 0.1 is below latencyAvgMs"}},
		{"duplicate step", func(d *Document) { d.Steps[1].Threads = d.Steps[0].Threads }, []string{"steps[1]: step \"step-00\" with 1 threads repeats steps[0]"}},
		{"series lengths", func(d *Document) { d.Steps[0].Series.TPS = d.Steps[0].Series.TPS[1:] }, []string{"steps[0].series.tps: has 4 samples, qps has 5"}},
		{"queue column length", func(d *Document) { d.Steps[0].Series.QueueLength = []float64{1, 2} }, []string{"steps[0].series.queueLength: has 2 samples, qps has 5"}},
		{"queue column value", func(d *Document) { d.Steps[0].Series.Concurrency = []float64{0, 1, math.NaN(), 0, 0} }, []string{"steps[0].series.concurrency[2]:"}},
		{"rate of another step", func(d *Document) { d.Steps[0].Rate = &Rate{Step: "point-query", TargetTPS: 10} }, []string{"steps[0].rate.step: \"point-query\" does not name this step"}},
		{"stop reason without a record", func(d *Document) { d.Steps[0].StopReason = "Converged" }, []string{"steps[0].stopReason: \"Converged\" without an adaptive record"}},
		{"adaptive bounds", func(d *Document) {
			d.Steps[0].StopReason, d.Steps[0].Adaptive = "MaxDuration", &AdaptiveDuration{MinSeconds: 30, MaxSeconds: 20}
		}, []string{"steps[0].adaptive.minSeconds: 30 is above maxSeconds 20"}},
		{"series value", func(d *Document) { d.Steps[0].Series.QPS[2] = -5 }, []string{"steps[0].series.qps[2]:"}},
		{"series interval", func(d *Document) { d.Steps[0].Series.IntervalSeconds = 0 }, []string{"steps[0].series.intervalSeconds:"}},
		{"encoded in full", func(d *Document) {
			d.Steps[0].EncodedQPS = &EncodedSeries{Encoding: SeriesEncoding, ResolutionSeconds: 1, Scale: 100}
		},
			[]string{"steps[0].encodedQps: must be absent"}},
		{"series in compact", func(d *Document) { d.Form = FormCompact }, []string{"steps[0].series: must be absent"}},
		{"summary order", func(d *Document) { d.Steps[0].Summary = &SeriesSummary{Min: 5, P5: 4, Median: 6, P95: 7, Max: 8} }, []string{"steps[0].summary: min <= p5"}},
		{"config check", func(d *Document) {
			d.Provenance.ConfigCheck = &ConfigCheck{Verified: []ConfigSetting{{Requested: "1"}},
				NotApplied: []ConfigSetting{{Name: "max_connections", Requested: "77", Effective: "200"}}}
		}, []string{"provenance.configCheck.verified[0].name: must be set",
			"provenance.configCheck.notApplied: a succeeded cell cannot have run with settings other than its variant's"}},
		{"hardware", func(d *Document) { d.Steps[0].Hardware.OpsBasis = ""; d.Steps[0].Hardware.CPUPerOp = ptr(-1.0) },
			[]string{"steps[0].hardware.opsBasis: must be set", "steps[0].hardware.cpuPerOp: must not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := testDocument(1, []int{1, 2}, 5)
			tt.mutate(d)
			if !checkValidate(t, d, tt.want) {
				return
			}
			if _, err := Marshal(d); err == nil {
				t.Error("Marshal accepted an invalid document")
			}
		})
	}
}

// checkValidate checks d.Validate: no error when want is nil, else a
// *ValidationError whose text holds every string of want. It tells whether
// the document is invalid.
func checkValidate(t *testing.T, d *Document, want []string) bool {
	t.Helper()
	err := d.Validate()
	if want == nil {
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		return false
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}
	return true
}

func TestFailureClassesMatchPlan(t *testing.T) {
	// The agent reports agentapi.FailureClass; the document records it.
	if string(FailureBenchmark) != string(agentapi.FailureBenchmark) || string(FailureInfrastructure) != string(agentapi.FailureInfrastructure) {
		t.Errorf("failure classes drifted from pkg/agentapi: %q/%q vs %q/%q", FailureBenchmark, FailureInfrastructure, agentapi.FailureBenchmark, agentapi.FailureInfrastructure)
	}
}

func TestSettingsDigest(t *testing.T) {
	// Expected values computed independently (Python hashlib) from the
	// canonical form: sorted names, name NUL value NUL.
	m := map[string]string{"innodb_buffer_pool_size": "134217728", "max_connections": "151", "character_set_server": "utf8mb4"}
	if got, want := SettingsDigest(m), "sha256:af79baf1f16e829633b0ebd422e5a01dcd218bee22eb770289e65f45f1453bdb"; got != want {
		t.Errorf("SettingsDigest = %s, want %s", got, want)
	}
	if got, want := SettingsDigest(nil), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("SettingsDigest(nil) = %s, want %s", got, want)
	}
	// The NUL separators keep "a"="bc" and "ab"="c" apart.
	if SettingsDigest(map[string]string{"a": "bc"}) == SettingsDigest(map[string]string{"ab": "c"}) {
		t.Error("digest does not separate name from value")
	}
}

func TestComparableSettings(t *testing.T) {
	host := "night-1-mariadb-11-8-nightly-334bb-db-a1"
	tests := []struct {
		name     string
		settings map[string]string
		want     map[string]string
	}{
		{"nothing to leave out", map[string]string{"max_connections": "151"}, map[string]string{"max_connections": "151"}},
		{"the instance's name, UID and the files named after it",
			map[string]string{"hostname": host, "server_uid": "92xSVmDURWJTQDeJ8i08atiOmMs=", "server_uuid": "3e11fa47-71ca-11e1-9e33-c80aa9429562",
				"general_log_file": host + ".log", "slow_query_log_file": host + "-slow.log", "log_slow_query_file": host + "-slow.log",
				"wsrep_node_name": host, "pid_file": "/run/mysqld/" + host + ".pid", "innodb_flush_log_at_trx_commit": "2"},
			map[string]string{"innodb_flush_log_at_trx_commit": "2"}},
		{"a log file the config names stays",
			map[string]string{"hostname": host, "general_log_file": "/logs/general.log"},
			map[string]string{"general_log_file": "/logs/general.log"}},
		{"a value holding the hostname in a variable not derived from it stays",
			map[string]string{"hostname": "db", "datadir": "/var/lib/db/", "log_error": "/var/log/db.err"},
			map[string]string{"datadir": "/var/lib/db/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ComparableSettings(tt.settings); !maps.Equal(got, tt.want) {
				t.Errorf("ComparableSettings = %v, want %v", got, tt.want)
			}
		})
	}
	// Two fresh servers of one config have one digest; documents with the
	// digest of every variable still validate.
	a := map[string]string{"hostname": "a-db", "server_uid": "x", "general_log_file": "a-db.log", "max_connections": "151"}
	b := map[string]string{"hostname": "b-db", "server_uid": "y", "general_log_file": "b-db.log", "max_connections": "151"}
	if SettingsDigest(a) != SettingsDigest(b) {
		t.Error("two fresh servers of one config have different settings digests")
	}
	if legacySettingsDigest(a) == SettingsDigest(a) {
		t.Error("the legacy digest covers the instance's variables too")
	}
}

func TestRedactCommand(t *testing.T) {
	in := []string{"sysbench", "--mysql-password=s3cret", "--pgsql-password", "s3cret", "PGPASSWORD=x", "--mysql-user=sb", "--threads=4"}
	want := []string{"sysbench", "--mysql-password=REDACTED", "--pgsql-password", "REDACTED", "PGPASSWORD=REDACTED", "--mysql-user=sb", "--threads=4"}
	got := RedactCommand(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if in[1] != "--mysql-password=s3cret" {
		t.Error("RedactCommand modified its input")
	}
	if unredacted(got) != -1 || unredacted(in) != 1 {
		t.Errorf("unredacted: %d, %d", unredacted(got), unredacted(in))
	}
}

func TestHardwareDerive(t *testing.T) {
	h := Hardware{OpsPerSecond: 20000, OpsBasis: "steadyQps", CPUs: 16,
		CPUPercent: ptr(50.0), ContextSwitchesPerSecond: ptr(100000.0), ReadsPerSecond: ptr(0.0),
		WriteKBPerSecond: ptr(4000.0), ServerCPUSecondsPerSecond: ptr(6.0)}
	h.Derive()
	want := Hardware{OpsPerSecond: 20000, OpsBasis: "steadyQps", CPUs: 16,
		CPUPercent: ptr(50.0), ContextSwitchesPerSecond: ptr(100000.0), ReadsPerSecond: ptr(0.0),
		WriteKBPerSecond: ptr(4000.0), ServerCPUSecondsPerSecond: ptr(6.0),
		CPUPerOp: ptr(0.0025), ContextSwitchesPerOp: ptr(5.0), ReadsPerOp: ptr(0.0), WriteKBPerOp: ptr(0.2),
		ServerCPUMicrosPerOp: ptr(300.0)}
	if diff := cmp.Diff(want, h, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if h.ReadKBPerOp != nil {
		t.Error("readKbPerOp derived from an absent average")
	}
	// 0.0025 % of 16 CPUs per op = 0.0004 CPU-seconds = 400 µs, node-wide.
	if v, ok := h.CPUSecondsPerOp(); !ok || math.Abs(v-0.0004) > 1e-12 {
		t.Errorf("CPUSecondsPerOp = %v, %v", v, ok)
	}
	zero := Hardware{CPUPercent: ptr(50.0), OpsBasis: "steadyQps"}
	zero.Derive()
	if zero.CPUPerOp != nil {
		t.Error("q = 0 must leave cpu/o absent, not infinite")
	}
	if _, ok := zero.CPUSecondsPerOp(); ok {
		t.Error("CPUSecondsPerOp without cpus")
	}
}

func TestRateStepName(t *testing.T) {
	for _, tc := range []struct {
		step, fraction string
		tps            int
		want           string
	}{
		{"point-query", "0.5", 0, "point-query@0.5peak"},
		{"read-write_range=100", "", 2000, "read-write_range=100@2000tps"},
	} {
		got := RateStepName(tc.step, tc.fraction, tc.tps)
		if got != tc.want {
			t.Errorf("RateStepName(%q, %q, %d) = %q, want %q", tc.step, tc.fraction, tc.tps, got, tc.want)
		}
		if s, label := SplitRateStep(got); s != tc.step || label == "" {
			t.Errorf("SplitRateStep(%q) = %q, %q", got, s, label)
		}
	}
	if s, label := SplitRateStep("point-query"); s != "point-query" || label != "" {
		t.Errorf("a closed-loop name split into %q, %q", s, label)
	}
}
