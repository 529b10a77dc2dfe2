package benchmarkrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
)

// maxBisectionName is the longest BenchmarkBisection name the API accepts
// (its rounds are <bisection>-r<N>, at most 63 characters).
const maxBisectionName = 50

// regressionBisectionName is the deterministic name of the bisection
// spec.regression.bisect creates for a run: <run>-bisect, or, for a run
// name too long for that, a prefix of it with a hash of the whole name, so
// that two long names sharing a prefix do not collide. A pass that is
// redone (a lost status write, a manager restart) finds the bisection by
// this name instead of creating a second one.
func regressionBisectionName(run string) string {
	const suffix = "-bisect"
	if len(run)+len(suffix) <= maxBisectionName {
		return run + suffix
	}
	sum := sha256.Sum256([]byte(run))
	h := hex.EncodeToString(sum[:4])
	prefix := strings.TrimRight(run[:maxBisectionName-len(suffix)-len(h)-1], "-.")
	return prefix + "-" + h + suffix
}

// regressionBisectionSpec derives the bisection of a Regressed=True
// verdict from spec.regression.bisect: the regressed database (that of the
// largest regression), judged on the step@threads and metrics that
// regressed there, between the build before the change and the first
// build after it — against a run, the compared run's build and this
// run's; against ChangePoints, the builds of the runs around the change
// point. The candidates are regression.bisect's, or the builds strictly
// between good and bad in regression.bisect.builds. It returns a message
// instead when no search can be made.
func regressionBisectionSpec(
	run *dbbenchv1alpha1.BenchmarkRun,
	cur *results.Manifest,
	history []runverdict.Run,
) (*dbbenchv1alpha1.BenchmarkBisectionSpec, string) {
	rb := run.Spec.Regression.Bisect
	st := run.Status.Regression
	regs, why := bisectableRegressions(st.Regressed)
	if why != "" {
		return nil, why
	}
	top := regs[0]
	first := statusCell(run.Status.Cells, top.Cell)
	if first == nil {
		return nil, fmt.Sprintf("regressed cell %s is not in status.cells", top.Cell)
	}
	db := specDatabase(run.Spec.Databases, first.Database)
	if db == nil {
		return nil, fmt.Sprintf("regressed database %s is not in spec.databases", first.Database)
	}
	judge, metrics := regressedJudge(regs, run.Status.Cells, first)

	goodRun, badRun := boundingRuns(run.Name, top, st.ComparedTo)
	gb, why := runBuild(goodRun, framework.SideGood, rb.Good, runManifest(run.Name, cur, history, goodRun), first, db)
	if why != "" {
		return nil, why
	}
	bb, why := runBuild(badRun, framework.SideBad, rb.Bad, runManifest(run.Name, cur, history, badRun), first, db)
	if why != "" {
		return nil, why
	}
	good, bad := gb.point, bb.point
	if framework.PointName(good) == framework.PointName(bad) {
		return nil, fmt.Sprintf(
			"good and bad are both %s (no image digest was recorded to tell the builds apart); give regression.bisect.good and bad",
			framework.PointName(good),
		)
	}
	candidates := append([]dbbenchv1alpha1.BisectionPoint(nil), rb.Candidates...)
	if len(rb.Builds) > 0 {
		if good, bad, candidates, why = buildsBetween(rb.Builds, gb, bb, goodRun, badRun); why != "" {
			return nil, why
		}
	}
	return &dbbenchv1alpha1.BenchmarkBisectionSpec{
		RunRef:      &dbbenchv1alpha1.BisectionRunRef{Name: run.Name, Database: first.Database, Config: first.Config},
		Good:        good,
		Bad:         bad,
		Candidates:  candidates,
		Judge:       judge,
		Metrics:     metrics,
		Parallelism: rb.CandidatesPerRound(),
		Repeats:     rb.CellsPerPoint(),
		MaxCells:    rb.CellBudget(),
		Confidence:  rb.Confidence,
		Explain:     rb.Explain,
	}, ""
}

// bisectableRegressions are the verdict's regressed pairs that a build may
// have caused, in the verdict's order, or a message when there are none: a
// change that coincides with the environment alone is not among the
// builds, so there is nothing to bisect there.
func bisectableRegressions(regressed []dbbenchv1alpha1.RegressedStep) ([]dbbenchv1alpha1.RegressedStep, string) {
	if len(regressed) == 0 {
		return nil, "the verdict names no regressed step"
	}
	var regs []dbbenchv1alpha1.RegressedStep
	for _, r := range regressed {
		if !r.EnvironmentOnly {
			regs = append(regs, r)
		}
	}
	if len(regs) == 0 {
		return nil, "every regressed pair coincides with a change of the environment and none of the build (regressed[].environmentOnly): there is no build to bisect"
	}
	return regs, ""
}

// statusCell is the status of the cell named name, nil when there is none.
func statusCell(cells []dbbenchv1alpha1.CellStatus, name string) *dbbenchv1alpha1.CellStatus {
	for i := range cells {
		if cells[i].Name == name {
			return &cells[i]
		}
	}
	return nil
}

// specDatabase is the database named name, nil when there is none.
func specDatabase(dbs []dbbenchv1alpha1.DatabaseSpec, name string) *dbbenchv1alpha1.DatabaseSpec {
	for i := range dbs {
		if dbs[i].Name == name {
			return &dbs[i]
		}
	}
	return nil
}

// regressedJudge is what the bisection judges: the step@threads and
// metrics that regressed on first's database and config variant, in the
// verdict's order. A bisection measures one database and config, so
// another's regressions would be judged on builds they were not seen on.
func regressedJudge(
	regs []dbbenchv1alpha1.RegressedStep,
	cells []dbbenchv1alpha1.CellStatus,
	first *dbbenchv1alpha1.CellStatus,
) (dbbenchv1alpha1.BisectionJudge, []dbbenchv1alpha1.RegressionMetric) {
	judge := dbbenchv1alpha1.BisectionJudge{}
	var metrics []dbbenchv1alpha1.RegressionMetric
	for _, r := range regs {
		c := statusCell(cells, r.Cell)
		if c == nil || c.Database != first.Database || c.Config != first.Config {
			continue
		}
		if !slices.Contains(judge.Steps, r.Step) {
			judge.Steps = append(judge.Steps, r.Step)
		}
		if !slices.Contains(judge.Threads, r.Threads) {
			judge.Threads = append(judge.Threads, r.Threads)
		}
		for _, m := range framework.RegressedMetrics(r) {
			if !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	return judge, metrics
}

// boundingRuns are the runs whose builds bound the change: around the
// change point for a ChangePoints verdict, else the last compared run and
// this one. goodRun is "" when the verdict compared against no run.
func boundingRuns(run string, top dbbenchv1alpha1.RegressedStep, comparedTo []string) (goodRun, badRun string) {
	switch {
	case top.Since != "":
		return top.LastBefore, top.Since
	case len(comparedTo) > 0:
		return comparedTo[len(comparedTo)-1], run
	}
	return "", run
}

// runManifest is the manifest of the suite's run name: cur for the run
// being judged, else the history's; nil when it has none.
func runManifest(run string, cur *results.Manifest, history []runverdict.Run, name string) *results.Manifest {
	if name == run {
		return cur
	}
	for i := range history {
		if history[i].Name == name {
			return history[i].Manifest
		}
	}
	return nil
}

// regressedBuild is a run's build of the regressed cell: its point, the
// digest and the image reference it ran.
type regressedBuild struct {
	point         dbbenchv1alpha1.BisectionPoint
	digest, image string
}

// runBuild is the build of cell that run name (with manifest m) ran, the
// good or bad end (side) of the bisection; given, regression.bisect's own
// point for that end, wins. It returns a message instead, naming the
// field that would settle it, when the run cannot say.
func runBuild(
	name, side string,
	given *dbbenchv1alpha1.BisectionPoint,
	m *results.Manifest,
	cell *dbbenchv1alpha1.CellStatus,
	db *dbbenchv1alpha1.DatabaseSpec,
) (regressedBuild, string) {
	if given != nil {
		return regressedBuild{point: *given}, ""
	}
	switch {
	case side == framework.SideGood && name == "":
		return regressedBuild{}, "the verdict names no compared run; give regression.bisect.good"
	case m == nil:
		return regressedBuild{}, fmt.Sprintf("the %s run %s has no readable results; give regression.bisect.%s", runRole[side], name, side)
	}
	mc := matchingCell(m, cell)
	if mc == nil {
		return regressedBuild{}, fmt.Sprintf("run %s has no cell of database %s, config %s; give regression.bisect.%s", name, cell.Database, cell.Config, side)
	}
	return regressedBuild{point: pointOfCell(db, mc.Version, mc.ImageDigest), digest: mc.ImageDigest, image: mc.Image}, ""
}

// buildsBetween places the good and bad builds in regression.bisect.builds
// and returns the list's own entries for them and the builds strictly
// between as the candidates, so that the rounds measure exactly the builds
// the user named; or a message when the list cannot bound a search.
func buildsBetween(
	builds []dbbenchv1alpha1.BisectionPoint,
	gb, bb regressedBuild,
	goodRun, badRun string,
) (good, bad dbbenchv1alpha1.BisectionPoint, candidates []dbbenchv1alpha1.BisectionPoint, why string) {
	gi := buildIndex(builds, gb.point, gb.digest, gb.image)
	bi := buildIndex(builds, bb.point, bb.digest, bb.image)
	switch {
	case gi < 0:
		return good, bad, nil, fmt.Sprintf("good build %s (run %s) is not in regression.bisect.builds", framework.PointName(gb.point), goodRun)
	case bi < 0:
		return good, bad, nil, fmt.Sprintf("bad build %s (run %s) is not in regression.bisect.builds", framework.PointName(bb.point), badRun)
	case bi <= gi:
		return good, bad, nil, fmt.Sprintf("bad build %s is not after good build %s in regression.bisect.builds", framework.PointName(bb.point), framework.PointName(gb.point))
	case bi == gi+1:
		return good, bad, nil, fmt.Sprintf(
			"%s is the build after %s in regression.bisect.builds: the suite's own runs localized the change, nothing to bisect",
			framework.PointName(builds[bi]),
			framework.PointName(builds[gi]),
		)
	}
	good, bad = builds[gi], builds[bi]
	candidates = append([]dbbenchv1alpha1.BisectionPoint(nil), builds[gi+1:bi]...)
	if len(candidates) > maxBisectionCandidates {
		return good, bad, nil, fmt.Sprintf(
			"%d builds between %s and %s in regression.bisect.builds: a bisection takes at most %d",
			len(candidates),
			framework.PointName(good),
			framework.PointName(bad),
			maxBisectionCandidates,
		)
	}
	return good, bad, candidates, ""
}

// runRole names the run whose build is a bisection's good or bad point.
var runRole = map[string]string{framework.SideGood: "compared", framework.SideBad: "regressed"}

// maxBisectionCandidates is spec.candidates' MaxItems.
const maxBisectionCandidates = 62

// buildIndex is the index in builds of a run's build: the entry whose
// version is the point's, or whose image is the point's or the reference
// the run ran (a tag per build), or — for an entry given by digest
// (repo@sha256:…) — whose digest the run recorded; -1 when none is.
func buildIndex(builds []dbbenchv1alpha1.BisectionPoint, p dbbenchv1alpha1.BisectionPoint, digest, image string) int {
	for i, b := range builds {
		switch {
		case b.Version != "" && b.Version == p.Version:
			return i
		case b.Image != "" && (b.Image == p.Image || b.Image == image):
			return i
		case b.Image != "" && digest != "" && strings.HasSuffix(b.Image, "@"+digest):
			return i
		}
	}
	return -1
}

// matchingCell is the manifest cell of a run's cell: the same name (a
// suite's runs share names), else the first of its database and config.
func matchingCell(m *results.Manifest, c *dbbenchv1alpha1.CellStatus) *results.ManifestCell {
	if mc, ok := m.Cell(c.Name); ok {
		return mc
	}
	for i := range m.Cells {
		if m.Cells[i].Database == c.Database && m.Cells[i].Config == c.Config {
			return &m.Cells[i]
		}
	}
	return nil
}

// pointOfCell is the bisection point of a build: the image by digest when
// one was recorded (a tag can move; a digest names the binary measured),
// else the version, substituted into the image template by the rounds.
func pointOfCell(db *dbbenchv1alpha1.DatabaseSpec, version, digest string) dbbenchv1alpha1.BisectionPoint {
	if digest == "" {
		return dbbenchv1alpha1.BisectionPoint{Version: version}
	}
	image := db.Image
	if image == "" {
		image = matrix.DefaultImage(db.Engine)
	}
	return dbbenchv1alpha1.BisectionPoint{Image: imageRepository(strings.ReplaceAll(image, "{version}", version)) + "@" + digest}
}

// imageRepository is an image reference without its tag and digest.
func imageRepository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// startBisection creates the bisection spec.regression.bisect asks for
// after a Regressed=True verdict and records its name in
// status.regression.bisection. It runs before the run is marked finished,
// so an error (returned, requeuing the run) is retried by the next pass,
// which judges again and finds the bisection by its name if it was made.
func (p *runPass) startBisection(ctx context.Context, cur *results.Manifest, history []runverdict.Run) error {
	reg := p.run.Spec.Regression
	st := p.run.Status.Regression
	if reg == nil || reg.Bisect == nil || st == nil ||
		!meta.IsStatusConditionTrue(p.run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed) {
		return nil
	}
	spec, why := regressionBisectionSpec(p.run, cur, history)
	if spec == nil {
		st.BisectionMessage = why
		p.Event(true, EventBisectionNotCreated, "Bisect", "No bisection: "+why)
		return nil
	}
	// A later run of the suite that finds the same change (a change point
	// stays in the window for lastRuns runs) points to the bisection an
	// earlier run made of it rather than measuring it again.
	if found, err := p.sameChangeBisection(ctx, spec); err != nil {
		return err
	} else if found != "" {
		st.Bisection, st.BisectionMessage = found, ""
		return nil
	}
	bis := &dbbenchv1alpha1.BenchmarkBisection{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.run.Namespace,
			Name:      regressionBisectionName(p.run.Name),
			Labels:    map[string]string{dbbenchv1alpha1.LabelRegressedRun: p.run.Name},
		},
		Spec: *spec,
	}
	if p.run.Spec.Suite != "" {
		bis.Labels[dbbenchv1alpha1.LabelSuite] = p.run.Spec.Suite
	}
	// Owned by the run: the bisection reads the run's spec on every pass
	// (runRef), so it cannot outlive it; deleting the run deletes the
	// search and its rounds (docs/bisect.md says how to keep them).
	if err := ctrl.SetControllerReference(p.run, bis, p.r.Scheme); err != nil {
		return fmt.Errorf("setting the owner of bisection %s: %w", bis.Name, err)
	}
	err := p.r.Create(ctx, bis)
	switch {
	case apierrors.IsAlreadyExists(err):
		var found dbbenchv1alpha1.BenchmarkBisection
		if err := p.r.Get(ctx, types.NamespacedName{Namespace: bis.Namespace, Name: bis.Name}, &found); err != nil {
			return fmt.Errorf("reading bisection %s: %w", bis.Name, err)
		}
		if !metav1.IsControlledBy(&found, p.run) {
			st.BisectionMessage = fmt.Sprintf("a BenchmarkBisection %s exists that this run does not own", bis.Name)
			p.Event(true, EventBisectionNotCreated, "Bisect", "No bisection: "+st.BisectionMessage)
			return nil
		}
		p.log.V(1).Info("Found the regression's bisection already created", "bisection", klog.KObj(bis))
	case err != nil:
		return fmt.Errorf("creating bisection %s: %w", bis.Name, err)
	default:
		p.log.Info("Created the regression's bisection", "bisection", klog.KObj(bis))
		p.DoneEvent(false, EventBisectionCreated, "Bisect", fmt.Sprintf("Created BenchmarkBisection %s: database %s, good %s, bad %s, %d candidates",
			bis.Name, spec.RunRef.Database, framework.PointName(spec.Good), framework.PointName(spec.Bad), len(spec.Candidates)))
	}
	st.Bisection, st.BisectionMessage = bis.Name, ""
	return nil
}

// sameChangeBisection is the name of a bisection that another run of the
// suite made between the same good and bad builds of the same database and
// config, "" when there is none.
func (p *runPass) sameChangeBisection(ctx context.Context, spec *dbbenchv1alpha1.BenchmarkBisectionSpec) (string, error) {
	if p.run.Spec.Suite == "" {
		return "", nil
	}
	var list dbbenchv1alpha1.BenchmarkBisectionList
	if err := p.r.List(ctx, &list, client.InNamespace(p.run.Namespace), client.MatchingLabels{dbbenchv1alpha1.LabelSuite: p.run.Spec.Suite}); err != nil {
		return "", fmt.Errorf("listing the suite's bisections: %w", err)
	}
	for _, b := range list.Items {
		ref := b.Spec.RunRef
		if b.Labels[dbbenchv1alpha1.LabelRegressedRun] == p.run.Name || ref == nil ||
			ref.Database != spec.RunRef.Database || ref.Config != spec.RunRef.Config {
			continue
		}
		if framework.PointName(b.Spec.Good) == framework.PointName(spec.Good) && framework.PointName(b.Spec.Bad) == framework.PointName(spec.Bad) {
			return b.Name, nil
		}
	}
	return "", nil
}
