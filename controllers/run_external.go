package controllers

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

// externalClientJob is attempt `attempt` of an external cell's client Job,
// annotated like a database pod with why the attempt before it failed (for
// adoptAttempts after a lost status write).
func (p *runPass) externalClientJob(c matrix.Cell, attempt int32, cs *dbbenchv1alpha1.CellStatus) *batchv1.Job {
	job := specs.ClientJob(p.run, c, attempt, specs.AgentImage(p.run, p.r.AgentImage), c.Database.External.Host, false)
	if attempt > 1 && cs.Message != "" {
		if job.Annotations == nil {
			job.Annotations = map[string]string{}
		}
		job.Annotations[dbbenchv1alpha1.AnnotationRetryOf] = cs.Message
		if cs.Reason != "" {
			job.Annotations[dbbenchv1alpha1.AnnotationRetryReason] = string(cs.Reason)
		}
	}
	return job
}

// progressExternal follows an external cell's attempt: its client Job alone
// decides. The agent waits for the server itself (timeouts.databaseReady),
// so the cell is Running as soon as its Job exists.
func (p *runPass) progressExternal(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus, job *batchv1.Job) error {
	if job == nil {
		if err := p.create(ctx, p.externalClientJob(c, cs.Attempts, cs)); err != nil {
			return err
		}
	}
	cs.Phase = dbbenchv1alpha1.CellRunning
	limit := p.attemptTimeout(c)
	started := cs.AttemptStartTime.Time
	if f := cellTimeoutFailure(cs.Attempts, p.now.Sub(started), limit); f != nil {
		return p.attemptFailed(ctx, c, cs, f)
	}
	p.requeue.after(started.Add(limit).Sub(p.now))
	return nil
}

// externalAttemptObjects lists an external cell's attempt records for
// adoptAttempts: its client Jobs (it has no database pods).
func (p *runPass) externalAttemptObjects(c matrix.Cell) []client.Object {
	var out []client.Object
	for _, job := range p.kids.jobs {
		if job.Labels[dbbenchv1alpha1.LabelCell] == c.ObjectBase && job.Labels[dbbenchv1alpha1.LabelRole] == specs.RoleClient {
			out = append(out, job)
		}
	}
	return out
}

// attemptOf is the attempt label of a cell's child, 0 when absent.
func attemptOf(obj metav1.Object) int32 {
	n, err := strconv.Atoi(obj.GetLabels()[dbbenchv1alpha1.LabelAttempt])
	if err != nil {
		return 0
	}
	return int32(n)
}
