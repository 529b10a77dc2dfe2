package bisect

import (
	"context"
	"math"
	"math/rand"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// world is a synthetic benchmark the searches measure: log-normal
// run-to-run noise of a CV around a level of 1000 QPS (or a latency of
// 10 ms), slower by slowdown from the culprit on (no culprit: 0), and a
// load level per round that multiplies every build's throughput in that
// round (a busy loop started or stopped between rounds). interaction, when
// set, is the slowdown's size in a round instead (a regression that only
// shows under load).
type world struct {
	rng         *rand.Rand
	culprit     int
	slowdown    float64
	cv          float64
	repeats     int
	keys        []Key
	load        func(round int) float64
	interaction func(round int) float64
	failed      map[int]bool
	// hits says which keys the slowdown hits (nil: every key).
	hits   func(Key) bool
	rounds int
}

func (w *world) measure(_ context.Context, r Round) (Round, error) {
	sigma := math.Sqrt(math.Log1p(w.cv * w.cv))
	load := 1.0
	if w.load != nil {
		load = w.load(w.rounds)
	}
	slow := w.slowdown
	if w.interaction != nil {
		slow = w.interaction(w.rounds)
	}
	for _, p := range r.Points {
		if w.failed[p] {
			if r.Failures == nil {
				r.Failures = map[int]Failure{}
			}
			r.Failures[p] = Failure{Reason: "ImagePullFailed", Message: "no such image"}
			continue
		}
		for i := 0; i < max(w.repeats, 1); i++ {
			noise := load * math.Exp(w.rng.NormFloat64()*sigma)
			o := Observation{Point: p, Values: map[Key]float64{}}
			for _, k := range w.keys {
				f := noise
				if w.culprit > 0 && p >= w.culprit && (w.hits == nil || w.hits(k)) {
					f *= 1 - slow
				}
				if k.MetricOrDefault().LowerIsBetter() {
					o.Values[k] = 10 / f
				} else {
					o.Values[k] = 1000 * f
				}
			}
			r.Observations = append(r.Observations, o)
		}
	}
	w.rounds++
	r.Finished = true
	return r, nil
}

var (
	keyWrite = Key{Step: "update-index", Threads: 1}
	keyP99   = Key{Step: "update-index", Threads: 1, Metric: analysis.MetricP99Latency}
)

// obs are repeats of one point's throughput on keyWrite.
func obs(point int, qps ...float64) []Observation {
	out := make([]Observation, len(qps))
	for i, q := range qps {
		out[i] = Observation{Point: point, Values: map[Key]float64{keyWrite: q}}
	}
	return out
}

// round is a finished round of the given observations.
func round(kind RoundKind, points, refs []int, observations ...[]Observation) Round {
	r := Round{Kind: kind, Points: points, Refs: refs, Finished: true}
	for _, o := range observations {
		r.Observations = append(r.Observations, o...)
	}
	r.Cells = len(r.Observations)
	return r
}
