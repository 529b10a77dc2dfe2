package results

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// ValidationError lists every problem found, each prefixed with the JSON path
// of the field ("steps[3].latencyP95Ms: ..."), so a writer can fix them all
// at once.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "invalid results document: " + strings.Join(e.Problems, "; ")
}

type checker struct{ problems []string }

func (c *checker) add(path, format string, a ...any) {
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, a...))
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	// Map-driven checks find problems in random order; sorting by path makes
	// the message stable.
	sort.Strings(c.problems)
	return &ValidationError{Problems: c.problems}
}

// number checks a measurement: finite and not negative.
func (c *checker) number(path string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		c.add(path, "must be a finite number, got %v", v)
	} else if v < 0 {
		c.add(path, "must not be negative, got %v", v)
	}
}

func (c *checker) optNumber(path string, v *float64) {
	if v != nil {
		c.number(path, *v)
	}
}

func (c *checker) required(path, v string) {
	if v == "" {
		c.add(path, "must be set")
	}
}

var (
	// tokenRE is the shape of open-ended identifiers (engine, group,
	// opsBasis): new values may appear within v1, so only the shape is fixed.
	tokenRE  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Validate checks d against the v1 rules and names every bad field.
func (d *Document) Validate() error {
	c := &checker{}
	if d.SchemaVersion != SchemaV1 {
		c.add("schemaVersion", "%q is not %q", d.SchemaVersion, SchemaV1)
	}
	if d.Form != FormFull && d.Form != FormCompact {
		c.add("form", "%q is not %q or %q", d.Form, FormFull, FormCompact)
	}
	c.required("run.name", d.Run.Name)
	validateCell(c, "cell", d.Cell, 1)
	if d.StartedAt.IsZero() {
		c.add("startedAt", "must be set")
	}
	if d.FinishedAt != nil && d.FinishedAt.Before(d.StartedAt) {
		c.add("finishedAt", "%s is before startedAt %s", d.FinishedAt, d.StartedAt)
	}
	switch d.Status.Outcome {
	case OutcomeSucceeded, OutcomeRunning:
		if d.Status.FailureClass != "" {
			c.add("status.failureClass", "must be empty unless outcome is Failed")
		}
	case OutcomeFailed:
		if d.Status.FailureClass != FailureBenchmark && d.Status.FailureClass != FailureInfrastructure {
			c.add("status.failureClass", "%q is not %q or %q", d.Status.FailureClass, FailureBenchmark, FailureInfrastructure)
		}
		c.required("status.error", d.Status.Error)
	default:
		c.add("status.outcome", "%q is not one of Succeeded, Failed, Running", d.Status.Outcome)
	}
	p := d.Provenance
	if p.ServerSettingsSHA256 != "" {
		if !digestRE.MatchString(p.ServerSettingsSHA256) {
			c.add("provenance.serverSettingsSha256", "%q is not sha256:<64 hex digits>", p.ServerSettingsSHA256)
		} else if len(p.ServerSettings) > 0 && SettingsDigest(p.ServerSettings) != p.ServerSettingsSHA256 {
			c.add("provenance.serverSettingsSha256", "does not match provenance.serverSettings (want %s)", SettingsDigest(p.ServerSettings))
		}
	}
	for path, dg := range map[string]string{"provenance.imageDigest": p.ImageDigest, "provenance.clientImageDigest": p.ClientImageDigest} {
		if dg != "" && !strings.Contains(dg, ":") {
			c.add(path, "%q is not algorithm:hex", dg)
		}
	}
	if cc := p.ConfigCheck; cc != nil {
		for _, l := range []struct {
			name     string
			settings []ConfigSetting
		}{{"verified", cc.Verified}, {"notApplied", cc.NotApplied}, {"unverified", cc.Unverified}} {
			for i, s := range l.settings {
				c.required(fmt.Sprintf("provenance.configCheck.%s[%d].name", l.name, i), s.Name)
			}
		}
		if len(cc.NotApplied) > 0 && d.Status.Outcome == OutcomeSucceeded {
			c.add("provenance.configCheck.notApplied", "a succeeded cell cannot have run with settings other than its variant's")
		}
	}
	for path, h := range map[string]*Host{"provenance.databaseNode": &p.DatabaseNode, "provenance.clientNode": p.ClientNode} {
		if h == nil {
			continue
		}
		if h.CPUs < 0 || h.MemoryBytes < 0 {
			c.add(path, "cpus and memoryBytes must not be negative")
		}
		c.number(path+".podCpus", h.PodCPUs)
	}
	if l := d.Load; l != nil {
		c.number("load.seconds", l.Seconds)
		c.number("load.insertSeconds", l.InsertSeconds)
		c.number("load.insertsPerSecond", l.InsertsPerSecond)
		c.optNumber("load.indexSeconds", l.IndexSeconds)
		c.optNumber("load.flushSeconds", l.FlushSeconds)
		if l.Tables < 0 || l.RowsPerTable < 0 || l.Rows < 0 {
			c.add("load", "tables, rowsPerTable and rows must not be negative")
		}
		for i, cmd := range l.Commands {
			if j := unredacted(cmd); j >= 0 {
				c.add(fmt.Sprintf("load.commands[%d][%d]", i, j), "holds an unredacted password (use RedactCommand)")
			}
		}
	}
	seen := map[string]int{}
	for i := range d.Steps {
		validateStep(c, fmt.Sprintf("steps[%d]", i), &d.Steps[i], d.Form)
		key := fmt.Sprintf("%s@%d", d.Steps[i].Step, d.Steps[i].Threads)
		if j, dup := seen[key]; dup {
			c.add(fmt.Sprintf("steps[%d]", i), "step %q with %d threads repeats steps[%d]", d.Steps[i].Step, d.Steps[i].Threads, j)
		}
		seen[key] = i
	}
	return c.err()
}

// validateCell checks a cell's identity. minAttempt is 1 for documents (an
// agent measured something) and 0 for manifest entries, where 0 means the
// cell never started (for example its config variant was missing).
func validateCell(c *checker, path string, cell Cell, minAttempt int) {
	c.required(path+".name", cell.Name)
	if !tokenRE.MatchString(cell.Engine) {
		c.add(path+".engine", "%q is not a lower-case engine name (mysql, mariadb, postgres, ...)", cell.Engine)
	}
	c.required(path+".version", cell.Version)
	if cell.Repeat < 0 {
		c.add(path+".repeat", "%d must not be negative", cell.Repeat)
	}
	if cell.Attempt < minAttempt {
		c.add(path+".attempt", "%d must be at least %d", cell.Attempt, minAttempt)
	}
}

func validateStep(c *checker, path string, s *StepResult, form Form) {
	c.required(path+".step", s.Step)
	if s.Group != "" && !tokenRE.MatchString(s.Group) {
		c.add(path+".group", "%q is not a lower-case group name", s.Group)
	}
	if s.Threads < 1 {
		c.add(path+".threads", "%d must be at least 1", s.Threads)
	}
	if s.SteadySamples < 0 || s.Queries < 0 || s.Transactions < 0 || s.Errors < 0 || s.Reconnects < 0 {
		c.add(path, "steadySamples, queries, transactions, errors and reconnects must not be negative")
	}
	for name, v := range map[string]float64{
		"durationSeconds": s.DurationSeconds, "warmupSeconds": s.WarmupSeconds,
		"steadyQps": s.SteadyQPS, "steadyTps": s.SteadyTPS, "finalQps": s.FinalQPS, "finalTps": s.FinalTPS,
		"latencyAvgMs": s.LatencyAvgMs, "latencyMaxMs": s.LatencyMaxMs,
		"errorsPerSecond": s.ErrorsPerSecond, "reconnectsPerSecond": s.ReconnectsPerSecond,
	} {
		c.number(path+"."+name, v)
	}
	for name, v := range map[string]*float64{
		"elapsedSeconds": s.ElapsedSeconds, "rowsPerSecond": s.RowsPerSecond,
		"latencyMinMs": s.LatencyMinMs, "latencyP95Ms": s.LatencyP95Ms, "latencyP99Ms": s.LatencyP99Ms,
	} {
		c.optNumber(path+"."+name, v)
	}
	if s.LatencyMaxMs < s.LatencyAvgMs {
		c.add(path+".latencyMaxMs", "%v is below latencyAvgMs %v", s.LatencyMaxMs, s.LatencyAvgMs)
	}
	if s.LatencyMinMs != nil && *s.LatencyMinMs > s.LatencyAvgMs {
		c.add(path+".latencyMinMs", "%v is above latencyAvgMs %v", *s.LatencyMinMs, s.LatencyAvgMs)
	}
	if j := unredacted(s.Command); j >= 0 {
		c.add(fmt.Sprintf("%s.command[%d]", path, j), "holds an unredacted password (use RedactCommand)")
	}
	if s.Series != nil {
		if form == FormCompact {
			c.add(path+".series", "must be absent in the compact form (use summary and encodedQps)")
		}
		validateSeries(c, path+".series", s.Series)
	}
	if s.EncodedQPS != nil {
		if form == FormFull {
			c.add(path+".encodedQps", "belongs to the compact form only")
		}
		e := s.EncodedQPS
		if e.Encoding != SeriesEncoding {
			c.add(path+".encodedQps.encoding", "%q is not %q", e.Encoding, SeriesEncoding)
		}
		if !(e.ResolutionSeconds > 0) || e.Scale < 1 || e.Samples < 0 {
			c.add(path+".encodedQps", "resolutionSeconds must be > 0, scale >= 1, samples >= 0")
		}
	}
	if m := s.Summary; m != nil {
		sp := path + ".summary"
		for name, v := range map[string]float64{"min": m.Min, "p5": m.P5, "median": m.Median, "p95": m.P95, "max": m.Max, "mean": m.Mean, "cv": m.CV, "stallSeconds": m.StallSeconds} {
			c.number(sp+"."+name, v)
		}
		if m.Samples < 0 {
			c.add(sp+".samples", "must not be negative")
		}
		if !(m.Min <= m.P5 && m.P5 <= m.Median && m.Median <= m.P95 && m.P95 <= m.Max) {
			c.add(sp, "min <= p5 <= median <= p95 <= max does not hold")
		}
	}
	if h := s.Hardware; h != nil {
		hp := path + ".hardware"
		c.number(hp+".opsPerSecond", h.OpsPerSecond)
		c.required(hp+".opsBasis", h.OpsBasis)
		if h.CPUs < 0 || h.Samples < 0 {
			c.add(hp, "cpus and samples must not be negative")
		}
		for name, v := range map[string]*float64{
			"cpuPerOp": h.CPUPerOp, "csPerOp": h.ContextSwitchesPerOp, "readsPerOp": h.ReadsPerOp,
			"readKbPerOp": h.ReadKBPerOp, "writeKbPerOp": h.WriteKBPerOp, "serverCpuMicrosPerOp": h.ServerCPUMicrosPerOp,
			"cpuPercent": h.CPUPercent, "csPerSecond": h.ContextSwitchesPerSecond, "readsPerSecond": h.ReadsPerSecond,
			"readKbPerSecond": h.ReadKBPerSecond, "writeKbPerSecond": h.WriteKBPerSecond, "serverCpuSecondsPerSecond": h.ServerCPUSecondsPerSecond,
		} {
			c.optNumber(hp+"."+name, v)
		}
	}
}

func validateSeries(c *checker, path string, s *Series) {
	if !(s.IntervalSeconds > 0) || math.IsInf(s.IntervalSeconds, 0) {
		c.add(path+".intervalSeconds", "must be a positive number, got %v", s.IntervalSeconds)
	}
	c.number(path+".latencyPercentile", s.LatencyPercentile)
	n := len(s.QPS)
	for name, col := range map[string][]float64{"tps": s.TPS, "latencyMs": s.LatencyMs, "errorsPerSecond": s.ErrorsPerSecond, "reconnectsPerSecond": s.ReconnectsPerSecond} {
		if len(col) != n {
			c.add(path+"."+name, "has %d samples, qps has %d", len(col), n)
		}
	}
	for name, col := range map[string][]float64{"qps": s.QPS, "tps": s.TPS, "latencyMs": s.LatencyMs, "errorsPerSecond": s.ErrorsPerSecond, "reconnectsPerSecond": s.ReconnectsPerSecond} {
		for i, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				c.add(fmt.Sprintf("%s.%s[%d]", path, name, i), "must be a finite number >= 0, got %v", v)
				break
			}
		}
	}
}
