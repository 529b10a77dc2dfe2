package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
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
// largest regression), good the compared run's build of it, bad this
// run's, judged on the step@threads that regressed there. It returns a
// message instead when no search can be made.
func regressionBisectionSpec(run *dbbenchv1alpha1.BenchmarkRun, cur *results.Manifest, history []suiteRun) (*dbbenchv1alpha1.BenchmarkBisectionSpec, string) {
	rb := run.Spec.Regression.Bisect
	st := run.Status.Regression
	if len(st.Regressed) == 0 {
		return nil, "the verdict names no regressed step"
	}
	cellOf := func(name string) *dbbenchv1alpha1.CellStatus {
		for i := range run.Status.Cells {
			if run.Status.Cells[i].Name == name {
				return &run.Status.Cells[i]
			}
		}
		return nil
	}
	first := cellOf(st.Regressed[0].Cell)
	if first == nil {
		return nil, fmt.Sprintf("regressed cell %s is not in status.cells", st.Regressed[0].Cell)
	}
	var db *dbbenchv1alpha1.DatabaseSpec
	for i := range run.Spec.Databases {
		if run.Spec.Databases[i].Name == first.Database {
			db = &run.Spec.Databases[i]
		}
	}
	if db == nil {
		return nil, fmt.Sprintf("regressed database %s is not in spec.databases", first.Database)
	}
	// The judged step@threads are those that regressed on this database
	// and config variant, in the verdict's order.
	judge := dbbenchv1alpha1.BisectionJudge{}
	seenStep, seenThreads := map[string]bool{}, map[int32]bool{}
	for _, r := range st.Regressed {
		c := cellOf(r.Cell)
		if c == nil || c.Database != first.Database || c.Config != first.Config {
			continue
		}
		if !seenStep[r.Step] {
			seenStep[r.Step] = true
			judge.Steps = append(judge.Steps, r.Step)
		}
		if !seenThreads[r.Threads] {
			seenThreads[r.Threads] = true
			judge.Threads = append(judge.Threads, r.Threads)
		}
	}

	bad := pointOfCell(db, first.Version, manifestDigest(cur, first))
	if rb.Bad != nil {
		bad = *rb.Bad
	}
	var good dbbenchv1alpha1.BisectionPoint
	if rb.Good != nil {
		good = *rb.Good
	} else {
		if len(st.ComparedTo) == 0 {
			return nil, "the verdict names no compared run; give regression.bisect.good"
		}
		base := st.ComparedTo[len(st.ComparedTo)-1]
		var baseManifest *results.Manifest
		for i := range history {
			if history[i].name == base {
				baseManifest = history[i].manifest
			}
		}
		if baseManifest == nil {
			return nil, fmt.Sprintf("the compared run %s has no readable results; give regression.bisect.good", base)
		}
		mc := matchingCell(baseManifest, first)
		if mc == nil {
			return nil, fmt.Sprintf("the compared run %s has no cell of database %s, config %s; give regression.bisect.good", base, first.Database, first.Config)
		}
		good = pointOfCell(db, mc.Version, mc.ImageDigest)
	}
	if pointName(good) == pointName(bad) {
		return nil, fmt.Sprintf("good and bad are both %s (no image digest was recorded to tell the builds apart); give regression.bisect.good and bad", pointName(good))
	}
	return &dbbenchv1alpha1.BenchmarkBisectionSpec{
		RunRef:      &dbbenchv1alpha1.BisectionRunRef{Name: run.Name, Database: first.Database, Config: first.Config},
		Good:        good,
		Bad:         bad,
		Candidates:  append([]dbbenchv1alpha1.BisectionPoint(nil), rb.Candidates...),
		Judge:       judge,
		Parallelism: max(rb.Parallelism, 1),
		Repeats:     max(rb.Repeats, 1),
		MaxCells:    max(rb.MaxCells, 2),
	}, ""
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

// manifestDigest is the image digest the manifest recorded for a cell.
func manifestDigest(m *results.Manifest, c *dbbenchv1alpha1.CellStatus) string {
	if m == nil {
		return ""
	}
	if mc := matchingCell(m, c); mc != nil {
		return mc.ImageDigest
	}
	return ""
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
func (p *runPass) startBisection(ctx context.Context, cur *results.Manifest, history []suiteRun) error {
	reg := p.run.Spec.Regression
	st := p.run.Status.Regression
	if reg == nil || reg.Bisect == nil || st == nil ||
		!meta.IsStatusConditionTrue(p.run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed) {
		return nil
	}
	spec, why := regressionBisectionSpec(p.run, cur, history)
	if spec == nil {
		st.BisectionMessage = why
		p.event(true, EventBisectionNotCreated, "Bisect", "No bisection: "+why)
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
			p.event(true, EventBisectionNotCreated, "Bisect", "No bisection: "+st.BisectionMessage)
			return nil
		}
		p.log.V(1).Info("Found the regression's bisection already created", "bisection", klog.KObj(bis))
	case err != nil:
		return fmt.Errorf("creating bisection %s: %w", bis.Name, err)
	default:
		p.log.Info("Created the regression's bisection", "bisection", klog.KObj(bis))
		p.event(false, EventBisectionCreated, "Bisect", fmt.Sprintf("Created BenchmarkBisection %s: database %s, good %s, bad %s, %d candidates",
			bis.Name, spec.RunRef.Database, pointName(spec.Good), pointName(spec.Bad), len(spec.Candidates)))
	}
	st.Bisection, st.BisectionMessage = bis.Name, ""
	return nil
}
