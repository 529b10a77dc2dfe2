package benchmarkrun

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

func (p *runPass) createAgentRBAC(ctx context.Context, cells []matrix.Cell) error {
	sa, role, rb := specs.AgentRBAC(p.run, cells)
	// A RoleBinding may name a Role that does not exist yet.
	return p.createTogether(ctx, []client.Object{sa, role, rb})
}

// adoptAttempts makes the status count the attempts whose children exist:
// if a manager created attempt N+1 and died before recording it, the next
// manager continues with N+1 rather than creating a duplicate.
func (p *runPass) adoptAttempts(t cellTarget, cs *dbbenchv1alpha1.CellStatus) {
	if cs.Phase == dbbenchv1alpha1.CellSucceeded || cs.Phase == dbbenchv1alpha1.CellFailed {
		return
	}
	c := t.cell()
	for _, pod := range t.attempts() {
		n := attemptOf(pod)
		if n > cs.Attempts {
			if cs.Attempts > 0 {
				p.run.Status.RetriesUsed += n - cs.Attempts
			}
			if cs.Phase == dbbenchv1alpha1.CellPending {
				// The pass that started the cell lost its status write:
				// record what startCell would have, the results
				// ConfigMap included (readers of the status find the
				// cell's results by it).
				created := pod.GetCreationTimestamp()
				cs.StartTime = &created
				cs.ResultConfigMap = specs.ResultConfigMapName(c)
			}
			// A newer attempt starts from the beginning: its database must
			// run before its client is created.
			cs.Attempts = n
			cs.AttemptStartTime = &metav1.Time{Time: p.now}
			cs.Phase = dbbenchv1alpha1.CellStarting
			cs.CurrentStep, cs.StepsDone, cs.Node, cs.ImageDigest = "", 0, "", ""
			// The pass that created the pod failed to record why; the pod
			// says.
			if why := pod.GetAnnotations()[dbbenchv1alpha1.AnnotationRetryOf]; why != "" {
				cs.Message = why
				cs.Reason = dbbenchv1alpha1.FailureReason(pod.GetAnnotations()[dbbenchv1alpha1.AnnotationRetryReason])
				cs.RetryReasons = append(cs.RetryReasons, cs.Reason)
				p.Event(true, EventCellRetried, "Retry", fmt.Sprintf("Retrying cell %s (attempt %d): %s", c.Name, n, why))
			}
		}
	}
}

// startCell creates the cell's plan and results ConfigMaps and its
// target's own children (own: the first attempt's), and makes the cell
// Starting with its first attempt.
func (p *runPass) startCell(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus, own []client.Object) error {
	serverConfig, scripts, ferr := p.cellInputs(ctx, c)
	if ferr != nil {
		p.failCell(ctx, c, cs, ferr)
		return nil
	}
	cm, err := specs.ConfigMap(p.run, c, specs.Plan(p.run, c, 1, p.steps), serverConfig, scripts)
	if err != nil {
		return err
	}
	// A cell's database pod exists after one round trip.
	if err := p.createTogether(ctx, append([]client.Object{cm, specs.ResultConfigMap(p.run, c)}, own...)); err != nil {
		return err
	}
	cs.Attempts = 1
	cs.Phase = dbbenchv1alpha1.CellStarting
	if cs.StartTime == nil {
		// A templated cell started with its object.
		cs.StartTime = &metav1.Time{Time: p.now}
	}
	cs.AttemptStartTime = &metav1.Time{Time: p.now}
	cs.ResultConfigMap = specs.ResultConfigMapName(c)
	p.requeue.after(p.run.Spec.Timeouts.DatabaseReadyTimeout())
	return nil
}

// cellInputs reads the config variant's text and the custom steps' scripts
// (configInput classifies what a read returns).
func (p *runPass) cellInputs(ctx context.Context, c matrix.Cell) (string, map[string]string, *failure) {
	read := func(field string, ref corev1.ConfigMapKeySelector) (string, *failure) {
		var cm corev1.ConfigMap
		err := p.r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.run.Namespace, Name: ref.Name}, &cm)
		return configInput(field, p.run.Namespace, ref, &cm, err)
	}
	var server string
	switch {
	case c.Config.Inline != nil:
		server = *c.Config.Inline
	case c.Config.ConfigMapKeyRef != nil:
		text, f := read(fmt.Sprintf("databases[%s].configs[%s].configMapKeyRef", c.Database.Name, c.Config.Name), *c.Config.ConfigMapKeyRef)
		if f != nil {
			return "", nil, f
		}
		server = text
	}
	scripts := map[string]string{}
	for _, cs := range p.run.Spec.Workload.CustomSteps {
		text, f := read(fmt.Sprintf("workload.customSteps[%s].script", cs.Name), cs.Script)
		if f != nil {
			return "", nil, f
		}
		scripts[cs.Name] = text
	}
	return server, scripts, nil
}

// collectorImage is the image of the hardware-metrics sidecar (the agent's,
// which holds the collector), or empty when the operator runs without one.
func (p *runPass) collectorImage() string {
	if p.r.DisableCollector {
		return ""
	}
	return specs.AgentImage(p.run, p.r.AgentImage)
}

// databasePod builds a cell's database pod, pinned to its block's node in
// a blocked run (runPass.pins), pulling its image through the operator's
// database image registry when one is set.
func (p *runPass) databasePod(c matrix.Cell, attempt int32) *corev1.Pod {
	pod := specs.DatabasePod(p.run, c, attempt, hasConfig(c), p.collectorImage())
	if node := p.pins[c.Name]; node != "" {
		specs.PinToNode(pod, node)
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == specs.DatabaseContainer {
			pod.Spec.Containers[i].Image = specs.MirrorImage(pod.Spec.Containers[i].Image, p.r.DatabaseImageRegistry)
		}
	}
	return pod
}

func hasConfig(c matrix.Cell) bool {
	return (c.Config.Inline != nil && *c.Config.Inline != "") || c.Config.ConfigMapKeyRef != nil
}

// progressClient follows the current attempt's client Job, the part every
// target shares, and reports whether it ended the attempt: a finished
// client Job decides first (once the agent is done, what happens to the
// database pod, which this controller deletes itself, no longer matters).
// Otherwise it returns what the target's progress needs.
func (p *runPass) progressClient(ctx context.Context, t cellTarget, cs *dbbenchv1alpha1.CellStatus) (attemptState, bool, error) {
	c := t.cell()
	attempt := cs.Attempts
	job := p.kids.jobs[specs.ClientJobName(c, attempt)]
	if cs.AttemptStartTime == nil {
		cs.AttemptStartTime = &metav1.Time{Time: p.now}
	}
	a := attemptState{job: job, started: cs.AttemptStartTime.Time}
	a.prog = p.progress(c, attempt)
	if job != nil && (jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobFailed)) && !terminal(a.prog) {
		// The Job and the results ConfigMap come from different
		// informers: the Job's end can arrive before the agent's last
		// write, made before it exited. Judge the attempt on the
		// ConfigMap as the API server has it, or a completed attempt
		// would have "no results" and a benchmark failure would be
		// retried as the infrastructure's.
		if err := p.refreshResult(ctx, c); err != nil {
			return a, true, err
		}
		a.prog = p.progress(c, attempt)
	}
	if prog := a.prog; prog != nil {
		cs.CurrentStep = prog.Step
		cs.StepsDone = int32(prog.StepsDone)
		if prog.StepsTotal > 0 {
			cs.StepsTotal = int32(prog.StepsTotal)
		}
	}
	done, f := clientOutcome(a.prog, p.hasDocument(c), job, clientPodsOf(p.kids.pods, c.ObjectBase, attempt))
	if f != nil {
		return a, true, p.attemptFailed(ctx, t, cs, f)
	}
	if done {
		q, starved := p.attemptQuality(c)
		if starved != nil && p.canRetry(cs) {
			return a, true, p.attemptFailed(ctx, t, cs, starved)
		}
		cs.Quality = q
		p.succeedCell(ctx, t, cs)
		return a, true, nil
	}
	return a, false, nil
}

// attemptDeadline fails the attempt once it has run longer than
// attemptTimeout, and requeues the run for that moment otherwise.
func (p *runPass) attemptDeadline(ctx context.Context, t cellTarget, cs *dbbenchv1alpha1.CellStatus, started time.Time) error {
	limit := p.attemptTimeout(t.cell())
	if f := cellTimeoutFailure(cs.Attempts, p.now.Sub(started), limit); f != nil {
		return p.attemptFailed(ctx, t, cs, f)
	}
	p.requeue.after(started.Add(limit).Sub(p.now))
	return nil
}

// attemptTimeout bounds an attempt of c: the cell timeout, or for a
// pre-flight pair (no load, no steps) the time for its pod to run and for
// the agent to reach the server, each bounded by timeouts.databaseReady, and
// five minutes for the check.
func (p *runPass) attemptTimeout(c matrix.Cell) time.Duration {
	if c.Preflight {
		return 2*p.run.Spec.Timeouts.DatabaseReadyTimeout() + 5*time.Minute
	}
	return p.cellTimeout()
}

// cellTimeout is timeouts.cell, or twice the configured step time plus an
// hour for the load and flush.
func (p *runPass) cellTimeout() time.Duration {
	if t := p.run.Spec.Timeouts.Cell; t != nil {
		return t.Duration
	}
	w := p.run.Spec.Workload
	threads := max(len(w.Threads), 1)
	warm := int64(w.Warmup())
	var secs int64
	for _, s := range p.steps {
		switch {
		case s == "tpcc" && w.TPCC != nil:
			secs += (int64(w.TPCC.DurationSeconds) + warm) * int64(max(len(w.TPCC.Threads), threads))
		default:
			secs += (int64(max(w.ReadSeconds, w.WriteSeconds)) + warm) * int64(threads)
		}
	}
	return 2*time.Duration(secs)*time.Second + time.Hour
}

// progress decodes the agent's progress record of this attempt, if any.
func (p *runPass) progress(c matrix.Cell, attempt int32) *agentapi.Progress {
	raw, ok := p.resultData(c, agentapi.ResultKeyProgress)
	if !ok {
		return nil
	}
	var prog agentapi.Progress
	if err := json.Unmarshal([]byte(raw), &prog); err != nil || prog.Attempt != int(attempt) {
		return nil
	}
	return &prog
}

// terminal reports an agent's record of an attempt that ended.
func terminal(prog *agentapi.Progress) bool {
	return prog != nil && (prog.Phase == agentapi.PhaseDone || prog.Phase == agentapi.PhaseFailed)
}

// refreshResult reads the cell's results ConfigMap from the API server into
// the pass's children.
func (p *runPass) refreshResult(ctx context.Context, c matrix.Cell) error {
	var cm corev1.ConfigMap
	err := p.r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.run.Namespace, Name: specs.ResultConfigMapName(c)}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading results ConfigMap %s: %w", specs.ResultConfigMapName(c), err)
	case metav1.IsControlledBy(&cm, p.run):
		p.kids.results[cm.Name] = &cm
	}
	return nil
}

// hasDocument reports whether the cell's result ConfigMap holds a results
// document.
func (p *runPass) hasDocument(c matrix.Cell) bool {
	raw, _ := p.resultData(c, agentapi.ResultKeyDocument)
	return raw != ""
}

// resultData is the value under key of the cell's result ConfigMap, as
// the cache holds it; false when the ConfigMap or the key is missing.
func (p *runPass) resultData(c matrix.Cell, key string) (string, bool) {
	cm := p.kids.results[specs.ResultConfigMapName(c)]
	if cm == nil {
		return "", false
	}
	raw, ok := cm.Data[key]
	return raw, ok
}

// attemptFailed retries an infrastructure failure while the budget lasts,
// and fails the cell otherwise.
func (p *runPass) attemptFailed(ctx context.Context, t cellTarget, cs *dbbenchv1alpha1.CellStatus, f *failure) error {
	c := t.cell()
	st := &p.run.Status
	if !f.retried() {
		p.failCell(ctx, c, cs, f)
		return nil
	}
	if !p.canRetry(cs) {
		f.message = fmt.Sprintf("%s (retry budget exhausted after %d attempts, %d retries used by the run)", f.message, cs.Attempts, st.RetriesUsed)
		p.failCell(ctx, c, cs, f)
		return nil
	}
	if err := p.removeAttempt(ctx, c, cs.Attempts); err != nil {
		return err
	}
	cs.Attempts++
	st.RetriesUsed++
	cs.AttemptStartTime = &metav1.Time{Time: p.now}
	cs.Phase = dbbenchv1alpha1.CellStarting
	cs.CurrentStep, cs.StepsDone, cs.Node, cs.ImageDigest, cs.Quality = "", 0, "", "", nil
	cs.Reason = f.reason
	cs.RetryReasons = append(cs.RetryReasons, f.reason)
	cs.Message = fmt.Sprintf("attempt %d: %s: %s", cs.Attempts-1, f.reason, f.message)
	reason := string(f.reason)
	p.metrics = append(p.metrics, func() { RecordRetry(reason) })
	p.Event(true, EventCellRetried, "Retry", fmt.Sprintf("Retrying cell %s (attempt %d): %s: %s", c.Name, cs.Attempts, f.reason, f.message))
	return t.createAttempt(ctx, cs.Attempts, cs)
}

// canRetry reports whether spec.retry allows another attempt of the cell.
func (p *runPass) canRetry(cs *dbbenchv1alpha1.CellStatus) bool {
	retry := p.run.Spec.Retry
	return cs.Attempts < retry.AttemptsPerCell() && p.run.Status.RetriesUsed < retry.RetriesPerRun()
}

// attemptQuality is resultQuality of the finished attempt's document, as
// the cache holds it; nothing when it cannot be read (the manifest
// notes an unreadable document).
func (p *runPass) attemptQuality(c matrix.Cell) (*dbbenchv1alpha1.CellQuality, *failure) {
	raw, ok := p.resultData(c, agentapi.ResultKeyDocument)
	if !ok || raw == "" {
		return nil, nil
	}
	doc, err := results.Unmarshal([]byte(raw))
	if err != nil {
		p.log.Info("Skipped the quality of an unreadable results document", "cell", c.Name, "error", err.Error())
		return nil, nil
	}
	return resultQuality(doc)
}

// removeAttempt deletes an attempt's database pod, client Job and claim.
func (p *runPass) removeAttempt(ctx context.Context, c matrix.Cell, attempt int32) error {
	if pod := p.kids.pods[specs.DatabasePodName(c, attempt)]; pod != nil {
		if err := p.remove(ctx, pod); err != nil {
			return err
		}
	}
	if job := p.kids.jobs[specs.ClientJobName(c, attempt)]; job != nil {
		if err := p.remove(ctx, job); err != nil {
			return err
		}
	}
	for _, pvc := range specs.Claims(p.run, c, attempt) {
		if err := p.remove(ctx, pvc); err != nil {
			return err
		}
	}
	return nil
}

func (p *runPass) succeedCell(ctx context.Context, t cellTarget, cs *dbbenchv1alpha1.CellStatus) {
	c := t.cell()
	cs.Phase = dbbenchv1alpha1.CellSucceeded
	cs.CompletionTime = &metav1.Time{Time: p.now}
	cs.CurrentStep = ""
	cs.StepsDone = cs.StepsTotal
	if !c.Preflight {
		// A pair's end is announced with the pre-flight's.
		p.recordFinished(cs, OutcomeSucceeded)
		p.Event(false, EventCellSucceeded, "Complete", fmt.Sprintf("Cell %s finished after %d attempt(s)", c.Name, cs.Attempts))
		if q := cs.Quality; q != nil && q.Invalid > 0 {
			p.Event(true, EventStepsInvalid, "Complete", fmt.Sprintf("Cell %s has %d invalid step result(s), flagged in its results and left out of verdicts: %s",
				c.Name, q.Invalid, strings.Join(q.InvalidSteps, "; ")))
		}
	}
	p.endCell(ctx, t, cs)
}

func (p *runPass) failCell(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus, f *failure) {
	cs.Phase = dbbenchv1alpha1.CellFailed
	cs.CompletionTime = &metav1.Time{Time: p.now}
	cs.Reason = f.reason
	cs.Message = fmt.Sprintf("%s: %s", f.reason, f.message)
	if !c.Preflight {
		p.recordFinished(cs, OutcomeFailed)
		p.Event(true, EventCellFailed, "Fail", fmt.Sprintf("Cell %s failed: %s", c.Name, cs.Message))
	}
	// The database pod may be the only record of why the attempt failed
	// (an eviction): it goes on a pass after a status write recorded the
	// failure (cellTarget.release, from stepCells or releaseFinished).
	// Deleted now, a lost status write would leave the next pass without a
	// pod and without a reason, and it would start the attempt again.
	p.keepServerLog(ctx, c, cs, p.kids.pods[specs.DatabasePodName(c, cs.Attempts)])
}

func (p *runPass) recordFinished(cs *dbbenchv1alpha1.CellStatus, outcome string) {
	var d time.Duration
	if cs.StartTime != nil {
		d = p.now.Sub(cs.StartTime.Time)
	}
	p.metrics = append(p.metrics, func() { RecordCellFinished(outcome, d) })
}

// endCell keeps what the cell's database pod alone has (its log), once,
// when the cell ends, and releases the cell: its target frees the node (the
// database pods go; the Job, with the agent's logs, and the results stay
// until the run is deleted).
func (p *runPass) endCell(ctx context.Context, t cellTarget, cs *dbbenchv1alpha1.CellStatus) {
	c := t.cell()
	p.keepServerLog(ctx, c, cs, p.kids.pods[specs.DatabasePodName(c, cs.Attempts)])
	t.release(ctx, cs) //nolint:errcheck // retried by the next pass
}

// randomPassword returns 24 URL-safe characters (144 random bits).
func randomPassword() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// imageDigestOf is the digest ("sha256:…") of the image a pod's container
// runs, from its status.containerStatuses[].imageID ("repo@sha256:…", or
// "sha256:…" for an image without a repository digest); "" before the
// runtime reports it.
func imageDigestOf(pod *corev1.Pod, container string) string {
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name != container || st.ImageID == "" {
			continue
		}
		id := st.ImageID
		if i := strings.LastIndex(id, "@"); i >= 0 {
			id = id[i+1:]
		}
		id = strings.TrimPrefix(id, "docker-pullable://")
		if strings.HasPrefix(id, "sha256:") {
			return id
		}
	}
	return ""
}
