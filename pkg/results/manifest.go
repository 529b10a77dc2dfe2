package results

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/dbbench/dbbench/pkg/inference"
)

// Manifest indexes the cells of one run. It lives in the run's results
// ConfigMap; the cells' documents live elsewhere (their own ConfigMaps, an
// object store) and the manifest says where. Its per-cell QPS summary is what
// the relative-throughput, group and scale-up reports need, so they can be
// made from the manifest alone.
//
// Size (measured by TestManifestSize with the catalog's step names): a cell
// with the 32 standard steps at one thread count takes about 1.5 KB, so about
// 650 such cells fit in a ConfigMap; at 3 thread counts about 2.5 KB (400
// cells); with 42 steps × 11 thread counts about 8 KB (about 125 cells).
// MarshalManifest refuses a manifest over MaxConfigMapBytes; a larger run
// needs its manifest in object storage.
type Manifest struct {
	// SchemaVersion is always ManifestSchemaV1 for this type.
	SchemaVersion string `json:"schemaVersion"`
	Run           Run    `json:"run"`
	// UpdatedAt is when the manifest was last written.
	UpdatedAt time.Time `json:"updatedAt"`
	// Baseline is the name of the cell that relative figures divide by.
	Baseline string `json:"baseline,omitempty"`
	// Cells are in the run's matrix order.
	Cells []ManifestCell `json:"cells"`
	// WorkloadSHA256 is ContentDigest of the run's workload spec (steps,
	// threads, durations, ...), so that two runs of a suite can be told to
	// have measured the same thing; empty when unknown.
	WorkloadSHA256 string `json:"workloadSha256,omitempty"`
	// NoiseFloor is the suite's run-to-run noise as this run's regression
	// verdict measured it; absent without a verdict or without evidence.
	NoiseFloor *NoiseFloors               `json:"noiseFloor,omitempty"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ManifestPhaseSucceeded is the phase of a cell that succeeded: the API's
// CellSucceeded, which the controller copies (this package does not import
// the API types).
const ManifestPhaseSucceeded = "Succeeded"

// ManifestCell is one cell's entry. The identity fields are Cell's, inline.
type ManifestCell struct {
	Cell
	// Phase is the controller's phase for the cell (Pending, Running,
	// Succeeded, Failed, ...); open-ended, informational. Readers count a
	// cell's figures only at ManifestPhaseSucceeded.
	Phase string `json:"phase"`
	// ConfigMap holds the compact document (plan.ResultKeyDocument key), in
	// the run's namespace; ObjectKey is the full document's object-store key.
	ConfigMap string `json:"configMap,omitempty"`
	ObjectKey string `json:"objectKey,omitempty"`
	// ServerVersion and ServerSettingsSHA256 repeat the document's
	// provenance, to spot two cells that were not what they claim to be.
	ServerVersion        string `json:"serverVersion,omitempty"`
	ServerSettingsSHA256 string `json:"serverSettingsSha256,omitempty"`
	// ImageDigest is the server image's digest and ConfigSHA256
	// ContentDigest of the config text, from the document's provenance:
	// with ServerVersion and ServerSettingsSHA256 they tell two runs of the
	// same binary and config (AAKey).
	ImageDigest  string `json:"imageDigest,omitempty"`
	ConfigSHA256 string `json:"configSha256,omitempty"`
	// Image is the server image reference the cell ran (a tag or a
	// digest): with ImageDigest, the build measured.
	Image string `json:"image,omitempty"`
	// Node is the node the database ran on (provenance.databaseNode), so
	// that the suite's noise can be split between runs and nodes; empty
	// when unknown.
	Node string `json:"node,omitempty"`
	// QPS is {step → {threads → steady-state QPS}}, rounded to 0.01.
	QPS map[string]map[int]float64 `json:"qps,omitempty"`
	// RowsPerSecond is the same for steps reported as rows/s (scan).
	RowsPerSecond map[string]map[int]float64 `json:"rowsPerSecond,omitempty"`
	// QPSSpread is {step → {threads → spread}} of the steady-state
	// per-second QPS samples behind QPS, so that runs can be compared with
	// a significance test; absent for steps without a series summary.
	QPSSpread map[string]map[int]Spread `json:"qpsSpread,omitempty"`
	// LatencyP95Ms and LatencyP99Ms are {step → {threads → whole-run
	// latency percentile in ms}}, rounded to 0.001 ms, for verdicts on
	// latency (lower is better); absent where the step recorded none.
	LatencyP95Ms map[string]map[int]float64 `json:"latencyP95Ms,omitempty"`
	LatencyP99Ms map[string]map[int]float64 `json:"latencyP99Ms,omitempty"`
	// LatencySpread is {step → {threads → spread}} of the steady per-second
	// latency samples at the series' percentile (95), and LatencyMeanMs
	// their mean: the per-second fallback of a p95 verdict. Absent for
	// documents without a per-second latency summary.
	LatencySpread map[string]map[int]Spread  `json:"latencySpread,omitempty"`
	LatencyMeanMs map[string]map[int]float64 `json:"latencyMeanMs,omitempty"`
	// Invalid is {step → {threads → reasons}} of the step results the
	// quality gate marked invalid (StepResult.Quality): they have no entry
	// in the maps above, so that nothing reading the manifest takes them
	// for values, and are listed here so that what was left out is said.
	Invalid map[string]map[int][]QualityReason `json:"invalid,omitempty"`
	// Environment is what the cell ran on besides its build, from the
	// document's provenance and the controller: enough to say, from
	// manifests alone, what else changed at a change point. Absent in
	// manifests written before it.
	Environment *Environment `json:"environment,omitempty"`
}

// Environment is a cell's surroundings: the database node and the
// software around the server. Every field is optional; an empty one was
// not recorded.
type Environment struct {
	// Node, Kernel, CPUModel, CPUs and MemoryBytes describe the database
	// server's node (the client's when the server's is unknown).
	Node        string `json:"node,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpuModel,omitempty"`
	CPUs        int    `json:"cpus,omitempty"`
	MemoryBytes int64  `json:"memoryBytes,omitempty"`
	// AgentVersion is the dbbench agent's build version, SysbenchVersion
	// sysbench's, ClientImageDigest the client image's digest.
	AgentVersion      string `json:"agentVersion,omitempty"`
	SysbenchVersion   string `json:"sysbenchVersion,omitempty"`
	ClientImageDigest string `json:"clientImageDigest,omitempty"`
	// KubernetesVersion is the cluster's version (the API server's
	// gitVersion) as the controller saw it.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
}

// EnvironmentOf is the environment a document's provenance records, or
// nil when it records none.
func EnvironmentOf(p *Provenance) *Environment {
	h := p.DatabaseNode
	if h == (Host{}) && p.ClientNode != nil {
		h = *p.ClientNode
	}
	e := Environment{Node: h.NodeName, Kernel: h.Kernel, CPUModel: h.CPUModel, CPUs: h.CPUs, MemoryBytes: h.MemoryBytes,
		AgentVersion: p.DBBenchVersion, SysbenchVersion: p.SysbenchVersion, ClientImageDigest: p.ClientImageDigest}
	if e == (Environment{}) {
		return nil
	}
	return &e
}

// InvalidCount is how many of the cell's step results are invalid.
func (c *ManifestCell) InvalidCount() int {
	n := 0
	for _, byThreads := range c.Invalid {
		n += len(byThreads)
	}
	return n
}

// Spread is the dispersion of a step's steady-state per-second QPS samples.
type Spread struct {
	Samples int `json:"samples"`
	// Stddev is the sample standard deviation (n − 1), rounded to 0.01.
	Stddev float64 `json:"stddev"`
	// EffectiveSamples is what Samples are worth as independent samples,
	// given their autocorrelation (SeriesSummary.EffectiveSamples); absent
	// when the summary had no autocorrelation to go by.
	EffectiveSamples int `json:"effectiveSamples,omitempty"`
	// LongRunStddev is the square root of the samples' long-run variance
	// per sample by batch means (inference.BatchMeans: √n batches of √n
	// samples), rounded to 0.01, so that the variance of the step's mean
	// is LongRunStddev²/Samples whatever the shape of the series'
	// autocorrelation; LongRunDF its degrees of freedom (batches − 1).
	// Absent when the document did not carry the series (or its 1-s
	// encoding) or it had fewer than 4 samples.
	LongRunStddev float64 `json:"longRunStddev,omitempty"`
	LongRunDF     int     `json:"longRunDf,omitempty"`
}

// Independent is the sample count a significance test should use.
func (s Spread) Independent() int {
	if s.EffectiveSamples > 0 {
		return s.EffectiveSamples
	}
	return s.Samples
}

// spreadOf derives a Spread from a series summary, whose CV is a
// population figure.
func spreadOf(s *SeriesSummary) (Spread, bool) {
	if s == nil || s.Samples < 2 {
		return Spread{}, false
	}
	pop := s.CV * s.Mean
	sd := pop * math.Sqrt(float64(s.Samples)/float64(s.Samples-1))
	sp := Spread{Samples: s.Samples, Stddev: math.Round(sd*100) / 100}
	if s.Lag1Autocorrelation != 0 {
		sp.EffectiveSamples = s.EffectiveSamples()
	}
	return sp, true
}

// longRunOf is the batch-means long-run variance per 1-s sample of a
// step's steady QPS series: from the full series, or from its encoding in
// a compact document (samples of R seconds, each the mean of R 1-s
// samples, whose long-run variance per sample is 1/R of the 1-s one; the
// agent reports every second).
func longRunOf(s *StepResult) (inference.LongRun, bool) {
	var xs []float64
	scale := 1.0
	switch {
	case s.Series != nil && len(s.Series.QPS) > 0:
		xs = steadySamples(s.Series, s.WarmupSeconds)
	case s.EncodedQPS != nil && s.EncodedQPS.ResolutionSeconds >= 1:
		v, err := s.EncodedQPS.Decode()
		if err != nil {
			return inference.LongRun{}, false
		}
		scale = s.EncodedQPS.ResolutionSeconds
		xs = steadySamples(&Series{IntervalSeconds: scale, QPS: v}, s.WarmupSeconds)
	default:
		return inference.LongRun{}, false
	}
	lr, err := inference.BatchMeans(xs)
	if err != nil {
		return inference.LongRun{}, false
	}
	lr.Variance *= scale
	return lr, true
}

// momentsSummary is the part of a summary that spreadOf reads.
func momentsSummary(m *SeriesMoments) *SeriesSummary {
	if m == nil {
		return nil
	}
	return &SeriesSummary{Samples: m.Samples, Mean: m.Mean, CV: m.CV, Lag1Autocorrelation: m.Lag1Autocorrelation}
}

// NewManifestCell builds a cell's manifest entry from its document.
func NewManifestCell(d *Document, phase, configMap, objectKey string) ManifestCell {
	mc := ManifestCell{
		Cell: d.Cell, Phase: phase, ConfigMap: configMap, ObjectKey: objectKey,
		Node:                 d.Provenance.DatabaseNode.NodeName,
		ServerVersion:        d.Provenance.ServerVersion,
		ServerSettingsSHA256: d.Provenance.ServerSettingsSHA256,
		ImageDigest:          d.Provenance.ImageDigest,
		Image:                d.Provenance.Image,
		ConfigSHA256:         ContentDigest(d.Provenance.ConfigText),
		Environment:          EnvironmentOf(&d.Provenance),
	}
	putScaled := func(m *map[string]map[int]float64, step string, threads int, v, scale float64) {
		if *m == nil {
			*m = map[string]map[int]float64{}
		}
		if (*m)[step] == nil {
			(*m)[step] = map[int]float64{}
		}
		(*m)[step][threads] = math.Round(v*scale) / scale
	}
	put := func(m *map[string]map[int]float64, step string, threads int, v float64) {
		putScaled(m, step, threads, v, 100)
	}
	// Sub-millisecond latencies need finer rounding than QPS.
	putMs := func(m *map[string]map[int]float64, step string, threads int, v *float64) {
		if v != nil && *v > 0 {
			putScaled(m, step, threads, *v, 1000)
		}
	}
	for _, s := range d.Steps {
		if s.Error != "" {
			continue // a failed step has no figure to compare
		}
		if s.Invalid() {
			// Not a value: said, never compared.
			if mc.Invalid == nil {
				mc.Invalid = map[string]map[int][]QualityReason{}
			}
			if mc.Invalid[s.Step] == nil {
				mc.Invalid[s.Step] = map[int][]QualityReason{}
			}
			mc.Invalid[s.Step][s.Threads] = append([]QualityReason{}, s.Quality.Reasons...)
			continue
		}
		put(&mc.QPS, s.Step, s.Threads, s.SteadyQPS)
		if s.RowsPerSecond != nil {
			put(&mc.RowsPerSecond, s.Step, s.Threads, *s.RowsPerSecond)
		}
		sum := s.Summary
		if sum == nil && s.Series != nil && len(s.Series.QPS) > 0 {
			// A full document: its summary is the compact form's, made
			// from the same steady samples.
			x := SummarizeSeries(steadySamples(s.Series, s.WarmupSeconds), s.Series.IntervalSeconds)
			sum = &x
		}
		if sp, ok := spreadOf(sum); ok {
			if lr, ok := longRunOf(&s); ok {
				sp.LongRunStddev, sp.LongRunDF = math.Round(math.Sqrt(lr.Variance)*100)/100, lr.DF
			}
			if mc.QPSSpread == nil {
				mc.QPSSpread = map[string]map[int]Spread{}
			}
			if mc.QPSSpread[s.Step] == nil {
				mc.QPSSpread[s.Step] = map[int]Spread{}
			}
			mc.QPSSpread[s.Step][s.Threads] = sp
		}
		putMs(&mc.LatencyP95Ms, s.Step, s.Threads, s.LatencyP95Ms)
		putMs(&mc.LatencyP99Ms, s.Step, s.Threads, s.LatencyP99Ms)
		ls := s.LatencyMoments
		if ls == nil && s.Series != nil && len(s.Series.LatencyMs) > 0 {
			m := MomentsOf(SummarizeSeries(steadyLatency(s.Series, s.WarmupSeconds), s.Series.IntervalSeconds))
			ls = &m
		}
		if sp, ok := spreadOf(momentsSummary(ls)); ok && ls.Mean > 0 {
			if mc.LatencySpread == nil {
				mc.LatencySpread = map[string]map[int]Spread{}
			}
			if mc.LatencySpread[s.Step] == nil {
				mc.LatencySpread[s.Step] = map[int]Spread{}
			}
			mc.LatencySpread[s.Step][s.Threads] = sp
			putMs(&mc.LatencyMeanMs, s.Step, s.Threads, &ls.Mean)
		}
	}
	return mc
}

// Upsert replaces the entry with c's name, or appends c.
func (m *Manifest) Upsert(c ManifestCell) {
	for i := range m.Cells {
		if m.Cells[i].Name == c.Name {
			m.Cells[i] = c
			return
		}
	}
	m.Cells = append(m.Cells, c)
}

// Cell returns the entry named name.
func (m *Manifest) Cell(name string) (*ManifestCell, bool) {
	for i := range m.Cells {
		if m.Cells[i].Name == name {
			return &m.Cells[i], true
		}
	}
	return nil, false
}

// Validate checks m and names every bad field.
func (m *Manifest) Validate() error {
	c := &checker{}
	if m.SchemaVersion != ManifestSchemaV1 {
		c.add("schemaVersion", "%q is not %q", m.SchemaVersion, ManifestSchemaV1)
	}
	c.required("run.name", m.Run.Name)
	names := map[string]int{}
	for i, cell := range m.Cells {
		p := fmt.Sprintf("cells[%d]", i)
		validateCell(c, p, cell.Cell, 0)
		c.required(p+".phase", cell.Phase)
		if j, dup := names[cell.Name]; dup && cell.Name != "" {
			c.add(p+".name", "%q repeats cells[%d]", cell.Name, j)
		}
		names[cell.Name] = i
		for field, mm := range map[string]map[string]map[int]float64{"qps": cell.QPS, "rowsPerSecond": cell.RowsPerSecond,
			"latencyP95Ms": cell.LatencyP95Ms, "latencyP99Ms": cell.LatencyP99Ms, "latencyMeanMs": cell.LatencyMeanMs} {
			for step, byThreads := range mm {
				for threads, v := range byThreads {
					fp := fmt.Sprintf("%s.%s[%q][%d]", p, field, step, threads)
					if threads < 1 {
						c.add(fp, "thread count must be at least 1")
					}
					c.number(fp, v)
				}
			}
		}
	}
	for i, cell := range m.Cells {
		for step, byThreads := range cell.Invalid {
			for threads := range byThreads {
				if threads < 1 {
					c.add(fmt.Sprintf("cells[%d].invalid[%q][%d]", i, step, threads), "thread count must be at least 1")
				}
			}
		}
	}
	validateNoise(c, m.NoiseFloor)
	if _, ok := names[m.Baseline]; m.Baseline != "" && !ok {
		c.add("baseline", "%q is not one of the cells", m.Baseline)
	}
	return c.err()
}

// MarshalManifest validates m and encodes it, refusing one that would not
// fit a ConfigMap. A manifest that fits only without the cells' spreads,
// image references and environments is encoded without them (the digests
// stay).
func MarshalManifest(m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if m.Cells == nil {
		cp := *m
		cp.Cells = []ManifestCell{} // [] rather than null
		m = &cp
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxConfigMapBytes && hasSpread(m) {
		// The spreads only sharpen regression verdicts, the image
		// references name builds the digests also name and the
		// environments only explain change points (the object store's
		// copy keeps them all); the throughput figures are what the
		// manifest is for.
		cp := *m
		cp.Cells = make([]ManifestCell, len(m.Cells))
		for i, c := range m.Cells {
			c.QPSSpread, c.LatencySpread, c.LatencyMeanMs, c.Image, c.Environment = nil, nil, nil, "", nil
			cp.Cells[i] = c
		}
		m = &cp
		if b, err = json.Marshal(m); err != nil {
			return nil, err
		}
	}
	if len(b) > MaxConfigMapBytes {
		return nil, fmt.Errorf("manifest of %d cells is %d bytes, over %d: %w", len(m.Cells), len(b), MaxConfigMapBytes, ErrTooLarge)
	}
	return b, nil
}

func hasSpread(m *Manifest) bool {
	for _, c := range m.Cells {
		if len(c.QPSSpread) > 0 || len(c.LatencySpread) > 0 || c.Image != "" || c.Environment != nil {
			return true
		}
	}
	return false
}

// UnmarshalManifest decodes and validates a v1 manifest, refusing other
// versions with *UnsupportedVersionError.
func UnmarshalManifest(data []byte) (*Manifest, error) {
	return decodeVersion[Manifest](data, ManifestSchemaV1)
}
