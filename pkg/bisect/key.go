package bisect

import (
	"fmt"
	"math"
	"sort"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// Verdict is what a point is, relative to the endpoints.
type Verdict string

const (
	// Untested: not measured yet.
	Untested Verdict = ""
	// Good: the bad point is worse than it by the rule on every judged
	// key, and it is not worse than the good point on any.
	Good Verdict = "Good"
	// Bad: worse than the good point by the rule on some judged key (a
	// build between the endpoints' levels counts as bad: it carries at
	// least part of the change).
	Bad Verdict = "Bad"
	// Inconclusive: neither, within noise of both; more runs may decide it.
	Inconclusive Verdict = "Inconclusive"
	// Failed: the build did not run (it did not start, its image could not
	// be pulled); the search goes around it.
	Failed Verdict = "Failed"
)

// Key is one judged measurement: a metric of a step at a thread count.
type Key struct {
	Step    string
	Threads int
	// Metric is the judged figure; "" is throughput.
	Metric analysis.Metric
}

// MetricOrDefault is the key's metric, throughput when unset.
func (k Key) MetricOrDefault() analysis.Metric {
	if k.Metric == "" {
		return analysis.MetricThroughput
	}
	return k.Metric
}

// String is "update-index@4", with the metric when it is not throughput:
// "update-index@4 p99 latency".
func (k Key) String() string {
	s := fmt.Sprintf("%s@%d", k.Step, k.Threads)
	if m := k.MetricOrDefault(); m != analysis.MetricThroughput {
		s += " " + m.Label()
	}
	return s
}

// score is a value on the scale the model works on: the log of the rate,
// so that higher is better for every metric (a latency enters as the log
// of its reciprocal) and a multiplicative change is a shift.
func (k Key) score(v float64) (float64, bool) {
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, false
	}
	if k.MetricOrDefault().LowerIsBetter() {
		return -math.Log(v), true
	}
	return math.Log(v), true
}

// SortKeys sorts keys by step, thread count, then metric.
func SortKeys(keys []Key) {
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Threads != b.Threads {
			return a.Threads < b.Threads
		}
		return a.Metric < b.Metric
	})
}

// Observation is one cell that succeeded: what it measured of one point.
// The cell is the unit of the tests (a fresh server and data load), never
// a second of a step.
type Observation struct {
	Point  int
	Values map[Key]float64
}

// RoundKind is why a round was started.
type RoundKind string

const (
	// RoundEndpoints measures the good and the bad point (round 0, and
	// again while their difference is unsure or after the environment
	// changed).
	RoundEndpoints RoundKind = "Endpoints"
	// RoundSearch measures candidates, with the interval's ends beside
	// them as references in the same slot.
	RoundSearch RoundKind = "Search"
	// RoundConfirm measures again the points around a change that is
	// pinned but not yet at the rule's confidence.
	RoundConfirm RoundKind = "Confirm"
)

// Failure says why none of a point's cells of a round succeeded.
type Failure struct {
	Reason  string
	Message string
}

// Round is one round as measured: a batch of cells run together (one
// BenchmarkRun), which the model treats as a block.
type Round struct {
	Kind RoundKind
	// Points are every point the round measures; Refs those of them that
	// are there as references (a search round's interval ends).
	Points, Refs []int
	// Cells is how many cells the round costs.
	Cells int
	// Finished is set once its run ended; only finished rounds are judged.
	Finished bool
	// FailedWhole is set (with why) when the round's run failed as a
	// whole rather than cell by cell: none of its points can be judged.
	FailedWhole string
	// Observations are its cells that succeeded.
	Observations []Observation
	// Invalid counts the judged step results of its cells that the
	// quality gate marked invalid (results.Quality): not values, so not
	// in Observations.
	Invalid int
	// Failures are the points of a finished round none of whose cells
	// succeeded.
	Failures map[int]Failure
}
