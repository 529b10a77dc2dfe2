package main

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dbbench/dbbench/pkg/bisect"
)

// pool is what the measured cells say about the machine, per judged key,
// on the log scale of QPS:
//
//	log QPS = level[round] + delta[quota] + e
//
// level is the round's base-quota level (its slot: the machine's load,
// the time), delta the realised slowdown of a quota (0 at the base), e a
// cell's own noise. The resampled bisections (-resample) draw a measured
// round's level for each of their rounds (one with the busy loop when the
// round is to have it, one without otherwise) and, for each cell, a
// measured cell's residual vector (all keys of one cell together): the
// real rounds' shifts and the real cells' noise, tails included, with the
// realised slowdowns. What they do not carry is anything tied to a
// round's order within a search, or a slowdown whose size depends on the
// load.
type pool struct {
	keys   []bisect.Key
	rounds []poolRound
	// resid are residual vectors, by busy (1) or not (0).
	resid [2][]map[bisect.Key]float64
	// delta is the realised log slowdown per quota (percent of the base),
	// estimated within rounds; deltaRounds the rounds it comes from, and
	// deltaSE its standard error over them.
	delta       map[int]map[bisect.Key]float64
	deltaSE     map[int]map[bisect.Key]float64
	deltaRounds map[int]int
	// sigma is the cells' standard deviation within a round and quota.
	sigma map[bisect.Key]float64
	// busyShift is the null bisections' mean level in rounds with the busy
	// loop minus that in rounds without; busyRounds counts those rounds
	// (idle, busy).
	busyShift     map[bisect.Key]float64
	busyRounds    [2]int
	cells, failed int
}

type poolRound struct {
	bisection int
	slowdown  int
	busy      bool
	level     map[bisect.Key]float64
}

// newPool fits the pool to a log's cells.
func newPool(l *runLog) *pool {
	p := &pool{delta: map[int]map[bisect.Key]float64{}, deltaSE: map[int]map[bisect.Key]float64{}, deltaRounds: map[int]int{},
		sigma: map[bisect.Key]float64{}, busyShift: map[bisect.Key]float64{}}
	type group struct {
		ys [][]float64 // per cell, per key (p.keys order)
	}
	type roundData struct {
		busy   bool
		groups map[int]*group // scale → cells
	}
	keySet := map[bisect.Key]bool{}
	for _, cs := range l.cells {
		for _, c := range cs {
			if c.Error != "" {
				p.failed++
				continue
			}
			p.cells++
			v, _ := c.values()
			for k := range v {
				keySet[k] = true
			}
		}
	}
	for k := range keySet {
		p.keys = append(p.keys, k)
	}
	bisect.SortKeys(p.keys)
	if len(p.keys) == 0 {
		return p
	}
	slowdownOf := map[int]int{}
	for _, b := range l.bisections {
		slowdownOf[b.Bisection] = b.Slowdown
	}
	type rkey struct{ b, r int }
	data := map[rkey]*roundData{}
	var order []rkey
	for b, rs := range l.rounds {
		for _, r := range rs {
			k := rkey{b, r.Round}
			data[k] = &roundData{busy: r.Busy, groups: map[int]*group{}}
			order = append(order, k)
		}
	}
	for b, cs := range l.cells {
		for _, c := range cs {
			rd := data[rkey{b, c.Round}]
			if c.Error != "" || rd == nil {
				continue
			}
			v, _ := c.values()
			ys := make([]float64, len(p.keys))
			okAll := true
			for i, k := range p.keys {
				q, ok := v[k]
				if !ok || !(q > 0) {
					okAll = false
					break
				}
				ys[i] = math.Log(q)
			}
			if !okAll {
				continue
			}
			g := rd.groups[c.Scale]
			if g == nil {
				g = &group{}
				rd.groups[c.Scale] = g
			}
			g.ys = append(g.ys, ys)
		}
	}
	slices.SortFunc(order, func(a, b rkey) int {
		if a.b != b.b {
			return a.b - b.b
		}
		return a.r - b.r
	})
	means := func(g *group) []float64 {
		m := make([]float64, len(p.keys))
		for _, ys := range g.ys {
			for i, y := range ys {
				m[i] += y / float64(len(g.ys))
			}
		}
		return m
	}
	// Realised slowdowns, within rounds that measured both quotas.
	diffs := map[int][][]float64{}
	for _, k := range order {
		base := data[k].groups[100]
		if base == nil {
			continue
		}
		mb := means(base)
		for scale, g := range data[k].groups {
			if scale == 100 {
				continue
			}
			ms := means(g)
			d := make([]float64, len(p.keys))
			for i := range d {
				d[i] = ms[i] - mb[i]
			}
			diffs[scale] = append(diffs[scale], d)
		}
	}
	for scale, ds := range diffs {
		p.delta[scale], p.deltaSE[scale], p.deltaRounds[scale] = map[bisect.Key]float64{}, map[bisect.Key]float64{}, len(ds)
		for i, k := range p.keys {
			var xs []float64
			for _, d := range ds {
				xs = append(xs, d[i])
			}
			m, sd := meanSD(xs)
			p.delta[scale][k], p.deltaSE[scale][k] = m, sd/math.Sqrt(float64(len(xs)))
		}
	}
	deltaOf := func(scale int, i int) float64 {
		if scale == 100 {
			return 0
		}
		if d, ok := p.delta[scale]; ok {
			return d[p.keys[i]]
		}
		return math.Log(float64(scale) / 100)
	}
	// Levels, residuals and the noise within a round and quota.
	ss, df := make([]float64, len(p.keys)), 0
	for _, k := range order {
		rd := data[k]
		level := make([]float64, len(p.keys))
		n := 0
		for _, scale := range slices.Sorted(maps.Keys(rd.groups)) {
			g := rd.groups[scale]
			m := means(g)
			for _, ys := range g.ys {
				n++
				for i, y := range ys {
					level[i] += y - deltaOf(scale, i)
				}
			}
			if len(g.ys) < 2 {
				continue
			}
			df += len(g.ys) - 1
			inflate := math.Sqrt(float64(len(g.ys)) / float64(len(g.ys)-1))
			for _, ys := range g.ys {
				e := map[bisect.Key]float64{}
				for i, y := range ys {
					e[p.keys[i]] = (y - m[i]) * inflate
					ss[i] += (y - m[i]) * (y - m[i])
				}
				p.resid[b2i(rd.busy)] = append(p.resid[b2i(rd.busy)], e)
			}
		}
		if n == 0 {
			continue
		}
		pr := poolRound{bisection: k.b, slowdown: slowdownOf[k.b], busy: rd.busy, level: map[bisect.Key]float64{}}
		for i, key := range p.keys {
			pr.level[key] = level[i] / float64(n)
		}
		p.rounds = append(p.rounds, pr)
	}
	if df > 0 {
		for i, k := range p.keys {
			p.sigma[k] = math.Sqrt(ss[i] / float64(df))
		}
	}
	// The busy loop's shift: the null bisections' busy rounds against
	// their idle ones (alternating, so a drift over time mostly cancels).
	var states [2][]poolRound
	for _, r := range p.rounds {
		if r.slowdown == 0 {
			states[b2i(r.busy)] = append(states[b2i(r.busy)], r)
		}
	}
	p.busyRounds = [2]int{len(states[0]), len(states[1])}
	if len(states[0]) > 0 && len(states[1]) > 0 {
		for _, k := range p.keys {
			p.busyShift[k] = levelMean(states[1], k) - levelMean(states[0], k)
		}
	}
	return p
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func levelMean(rs []poolRound, k bisect.Key) float64 {
	s := 0.0
	for _, r := range rs {
		s += r.level[k] / float64(len(rs))
	}
	return s
}

func meanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x / float64(len(xs))
	}
	if len(xs) < 2 {
		return m, math.NaN()
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// minResiduals is the fewest residuals of a load state that are drawn from
// on their own; below it, the residuals of both states are.
const minResiduals = 30

// resampleSource draws cells from the pool.
type resampleSource struct {
	p     *pool
	rng   *rand.Rand
	cur   poolRound
	resid []map[bisect.Key]float64
}

func (s *resampleSource) roundFor(busy bool) {
	var rs []poolRound
	for _, r := range s.p.rounds {
		if r.busy == busy {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		rs = s.p.rounds
	}
	s.cur = rs[s.rng.IntN(len(rs))]
	s.resid = s.p.resid[b2i(busy)]
	if len(s.resid) < minResiduals {
		s.resid = slices.Concat(s.p.resid[0], s.p.resid[1])
	}
}

func (s *resampleSource) round(_ context.Context, b *bisection, ri int, _ bisect.Round) error {
	s.roundFor(b.busyIn(ri))
	return nil
}

func (s *resampleSource) cell(_ context.Context, b *bisection, _ int, ref cellRef) (map[bisect.Key]float64, string, error) {
	e := s.resid[s.rng.IntN(len(s.resid))]
	scale := b.scale(ref.point)
	out := map[bisect.Key]float64{}
	for _, k := range s.p.keys {
		y := s.cur.level[k] + e[k]
		if scale != 100 {
			if d, ok := s.p.delta[scale]; ok {
				y += d[k]
			} else {
				y += math.Log(float64(scale) / 100)
			}
		}
		out[k] = math.Exp(y)
	}
	return out, "", nil
}

// canResample says whether the pool has rounds and residuals to draw.
func (p *pool) canResample() bool {
	return len(p.rounds) > 0 && len(p.resid[0])+len(p.resid[1]) > 0
}

// resampleAll runs k bisections per case of c on the pool.
func resampleAll(ctx context.Context, c config, p *pool, k int) ([]*bisection, error) {
	rng := rand.New(rand.NewPCG(c.Seed, 2))
	src := &resampleSource{p: p, rng: rng}
	var out []*bisection
	for i := 0; i < k; i++ {
		for _, slowdown := range uniqueCases(c.Cases) {
			b := newBisection(c, len(out), slowdown, i, rng)
			if err := search(ctx, c, b, src); err != nil {
				return out, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}
