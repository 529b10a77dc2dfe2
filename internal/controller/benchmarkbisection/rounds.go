package benchmarkbisection

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/runverdict"
)

// bisectionSetup is what every round is built from.
type bisectionSetup struct {
	// base is the run spec with exactly one database and config variant;
	// its versions and image are replaced per point.
	base dbbenchv1alpha1.BenchmarkRunSpec
	// points are good, the candidates and bad, in order.
	points []dbbenchv1alpha1.BisectionPoint
	rule   bisect.Rule
	// apiRule is rule as the status records it.
	apiRule dbbenchv1alpha1.BisectionRule
	limits  bisect.Limits
	// judge says whether a key is judged.
	judge func(bisect.Key) bool
}

// setup resolves the spec (and the referenced run) into a bisectionSetup;
// an error is a spec error, reported as InvalidSpec.
func (p *bisectionPass) setup(ctx context.Context) (*bisectionSetup, error) {
	spec := &p.bis.Spec
	src, err := p.bisectionSource(ctx)
	if err != nil {
		return nil, err
	}
	s := &bisectionSetup{base: src.base}
	if len(s.base.Databases) == 0 {
		return nil, fmt.Errorf("runRef: run %s has no database", spec.RunRef.Name)
	}
	db, err := bisectedDatabase(s.base.Databases, src.run, src.database, src.config)
	if err != nil {
		return nil, err
	}
	s.base.Databases = []dbbenchv1alpha1.DatabaseSpec{db}
	// A round is not part of the referenced run's suite, judges nothing
	// itself and always writes the results ConfigMap the bisection reads.
	s.base.Suite, s.base.Regression, s.base.Baseline = "", nil, nil
	s.base.Workload.Repeats = spec.CellsPerPoint()
	s.base.Output.ConfigMap.Enabled = ptr.To(true)

	s.points = append(append([]dbbenchv1alpha1.BisectionPoint{spec.Good}, spec.Candidates...), spec.Bad)
	if err := checkPoints(s.points, db.Image); err != nil {
		return nil, err
	}

	s.rule, s.apiRule = bisectionRule(spec, src.regression)
	if err := s.rule.Validate(); err != nil {
		return nil, fmt.Errorf("minMagnitudePercent/maxPValue: %w", err)
	}
	s.limits = bisect.Limits{Parallelism: int(spec.CandidatesPerRound()), Repeats: int(spec.CellsPerPoint()), MaxCells: int(spec.CellBudget())}
	s.judge = judgeOf(spec.Judge, s.apiRule.Metrics, src.regressed)
	return s, nil
}

// bisectionSource is what a bisection's spec starts from: the referenced
// run's spec, rule and verdict, or the template.
type bisectionSource struct {
	base       dbbenchv1alpha1.BenchmarkRunSpec
	regression *dbbenchv1alpha1.RegressionSpec
	regressed  []dbbenchv1alpha1.RegressedStep
	// run, database and config are runRef's; "" for a template.
	run, database, config string
}

// bisectionSource reads the run runRef names, or takes the template.
func (p *bisectionPass) bisectionSource(ctx context.Context) (bisectionSource, error) {
	spec := &p.bis.Spec
	switch {
	case spec.RunRef != nil:
		var ref dbbenchv1alpha1.BenchmarkRun
		err := p.r.Get(ctx, types.NamespacedName{Namespace: p.bis.Namespace, Name: spec.RunRef.Name}, &ref)
		if apierrors.IsNotFound(err) {
			return bisectionSource{}, fmt.Errorf("runRef.name: run %s not found", spec.RunRef.Name)
		}
		if err != nil {
			return bisectionSource{}, fmt.Errorf("reading run %s: %w", spec.RunRef.Name, err)
		}
		src := bisectionSource{base: *ref.Spec.DeepCopy(), regression: ref.Spec.Regression,
			run: spec.RunRef.Name, database: spec.RunRef.Database, config: spec.RunRef.Config}
		if ref.Status.Regression != nil {
			src.regressed = ref.Status.Regression.Regressed
		}
		return src, nil
	case spec.Template != nil:
		return bisectionSource{base: *spec.Template.DeepCopy()}, nil
	}
	return bisectionSource{}, fmt.Errorf("runRef: set runRef or template")
}

// bisectedDatabase is the one database a bisection measures, with its one
// config variant: those named (by runRef), else the first of each. run
// names the referenced run in the error.
func bisectedDatabase(dbs []dbbenchv1alpha1.DatabaseSpec, run, dbName, cfgName string) (dbbenchv1alpha1.DatabaseSpec, error) {
	db := dbs[0]
	if dbName != "" {
		found := false
		for _, d := range dbs {
			if d.Name == dbName {
				db, found = d, true
			}
		}
		if !found {
			return db, fmt.Errorf("runRef.database: run %s has no database %s", run, dbName)
		}
	}
	if len(db.Configs) == 0 {
		return db, nil
	}
	cfg := db.Configs[0]
	if cfgName != "" {
		found := false
		for _, c := range db.Configs {
			if c.Name == cfgName {
				cfg, found = c, true
			}
		}
		if !found {
			return db, fmt.Errorf("runRef.config: database %s has no config variant %s", db.Name, cfgName)
		}
	}
	db.Configs = []dbbenchv1alpha1.ConfigVariant{cfg}
	return db, nil
}

// checkPoints rejects points the rounds could not tell apart or start: a
// point given twice, or a version for a database whose image has no
// {version} to substitute it into.
func checkPoints(points []dbbenchv1alpha1.BisectionPoint, image string) error {
	seen := map[string]int{}
	for i, pt := range points {
		if pt.Version != "" && image != "" && !strings.Contains(image, "{version}") {
			return fmt.Errorf("%s: a version needs {version} in the database's image %q; give an image instead", pointField(i, len(points)), image)
		}
		if j, dup := seen[framework.PointName(pt)]; dup {
			return fmt.Errorf("%s: %s is also %s", pointField(i, len(points)), framework.PointName(pt), pointField(j, len(points)))
		}
		seen[framework.PointName(pt)] = i
	}
	return nil
}

// judgeOf says whether a key is judged: with no steps or threads in the
// spec's judge, the verdict's regressed step@threads, each on the metrics
// it regressed on (so a bisection looks for the change the verdict saw);
// else the judge's steps and threads on the rule's metrics.
func judgeOf(
	judge dbbenchv1alpha1.BisectionJudge,
	metrics []dbbenchv1alpha1.RegressionMetric,
	regressed []dbbenchv1alpha1.RegressedStep,
) func(bisect.Key) bool {
	steps := map[string]bool{}
	for _, st := range judge.Steps {
		steps[st] = true
	}
	threads := map[int]bool{}
	for _, th := range judge.Threads {
		threads[int(th)] = true
	}
	pairs := map[bisect.Key]bool{}
	if len(steps) == 0 && len(threads) == 0 {
		for _, r := range regressed {
			for _, m := range framework.RegressedMetrics(r) {
				pairs[bisect.Key{Step: r.Step, Threads: int(r.Threads), Metric: analysis.Metric(m)}] = true
			}
		}
	}
	return func(k bisect.Key) bool {
		k.Metric = k.MetricOrDefault()
		if len(pairs) > 0 {
			return pairs[k]
		}
		return (len(steps) == 0 || steps[k.Step]) && (len(threads) == 0 || threads[k.Threads]) &&
			slices.Contains(metrics, runverdict.APIMetric(k.MetricOrDefault())) && k.MetricOrDefault().Judged(k.Step)
	}
}

// bisectionRule resolves the decision rule: each field from the
// bisection's spec, else the referenced run's spec.regression (so that a
// bisection judges "worse" as the verdict that started it did), else the
// defaults. maxPValue is the run's only when that run judged against a
// run: a change-point verdict's level (0.001) is that of a scan over many
// runs, not of a comparison of two builds.
func bisectionRule(spec *dbbenchv1alpha1.BenchmarkBisectionSpec, reg *dbbenchv1alpha1.RegressionSpec) (bisect.Rule, dbbenchv1alpha1.BisectionRule) {
	out := dbbenchv1alpha1.BisectionRule{
		MinMagnitudePercent: dbbenchv1alpha1.DefaultBisectionMinMagPct,
		MagnitudeRule:       dbbenchv1alpha1.MagnitudeTested,
		Correction:          dbbenchv1alpha1.CorrectionHolm,
		Metrics:             []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput},
	}
	maxP := dbbenchv1alpha1.DefaultBisectionMaxPValue
	if reg != nil {
		out.MinMagnitudePercent = reg.MinMagnitudePercent
		if reg.MagnitudeRule != "" {
			out.MagnitudeRule = reg.MagnitudeRule
		}
		if reg.Correction != "" {
			out.Correction = reg.Correction
		}
		if len(reg.Metrics) > 0 {
			out.Metrics = reg.Metrics
		}
		if reg.Against != dbbenchv1alpha1.RegressAgainstChangePoints {
			maxP = reg.SignificanceLevel()
		}
	}
	if spec.MinMagnitudePercent != nil {
		out.MinMagnitudePercent = *spec.MinMagnitudePercent
	}
	if spec.MagnitudeRule != "" {
		out.MagnitudeRule = spec.MagnitudeRule
	}
	if spec.Correction != "" {
		out.Correction = spec.Correction
	}
	if len(spec.Metrics) > 0 {
		out.Metrics = spec.Metrics
	}
	if spec.MaxPValue != "" {
		maxP = spec.SignificanceLevel()
	}
	out.MaxPValue = strconv.FormatFloat(maxP, 'g', -1, 64)
	out.Confidence = strconv.FormatFloat(spec.ConfidenceLevel(), 'g', -1, 64)
	return bisect.Rule{
		Magnitude:     out.MinMagnitude(),
		MagnitudeRule: regression.MagnitudeRule(out.MagnitudeRule),
		MaxPValue:     maxP,
		Correction:    runverdict.CorrectionOf(out.Correction),
		Confidence:    spec.ConfidenceLevel(),
	}, out
}

// pointField names point i in spec terms.
func pointField(i, n int) string {
	switch i {
	case 0:
		return framework.SideGood
	case n - 1:
		return framework.SideBad
	}
	return fmt.Sprintf("candidates[%d]", i-1)
}

// round is a round's run as the search reads it.
type round struct {
	index  int
	run    *dbbenchv1alpha1.BenchmarkRun
	kind   bisect.RoundKind
	points []int
	refs   []int
}

// listRounds reads the bisection's runs in round order.
func (p *bisectionPass) listRounds(ctx context.Context) ([]round, error) {
	var list dbbenchv1alpha1.BenchmarkRunList
	if err := p.r.List(ctx, &list, client.InNamespace(p.bis.Namespace), client.MatchingFields{bisectionOwnerIndex: p.bis.Name}); err != nil {
		return nil, fmt.Errorf("listing the bisection's runs: %w", err)
	}
	var out []round
	for i := range list.Items {
		run := &list.Items[i]
		idx, err := strconv.Atoi(run.Labels[dbbenchv1alpha1.LabelBisectionRound])
		if err != nil {
			p.log.Info("Ignored a run without a round label", "run", klog.KObj(run))
			continue
		}
		pts, err := parsePoints(run.Annotations[dbbenchv1alpha1.AnnotationBisectionPoints])
		if err != nil {
			p.log.Info("Ignored a run with unreadable points", "run", klog.KObj(run), "error", err)
			continue
		}
		var refs []int
		if a := run.Annotations[dbbenchv1alpha1.AnnotationBisectionReferences]; a != "" {
			if refs, err = parsePoints(a); err != nil {
				p.log.Info("Ignored a run with unreadable references", "run", klog.KObj(run), "error", err)
				continue
			}
		}
		kind := bisect.RoundKind(run.Annotations[dbbenchv1alpha1.AnnotationBisectionRoundKind])
		if kind == "" {
			// Rounds made before round kinds: the endpoint round
			// measured exactly good and bad.
			kind = bisect.RoundSearch
			if idx == 0 {
				kind = bisect.RoundEndpoints
			}
		}
		out = append(out, round{index: idx, run: run, kind: kind, points: pts, refs: refs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out, nil
}

func parsePoints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("annotation %s %q: %w", dbbenchv1alpha1.AnnotationBisectionPoints, s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func formatPoints(pts []int) string {
	if len(pts) == 0 {
		return ""
	}
	s := make([]string, len(pts))
	for i, v := range pts {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// roundName is the deterministic name of round i.
func roundName(bis string, i int) string { return fmt.Sprintf("%s-r%d", bis, i) }

// pointDatabase is the database name of point i in a round's run: the
// results name their cells by it.
func pointDatabase(i int) string { return fmt.Sprintf("p%d", i) }

// imageVersionLabel is the version a point given as an image shows in its
// cells' names.
const imageVersionLabel = "image"

// buildRound is the run of round index.
func (p *bisectionPass) buildRound(s *bisectionSetup, index int, r bisect.Round) (*dbbenchv1alpha1.BenchmarkRun, error) {
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.bis.Namespace,
			Name:      roundName(p.bis.Name, index),
			Labels: map[string]string{
				dbbenchv1alpha1.LabelBisection:      p.bis.Name,
				dbbenchv1alpha1.LabelBisectionRound: strconv.Itoa(index),
			},
			Annotations: map[string]string{
				dbbenchv1alpha1.AnnotationBisectionPoints:    formatPoints(r.Points),
				dbbenchv1alpha1.AnnotationBisectionRoundKind: string(r.Kind),
			},
		},
		Spec: *s.base.DeepCopy(),
	}
	if len(r.Refs) > 0 {
		run.Annotations[dbbenchv1alpha1.AnnotationBisectionReferences] = formatPoints(r.Refs)
	}
	tpl := s.base.Databases[0]
	run.Spec.Databases = nil
	for _, i := range r.Points {
		db := *tpl.DeepCopy()
		db.Name = pointDatabase(i)
		pt := s.points[i]
		if pt.Image != "" {
			db.Versions, db.Image = []string{imageVersionLabel}, pt.Image
		} else {
			db.Versions = []string{pt.Version}
		}
		run.Spec.Databases = append(run.Spec.Databases, db)
	}
	// A round's points are independent: a candidate that does not start
	// is one Failed point, and the search goes on around it. A pre-flight
	// would fail the whole round's run for it and leave every other
	// point of the round unmeasured; each cell still checks its server
	// and its settings before its load.
	run.Spec.Preflight.Enabled = ptr.To(false)
	if err := ctrl.SetControllerReference(p.bis, run, p.r.Scheme); err != nil {
		return nil, fmt.Errorf("setting the owner of run %s: %w", run.Name, err)
	}
	return run, nil
}

// createRound creates the run of a round; AlreadyExists is success (an
// earlier pass whose status write was lost created it).
func (p *bisectionPass) createRound(ctx context.Context, s *bisectionSetup, index int, r bisect.Round) (*dbbenchv1alpha1.BenchmarkRun, error) {
	points := r.Points
	run, err := p.buildRound(s, index, r)
	if err != nil {
		return nil, err
	}
	switch err := p.r.Create(ctx, run); {
	case apierrors.IsAlreadyExists(err):
		p.log.V(1).Info("Found the round's run already created", "run", klog.KObj(run))
	case err != nil:
		return nil, fmt.Errorf("creating run %s: %w", run.Name, err)
	default:
		names := make([]string, len(points))
		for j, i := range points {
			names[j] = framework.PointName(s.points[i])
		}
		p.log.Info("Created round", "run", klog.KObj(run), "round", index, "points", names)
		p.RunEvent(run, true, EventRoundCreated, "Create", fmt.Sprintf("Round %d measures %s in run %s", index, strings.Join(names, ", "), run.Name))
	}
	return run, nil
}
