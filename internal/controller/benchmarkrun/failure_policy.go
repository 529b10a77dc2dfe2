package benchmarkrun

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/serverlog"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The failure policy of a cell attempt: pure functions from what the
// controller reads (pods, Jobs, the agent's progress record, ConfigMap
// reads) to a named reason, and the class of each reason. They take no
// client, so failure_policy_test.go covers every reason without a cluster.

// failureClasses is the class of every reason an attempt can end with:
// infrastructure failures are retried within spec.retry, benchmark failures
// fail the cell at once. The metric label set of dbbench_cell_retries_total
// is derived from it (RetryReasons), so a new reason is counted under its
// own name as soon as it is given a class here.
var failureClasses = map[dbbenchv1alpha1.FailureReason]agentapi.FailureClass{
	dbbenchv1alpha1.ReasonDatabasePodDeleted: agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonDatabaseEvicted:    agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonNodeLost:           agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonDatabasePodFailed:  agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonDatabaseNotReady:   agentapi.FailureInfrastructure,
	// A claim of an existing class that does not bind is the
	// provisioner's; a retry makes a fresh claim.
	dbbenchv1alpha1.ReasonVolumeClaimNotBound: agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonCellTimeout:         agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonClientEvicted:       agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonClientOOMKilled:     agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonAgentFailed:         agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonClientFailed:        agentapi.FailureInfrastructure,
	dbbenchv1alpha1.ReasonAPIError:            agentapi.FailureInfrastructure,
	// A client that did not run through a step's seconds is the
	// machine's doing (resultQuality); the budget spent, the cell
	// succeeds with the result flagged instead of failing.
	dbbenchv1alpha1.ReasonClientStarved: agentapi.FailureInfrastructure,

	dbbenchv1alpha1.ReasonBenchmarkFailed:     agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonNoResults:           agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonDatabaseCrashed:     agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonConfigRejected:      agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonDatabaseStartFailed: agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonConfigNotApplied:    agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonInvalidImage:        agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonConfigMissing:       agentapi.FailureBenchmark,
	// A templated object that is not ready within its own timeout, or
	// that the API server refuses, would be no better on a retry: its
	// operator or the template needs a person.
	dbbenchv1alpha1.ReasonTemplateNotReady: agentapi.FailureBenchmark,
	dbbenchv1alpha1.ReasonTemplateRejected: agentapi.FailureBenchmark,
	// A class that does not exist will not exist on a retry either.
	dbbenchv1alpha1.ReasonStorageClassNotFound: agentapi.FailureBenchmark,
}

// retriedReasons lists the infrastructure reasons, sorted.
func retriedReasons() []string {
	var out []string
	for r, class := range failureClasses {
		if class == agentapi.FailureInfrastructure {
			out = append(out, string(r))
		}
	}
	slices.Sort(out)
	return out
}

// failure is why an attempt of a cell ended badly.
type failure struct {
	reason  dbbenchv1alpha1.FailureReason
	message string
}

func fail(reason dbbenchv1alpha1.FailureReason, format string, a ...any) *failure {
	return &failure{reason: reason, message: fmt.Sprintf(format, a...)}
}

// retried reports whether the attempt is retried (within the budget). A
// reason without a class is not: failing a cell shows the gap, retrying
// could hide it behind the budget.
func (f *failure) retried() bool {
	return failureClasses[f.reason] == agentapi.FailureInfrastructure
}

// configInput is the text of key ref.Key from the ConfigMap a Get returned
// (cm, err) for field. A missing ConfigMap or key is the spec's fault, not
// the infrastructure's.
func configInput(field string, ns string, ref corev1.ConfigMapKeySelector, cm *corev1.ConfigMap, err error) (string, *failure) {
	if apierrors.IsNotFound(err) {
		return "", fail(dbbenchv1alpha1.ReasonConfigMissing, "%s: ConfigMap %s/%s not found", field, ns, ref.Name)
	}
	if err != nil {
		return "", fail(dbbenchv1alpha1.ReasonAPIError, "%s: reading ConfigMap %s: %v", field, ref.Name, err)
	}
	text, ok := cm.Data[ref.Key]
	if !ok {
		return "", fail(dbbenchv1alpha1.ReasonConfigMissing, "%s: ConfigMap %s has no key %q", field, ref.Name, ref.Key)
	}
	return text, nil
}

// clientOutcome reads the end of an attempt from the agent's side: its
// progress record (prog, of this attempt, or nil), whether the result
// ConfigMap holds a document, the client Job (or nil) and the Job's pods.
// It returns done when the cell succeeded, a failure when the attempt
// failed, and neither while the agent still runs.
//
// The agent's own record of a completed document ends the cell: waiting for
// the Job controller to notice the pod's exit would keep the node (and the
// next cell) idle for seconds.
func clientOutcome(prog *agentapi.Progress, hasDocument bool, job *batchv1.Job, clientPods []*corev1.Pod) (done bool, f *failure) {
	agentDone := prog != nil && prog.Phase == agentapi.PhaseDone
	if agentDone && hasDocument {
		return true, nil
	}
	if job == nil {
		return false, nil
	}
	// A lost client node ends the attempt at once, unless the agent
	// finished: its document may already be written, and a later pass
	// reads it (or clientFailure names the lost node once the Job fails).
	if f := clientNodeLost(clientPods); f != nil && !agentDone {
		return false, f
	}
	switch {
	case jobCondition(job, batchv1.JobComplete):
		if !agentDone {
			return false, fail(dbbenchv1alpha1.ReasonNoResults, "agent %s finished without reporting a completed results document", job.Name)
		}
		return true, nil
	case jobCondition(job, batchv1.JobFailed):
		return false, clientFailure(job, prog, clientPods)
	}
	return false, nil
}

// clientFailure classifies a failed client Job: by the agent's own report
// when it made one, else by how its pod ended.
func clientFailure(job *batchv1.Job, prog *agentapi.Progress, clientPods []*corev1.Pod) *failure {
	if prog != nil && prog.Phase == agentapi.PhaseFailed {
		if prog.Reason == agentapi.FailureConfigNotApplied {
			return fail(dbbenchv1alpha1.ReasonConfigNotApplied, "%s", prog.Error)
		}
		if prog.FailureClass == agentapi.FailureBenchmark {
			return fail(dbbenchv1alpha1.ReasonBenchmarkFailed, "step %s: %s", prog.Step, prog.Error)
		}
		return fail(dbbenchv1alpha1.ReasonAgentFailed, "%s", prog.Error)
	}
	if f := clientNodeLost(clientPods); f != nil {
		return f
	}
	for _, pod := range clientPods {
		if disrupted(pod) {
			return fail(dbbenchv1alpha1.ReasonClientEvicted, "client pod %s was evicted or disrupted: %s", pod.Name, pod.Status.Message)
		}
		for _, st := range pod.Status.ContainerStatuses {
			t := st.State.Terminated
			if t == nil {
				continue
			}
			switch {
			case t.Reason == containerReasonOOMKilled:
				return fail(dbbenchv1alpha1.ReasonClientOOMKilled, "client pod %s ran out of memory", pod.Name)
			case t.ExitCode == agentapi.ExitConfigNotApplied:
				return fail(dbbenchv1alpha1.ReasonConfigNotApplied, "the server does not run with the config variant's settings: %s", lastLine(t.Message))
			case t.ExitCode == agentapi.ExitBenchmarkFailed || t.ExitCode == agentapi.ExitInvalidTask:
				return fail(dbbenchv1alpha1.ReasonBenchmarkFailed, "agent exited with code %d: %s", t.ExitCode, lastLine(t.Message))
			default:
				return fail(dbbenchv1alpha1.ReasonAgentFailed, "agent exited with code %d: %s", t.ExitCode, lastLine(t.Message))
			}
		}
	}
	return fail(dbbenchv1alpha1.ReasonClientFailed, "client job %s failed: %s", job.Name, jobMessage(job))
}

// clientPodsOf picks the client pods of one attempt of a cell.
func clientPodsOf(pods map[string]*corev1.Pod, cell string, attempt int32) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range pods {
		if pod.Labels[dbbenchv1alpha1.LabelCell] == cell && pod.Labels[dbbenchv1alpha1.LabelRole] == specs.RoleClient &&
			pod.Labels[dbbenchv1alpha1.LabelAttempt] == strconv.Itoa(int(attempt)) {
			out = append(out, pod)
		}
	}
	// Map order must not pick the reason when two pods ended differently.
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// databaseFailure says whether the state of the attempt's database pod
// (named name; pod is nil when it does not exist) ends the attempt;
// running says the benchmark started (the client runs), answered that the
// agent reached the server at the SQL level. A missing pod before the
// benchmark is no failure: the caller creates it (again). A server that
// exits after it answered is the benchmark's finding (the server under
// test failed); one that exits before it ever answered did not start, and
// its own error lines (in the termination message, which the pod's
// FallbackToLogsOnError policy fills from the log) say why: the config
// variant (ConfigRejected) or anything else (DatabaseStartFailed). Neither
// is the infrastructure's, so neither is retried.
func databaseFailure(name string, pod *corev1.Pod, running, answered bool) *failure {
	if pod == nil {
		if running {
			return fail(dbbenchv1alpha1.ReasonDatabasePodDeleted, "database pod %s disappeared during the benchmark", name)
		}
		return nil
	}
	if lost, why := nodeLost(pod); lost {
		return fail(dbbenchv1alpha1.ReasonNodeLost, "database pod %s: node %s lost: %s", pod.Name, pod.Spec.NodeName, why)
	}
	if !pod.DeletionTimestamp.IsZero() {
		return fail(dbbenchv1alpha1.ReasonDatabasePodDeleted, "database pod %s is being deleted", pod.Name)
	}
	if disrupted(pod) {
		return fail(dbbenchv1alpha1.ReasonDatabaseEvicted, "database pod %s was evicted or disrupted: %s %s", pod.Name, pod.Status.Reason, pod.Status.Message)
	}
	if pod.Status.Phase == corev1.PodFailed {
		return fail(dbbenchv1alpha1.ReasonDatabasePodFailed, "database pod %s failed: %s %s", pod.Name, pod.Status.Reason, pod.Status.Message)
	}
	for _, st := range pod.Status.ContainerStatuses {
		if w := st.State.Waiting; w != nil && (w.Reason == "InvalidImageName" || w.Reason == "ErrImageNeverPull") {
			return fail(dbbenchv1alpha1.ReasonInvalidImage, "database image %s: %s", st.Image, w.Message)
		}
		last := st.LastTerminationState.Terminated
		if last == nil || st.RestartCount == 0 {
			continue
		}
		if answered {
			return fail(dbbenchv1alpha1.ReasonDatabaseCrashed, "database server exited during the benchmark (exit code %d, %s): %s", last.ExitCode, last.Reason, serverSaid(last.Message, serverlog.ErrorLines(last.Message)))
		}
		return startFailure(last.ExitCode, last.Reason, last.Message)
	}
	return nil
}

// serverAnswered says whether the agent of this attempt reached the server
// at the SQL level: it reports Connecting until then.
func serverAnswered(prog *agentapi.Progress) bool {
	return prog != nil && prog.Phase != "" && prog.Phase != agentapi.PhaseConnecting
}

// startFailure is a server that exited before it answered, with what its
// log said (log: the termination message, or a log read by the caller).
func startFailure(exitCode int32, reason, log string) *failure {
	lines := serverlog.ErrorLines(log)
	r := dbbenchv1alpha1.ReasonDatabaseStartFailed
	if serverlog.ConfigRefused(lines) {
		r = dbbenchv1alpha1.ReasonConfigRejected
	}
	return fail(r, "database server exited before it answered (exit code %d, %s): %s", exitCode, reason, serverSaid(log, lines))
}

// serverSaid is a log's error lines (serverlog.ErrorLines), or the end of
// the log when no line looks like an error.
func serverSaid(log string, lines []string) string {
	if len(lines) > 0 {
		return strings.Join(lines, " | ")
	}
	if log == "" {
		return "no log"
	}
	return lastLine(log)
}

// notReadyFailure ends an attempt whose database pod has not run for
// elapsed, when that reaches limit (timeouts.databaseReady).
func notReadyFailure(pod *corev1.Pod, elapsed, limit time.Duration) *failure {
	if elapsed < limit {
		return nil
	}
	return fail(dbbenchv1alpha1.ReasonDatabaseNotReady, "database pod %s not ready within %s: %s", pod.Name, limit, waitingReason(pod))
}

// claimState is what a pass read of one of an attempt's database claims.
type claimState struct {
	// name is the claim's; field the spec field it comes from
	// (spec.databases[0].storage.volumeClaim).
	name, field string
	bound       bool
	// class is the claim's storage class: the one it names, or the
	// default class the API server gave it at creation. noClass: it has
	// none (no class named, no default class then); an empty class named
	// on purpose binds to a pre-provisioned volume and is not checked.
	// classFound says whether class exists.
	class      string
	noClass    bool
	classFound bool
}

// claimFailure ends an attempt whose database pod waits for its claims
// (not scheduled yet): at once when a claim's storage class does not exist
// or it has none (no retry creates one: the benchmark's), else when a claim
// is still unbound once the pod has waited limit (the provisioner's:
// retried); nil while the claims may still bind. waiting is what the pod
// says it waits for.
func claimFailure(claims []claimState, elapsed, limit time.Duration, waiting string) *failure {
	for _, c := range claims {
		switch {
		case c.bound:
		case c.noClass:
			return fail(dbbenchv1alpha1.ReasonStorageClassNotFound, "claim %s (%s) names no storage class and the cluster has no default one: set %s.storageClassName", c.name, c.field, c.field)
		case c.class != "" && !c.classFound:
			return fail(dbbenchv1alpha1.ReasonStorageClassNotFound, "claim %s: storage class %q (%s.storageClassName) does not exist", c.name, c.class, c.field)
		}
	}
	if elapsed < limit {
		return nil
	}
	for _, c := range claims {
		if !c.bound {
			return fail(dbbenchv1alpha1.ReasonVolumeClaimNotBound, "claim %s (%s, storage class %q) not bound within %s: %s", c.name, c.field, c.class, limit, waiting)
		}
	}
	return nil
}

// cellTimeoutFailure ends an attempt that has run for elapsed, when that
// reaches limit (the cell timeout).
func cellTimeoutFailure(attempt int32, elapsed, limit time.Duration) *failure {
	if elapsed < limit {
		return nil
	}
	return fail(dbbenchv1alpha1.ReasonCellTimeout, "attempt %d exceeded the cell timeout of %s", attempt, limit)
}

// maxInvalidSteps bounds status.cells[].quality.invalidSteps.
const maxInvalidSteps = 10

// resultQuality reads what the quality gate (results.Quality) found in a
// finished attempt's document: the cell's status summary, nil when every
// result was valid at once, and a ClientStarved failure when an invalid
// result shows that the client itself was starved.
//
// The rule: sysbench's reporting thread prints a line every second
// whatever the server does (a stopped server shows as zero seconds), so
// seconds of a step that no report covers mean the client process did
// not run: the machine's fault, retried as the infrastructure's like an
// evicted pod. An invalid result without that evidence (the server
// stopped while the client watched, or the final report disagrees with
// the series) may be the engine's own stall, which a retry of the whole
// cell would only reproduce at the cost of every step; the agent already
// re-ran the read steps once, so it is kept, flagged.
func resultQuality(doc *results.Document) (*dbbenchv1alpha1.CellQuality, *failure) {
	q := &dbbenchv1alpha1.CellQuality{}
	var starved []string
	for _, s := range doc.Steps {
		sq := s.Quality
		if sq == nil {
			continue
		}
		if sq.Replaced != nil {
			q.Rerun++
		}
		if sq.Valid {
			continue
		}
		q.Invalid++
		reasons := make([]string, len(sq.Reasons))
		for i, r := range sq.Reasons {
			reasons[i] = string(r)
		}
		name := fmt.Sprintf("%s@%d", s.Step, s.Threads)
		if len(q.InvalidSteps) < maxInvalidSteps {
			q.InvalidSteps = append(q.InvalidSteps, name+": "+strings.Join(reasons, ","))
		}
		if sq.UnreportedSeconds >= sq.StallLimitSeconds {
			starved = append(starved, fmt.Sprintf("%s (%.1f s of %.0f s unreported)", name, sq.UnreportedSeconds, sq.WindowSeconds))
		}
	}
	var f *failure
	if len(starved) > 0 {
		f = fail(dbbenchv1alpha1.ReasonClientStarved, "the client did not run through %s: invalid results (docs/agent.md, Quality gates)",
			strings.Join(starved, ", "))
	}
	if q.Invalid == 0 && q.Rerun == 0 {
		return nil, f
	}
	return q, f
}

// The reasons Kubernetes gives a pod (status.reason) or a container's
// termination that the failure policy reads; k8s.io/api has no constants
// for them. The kubelet sets the pod's on eviction and preemption, the node
// controller NodeLost.
const (
	podReasonEvicted         = "Evicted"
	podReasonNodeLost        = "NodeLost"
	podReasonPreempted       = "Preempted"
	containerReasonOOMKilled = "OOMKilled"
)

// taintEvictionReason is the reason of the DisruptionTarget condition that
// Kubernetes' taint eviction controller sets on a pod it deletes because
// the pod no longer tolerates a NoExecute taint of its node
// (node.kubernetes.io/unreachable or not-ready once a node stops
// answering). It is not among k8s.io/api's constants.
const taintEvictionReason = "DeletionByTaintManager"

// nodeLost reports a pod deleted because its node was lost, and the
// condition's message.
func nodeLost(pod *corev1.Pod) (bool, string) {
	if pod.Status.Reason == podReasonNodeLost {
		return true, pod.Status.Message
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == taintEvictionReason {
			return true, c.Message
		}
	}
	return false, ""
}

// clientNodeLost is the failure of an attempt whose client pod's node was
// lost. It is checked before the Job says anything: the Job controller
// counts the pod as failed only once its deletion is under way.
func clientNodeLost(clientPods []*corev1.Pod) *failure {
	for _, pod := range clientPods {
		if lost, why := nodeLost(pod); lost {
			return fail(dbbenchv1alpha1.ReasonNodeLost, "client pod %s: node %s lost: %s", pod.Name, pod.Spec.NodeName, why)
		}
	}
	return nil
}

func disrupted(pod *corev1.Pod) bool {
	if pod.Status.Reason == podReasonEvicted || pod.Status.Reason == podReasonNodeLost || pod.Status.Reason == podReasonPreempted {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podRunning reports a scheduled, started pod with an IP.
func podRunning(pod *corev1.Pod) bool {
	return pod.Status.PodIP != "" && pod.Status.Phase == corev1.PodRunning
}

// waitingReason says, for people, what a pod that is not running waits for.
func waitingReason(pod *corev1.Pod) string {
	for _, st := range pod.Status.ContainerStatuses {
		if w := st.State.Waiting; w != nil {
			return fmt.Sprintf("%s %s", w.Reason, w.Message)
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			return fmt.Sprintf("%s: %s", c.Type, c.Message)
		}
	}
	return fmt.Sprintf("phase %s", pod.Status.Phase)
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func jobMessage(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed {
			return fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	return "no reason given"
}

// lastLine keeps the end of a termination message, where errors are.
func lastLine(s string) string {
	const keep = 300
	if len(s) > keep {
		s = "…" + s[len(s)-keep:]
	}
	return s
}

// templateReadyFailure is a templated cell's failure when its object (kind
// and name in what) has not reported condition cond True after waited, at
// or past limit (databases[db].template.readyTimeout); nil before that.
// detail is what the object itself says (specs.NotReadyDetail), if anything.
func templateReadyFailure(db, what, cond, detail string, waited, limit time.Duration) *failure {
	if waited < limit {
		return nil
	}
	f := fail(dbbenchv1alpha1.ReasonTemplateNotReady, "%s: condition %s not True after %s (databases[%s].template.readyTimeout %s)",
		what, cond, waited.Round(time.Second), db, limit)
	if detail != "" {
		f.message += "; it says: " + detail
	}
	return f
}

// templateCreateFailure classifies the API server's refusal of a templated
// object: one that no retry changes (no such kind, an invalid object, no
// RBAC right) fails the cell naming the field; nil for any other error,
// which is the pass's and retried with the run.
func templateCreateFailure(db string, err error) *failure {
	switch {
	case err == nil:
		return nil
	case apierrors.IsForbidden(err):
		return fail(dbbenchv1alpha1.ReasonTemplateRejected, "databases[%s].template.object: %v (grant the manager get, create and delete on this kind: the chart's rbac.templateKinds)", db, err)
	case meta.IsNoMatchError(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsNotFound(err):
		return fail(dbbenchv1alpha1.ReasonTemplateRejected, "databases[%s].template.object: %v", db, err)
	}
	return nil
}
