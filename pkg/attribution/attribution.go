// Package attribution names what changed around a change point besides
// the performance: it compares what the runs on each side of the change
// measured (the build: image reference, version, server version, config)
// and what they ran on (the environment: the image's digest behind an
// unchanged reference, the effective server settings, the node, its
// kernel and CPU, the agent, sysbench and Kubernetes versions). A change
// that coincides with environment changes only is flagged as such: the
// build did not change, so it is not the build's regression.
//
// The package has no Kubernetes imports; its input is run manifests
// (results.ManifestCell) and, where available, the effective settings of
// the cells' provenance.
package attribution

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dbbench/dbbench/pkg/results"
)

// Field is one compared property. The values are stable: statuses and
// the suite's site print them.
type Field string

// The build's fields: what the suite claims to measure.
const (
	FieldImage         Field = "image"
	FieldVersion       Field = "version"
	FieldServerVersion Field = "server version"
	FieldConfig        Field = "config"
)

// The environment's fields.
const (
	// FieldImageDigest is the server image's digest behind an image
	// reference that did not change (a re-pointed tag).
	FieldImageDigest Field = "image digest"
	// FieldServerSettings is the effective server settings' digest; with
	// the settings at hand, each changed variable is its own change named
	// "setting NAME".
	FieldServerSettings    Field = "server settings"
	FieldNode              Field = "node"
	FieldKernel            Field = "kernel"
	FieldCPUModel          Field = "CPU model"
	FieldCPUs              Field = "CPUs"
	FieldMemory            Field = "memory"
	FieldAgentVersion      Field = "agent version"
	FieldSysbenchVersion   Field = "sysbench version"
	FieldClientImageDigest Field = "client image digest"
	FieldKubernetesVersion Field = "Kubernetes version"
)

// settingPrefix starts the field of one changed server variable.
const settingPrefix = "setting "

// buildFields and environmentFields are in the order changes are listed.
var (
	buildFields       = []Field{FieldImage, FieldVersion, FieldServerVersion, FieldConfig}
	environmentFields = []Field{FieldImageDigest, FieldServerSettings, FieldKernel, FieldCPUModel, FieldCPUs, FieldMemory,
		FieldNode, FieldAgentVersion, FieldSysbenchVersion, FieldClientImageDigest, FieldKubernetesVersion}
)

// Side is how many runs on each side of a change are compared: the
// nearest ones, as a change point's segments are at least three runs
// long by default.
const Side = 3

// MaxSettings bounds the changed server variables named per change.
const MaxSettings = 5

// Snapshot is what one cell of one run measured and ran on.
type Snapshot struct {
	Run string
	// The build.
	Image, Version, ServerVersion, ConfigSHA256 string
	// The environment.
	ImageDigest, SettingsSHA256 string
	Env                         results.Environment
	// Settings are the effective server variables, when read (the
	// cell's provenance); they name the variables behind a changed
	// SettingsSHA256.
	Settings map[string]string
}

// FromManifestCell is a cell's snapshot from its manifest entry.
func FromManifestCell(run string, c *results.ManifestCell) Snapshot {
	s := Snapshot{Run: run, Image: c.Image, Version: c.Version, ServerVersion: c.ServerVersion, ConfigSHA256: c.ConfigSHA256,
		ImageDigest: c.ImageDigest, SettingsSHA256: c.ServerSettingsSHA256}
	if c.Environment != nil {
		s.Env = *c.Environment
	}
	return s
}

// serverBuild is a server's VERSION() without the "-log" that MySQL and
// MariaDB append while the binary or general log is on: a setting (the
// server settings name it), not another build.
func serverBuild(v string) string { return strings.TrimSuffix(v, "-log") }

func (s Snapshot) value(f Field) string {
	switch f {
	case FieldImage:
		return s.Image
	case FieldVersion:
		return s.Version
	case FieldServerVersion:
		return serverBuild(s.ServerVersion)
	case FieldConfig:
		return s.ConfigSHA256
	case FieldImageDigest:
		return s.ImageDigest
	case FieldServerSettings:
		if len(s.Settings) > 0 {
			// Recomputed: a digest recorded before ComparableSettings
			// covers the instance's hostname and UID, and so differs for
			// every server.
			return results.SettingsDigest(s.Settings)
		}
		return s.SettingsSHA256
	case FieldNode:
		return s.Env.Node
	case FieldKernel:
		return s.Env.Kernel
	case FieldCPUModel:
		return s.Env.CPUModel
	case FieldCPUs:
		return positive(int64(s.Env.CPUs))
	case FieldMemory:
		if s.Env.MemoryBytes <= 0 {
			return ""
		}
		return fmt.Sprintf("%.1f GiB", float64(s.Env.MemoryBytes)/(1<<30))
	case FieldAgentVersion:
		return s.Env.AgentVersion
	case FieldSysbenchVersion:
		return s.Env.SysbenchVersion
	case FieldClientImageDigest:
		return s.Env.ClientImageDigest
	case FieldKubernetesVersion:
		return s.Env.KubernetesVersion
	}
	return ""
}

func positive(v int64) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprint(v)
}

// Change is one property that changed across a change point.
type Change struct {
	Field  Field  `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// String is "kernel 6.1.0 → 6.6.0", digests shortened to 12 hex digits;
// a change without a before value is "field: after".
func (c Change) String() string {
	if c.Before == "" {
		return fmt.Sprintf("%s: %s", c.Field, c.After)
	}
	return fmt.Sprintf("%s %s → %s", c.Field, Short(c.Before), Short(c.After))
}

// Short shortens a digest ("sha256:0123456789abcdef…" to
// "sha256:0123456789ab") and leaves other values as they are.
func Short(v string) string {
	if i := strings.Index(v, "sha256:"); i >= 0 && len(v) > i+7+12 {
		return v[:i+7+12]
	}
	if len(v) == 64 && strings.Trim(v, "0123456789abcdef") == "" {
		return v[:12]
	}
	return v
}

// Attribution is what changed across a change point.
type Attribution struct {
	// Build lists the build's fields that changed, Environment the
	// environment's, each in a fixed order.
	Build       []Change `json:"build,omitempty"`
	Environment []Change `json:"environment,omitempty"`
	// EnvironmentOnly is true when the environment changed and the build
	// did not: see Attribute for the rule.
	EnvironmentOnly bool `json:"environmentOnly,omitempty"`
}

// WithoutReturns drops the environment changes whose new value one of the
// earlier snapshots (the runs before the compared "before" side) already
// had. Between consecutive runs, a property that rotates (cells placed on
// either of two nodes, night after night) changes every run; marking each
// would bury the change that matters, a value the series has not seen.
// The build's changes stay: a build going back is news.
func (a Attribution) WithoutReturns(earlier []Snapshot) Attribution {
	if len(earlier) == 0 || len(a.Environment) == 0 {
		return a
	}
	kept := a.Environment[:0:0]
	for _, c := range a.Environment {
		if !slices.ContainsFunc(earlier, func(s Snapshot) bool { return c.After != "" && s.value(c.Field) == c.After }) {
			kept = append(kept, c)
		}
	}
	a.Environment = kept
	if len(kept) == 0 {
		a.EnvironmentOnly = false
	}
	return a
}

// CoincidesWith is "kernel 6.1 → 6.6, node a → b", or "".
func (a Attribution) CoincidesWith() string { return joinChanges(a.Environment) }

// BuildChanged is "image x:1 → x:2", or "".
func (a Attribution) BuildChanged() string { return joinChanges(a.Build) }

func joinChanges(cs []Change) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}

// Attribute compares the snapshots of the runs before a change (oldest
// first) with those of the runs from it on (oldest first); only the Side
// runs nearest the change on each side count.
//
// A field changed when both sides recorded it, every compared run before
// the change has one value, every compared run after it has one other
// value: a property that alternates between runs (cells placed on either
// of two nodes) explains no step in the performance and is not named.
// The image digest counts as an environment change only when the image
// reference did not change (a re-pointed tag); otherwise it is part of
// the image's change. The effective settings are named variable by
// variable when both the last run before and the first run after the
// change carry them.
//
// EnvironmentOnly is the rule "the build did not change": at least one
// environment field changed, and every build field (image reference,
// requested version, reported server version, config text) has one and
// the same value on every compared run of both sides.
func Attribute(before, after []Snapshot) Attribution {
	if len(before) > Side {
		before = before[len(before)-Side:]
	}
	if len(after) > Side {
		after = after[:Side]
	}
	var a Attribution
	if len(before) == 0 || len(after) == 0 {
		return a
	}
	buildSame := true
	for _, f := range buildFields {
		b, okb := constant(before, f)
		c, okc := constant(after, f)
		if !okb || !okc || b != c {
			buildSame = false
		}
		if okb && okc && b != "" && c != "" && b != c {
			a.Build = append(a.Build, Change{Field: f, Before: b, After: c})
		}
	}
	imageChanged := false
	for _, c := range a.Build {
		imageChanged = imageChanged || c.Field == FieldImage
	}
	for _, f := range environmentFields {
		b, okb := constant(before, f)
		c, okc := constant(after, f)
		if !okb || !okc || b == "" || c == "" || b == c {
			continue
		}
		if f == FieldImageDigest && imageChanged {
			continue // the new reference's digest: the build's change
		}
		if f == FieldServerSettings {
			if named := settingChanges(before[len(before)-1].Settings, after[0].Settings); len(named) > 0 {
				a.Environment = append(a.Environment, named...)
				continue
			}
		}
		a.Environment = append(a.Environment, Change{Field: f, Before: b, After: c})
	}
	a.EnvironmentOnly = buildSame && len(a.Environment) > 0
	return a
}

// constant returns the value every snapshot has for f; false when they
// differ. Snapshots that did not record f are left out unless none did.
func constant(ss []Snapshot, f Field) (string, bool) {
	v, seen := "", false
	for _, s := range ss {
		x := s.value(f)
		if x == "" && f != FieldImage && f != FieldVersion && f != FieldConfig {
			continue // not recorded; the build's fields may be empty by design
		}
		if seen && x != v {
			return "", false
		}
		v, seen = x, true
	}
	return v, true
}

// settingChanges names the variables whose values differ (at most
// MaxSettings, by name, and a count of the rest); nil when either side
// has no settings.
func settingChanges(before, after map[string]string) []Change {
	if len(before) == 0 || len(after) == 0 {
		return nil
	}
	before, after = results.ComparableSettings(before), results.ComparableSettings(after)
	names := map[string]bool{}
	for k := range before {
		names[k] = true
	}
	for k := range after {
		names[k] = true
	}
	var changed []string
	for k := range names {
		if before[k] != after[k] {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	var out []Change
	for i, k := range changed {
		if i == MaxSettings {
			out = append(out, Change{Field: FieldServerSettings, After: fmt.Sprintf("%d more variables changed", len(changed)-MaxSettings)})
			break
		}
		out = append(out, Change{Field: Field(settingPrefix + k), Before: orNone(before[k]), After: orNone(after[k])})
	}
	return out
}

func orNone(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}
