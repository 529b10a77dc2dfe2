package results

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/dbbench/dbbench/pkg/profile"
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

// number checks a measurement: finite and not negative. Documents get both
// from the schema and finiteIn; manifests, which have no published schema,
// use this.
func (c *checker) number(path string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		c.add(path, "must be a finite number, got %v", v)
	} else if v < 0 {
		c.add(path, "must not be negative, got %v", v)
	}
}

func (c *checker) required(path, v string) {
	if v == "" {
		c.add(path, "must be set")
	}
}

// tokenRE is the shape of open-ended identifiers (engine names in manifest
// cells): new values may appear within v1, so only the shape is fixed. The
// schema states the same pattern for documents.
var tokenRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// digestRE is the schema's pattern of serverSettingsSha256: the digest is
// compared with the settings only once it has that shape.
var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Validate checks d against the v1 rules and names every bad field: first
// the published JSON Schema (schema/v1.json), which holds every rule about
// one field, then the rules across fields or values that JSON Schema cannot
// state (time order, digests of other fields, ordered statistics, equal
// series lengths, unique steps, redacted passwords).
func (d *Document) Validate() error {
	c := &checker{}
	// The per-second samples are checked here rather than by the schema: the
	// schema library compares every number as an exact rational, which for
	// an hour-long matrix's millions of samples costs seconds per call.
	shell := withoutSamples(d)
	for i := range d.Steps {
		if sr := d.Steps[i].Series; sr != nil {
			validateSamples(c, fmt.Sprintf("steps[%d].series", i), sr)
		}
	}
	// JSON has no NaN or infinity, so the schema never sees them: finiteIn
	// reports them and hands back a copy with zeros in their place, so that
	// the document's other problems are still found in the same pass.
	shell = finiteIn(c, shell)
	b, err := json.Marshal(withEmptyArrays(shell))
	if err != nil {
		return fmt.Errorf("encoding results document for validation: %w", err)
	}
	c.schema(b)
	if d.StartedAt.IsZero() {
		c.add("startedAt", "must be set")
	}
	if d.FinishedAt != nil && d.FinishedAt.Before(d.StartedAt) {
		c.add("finishedAt", "%s is before startedAt %s", d.FinishedAt, d.StartedAt)
	}
	p := d.Provenance
	if p.ServerSettingsSHA256 != "" && len(p.ServerSettings) > 0 && digestRE.MatchString(p.ServerSettingsSHA256) &&
		SettingsDigest(p.ServerSettings) != p.ServerSettingsSHA256 && legacySettingsDigest(p.ServerSettings) != p.ServerSettingsSHA256 {
		c.add("provenance.serverSettingsSha256", "does not match provenance.serverSettings (want %s)", SettingsDigest(p.ServerSettings))
	}
	if cc := p.ConfigCheck; cc != nil && len(cc.NotApplied) > 0 && d.Status.Outcome == OutcomeSucceeded {
		c.add("provenance.configCheck.notApplied", "a succeeded cell cannot have run with settings other than its variant's")
	}
	if l := d.Load; l != nil {
		for i, cmd := range l.Commands {
			if j := unredacted(cmd); j >= 0 {
				c.add(fmt.Sprintf("load.commands[%d][%d]", i, j), "holds an unredacted password (use RedactCommand)")
			}
		}
	}
	seen := map[string]int{}
	for i := range d.Steps {
		validateStep(c, fmt.Sprintf("steps[%d]", i), &d.Steps[i])
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

// validateStep holds a step's rules across fields; the schema holds the
// rest.
func validateStep(c *checker, path string, s *StepResult) {
	if s.LatencyMaxMs < s.LatencyAvgMs {
		c.add(path+".latencyMaxMs", "%v is below latencyAvgMs %v", s.LatencyMaxMs, s.LatencyAvgMs)
	}
	if s.LatencyMinMs != nil && *s.LatencyMinMs > s.LatencyAvgMs {
		c.add(path+".latencyMinMs", "%v is above latencyAvgMs %v", *s.LatencyMinMs, s.LatencyAvgMs)
	}
	if r := s.Rate; r != nil {
		if base, label := SplitRateStep(s.Step); base != r.Step || label == "" {
			c.add(path+".rate.step", "%q does not name this step (%q is not %q + %q + a rate label)", r.Step, s.Step, r.Step, RateSeparator)
		}
	}
	if j := unredacted(s.Command); j >= 0 {
		c.add(fmt.Sprintf("%s.command[%d]", path, j), "holds an unredacted password (use RedactCommand)")
	}
	if ad := s.Adaptive; ad != nil && ad.MinSeconds > ad.MaxSeconds {
		c.add(path+".adaptive.minSeconds", "%v is above maxSeconds %v", ad.MinSeconds, ad.MaxSeconds)
	}
	if s.StopReason != "" && s.Adaptive == nil {
		c.add(path+".stopReason", "%q without an adaptive record", s.StopReason)
	}
	if ct := s.Counters; ct != nil {
		validateCounters(c, path+".counters", ct)
	}
	if p := s.Profile; p != nil {
		validateProfile(c, path+".profile", p)
	}
	if h := s.Hardware; h != nil {
		validateVolumes(c, path+".hardware.volumes", h.Volumes)
	}
	if m := s.Summary; m != nil && !(m.Min <= m.P5 && m.P5 <= m.Median && m.Median <= m.P95 && m.P95 <= m.Max) {
		c.add(path+".summary", "min <= p5 <= median <= p95 <= max does not hold")
	}
}

// validateSamples checks a series' sample columns, which the schema is not
// given (see Validate): equal lengths, and every sample finite and not
// negative (reported once per column).
func validateSamples(c *checker, path string, s *Series) {
	n := len(s.QPS)
	for name, col := range map[string][]float64{
		"tps": s.TPS, "latencyMs": s.LatencyMs, "errorsPerSecond": s.ErrorsPerSecond, "reconnectsPerSecond": s.ReconnectsPerSecond,
	} {
		if len(col) != n {
			c.add(path+"."+name, "has %d samples, qps has %d", len(col), n)
		}
	}
	// The fixed-rate columns are optional: absent, or one value per sample.
	for name, col := range map[string][]float64{"queueLength": s.QueueLength, "concurrency": s.Concurrency} {
		if len(col) != 0 && len(col) != n {
			c.add(path+"."+name, "has %d samples, qps has %d", len(col), n)
		}
	}
	// The sample times are optional too, and increase.
	if len(s.Seconds) != 0 {
		if len(s.Seconds) != n {
			c.add(path+".seconds", "has %d samples, qps has %d", len(s.Seconds), n)
		}
		prev := 0.0
		for i, v := range s.Seconds {
			if math.IsNaN(v) || math.IsInf(v, 0) || !(v > prev) {
				c.add(fmt.Sprintf("%s.seconds[%d]", path, i), "must be a finite number after %v, got %v", prev, v)
				break
			}
			prev = v
		}
	}
	for name, col := range map[string][]float64{
		"qps": s.QPS, "tps": s.TPS, "latencyMs": s.LatencyMs, "errorsPerSecond": s.ErrorsPerSecond, "reconnectsPerSecond": s.ReconnectsPerSecond,
		"queueLength": s.QueueLength, "concurrency": s.Concurrency,
	} {
		for i, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				c.add(fmt.Sprintf("%s.%s[%d]", path, name, i), "must be a finite number >= 0, got %v", v)
				break
			}
		}
	}
}

// withoutSamples returns d, or a shallow copy of it in which every series
// keeps its scalar fields but has empty sample columns.
func withoutSamples(d *Document) *Document {
	needs := false
	for _, s := range d.Steps {
		needs = needs || s.Series != nil
	}
	if !needs {
		return d
	}
	cp := *d
	cp.Steps = append([]StepResult(nil), d.Steps...)
	for i := range cp.Steps {
		if sr := cp.Steps[i].Series; sr != nil {
			cp.Steps[i].Series = &Series{IntervalSeconds: sr.IntervalSeconds, LatencyPercentile: sr.LatencyPercentile}
		}
	}
	return &cp
}

// validateProfile checks that a profile's stacks parse and add up to its
// samples less the dropped ones.
func validateProfile(c *checker, path string, p *Profile) {
	if p.Dropped > p.Samples {
		c.add(path+".dropped", "%d is more than samples %d", p.Dropped, p.Samples)
	}
	if p.Folded == "" {
		return
	}
	if p.FoldedOmitted {
		c.add(path+".foldedOmitted", "is set but folded is not empty")
	}
	f, err := profile.ParseFoldedString(p.Folded)
	if err != nil {
		c.add(path+".folded", "%v", err)
		return
	}
	if got := f.Total(); got != p.Samples-p.Dropped {
		c.add(path+".folded", "holds %d samples, samples - dropped is %d", got, p.Samples-p.Dropped)
	}
}

// validateCounters checks that a step's counters agree with their divisor:
// operations = opsPerSecond × seconds, per-op values only with operations,
// and each per-op value its delta / operations when the deltas are there
// (the compact form drops them).
func validateCounters(c *checker, path string, ct *Counters) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }
	if !near(ct.Operations, ct.OpsPerSecond*ct.Seconds) {
		c.add(path+".operations", "%v is not opsPerSecond × seconds (%v)", ct.Operations, ct.OpsPerSecond*ct.Seconds)
	}
	if len(ct.PerOp) > 0 && !(ct.Operations > 0) {
		c.add(path+".perOp", "set while operations is %v", ct.Operations)
	}
	if ct.Delta == nil || !(ct.Operations > 0) {
		return
	}
	names := make([]string, 0, len(ct.PerOp))
	for n := range ct.PerOp {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d, ok := ct.Delta[n]
		switch {
		case !ok:
			c.add(path+".perOp."+n, "has no delta")
		case !near(ct.PerOp[n], d/ct.Operations):
			c.add(path+".perOp."+n, "%v is not delta / operations (%v)", ct.PerOp[n], d/ct.Operations)
		}
	}
}

// validateVolumes checks the per-volume disk figures: one entry per volume
// name, and figures only for a volume whose device was found.
func validateVolumes(c *checker, path string, vols []VolumeIO) {
	seen := map[string]bool{}
	for i, v := range vols {
		p := fmt.Sprintf("%s[%d]", path, i)
		if seen[v.Name] {
			c.add(p+".name", "%q appears twice", v.Name)
		}
		seen[v.Name] = true
		hasFigures := v.ReadsPerSecond != nil || v.ReadKBPerSecond != nil || v.WriteKBPerSecond != nil || v.IOsPerSecond != nil
		if hasFigures && (v.Device == "" || v.Unresolved != "") {
			c.add(p, "has figures but no device (unresolved: %q)", v.Unresolved)
		}
	}
}
