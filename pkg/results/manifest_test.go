package results

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/workload"
	"github.com/google/go-cmp/cmp"
)

func testManifest(cells, steps int, threads []int) *Manifest {
	m := &Manifest{SchemaVersion: ManifestSchemaV1, Run: Run{Name: "r", Namespace: "bench", UID: "u"}, UpdatedAt: t0}
	for i := 0; i < cells; i++ {
		d := testDocument(steps, threads, 5)
		d.Cell.Name = fmt.Sprintf("mariadb-10-11-%03d-r0", i)
		m.Cells = append(m.Cells, NewManifestCell(d, "Succeeded", d.Cell.Name+"-results", "runs/r/"+d.Cell.Name+".json.gz"))
	}
	if cells > 0 {
		m.Baseline = m.Cells[0].Name
	}
	return m
}

func TestNewManifestCell(t *testing.T) {
	d := testDocument(2, []int{1, 4}, 5)
	d.Steps[0].SteadyQPS = 12345.6789
	d.Steps[1].RowsPerSecond = ptr(2.5e6)
	d.Steps[3].Error = "lost connection"
	// population stddev 10 over 10 samples is a sample stddev of 10.54
	d.Steps[0].Summary = &SeriesSummary{Samples: 10, Mean: 100, CV: 0.1, Lag1Autocorrelation: 0.5} // worth 3.3 samples
	d.Steps[2].Summary = &SeriesSummary{Samples: 1, Mean: 100}                                     // too few samples for a spread
	d.Steps[0].LatencyP99Ms = ptr(2.34567)                                                         // kept to the microsecond
	d.Steps[2].LatencyMoments = &SeriesMoments{Samples: 8, Mean: 1.5, CV: 0.2}                     // the compact form's, read before the series
	got := NewManifestCell(d, "Succeeded", "cm", "key")
	want := ManifestCell{
		Cell: d.Cell, Phase: "Succeeded", ConfigMap: "cm", ObjectKey: "key",
		ServerVersion: "10.11.19-MariaDB-0+deb12u1", ServerSettingsSHA256: d.Provenance.ServerSettingsSHA256,
		ImageDigest: d.Provenance.ImageDigest, ConfigSHA256: ContentDigest(d.Provenance.ConfigText), Image: d.Provenance.Image,
		Node:        "node-a",
		Environment: EnvironmentOf(&d.Provenance),
		QPS: map[string]map[int]float64{
			"step-00": {1: 12345.68, 4: 40000},
			"step-01": {1: 10000}, // the failed 4-thread step has no figure
		},
		RowsPerSecond: map[string]map[int]float64{"step-00": {4: 2.5e6}},
		// step-00@4 has no summary but a series (a full document): its
		// two steady seconds give the spread.
		QPSSpread:    map[string]map[int]Spread{"step-00": {1: {Samples: 10, Stddev: 10.54, EffectiveSamples: 3}, 4: {Samples: 2, Stddev: 448.21}}},
		LatencyP95Ms: map[string]map[int]float64{"step-00": {1: 1.3, 4: 1.3}, "step-01": {1: 1.3}},
		LatencyP99Ms: map[string]map[int]float64{"step-00": {1: 2.346}},
		// Two steady seconds of a constant series (warm-up 3 s of 5); the
		// moments of step-01@1: population sd 0.3 over 8 samples.
		LatencySpread: map[string]map[int]Spread{"step-00": {1: {Samples: 2}, 4: {Samples: 2}}, "step-01": {1: {Samples: 8, Stddev: 0.32}}},
		LatencyMeanMs: map[string]map[int]float64{"step-00": {1: 1.25, 4: 1.25}, "step-01": {1: 1.5}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The long-run spread comes from the series by batch means, from the full
// series or its encoding in a compact document, after the warm-up.
func TestNewManifestCellLongRunSpread(t *testing.T) {
	nine := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	encode := func(values []float64, res int) *EncodedSeries {
		e, err := EncodeSeries(Downsample(values, res), float64(res), 100)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var eighteen []float64 // two warm-up seconds, then 0..15 in pairs
	eighteen = append(eighteen, 100, 100)
	for i := range 16 {
		eighteen = append(eighteen, float64(i))
	}
	tests := []struct {
		name     string
		series   *Series
		encoded  *EncodedSeries
		warmup   float64
		wantSD   float64
		wantDF   int
		wantNone bool
	}{
		// Batches of 3: means 2, 5, 8; 3·9 = 27 per sample.
		{name: "full series", series: &Series{IntervalSeconds: 1, QPS: nine}, wantSD: 5.2, wantDF: 2},
		{name: "warm-up dropped", series: &Series{IntervalSeconds: 1, QPS: append([]float64{1e6}, nine...)}, warmup: 1, wantSD: 5.2, wantDF: 2},
		{name: "1-s encoding", encoded: encode(nine, 1), wantSD: 5.2, wantDF: 2},
		// 2-s means after a 2-s warm-up: 0.5, 2.5, ..., 14.5 (8 samples),
		// batches of 2: means 1.5, 5.5, 9.5, 13.5 (variance 26.67), 2·26.67
		// per 2-s sample, ×2 per second: 106.67.
		{name: "2-s encoding", encoded: encode(eighteen, 2), warmup: 2, wantSD: 10.33, wantDF: 3},
		{name: "too short", series: &Series{IntervalSeconds: 1, QPS: []float64{1, 2, 3}}, wantNone: true},
		{name: "no series", wantNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := testDocument(1, []int{1}, 5)
			d.Steps[0].Series, d.Steps[0].EncodedQPS, d.Steps[0].WarmupSeconds = tt.series, tt.encoded, tt.warmup
			d.Steps[0].Summary = &SeriesSummary{Samples: 9, Mean: 5, CV: 0.5}
			sp := NewManifestCell(d, "Succeeded", "", "").QPSSpread["step-00"][1]
			if tt.wantNone {
				if sp.LongRunStddev != 0 || sp.LongRunDF != 0 {
					t.Errorf("long-run spread %+v, want none", sp)
				}
				return
			}
			if sp.LongRunStddev != tt.wantSD || sp.LongRunDF != tt.wantDF {
				t.Errorf("long-run sd %v over %d df, want %v over %d", sp.LongRunStddev, sp.LongRunDF, tt.wantSD, tt.wantDF)
			}
		})
	}
}

func TestManifestRoundTripAndUpsert(t *testing.T) {
	m := testManifest(3, 2, []int{1, 16})
	c := m.Cells[1]
	c.Phase = "Failed"
	m.Upsert(c)
	m.Upsert(ManifestCell{Cell: Cell{Name: "new", Engine: "mysql", Version: "8.4", Attempt: 1}, Phase: "Pending"})
	if len(m.Cells) != 4 || m.Cells[1].Phase != "Failed" || m.Cells[3].Name != "new" {
		t.Fatalf("Upsert: %+v", m.Cells)
	}
	b, err := MarshalManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	// thread counts survive as JSON object keys
	if !strings.Contains(string(b), `"qps":{"step-00":{"1":10000,"16":160000}`) {
		t.Errorf("unexpected qps encoding: %s", b[:min(len(b), 600)])
	}
	got, err := UnmarshalManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if c, ok := got.Cell("new"); !ok || c.Engine != "mysql" {
		t.Errorf("Cell(new) = %+v, %v", c, ok)
	}
	if _, ok := got.Cell("nope"); ok {
		t.Error("Cell found a missing name")
	}
}

func TestManifestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *Manifest)
		want   []string
	}{
		{"version", func(m *Manifest) { m.SchemaVersion = SchemaV1 }, []string{"schemaVersion:"}},
		{"run", func(m *Manifest) { m.Run.Name = "" }, []string{"run.name: must be set"}},
		{"baseline", func(m *Manifest) { m.Baseline = "ghost" }, []string{`baseline: "ghost" is not one of the cells`}},
		{"duplicate", func(m *Manifest) { m.Cells[1].Name = m.Cells[0].Name }, []string{"cells[1].name:", "repeats cells[0]"}},
		{"cell identity", func(m *Manifest) { m.Cells[0].Engine = ""; m.Cells[0].Phase = "" }, []string{"cells[0].engine:", "cells[0].phase: must be set"}},
		{"qps", func(m *Manifest) { m.Cells[0].QPS["step-00"][0] = -1 }, []string{`cells[0].qps["step-00"][0]: thread count`, "must not be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest(2, 1, []int{1})
			tt.mutate(m)
			err := m.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestUnmarshalManifestRefusesOtherVersions(t *testing.T) {
	b, _ := MarshalManifest(testManifest(1, 1, []int{1}))
	v2 := strings.Replace(string(b), ManifestSchemaV1, "dbbench.io/results-manifest/v2", 1)
	var ue *UnsupportedVersionError
	if _, err := UnmarshalManifest([]byte(v2)); !errors.As(err, &ue) || ue.Got != "dbbench.io/results-manifest/v2" {
		t.Errorf("v2 manifest: %v", err)
	}
	if _, err := Unmarshal(b); !errors.As(err, &ue) {
		t.Errorf("Unmarshal accepted a manifest: %v", err)
	}
}

// TestManifestSize pins the capacity the package documents, with the real
// step names of the catalog and QPS values with all their digits.
func TestManifestSize(t *testing.T) {
	sweep := []int{1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48}
	tests := []struct {
		name    string
		cells   int
		steps   []workload.Step
		threads []int
		fits    bool
	}{
		{"600 cells, 32 steps, 1 thread count", 600, workload.Standard(), []int{16}, true},
		{"250 cells, 32 steps, 3 thread counts", 250, workload.Standard(), []int{1, 16, 48}, true},
		{"120 cells, 42 steps x 11 thread counts", 120, workload.Extended(), sweep, true},
		{"200 cells, 42 steps x 11 thread counts", 200, workload.Extended(), sweep, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest(1, 0, nil)
			m.Cells[0].QPS = map[string]map[int]float64{}
			for _, s := range tt.steps {
				m.Cells[0].QPS[s.Name] = map[int]float64{}
				for _, th := range tt.threads {
					m.Cells[0].QPS[s.Name][th] = 123456.78
				}
			}
			for i := 1; i < tt.cells; i++ {
				c := m.Cells[0]
				c.Name = fmt.Sprintf("mariadb-10-11-base-%03d-r0", i)
				m.Cells = append(m.Cells, c)
			}
			b, err := MarshalManifest(m)
			if tt.fits {
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d bytes, %d per cell", len(b), len(b)/tt.cells)
				return
			}
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("want ErrTooLarge, got %v", err)
			}
		})
	}
}

// A manifest keeps its cells' spreads while it fits a ConfigMap and drops
// them, keeping the throughput figures, when only that makes it fit.
func TestMarshalManifestDropsSpreadsToFit(t *testing.T) {
	sweep := []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 256}
	for _, tt := range []struct {
		cells      int
		wantSpread bool
	}{{2, true}, {120, false}} {
		m := testManifest(1, 0, nil)
		m.Cells[0].QPS = map[string]map[int]float64{}
		m.Cells[0].QPSSpread = map[string]map[int]Spread{}
		for _, s := range workload.Extended() {
			m.Cells[0].QPS[s.Name] = map[int]float64{}
			m.Cells[0].QPSSpread[s.Name] = map[int]Spread{}
			for _, th := range sweep {
				m.Cells[0].QPS[s.Name][th] = 123456.78
				m.Cells[0].QPSSpread[s.Name][th] = Spread{Samples: 290, Stddev: 1234.56}
			}
		}
		for i := 1; i < tt.cells; i++ {
			c := m.Cells[0]
			c.Name = fmt.Sprintf("mariadb-10-11-base-%03d-r0", i)
			m.Cells = append(m.Cells, c)
		}
		b, err := MarshalManifest(m)
		if err != nil {
			t.Fatalf("%d cells: %v", tt.cells, err)
		}
		got, err := UnmarshalManifest(b)
		if err != nil {
			t.Fatal(err)
		}
		if has := got.Cells[tt.cells-1].QPSSpread != nil; has != tt.wantSpread {
			t.Errorf("%d cells (%d bytes): spread kept %v, want %v", tt.cells, len(b), has, tt.wantSpread)
		}
		if got.Cells[tt.cells-1].QPS["point-query"][16] != 123456.78 {
			t.Errorf("%d cells: throughput figures lost", tt.cells)
		}
		if len(m.Cells[0].QPSSpread) == 0 {
			t.Errorf("MarshalManifest modified its argument")
		}
	}
}

func TestManifestNoiseFloorValidation(t *testing.T) {
	good := NoisePoint{Step: "point-query", Threads: 4, SigmaLog: 0.05, CV: 0.05, DF: 6, Runs: 8, Sets: 2}
	tests := []struct {
		name  string
		noise *NoiseFloors
		want  string // a substring of the error; "" for valid
	}{
		{"absent", nil, ""},
		{"valid", &NoiseFloors{Alpha: 0.05, Runs: []string{"a"}, Points: []NoisePoint{good}}, ""},
		{"alpha out of range", &NoiseFloors{Alpha: 1.5, Points: []NoisePoint{good}}, "noiseFloor.alpha: must be in (0, 1)"},
		{"no df", &NoiseFloors{Points: []NoisePoint{func() NoisePoint { p := good; p.DF = 0; return p }()}}, "noiseFloor.points[0].df: must be at least 1"},
		{"no threads", &NoiseFloors{Points: []NoisePoint{func() NoisePoint { p := good; p.Threads = 0; return p }()}}, "noiseFloor.points[0].threads"},
		{"negative sigma", &NoiseFloors{Points: []NoisePoint{func() NoisePoint { p := good; p.SigmaLog = -1; return p }()}}, "noiseFloor.points[0].sigmaLog: must not be negative"},
		{"duplicate point", &NoiseFloors{Points: []NoisePoint{good, good}}, "noiseFloor.points[1]: point-query@4 repeats noiseFloor.points[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testManifest(1, 1, []int{4})
			m.NoiseFloor = tt.noise
			b, err := MarshalManifest(m)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid floor refused: %v", err)
				}
				back, err := UnmarshalManifest(b)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.noise, back.NoiseFloor); diff != "" {
					t.Errorf("round trip (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestAAKey(t *testing.T) {
	base := ManifestCell{Cell: Cell{Name: "m-11.8-default", Database: "maria", Engine: "mariadb", Version: "11.8", Config: "default"},
		ServerVersion: "11.8.3-MariaDB", ServerSettingsSHA256: "sha256:s", ImageDigest: "sha256:i", ConfigSHA256: "sha256:c"}
	with := func(f func(*ManifestCell)) ManifestCell { c := base; f(&c); return c }
	tests := []struct {
		name     string
		other    ManifestCell
		workload string
		same     bool
	}{
		{"identical", base, "w", true},
		{"another repeat of the same combination", with(func(c *ManifestCell) { c.Name, c.Repeat = "m-11.8-default-r2", 2 }), "w", true},
		{"another image", with(func(c *ManifestCell) { c.ImageDigest = "sha256:j" }), "w", false},
		{"other settings", with(func(c *ManifestCell) { c.ServerSettingsSHA256 = "sha256:t" }), "w", false},
		{"other config text", with(func(c *ManifestCell) { c.ConfigSHA256 = "sha256:d" }), "w", false},
		{"other workload", base, "w2", false},
		{"another config name", with(func(c *ManifestCell) { c.Config = "bp4g" }), "w", false},
	}
	for _, tt := range tests {
		if got := tt.other.AAKey(tt.workload) == base.AAKey("w"); got != tt.same {
			t.Errorf("%s: same A/A key = %v, want %v", tt.name, got, tt.same)
		}
	}
	if k := with(func(c *ManifestCell) { c.ImageDigest, c.ServerVersion = "", "" }).AAKey("w"); k != "" {
		t.Errorf("no binary identity: key %q, want none", k)
	}
	if k := with(func(c *ManifestCell) { c.ServerSettingsSHA256, c.ConfigSHA256 = "", "" }).AAKey("w"); k != "" {
		t.Errorf("no settings identity: key %q, want none", k)
	}
	if got := ContentDigest(""); got != "" {
		t.Errorf("digest of nothing %q", got)
	}
}
