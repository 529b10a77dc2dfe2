package benchmarkrun

import (
	"context"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// An external target's cell (databases[].external) has no database pod,
// Service, PVC, cell Secret or config variant: its attempt is its client
// Job alone, which connects to the user's endpoint with the user's Secret.
// Its children are the config ConfigMap (the plan), the results ConfigMap
// and one client Job per attempt.

// externalTarget is an external cell: a cell of databases[].external, or a
// templated cell whose object is ready (templatedTarget).
type externalTarget struct {
	p *runPass
	c matrix.Cell
}

func (t externalTarget) cell() matrix.Cell { return t.c }

// start creates the plan and results ConfigMaps and the first attempt's
// client Job, which uses the user's Secret.
func (t externalTarget) start(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	return t.p.startCell(ctx, t.c, cs, []client.Object{t.clientJob(1, cs)})
}

// clientJob is attempt `attempt` of the cell's client Job, annotated like a
// database pod with why the attempt before it failed.
func (t externalTarget) clientJob(attempt int32, cs *dbbenchv1alpha1.CellStatus) *batchv1.Job {
	p := t.p
	job := specs.ClientJob(p.run, t.c, attempt, specs.AgentImage(p.run, p.r.AgentImage), t.c.Database.External.Host, false)
	retryAnnotations(job, attempt, cs)
	return job
}

// createAttempt: an external attempt starts with its client.
func (t externalTarget) createAttempt(ctx context.Context, attempt int32, cs *dbbenchv1alpha1.CellStatus) error {
	return t.p.create(ctx, t.clientJob(attempt, cs))
}

// progress follows an external cell's attempt: its client Job alone
// decides (progressClient). The agent waits for the server itself
// (timeouts.databaseReady), so the cell is Running as soon as its Job
// exists.
func (t externalTarget) progress(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	p := t.p
	a, ended, err := p.progressClient(ctx, t, cs)
	if ended || err != nil {
		return err
	}
	if a.job == nil {
		if err := t.createAttempt(ctx, cs.Attempts, cs); err != nil {
			return err
		}
	}
	cs.Phase = dbbenchv1alpha1.CellRunning
	return p.attemptDeadline(ctx, t, cs, a.started)
}

// attempts are the cell's client Jobs (it has no database pods).
func (t externalTarget) attempts() []client.Object {
	return cellChildren(t.p.kids.jobs, t.c.ObjectBase, specs.RoleClient)
}

// release: an external cell holds no node of its own; its Jobs and results
// stay until the run is deleted.
func (externalTarget) release(context.Context, *dbbenchv1alpha1.CellStatus) error { return nil }

// attemptOf is the attempt label of a cell's child, 0 when absent.
func attemptOf(obj metav1.Object) int32 {
	n, err := strconv.Atoi(obj.GetLabels()[dbbenchv1alpha1.LabelAttempt])
	if err != nil {
		return 0
	}
	return int32(n)
}
