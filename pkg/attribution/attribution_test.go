package attribution

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// snap is a run of build img on kernel 6.1 on node-1, changed by fs.
func snap(run string, fs ...func(*Snapshot)) Snapshot {
	s := Snapshot{Run: run, Image: "mariadb:11.4", Version: "11.4", ServerVersion: "11.4.2-MariaDB", ConfigSHA256: "c1",
		ImageDigest: digestA, SettingsSHA256: "s1",
		Env: results.Environment{Node: "node-1", Kernel: "6.1.0", CPUModel: "EPYC", CPUs: 8, AgentVersion: "v0.9", KubernetesVersion: "v1.31.0"}}
	for _, f := range fs {
		f(&s)
	}
	return s
}

func runs(n int, prefix string, fs ...func(*Snapshot)) []Snapshot {
	out := make([]Snapshot, n)
	for i := range out {
		out[i] = snap(prefix, fs...)
	}
	return out
}

func kernel(k string) func(*Snapshot)  { return func(s *Snapshot) { s.Env.Kernel = k } }
func node(n string) func(*Snapshot)    { return func(s *Snapshot) { s.Env.Node = n } }
func image(i string) func(*Snapshot)   { return func(s *Snapshot) { s.Image = i } }
func digest(d string) func(*Snapshot)  { return func(s *Snapshot) { s.ImageDigest = d } }
func version(v string) func(*Snapshot) { return func(s *Snapshot) { s.ServerVersion = v } }
func settings(d string, m map[string]string) func(*Snapshot) {
	return func(s *Snapshot) { s.SettingsSHA256, s.Settings = d, m }
}

// freshServers are n runs of prefix, each a fresh MariaDB server of one
// config: its own pod hostname, generated UID and log files named after
// the host; flush is innodb_flush_log_at_trx_commit.
func freshServers(prefix string, n int, flush string) []Snapshot {
	out := make([]Snapshot, n)
	for i := range out {
		host := fmt.Sprintf("%s-%d-mariadb-11-8-db-a1", prefix, i)
		m := map[string]string{"hostname": host, "server_uid": fmt.Sprintf("uid%s%d=", prefix, i), "wsrep_node_name": host,
			"general_log_file": host + ".log", "slow_query_log_file": host + "-slow.log", "log_slow_query_file": host + "-slow.log",
			"innodb_flush_log_at_trx_commit": flush, "max_connections": "151"}
		// The digest recorded before instance variables were left out.
		out[i] = snap(prefix, settings("sha256:legacy-"+host, m))
	}
	return out
}

func TestAttribute(t *testing.T) {
	tests := []struct {
		name          string
		before, after []Snapshot
		want          Attribution
	}{
		{"nothing changed", runs(3, "a"), runs(3, "b"), Attribution{}},
		{"a kernel upgrade alone is the environment's",
			runs(3, "a"), runs(3, "b", kernel("6.6.0")),
			Attribution{Environment: []Change{{FieldKernel, "6.1.0", "6.6.0"}}, EnvironmentOnly: true}},
		{"a re-pointed tag: the digest changed behind the same reference and version",
			runs(3, "a"), runs(3, "b", digest(digestB)),
			Attribution{Environment: []Change{{FieldImageDigest, digestA, digestB}}, EnvironmentOnly: true}},
		{"a new image reference is the build's, its digest with it",
			runs(3, "a"), runs(3, "b", image("mariadb:11.5"), digest(digestB)),
			Attribution{Build: []Change{{FieldImage, "mariadb:11.4", "mariadb:11.5"}}}},
		{"the same tag now serving another server version is a build change",
			runs(3, "a"), runs(3, "b", digest(digestB), version("11.4.3-MariaDB")),
			Attribution{Build: []Change{{FieldServerVersion, "11.4.2-MariaDB", "11.4.3-MariaDB"}},
				Environment: []Change{{FieldImageDigest, digestA, digestB}}}},
		{"a re-pointed tag whose server now logs: -log is a setting, not a version",
			runs(3, "a", version("11.4.2-MariaDB-log")), runs(3, "b", digest(digestB), settings("s2", nil)),
			Attribution{Environment: []Change{{FieldImageDigest, digestA, digestB}, {FieldServerSettings, "s1", "s2"}}, EnvironmentOnly: true}},
		{"a build change and a kernel change together: both named, not the environment's alone",
			runs(3, "a"), runs(3, "b", image("mariadb:11.5"), kernel("6.6.0")),
			Attribution{Build: []Change{{FieldImage, "mariadb:11.4", "mariadb:11.5"}}, Environment: []Change{{FieldKernel, "6.1.0", "6.6.0"}}}},
		{"a node that alternates explains no step",
			[]Snapshot{snap("a"), snap("a", node("node-2")), snap("a")}, runs(3, "b", node("node-2")),
			Attribution{}},
		{"only the three nearest runs count",
			append(runs(5, "a", node("node-2")), runs(3, "a")...), runs(3, "b", node("node-2")),
			Attribution{Environment: []Change{{FieldNode, "node-1", "node-2"}}, EnvironmentOnly: true}},
		{"a side that did not record a field does not count it",
			runs(3, "a", kernel("")), runs(3, "b", kernel("6.6.0")), Attribution{}},
		{"a build that varies within a side is no constant build",
			[]Snapshot{snap("a"), snap("a", image("mariadb:11.5")), snap("a")}, runs(3, "b", kernel("6.6.0")),
			Attribution{Environment: []Change{{FieldKernel, "6.1.0", "6.6.0"}}}},
		{"settings named variable by variable when read",
			runs(3, "a", settings("s1", map[string]string{"innodb_flush_log_at_trx_commit": "2", "max_connections": "151"})),
			runs(3, "b", settings("s2", map[string]string{"innodb_flush_log_at_trx_commit": "1", "max_connections": "151", "log_bin": "ON"})),
			Attribution{Environment: []Change{{"setting innodb_flush_log_at_trx_commit", "2", "1"}, {"setting log_bin", "(unset)", "ON"}}, EnvironmentOnly: true}},
		{"fresh servers of one config: their hostnames, UIDs and log names are no change",
			freshServers("a", 3, "2"), freshServers("b", 3, "2"), Attribution{}},
		{"fresh servers of one config, then a variable changed: it alone is named",
			freshServers("a", 3, "2"), freshServers("b", 3, "1"),
			Attribution{Environment: []Change{{"setting innodb_flush_log_at_trx_commit", "2", "1"}}, EnvironmentOnly: true}},
		{"a log file the config names is a setting like any other",
			runs(3, "a", settings("s1", map[string]string{"hostname": "db-a", "general_log_file": "/logs/general.log"})),
			runs(3, "b", settings("s1", map[string]string{"hostname": "db-b", "general_log_file": "/logs/queries.log"})),
			Attribution{Environment: []Change{{"setting general_log_file", "/logs/general.log", "/logs/queries.log"}}, EnvironmentOnly: true}},
		{"settings digest alone when the variables were not read",
			runs(3, "a"), runs(3, "b", settings("s2", nil)),
			Attribution{Environment: []Change{{FieldServerSettings, "s1", "s2"}}, EnvironmentOnly: true}},
		{"no runs on a side: nothing to say", nil, runs(3, "b"), Attribution{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Attribute(tt.before, tt.after)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Attribute (-want +got):\n%s", d)
			}
		})
	}
}

func TestWithoutReturns(t *testing.T) {
	nodeChange := Attribution{Environment: []Change{{FieldNode, "node-1", "node-2"}}, EnvironmentOnly: true}
	tests := []struct {
		name    string
		a       Attribution
		earlier []Snapshot
		want    Attribution
	}{
		{"no earlier runs: kept", nodeChange, nil, nodeChange},
		{"a node new to the series: kept", nodeChange, runs(3, "a"), nodeChange},
		{"nodes taking turns: dropped", nodeChange, []Snapshot{snap("a", node("node-2")), snap("a")}, Attribution{}},
		{"only the returning field goes",
			Attribution{Environment: []Change{{FieldNode, "node-1", "node-2"}, {FieldKernel, "6.1.0", "6.6.0"}}, EnvironmentOnly: true},
			[]Snapshot{snap("a", node("node-2"))},
			Attribution{Environment: []Change{{FieldKernel, "6.1.0", "6.6.0"}}, EnvironmentOnly: true}},
		{"a build going back is still named",
			Attribution{Build: []Change{{FieldImage, "mariadb:11.5", "mariadb:11.4"}}},
			runs(2, "a"),
			Attribution{Build: []Change{{FieldImage, "mariadb:11.5", "mariadb:11.4"}}}},
		{"named settings are not looked up as fields",
			Attribution{Environment: []Change{{"setting log_bin", "OFF", "ON"}}, EnvironmentOnly: true},
			runs(2, "a", settings("s2", map[string]string{"log_bin": "ON"})),
			Attribution{Environment: []Change{{"setting log_bin", "OFF", "ON"}}, EnvironmentOnly: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.a.WithoutReturns(tt.earlier), cmp.Comparer(func(a, b []Change) bool {
				return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b))
			})); d != "" {
				t.Errorf("WithoutReturns (-want +got):\n%s", d)
			}
		})
	}
}

func TestSettingChangesBounded(t *testing.T) {
	before, after := map[string]string{}, map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		before[k], after[k] = "1", "2"
	}
	got := settingChanges(before, after)
	if len(got) != MaxSettings+1 || got[MaxSettings].String() != "server settings: 2 more variables changed" {
		t.Errorf("got %v", got)
	}
}

func TestChangeString(t *testing.T) {
	tests := []struct {
		c    Change
		want string
	}{
		{Change{FieldKernel, "6.1.0", "6.6.0"}, "kernel 6.1.0 → 6.6.0"},
		{Change{FieldImageDigest, digestA, digestB}, "image digest sha256:aaaaaaaaaaaa → sha256:bbbbbbbbbbbb"},
		{Change{FieldServerSettings, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "short"}, "server settings 0123456789ab → short"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%#v: got %q, want %q", tt.c, got, tt.want)
		}
	}
	a := Attribution{Build: []Change{{FieldImage, "x:1", "x:2"}}, Environment: []Change{{FieldKernel, "a", "b"}, {FieldNode, "n1", "n2"}}}
	if a.CoincidesWith() != "kernel a → b, node n1 → n2" || a.BuildChanged() != "image x:1 → x:2" {
		t.Errorf("CoincidesWith %q BuildChanged %q", a.CoincidesWith(), a.BuildChanged())
	}
}

func TestFromManifestCell(t *testing.T) {
	c := &results.ManifestCell{Cell: results.Cell{Name: "c", Version: "11.4"}, Image: "i", ImageDigest: digestA, ServerVersion: "sv",
		ServerSettingsSHA256: "s", ConfigSHA256: "cf", Environment: &results.Environment{Kernel: "k"}}
	want := Snapshot{Run: "r", Image: "i", Version: "11.4", ServerVersion: "sv", ConfigSHA256: "cf", ImageDigest: digestA, SettingsSHA256: "s",
		Env: results.Environment{Kernel: "k"}}
	if d := cmp.Diff(want, FromManifestCell("r", c)); d != "" {
		t.Error(d)
	}
}
