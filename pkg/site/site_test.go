package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/attribution"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
)

var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

const (
	digestT2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	digestT3 = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	digestT7 = "sha256:7777777777777777777777777777777777777777777777777777777777777777"
)

// night is one run of the fixture suite: the build it ran and its
// update-index and point-query figures.
type night struct {
	image, digest string
	update, point float64
}

// fixtureNights: three nights on a tag, the same tag re-pointed to another
// image for three nights (the environment changed, the update step got
// faster), then a new tag for three nights (the build changed: the update
// step lost most of its throughput). point-query holds.
func fixtureNights() []night {
	var out []night
	jitter := []float64{0, 6, -4, 3, -7, 5, -2, 4, -5}
	for i := range 9 {
		n := night{image: "bisect:site", digest: digestT2, update: 1000, point: 5000}
		switch {
		case i >= 6:
			n.image, n.digest, n.update = "bisect:t7", digestT7, 300
		case i >= 3:
			n.digest, n.update = digestT3, 1500
		}
		n.update += jitter[i]
		n.point += 10 * jitter[(i+3)%9]
		out = append(out, n)
	}
	return out
}

func manifestOf(i int, n night) *results.Manifest {
	c := results.ManifestCell{Cell: results.Cell{Name: "mariadb-nightly", Database: "mariadb", Engine: "mariadb", Version: "nightly", Repeat: 1, Attempt: 1},
		Phase: "Succeeded", Image: n.image, ImageDigest: n.digest, ServerVersion: "10.11.14-MariaDB", ConfigSHA256: "cfg",
		Environment: &results.Environment{Node: "node-1", Kernel: "6.1.0-40-amd64", CPUs: 2, AgentVersion: "dev", KubernetesVersion: "v1.36.3"},
		QPS:         map[string]map[int]float64{"update-index": {1: n.update}, "point-query": {1: n.point}}}
	return &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: fmt.Sprintf("night-%d", i+1), Suite: "nightly"},
		UpdatedAt: t0.Add(time.Duration(i) * 24 * time.Hour), Cells: []results.ManifestCell{c}}
}

// fixtureInput is the suite as the store would hold it after night-9: the
// slowdown at night-7 acknowledged (its bisection linked), night-8's
// verdict Regressed, night-9's not (acknowledged).
func fixtureInput() Input {
	in := Input{Suite: "nightly", Verdicts: map[string]triage.Verdict{}, Reports: map[string]bool{}}
	for i, n := range fixtureNights() {
		m := manifestOf(i, n)
		in.Runs = append(in.Runs, m)
		in.Reports[m.Run.Name] = true
	}
	slow := triage.VerdictPair{Cell: "mariadb-nightly", Step: "update-index", Threads: 1, ChangePercent: "-80.0", Since: "night-7", LastBefore: "night-6"}
	in.Verdicts["night-8"] = triage.Verdict{Run: "night-8", Suite: "nightly", Against: "ChangePoints", Status: "True", Reason: "Regressed",
		Message: "1 step × thread pairs slower", Regressed: []triage.VerdictPair{slow}, Bisection: "night-8-bisect"}
	acked := slow
	acked.Ack, acked.Resolution = "slow-commits", triage.ResolutionAcknowledged
	in.Verdicts["night-9"] = triage.Verdict{Run: "night-9", Suite: "nightly", Against: "ChangePoints", Status: "False", Reason: "RegressionAcknowledged",
		Message: "No step significantly slower; acknowledged, not reported: ...", Acknowledged: []triage.VerdictPair{acked}}
	in.Acks = []triage.Ack{{SchemaVersion: triage.AckSchemaV1, Name: "slow-commits", Suite: "nightly", Run: "night-8", Step: "update-index", Threads: 1,
		Resolution: triage.ResolutionAcknowledged, Reason: "durable commits from t6 on: expected", Link: "https://bugs.example/MDEV-1"}}
	in.Bisections = []Bisection{{Name: "night-8-bisect", Run: "night-8", Localized: "True", Reason: "Localized", FirstBad: "bisect:t6", LastGood: "bisect:t5", Confidence: "0.97", Report: true}}
	return in
}

func buildFixture(t *testing.T) *Index {
	t.Helper()
	idx, err := Build(fixtureInput(), Options{Now: t0.Add(240 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// The fixture's change points: the environment-only improvement at
// night-4 and the acknowledged build slowdown at night-7, both on
// update-index; none on point-query.
func TestBuildFindsAndTriagesTheChanges(t *testing.T) {
	idx := buildFixture(t)
	type cp struct {
		Series, Run, LastBefore, State string
		Worse, EnvironmentOnly         bool
		Environment, Build             string
		Bisections                     []string
	}
	var got []cp
	for _, c := range idx.ChangePoints {
		got = append(got, cp{Series: c.Step, Run: c.Run, LastBefore: c.LastBefore, State: c.State, Worse: c.Worse,
			EnvironmentOnly: c.Attribution.EnvironmentOnly, Environment: c.Attribution.CoincidesWith(), Build: c.Attribution.BuildChanged(),
			Bisections: c.Bisections})
	}
	want := []cp{
		{Series: "update-index", Run: "night-4", LastBefore: "night-3", State: StateOpen, EnvironmentOnly: true,
			Environment: "image digest sha256:222222222222 → sha256:333333333333"},
		{Series: "update-index", Run: "night-7", LastBefore: "night-6", State: StateAcknowledged, Worse: true,
			Build: "image bisect:site → bisect:t7", Bisections: []string{"night-8-bisect"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("change points (-want +got):\n%s", d)
	}
	if idx.Latest == nil || idx.Latest.Run != "night-9" || idx.Latest.Reason != "RegressionAcknowledged" {
		t.Errorf("latest verdict %+v, want night-9's", idx.Latest)
	}
	if len(idx.Runs) != 9 || idx.RunsInSuite != 9 || len(idx.Series) != 2 {
		t.Errorf("%d runs of %d, %d series", len(idx.Runs), idx.RunsInSuite, len(idx.Series))
	}
	// The environment change is marked between consecutive runs too.
	var envAt []string
	for _, s := range idx.Series {
		for _, e := range s.EnvironmentChanges {
			if len(e.Environment) > 0 {
				envAt = append(envAt, s.Step+"@"+e.Run)
			}
		}
	}
	if d := cmp.Diff([]string{"update-index@night-4", "point-query@night-4"}, envAt); d != "" {
		t.Errorf("environment changes (-want +got):\n%s", d)
	}
}

// Nodes taking turns night after night are marked once, when the second
// node first appears; a kernel new to the series is marked where it came.
func TestEnvironmentMarksSkipReturningValues(t *testing.T) {
	in := fixtureInput()
	for i, m := range in.Runs {
		env := *m.Cells[0].Environment
		if i%2 == 1 {
			env.Node = "node-2"
		}
		if i >= 7 {
			env.Kernel = "6.12.0-1-amd64"
		}
		m.Cells[0].Environment = &env
	}
	idx, err := Build(in, Options{Now: t0.Add(240 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var marks []string
	for _, s := range idx.Series {
		if s.Step != "point-query" {
			continue
		}
		for _, e := range s.EnvironmentChanges {
			for _, c := range e.Environment {
				marks = append(marks, fmt.Sprintf("%s %s→%s@%s", c.Field, c.Before, c.After, e.Run))
			}
		}
	}
	want := []string{
		"node node-1→node-2@night-2",
		"image digest " + digestT2 + "→" + digestT3 + "@night-4",
		"kernel 6.1.0-40-amd64→6.12.0-1-amd64@night-8",
	}
	if d := cmp.Diff(want, marks); d != "" {
		t.Errorf("environment marks (-want +got):\n%s", d)
	}
}

func TestBuildOptions(t *testing.T) {
	in := fixtureInput()
	tests := []struct {
		name     string
		in       Input
		opts     Options
		runs     int
		changes  int
		wantNote string
	}{
		{"the last runs only", in, Options{LastRuns: 5}, 5, 0, ""},
		{"no runs", Input{Suite: "empty"}, Options{}, 0, 0, ""},
		{"a manifest of another version is left out with a note", func() Input {
			c := fixtureInput()
			c.Runs[0].SchemaVersion = "dbbench.io/results-manifest/v9"
			return c
		}(), Options{}, 9, -1, "run night-1 left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx, err := Build(tt.in, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(idx.Runs) != tt.runs || (tt.changes >= 0 && len(idx.ChangePoints) != tt.changes) {
				t.Errorf("%d runs, %d change points; want %d, %d", len(idx.Runs), len(idx.ChangePoints), tt.runs, tt.changes)
			}
			if tt.wantNote != "" && !strings.Contains(strings.Join(idx.Notes, "\n"), tt.wantNote) {
				t.Errorf("notes %q lack %q", idx.Notes, tt.wantNote)
			}
			var b bytes.Buffer
			if err := Render(&b, idx, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An ack marked Invalid shows the change as invalid; deleting the ack
// (none) leaves it open with the command that acknowledges it.
func TestBuildTriageStates(t *testing.T) {
	for _, tt := range []struct {
		name  string
		acks  []triage.Ack
		state string
	}{
		{"acknowledged", fixtureInput().Acks, StateAcknowledged},
		{"invalid", []triage.Ack{{Name: "noise", Suite: "nightly", Run: "night-7", Resolution: triage.ResolutionInvalid, Reason: "bad node"}}, StateInvalid},
		{"un-acknowledged", nil, StateOpen},
		{"an ack of a run before the change covers nothing", []triage.Ack{{Name: "early", Suite: "nightly", Run: "night-5", Resolution: triage.ResolutionAcknowledged, Reason: "x"}}, StateOpen},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := fixtureInput()
			in.Acks = tt.acks
			idx, err := Build(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			slow := idx.ChangePoints[len(idx.ChangePoints)-1]
			if slow.State != tt.state {
				t.Errorf("state %s, want %s", slow.State, tt.state)
			}
			var b bytes.Buffer
			if err := Render(&b, idx, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			hasCmd := strings.Contains(b.String(), "kubectl dbbench ack nightly --run night-7 --cell mariadb-nightly --step update-index --threads 1")
			if hasCmd != (tt.state == StateOpen) {
				t.Errorf("ack command shown: %v, state %s", hasCmd, tt.state)
			}
		})
	}
}

// Settings read from provenance name the variables behind a changed
// settings digest.
func TestBuildNamesChangedSettings(t *testing.T) {
	in := fixtureInput()
	for i, m := range in.Runs {
		m.Cells[0].ServerSettingsSHA256 = "s1"
		if i >= 3 {
			m.Cells[0].ServerSettingsSHA256 = "s2"
		}
	}
	in.Settings = func(run, cell string) map[string]string {
		if run >= "night-4" {
			return map[string]string{"innodb_flush_log_at_trx_commit": "2"}
		}
		return map[string]string{"innodb_flush_log_at_trx_commit": "1"}
	}
	idx, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := idx.ChangePoints[0].Attribution.CoincidesWith()
	if want := "image digest sha256:222222222222 → sha256:333333333333, setting innodb_flush_log_at_trx_commit 1 → 2"; got != want {
		t.Errorf("coincides with %q, want %q", got, want)
	}
}

// site.json is the index as JSON: no NaN, the schema version first.
func TestFilesEncodeTheIndex(t *testing.T) {
	idx := buildFixture(t)
	idx.ChangePoints[0].PValue = finite(math.NaN())
	files, err := Files(idx, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var back Index
	if err := json.Unmarshal(files[FileData], &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != IndexSchemaV1 || len(back.ChangePoints) != 2 || back.ChangePoints[1].Ack.Name != "slow-commits" {
		t.Errorf("site.json decoded to %+v", back)
	}
	if !bytes.HasPrefix(files[FileIndex], []byte("<!doctype html>")) {
		t.Errorf("index.html starts %q", files[FileIndex][:40])
	}
}

// The page is self-contained and escapes what it is given.
func TestRenderIsSelfContainedAndEscaped(t *testing.T) {
	in := fixtureInput()
	in.Acks[0].Reason = `<script>alert("x")</script>`
	in.Notes = []string{`s3://b/nightly/<img src=x>/manifest.json skipped: not JSON`}
	idx, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, idx, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<img", "src=\"http", "url(http", "@import", "<link "} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{`href="night-7/report.html"`, `href="_bisections/night-8-bisect/report.html"`, `href="https://bugs.example/MDEV-1"`,
		`class="cp confirmed acknowledged worse"`, `class="cp confirmed open better env-only"`, "environment only", "build: image bisect:site → bisect:t7", "✓ ack"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

func TestDecodeBisection(t *testing.T) {
	for _, tt := range []struct {
		name, data, wantErr string
		want                Bisection
	}{
		{"a summary", `{"schemaVersion":"dbbench.io/bisection-summary/v1","name":"b","run":"r","localized":"True","firstBad":"t6","confidence":"0.97","points":[]}`, "",
			Bisection{Name: "b", Run: "r", Localized: "True", FirstBad: "t6", Confidence: "0.97"}},
		{"another version", `{"schemaVersion":"dbbench.io/bisection-summary/v2","name":"b"}`, "v2", Bisection{}},
		{"not JSON", `garbage`, "not a JSON document", Bisection{}},
		{"no name", `{"schemaVersion":"dbbench.io/bisection-summary/v1"}`, "without a name", Bisection{}},
	} {
		got, err := DecodeBisection([]byte(tt.data))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("%s: %+v %v", tt.name, got, err)
		}
	}
}

func TestNiceCeilAndTick(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{{0, 1}, {0.7, 1}, {1080, 2000}, {1600, 2000}, {230, 250}, {5001, 10000}} {
		if got := niceCeil(tt.in); got != tt.want {
			t.Errorf("niceCeil(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		in   float64
		want string
	}{{0, "0"}, {0.25, "0.25"}, {500, "500"}, {25000, "25k"}} {
		if got := tick(tt.in); got != tt.want {
			t.Errorf("tick(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var _ = attribution.Short

// The site finds change points by the rule of the suite's newest verdict
// (recorded in verdict.json), not the detector's defaults: on the site
// e2e's real series (a durable build, the tag re-pointed at a fast build,
// then the durable build again; five, five and three nights) the verdicts'
// rule, p < 0.01 and 30 %, finds both changes, the defaults (p < 0.001)
// neither.
func TestBuildJudgesByTheVerdictsRule(t *testing.T) {
	update := []float64{3372, 2483, 2987, 2799, 3325, 27569, 26415, 25885, 22110, 25833, 3072, 2445, 3100}
	in := Input{Suite: "nightly", Verdicts: map[string]triage.Verdict{}}
	for i, v := range update {
		n := night{image: "bisect:site", digest: digestT7, update: v, point: 5000}
		switch {
		case i >= 10:
			n.image = "bisect:t7"
		case i >= 5:
			n.digest = digestT2
		}
		in.Runs = append(in.Runs, manifestOf(i, n))
	}
	last := fmt.Sprintf("night-%d", len(update))
	for _, tc := range []struct {
		name            string
		maxP, magnitude float64
		want            []string
	}{
		{"the verdict's rule", 0.01, 0.3, []string{"night-6", "night-11"}},
		{"a verdict without a rule: the defaults", 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Verdicts[last] = triage.Verdict{Run: last, Suite: "nightly", Against: "ChangePoints", Status: "True", Reason: "Regressed",
				MaxPValue: tc.maxP, MinMagnitude: tc.magnitude}
			idx, err := Build(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cp := range idx.ChangePoints {
				if cp.Step == "update-index" {
					got = append(got, cp.Run)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("update-index change points at %v, want %v", got, tc.want)
			}
		})
	}
}
