package bisect

import (
	"math"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/stats"
)

// Judgement is a point's comparison with the good point at its worst
// judged key.
type Judgement struct {
	Key Key
	// Ratio is the point's value over the good point's at Key, as the
	// model's within-round contrast (a geometric-mean ratio): below 1 is
	// slower for a throughput, above 1 is slower for a latency.
	Ratio float64
	// Low and High bound Ratio at 95 %; NaN when the runs left no degrees
	// of freedom for the noise.
	Low, High float64
	// Tested says the verdict rests on the model's tests; false means the
	// magnitude alone decided (too few cells for a noise estimate).
	Tested bool
}

// PointState is what the search knows of one point.
type PointState struct {
	Verdict Verdict
	// Runs counts the point's cells that succeeded, in every round.
	Runs int
	// Measured counts the rounds of the current epoch that probed the
	// point (search rounds where it was not a reference), running ones
	// included.
	Measured int
	// Failure is why the point did not run, for a Failed point.
	Failure *Failure
	// Judgement is nil for points not measured in the current epoch.
	Judgement *Judgement
	// Probability is the posterior probability that the point is the
	// first bad build (NaN when the model could not be fitted).
	Probability float64
}

// EndpointCheck is the outcome of comparing the endpoints.
type EndpointCheck string

const (
	// Reproduced: the bad point is worse than the good one by the rule
	// on at least one key.
	Reproduced EndpointCheck = "Reproduced"
	// NotReproduced: the bad point is significantly within the
	// magnitude of the good one on every key (or, untested, its estimate
	// is).
	NotReproduced EndpointCheck = "NotReproduced"
	// Unsure: neither; more runs may decide.
	Unsure EndpointCheck = "Unsure"
)

// Endpoints is the endpoint check with its figures.
type Endpoints struct {
	Check EndpointCheck
	// Regressed are the keys where bad is worse by the rule: the keys
	// candidates are judged on.
	Regressed []Key
	// Worst is the bad point's judgement at its worst key.
	Worst Judgement
	// Rounds counts the finished endpoint rounds of the current epoch.
	Rounds int
}

// Shift is a round in which every build measured differently from the
// epoch's first round: the environment changed between rounds.
type Shift struct {
	// Round is the round's index.
	Round int
	// Percent is the shift of every build in the round, 100 × (e^β − 1),
	// on the throughput scale of the key the check used (Key).
	Percent float64
	Key     Key
	// Held says the regression kept its size in the round, so the
	// within-round comparisons stand. When false, its size in the round
	// (RatioIn, bad over good) differed from the rounds before
	// (RatioBefore) beyond the noise and the magnitude: the round started
	// a new epoch and the earlier rounds are no longer judged.
	Held                 bool
	RatioBefore, RatioIn float64
}

// State is a search recomputed from its rounds by Assess.
type State struct {
	// Points are good, the candidates and bad, in order.
	Points []PointState
	// Rounds counts the rounds, running ones included.
	Rounds int
	// Running says the last round has not finished.
	Running bool
	// FailedWhole is the index of a round whose run failed as a whole
	// (-1: none), with its message.
	FailedWhole        int
	FailedWholeMessage string
	// CellsUsed totals the cells of every round.
	CellsUsed int
	// Epoch is the index of the first round judged: 0, or the round after
	// which the regression no longer held its size (Shifts).
	Epoch int
	// Epochs counts the epochs so far.
	Epochs int
	// EndpointsInEpoch says both endpoints have cells in the epoch.
	EndpointsInEpoch bool
	// EndpointFailed is the endpoint (0 or len(Points)−1) that did not
	// run in the epoch (-1: none).
	EndpointFailed int
	// Keys are the judged keys both endpoints measured in the epoch.
	Keys      []Key
	Endpoints Endpoints
	// Changes are the intervals from a good to a bad point, in order
	// (more than one when results are not monotonic); set once the
	// endpoints reproduced.
	Changes []Change
	// Named is the build the posterior holds most likely to be the first
	// bad one, -1 before the endpoints reproduced; Confidence is that
	// probability (NaN without a posterior), Target the rule's.
	Named              int
	Confidence, Target float64
	// PosteriorKey is the key the posterior was computed on: the
	// endpoints' most significant regressed key.
	PosteriorKey Key
	// ConfirmRounds counts the finished confirm rounds of the epoch.
	ConfirmRounds int
	// Shifts are the environment changes seen, in round order.
	Shifts []Shift
}

// Assess recomputes a search from its rounds: n+2 points (0 good, n+1
// bad), the rule, and the keys to judge. It is pure: the same rounds give
// the same state, so a controller can recompute it on every pass.
//
// Every comparison is within rounds: the additive model (fitAdditive)
// gives each round a shift of its own, so a change of the environment
// between rounds (load, node, time of day) does not enter a contrast. If
// the regression itself changes size between rounds (the bad point's
// ratio to the good in one round differs from the rounds before by more
// than the noise and the magnitude), the round starts a new epoch: the
// rounds before are no longer judged, and the endpoints are measured
// again.
func Assess(rounds []Round, npoints int, rule Rule, judged func(Key) bool) State {
	s := State{Points: make([]PointState, npoints), Rounds: len(rounds), FailedWhole: -1, EndpointFailed: -1, Named: -1,
		Confidence: math.NaN(), Target: rule.confidence(), Epochs: 1}
	for i := range s.Points {
		s.Points[i].Probability = math.NaN()
	}
	done := rounds[:s.tally(rounds)]
	s.findEpochs(done, rule, judged)
	j := judge(done[s.Epoch:], s.Epoch, npoints, rule, judged)
	s.Keys, s.Endpoints, s.PosteriorKey = j.keys, j.endpoints, j.best
	s.EndpointsInEpoch = j.endpointsMeasured
	s.countEpochRounds(rounds)
	s.markFailed(done)
	for _, e := range []int{0, npoints - 1} {
		if !j.measured[e] && failedIn(done[s.Epoch:], e) {
			s.EndpointFailed = e
			break
		}
	}
	// Verdicts of the endpoints stand by definition.
	for p, jd := range j.judgements {
		s.Points[p].Judgement = jd
	}
	if s.Endpoints.Check != Reproduced {
		return s
	}
	s.applyJudgement(j)
	s.addAbsorbedShifts(j, done, rule)
	return s
}

// tally counts every round's cells and its points' successful runs, notes
// a running round and the first that failed as a whole, and returns how
// many rounds finished before the first that has not: only those are
// judged, in order, so a round that finished before an earlier one waits
// for it.
func (s *State) tally(rounds []Round) (finished int) {
	for i, r := range rounds {
		s.CellsUsed += r.Cells
		if !r.Finished {
			s.Running = true
			continue
		}
		if finished == i {
			finished++
		}
		if r.FailedWhole != "" && s.FailedWhole < 0 {
			s.FailedWhole, s.FailedWholeMessage = i, r.FailedWhole
		}
		for _, o := range r.Observations {
			if o.Point >= 0 && o.Point < len(s.Points) {
				s.Points[o.Point].Runs++
			}
		}
	}
	return finished
}

// findEpochs checks each finished round against the epoch's rounds before
// it: a round in which the regression did not hold its size starts a new
// epoch. Every shift found is kept, held or not.
func (s *State) findEpochs(done []Round, rule Rule, judged func(Key) bool) {
	for r := 1; r < len(done); r++ {
		j := judge(done[s.Epoch:r], s.Epoch, len(s.Points), rule, judged)
		if sh, ok := j.interaction(done[r], r, rule); ok {
			s.Shifts = append(s.Shifts, sh)
			if !sh.Held {
				s.Epoch = r
				s.Epochs++
			}
		}
	}
}

// countEpochRounds counts, in the current epoch, the search rounds that
// probed each point (a reference is not probed), running ones included,
// and the finished endpoint and confirm rounds.
func (s *State) countEpochRounds(rounds []Round) {
	npoints := len(s.Points)
	for i, r := range rounds {
		if i < s.Epoch {
			continue
		}
		refs := map[int]bool{}
		for _, p := range r.Refs {
			refs[p] = true
		}
		if r.Kind == RoundSearch {
			for _, p := range r.Points {
				if !refs[p] && p >= 0 && p < npoints {
					s.Points[p].Measured++
				}
			}
		}
		if r.Finished {
			switch r.Kind {
			case RoundEndpoints:
				s.Endpoints.Rounds++
			case RoundConfirm:
				s.ConfirmRounds++
			}
		}
	}
}

// markFailed makes a point that failed in a finished round and never ran
// Failed, with its first failure.
func (s *State) markFailed(done []Round) {
	for _, r := range done {
		for p, f := range r.Failures {
			if p >= 0 && p < len(s.Points) && s.Points[p].Runs == 0 && s.Points[p].Failure == nil {
				f := f
				s.Points[p].Failure = &f
				s.Points[p].Verdict = Failed
			}
		}
	}
}

// applyJudgement takes the verdicts and the posterior of the epoch's
// judgement once the endpoints reproduced, and names the build the
// posterior holds most likely.
func (s *State) applyJudgement(j judgement) {
	last := len(s.Points) - 1
	s.Points[0].Verdict, s.Points[last].Verdict = Good, Bad
	for p := 1; p < last; p++ {
		if s.Points[p].Verdict != Failed {
			s.Points[p].Verdict = j.verdicts[p]
		}
	}
	if j.posterior != nil {
		for p := range s.Points {
			s.Points[p].Probability = j.posterior[p]
		}
	}
	s.Changes = changes(s.Points)
	if j.posterior == nil {
		return
	}
	// The posterior weighs every cell of the epoch at once, where each
	// verdict is one point's test at α: a good build measured a few per
	// cent low in a late round can be judged Bad and put the verdicts'
	// first change before the culprit (make bench-bisect saw it in 3 of
	// 400 searches). The build named is the posterior's.
	s.Named = 1
	for p := 2; p <= last; p++ {
		if j.posterior[p] > j.posterior[s.Named] {
			s.Named = p
		}
	}
	s.Confidence = j.posterior[s.Named]
}

// addAbsorbedShifts records the environment shifts of the epoch's rounds
// that the within-round comparisons absorbed: every build measured
// differently in the round, and the regression held.
func (s *State) addAbsorbedShifts(j judgement, done []Round, rule Rule) {
	f, ok := j.fits[j.best]
	if !ok {
		return
	}
	for i := s.Epoch + 1; i < len(done); i++ {
		d, se, ok := f.shift(i)
		if !ok || f.df <= 0 {
			continue
		}
		p := 2 * stats.StudentCDF(-math.Abs(d)/se, float64(f.df))
		if p < rule.MaxPValue && math.Abs(math.Expm1(d)) > rule.Magnitude {
			s.Shifts = append(s.Shifts, Shift{Round: i, Percent: 100 * math.Expm1(d), Key: j.best, Held: true,
				RatioBefore: math.NaN(), RatioIn: math.NaN()})
		}
	}
}

// failedIn reports whether point p failed in one of rounds.
func failedIn(rounds []Round, p int) bool {
	for _, r := range rounds {
		if _, failed := r.Failures[p]; failed {
			return true
		}
	}
	return false
}

// changes are the intervals from a good point to the next bad point.
func changes(points []PointState) []Change {
	ps := make([]Point, len(points))
	for i, p := range points {
		ps[i] = Point{Verdict: p.Verdict, Measured: p.Measured}
	}
	plan, err := Next(ps, Options{Parallelism: 1})
	if err != nil {
		return nil
	}
	return plan.Changes
}

// judgement is one judge pass over an epoch's finished rounds.
type judgement struct {
	npoints           int
	keys              []Key
	fits              map[Key]additive
	cells             map[Key][]cellScore
	endpoints         Endpoints
	endpointsMeasured bool
	measured          map[int]bool
	verdicts          []Verdict
	judgements        map[int]*Judgement
	best              Key
	posterior         []float64
}

// judge fits the model per judged key over rounds (the first at index
// first), checks the endpoints and judges every measured point.
func judge(rounds []Round, first, npoints int, rule Rule, judged func(Key) bool) judgement {
	j := judgement{npoints: npoints, fits: map[Key]additive{}, cells: map[Key][]cellScore{}, measured: map[int]bool{},
		verdicts: make([]Verdict, npoints), judgements: map[int]*Judgement{}}
	j.collect(rounds, first, judged)
	j.fit()
	j.endpoints = Endpoints{Check: NotReproduced}
	if len(j.keys) == 0 {
		return j
	}
	j.checkEndpoints(rule)
	if j.endpoints.Check != Reproduced {
		return j
	}
	// The candidates, on the keys where the endpoints differ.
	for p := 1; p < npoints-1; p++ {
		if j.measured[p] {
			j.judgeCandidate(p, rule)
		}
	}
	j.posterior = posterior(j.cells[j.best], npoints)
	return j
}

// collect takes the scores of the judged keys from the rounds' cells (the
// first round at index first) and notes which points were measured.
func (j *judgement) collect(rounds []Round, first int, judged func(Key) bool) {
	for i, r := range rounds {
		for _, o := range r.Observations {
			if o.Point < 0 || o.Point >= j.npoints {
				continue
			}
			j.measured[o.Point] = true
			for k, v := range o.Values {
				if judged != nil && !judged(k) {
					continue
				}
				if y, ok := k.score(v); ok {
					j.cells[k] = append(j.cells[k], cellScore{point: o.Point, round: first + i, y: y})
				}
			}
		}
	}
	j.endpointsMeasured = j.measured[0] && j.measured[j.npoints-1]
}

// fit fits the model per key; a key is judged only where the bad point
// has a level, since every judgement compares against it.
func (j *judgement) fit() {
	for k, cs := range j.cells {
		f := fitAdditive(cs, 0)
		if f.has(j.npoints - 1) {
			j.fits[k] = f
			j.keys = append(j.keys, k)
		}
	}
	SortKeys(j.keys)
}

// checkEndpoints compares bad with good on every key, corrected for the
// keys tested: Reproduced when bad is worse by the rule on some key,
// NotReproduced when every key is cleared, else Unsure. It judges both
// endpoints at the key where bad is worst.
func (j *judgement) checkEndpoints(rule Rule) {
	last := j.npoints - 1
	type keyTest struct {
		p, change float64
		tested    bool
		cleared   bool
		d         float64
	}
	tests := make([]keyTest, len(j.keys))
	ps := make([]float64, len(j.keys))
	for i, k := range j.keys {
		d, se, df, _ := j.fits[k].contrast(0, last)
		p, change, tested := rule.worse(k, d, se, float64(df))
		tests[i], ps[i] = keyTest{p: p, change: change, tested: tested, d: d, cleared: rule.cleared(k, d, se, float64(df))}, p
	}
	adj := adjust(rule, ps)
	worst, best := -1, -1
	for i, k := range j.keys {
		t := tests[i]
		if worst < 0 || t.d < tests[worst].d {
			worst = i
		}
		switch {
		case rule.regressed(k, adj[i], t.change, t.tested):
			j.endpoints.Check = Reproduced
			j.endpoints.Regressed = append(j.endpoints.Regressed, k)
			// The most significant regressed key, the largest change
			// on a tie (several p-values of 0 without a test).
			if best < 0 || adj[i] < adj[best] || (adj[i] == adj[best] && t.d < tests[best].d) {
				best, j.best = i, k
			}
		case !t.cleared && j.endpoints.Check == NotReproduced:
			j.endpoints.Check = Unsure
		}
	}
	j.endpoints.Worst = j.judge(j.keys[worst], 0, last)
	j.judgements[last] = &j.endpoints.Worst
	one := Judgement{Key: j.endpoints.Worst.Key, Ratio: 1, Low: math.NaN(), High: math.NaN(), Tested: j.endpoints.Worst.Tested}
	j.judgements[0] = &one
}

// judgeCandidate gives measured point p its verdict on the keys where the
// endpoints differ: Bad when it is worse than good by the rule on some
// key (corrected for those keys), Good when bad is worse than it on every
// key, else Inconclusive; and its judgement at its worst key. A point
// without a contrast on any of those keys gets neither.
func (j *judgement) judgeCandidate(p int, rule Rule) {
	last := j.npoints - 1
	var badKeys []Key
	var badP, badChange []float64
	var badTested []bool
	allGood, have := true, false
	worstKey, worstD := Key{}, math.Inf(1)
	for _, k := range j.endpoints.Regressed {
		f := j.fits[k]
		d, se, df, ok := f.contrast(0, p)
		if !ok {
			allGood = false
			continue
		}
		have = true
		pb, cb, tb := rule.worse(k, d, se, float64(df))
		badKeys, badP, badChange, badTested = append(badKeys, k), append(badP, pb), append(badChange, cb), append(badTested, tb)
		if d < worstD {
			worstKey, worstD = k, d
		}
		// Good there: the bad point is worse than this one by the
		// rule. Good needs every key, an intersection of tests that
		// needs no correction.
		dg, seg, dfg, _ := f.contrast(p, last)
		pg, cg, tg := rule.worse(k, dg, seg, float64(dfg))
		if !rule.regressed(k, pg, cg, tg) {
			allGood = false
		}
	}
	if !have {
		return
	}
	anyBad := false
	adjBad := adjust(rule, badP)
	for i := range badP {
		if rule.regressed(badKeys[i], adjBad[i], badChange[i], badTested[i]) {
			anyBad = true
		}
	}
	switch {
	case anyBad:
		j.verdicts[p] = Bad
	case allGood:
		j.verdicts[p] = Good
	default:
		j.verdicts[p] = Inconclusive
	}
	jd := j.judge(worstKey, 0, p)
	j.judgements[p] = &jd
}

// judge is point p's judgement against point a at key k.
func (j *judgement) judge(k Key, a, p int) Judgement {
	jd := Judgement{Key: k, Ratio: math.NaN(), Low: math.NaN(), High: math.NaN()}
	d, se, df, ok := j.fits[k].contrast(a, p)
	if !ok {
		return jd
	}
	lo, hi := math.NaN(), math.NaN()
	if df > 0 {
		h := stats.StudentQuantile(1-(1-inference.DefaultLevel)/2, float64(df)) * se
		lo, hi = d-h, d+h
	}
	ratio := func(x float64) float64 {
		if k.MetricOrDefault().LowerIsBetter() {
			return math.Exp(-x)
		}
		return math.Exp(x)
	}
	jd.Ratio, jd.Tested = ratio(d), df > 0
	if df > 0 {
		jd.Low, jd.High = ratio(lo), ratio(hi)
		if jd.Low > jd.High {
			jd.Low, jd.High = jd.High, jd.Low
		}
	}
	return jd
}

// interaction checks whether the regression held its size in round r
// (index ri): the mean score of the bad-judged points measured in it
// minus that of the good-judged ones, against the same contrast of the
// levels fitted on the rounds before. ok is false when the round had no
// judged point of both kinds, or the rounds before gave no noise
// estimate.
func (j *judgement) interaction(r Round, ri int, rule Rule) (Shift, bool) {
	if j.endpoints.Check != Reproduced {
		return Shift{}, false
	}
	k := j.best
	f, ok := j.fits[k]
	if !ok || f.df <= 0 {
		return Shift{}, false
	}
	kind := func(p int) Verdict {
		switch p {
		case 0:
			return Good
		case j.npoints - 1:
			return Bad
		}
		return j.verdicts[p]
	}
	// Per point, the mean of its cells in the round.
	sum, n := map[int]float64{}, map[int]int{}
	for _, o := range r.Observations {
		v, in := o.Values[k]
		y, ok := k.score(v)
		if !in || !ok || !f.has(o.Point) {
			continue
		}
		if vk := kind(o.Point); vk == Good || vk == Bad {
			sum[o.Point] += y
			n[o.Point]++
		}
	}
	var good, bad []int
	for p := range n {
		if kind(p) == Good {
			good = append(good, p)
		} else {
			bad = append(bad, p)
		}
	}
	if len(good) == 0 || len(bad) == 0 {
		return Shift{}, false
	}
	// d_in = mean over bad points of their round means − the same over
	// good ones; var = σ²·Σ w²/n. d_before is the same weights on the
	// fitted levels.
	w := map[int]float64{}
	var dIn, varIn float64
	for _, set := range [][]int{bad, good} {
		sign := 1.0
		if kind(set[0]) == Good {
			sign = -1
		}
		for _, p := range set {
			wp := sign / float64(len(set))
			w[p] = wp
			dIn += wp * sum[p] / float64(n[p])
			varIn += wp * wp / float64(n[p])
		}
	}
	varIn *= f.sigma2
	dBefore, varBefore := f.weighted(w)
	se := math.Sqrt(varIn + varBefore)
	if !(se > 0) {
		return Shift{}, false
	}
	p := 2 * stats.StudentCDF(-math.Abs(dIn-dBefore)/se, float64(f.df))
	sh := Shift{Round: ri, Key: k, Held: true, RatioBefore: ratioOf(k, dBefore), RatioIn: ratioOf(k, dIn), Percent: math.NaN()}
	// The whole round's shift: the good points' round means against
	// their fitted levels.
	var shift float64
	for _, q := range good {
		shift += (sum[q]/float64(n[q]) - f.level(q)) / float64(len(good))
	}
	sh.Percent = 100 * math.Expm1(shift)
	// Bonferroni over the rounds checked: a false alarm costs the
	// epoch's rounds, so each round is checked at MaxPValue / rounds.
	if p < rule.MaxPValue/float64(ri) && math.Abs(dIn-dBefore) > -math.Log1p(-rule.Magnitude) {
		sh.Held = false
		return sh, true
	}
	return sh, false
}

func ratioOf(k Key, d float64) float64 {
	if k.MetricOrDefault().LowerIsBetter() {
		return math.Exp(-d)
	}
	return math.Exp(d)
}

// adjust applies the rule's correction; on an error (NaNs only) the
// p-values stand.
func adjust(rule Rule, ps []float64) []float64 {
	adj, err := inference.Adjust(rule.correction(), ps)
	if err != nil {
		return ps
	}
	return adj
}
