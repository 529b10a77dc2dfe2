package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// NoiseFloors is the run-to-run noise of a suite per (step, threads), as a
// run's regression verdict measured and used it: the variance of log
// throughput between independent runs of one configuration, pooled over
// the run's repeats and the suite's A/A sets (earlier runs of the same
// images, config and workload). pkg/inference computes it; later runs and
// `kubectl dbbench noise` read it. Optional and additive in the v1
// manifest.
type NoiseFloors struct {
	// Alpha is the verdict's significance level (regression.maxPValue).
	Alpha float64 `json:"alpha,omitempty"`
	// Runs names the suite's earlier runs whose results the floor rests on
	// (A/A sets and repeats), oldest first; this run's own repeats count
	// too but it is not listed.
	Runs []string `json:"runs,omitempty"`
	// Points are by step, then threads.
	Points []NoisePoint `json:"points"`
}

// NoisePoint is the floor of one (step, threads).
type NoisePoint struct {
	// Metric is the verdict metric the floor is of ("P99Latency": the
	// standard deviation of ln(p99 ms)); empty for throughput, the floor
	// every manifest before latency verdicts holds.
	Metric  string `json:"metric,omitempty"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// SigmaLog is the standard deviation of ln(QPS) of one run; CV the
	// coefficient of variation it implies, √(exp(σ²) − 1).
	SigmaLog float64 `json:"sigmaLog"`
	CV       float64 `json:"cv"`
	// DF are the pooled variance's degrees of freedom; Runs and Sets the
	// runs and the repeat or A/A sets it rests on.
	DF   int `json:"df"`
	Runs int `json:"runs"`
	Sets int `json:"sets"`
	// InheritedFrom names the earlier run whose stored floor was taken
	// over, because it rested on more runs than the history still readable
	// (pruned run objects, a store not configured); empty when the floor
	// was measured on readable runs.
	InheritedFrom string `json:"inheritedFrom,omitempty"`
}

// Point returns the throughput floor of (step, threads).
func (n *NoiseFloors) Point(step string, threads int) (NoisePoint, bool) {
	return n.MetricPoint("", step, threads)
}

// MetricPoint returns the floor of metric ("" for throughput) at (step,
// threads).
func (n *NoiseFloors) MetricPoint(metric, step string, threads int) (NoisePoint, bool) {
	if n == nil {
		return NoisePoint{}, false
	}
	for _, p := range n.Points {
		if p.Metric == metric && p.Step == step && p.Threads == threads {
			return p, true
		}
	}
	return NoisePoint{}, false
}

func validateNoise(c *checker, n *NoiseFloors) {
	if n == nil {
		return
	}
	if n.Alpha != 0 && !(n.Alpha > 0 && n.Alpha < 1) {
		c.add("noiseFloor.alpha", "must be in (0, 1), got %v", n.Alpha)
	}
	seen := map[string]int{}
	for i, p := range n.Points {
		path := fmt.Sprintf("noiseFloor.points[%d]", i)
		c.required(path+".step", p.Step)
		if p.Threads < 1 {
			c.add(path+".threads", "must be at least 1, got %d", p.Threads)
		}
		c.number(path+".sigmaLog", p.SigmaLog)
		c.number(path+".cv", p.CV)
		if p.DF < 1 {
			c.add(path+".df", "must be at least 1, got %d", p.DF)
		}
		if p.Runs < 2 || p.Sets < 1 {
			c.add(path+".runs", "a floor rests on at least 2 runs in 1 set, got %d runs in %d sets", p.Runs, p.Sets)
		}
		k := fmt.Sprintf("%s@%d", p.Step, p.Threads)
		if p.Metric != "" {
			k = p.Metric + " " + k
		}
		if j, dup := seen[k]; dup {
			c.add(path, "%s repeats noiseFloor.points[%d]", k, j)
		}
		seen[k] = i
	}
}

// ContentDigest is the SHA-256 of a text as "sha256:<hex>" ("" for an
// empty text): the manifest's short identity of a config file or a
// workload spec.
func ContentDigest(text string) string {
	if text == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// AAKey is the identity two runs' entries of a cell combination must share
// to measure the same thing (an A/A pair): the combination (database or
// engine, version, config name), the server binary (image digest, else
// the version the server reported), the server's effective settings (their
// digest, else the config text's) and the run's workload digest. It is ""
// when the entry does not record enough to tell — no binary identity or no
// settings identity — so that such runs never count as A/A.
func (c ManifestCell) AAKey(workload string) string {
	binary := c.ImageDigest
	if binary == "" {
		binary = c.ServerVersion
	}
	settings := c.ServerSettingsSHA256
	if settings == "" {
		settings = c.ConfigSHA256
	}
	if binary == "" || settings == "" {
		return ""
	}
	db := c.Database
	if db == "" {
		db = c.Engine
	}
	return strings.Join([]string{db, c.Version, c.Config, binary, settings, c.ConfigSHA256, workload}, "\x00")
}
