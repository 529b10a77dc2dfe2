package benchmarkrun

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The failure policy without a cluster: every reason a classifier returns,
// and whether it is retried.

// verdict is what a test compares: whether the attempt ended well, the
// reason it ended badly and whether that is retried.
type verdict struct {
	Done    bool
	Reason  dbbenchv1alpha1.FailureReason
	Retried bool
}

func verdictOf(done bool, f *failure) verdict {
	if f == nil {
		return verdict{Done: done}
	}
	return verdict{Done: done, Reason: f.reason, Retried: f.retried()}
}

func failed(r dbbenchv1alpha1.FailureReason, retried bool) verdict {
	return verdict{Reason: r, Retried: retried}
}

// requireMessageSays checks that a failure's message carries what the
// person reading the cell's status needs and no field carries: the object
// it is about (pod, node, claim, the spec's field) and the cause in the
// words of whoever reported it (the server's error line, the kubelet's
// message, the agent's error). The text is the contract only there: the
// wording around them is free.
func requireMessageSays(t *testing.T, f *failure, says ...string) {
	t.Helper()
	if f == nil {
		return
	}
	for _, want := range says {
		if !strings.Contains(f.message, want) {
			t.Errorf("message %q does not say %q", f.message, want)
		}
	}
}

// pod builds a pod in phase with the given changes.
func pod(name string, phase corev1.PodPhase, change ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
	for _, c := range change {
		c(p)
	}
	return p
}

func withContainer(st corev1.ContainerStatus) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st) }
}

func withReason(reason, msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Reason, p.Status.Message = reason, msg }
}

func withCondition(t corev1.PodConditionType, s corev1.ConditionStatus, msg string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: s, Message: msg})
	}
}

// taintEvicted is a pod that Kubernetes' taint eviction deleted: its node
// stopped answering and the pod's toleration of that ran out.
func taintEvicted(p *corev1.Pod) {
	p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: taintEvictionReason, Message: "Taint manager: deleting due to NoExecute taint"})
}

func onNode(name string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.NodeName = name } }

func restarted(n int32, exit int32, reason string) corev1.ContainerStatus {
	return restartedSaying(n, exit, reason, "2026-11-24  3:04:05 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_foo=1'\n2026-11-24  3:04:05 0 [ERROR] Aborting\n")
}

// restartedSaying is a database container that exited and restarted, whose
// termination message (the end of its log) is log.
func restartedSaying(n int32, exit int32, reason, log string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name: "database", RestartCount: n,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, Message: log}},
	}
}

func waiting(reason, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "database", Image: "mariadb:11.8", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
}

func terminated(exit int32, reason, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "agent", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, Message: msg}}}
}

type databaseCase struct {
	name    string
	pod     *corev1.Pod
	running bool
	// answered: the agent reached the server at the SQL level.
	answered bool
	want     verdict
	// says are what the message must carry (requireMessageSays).
	says []string
}

var databaseCases = []databaseCase{
	{name: "missing before the benchmark is recreated, not a failure", pod: nil},
	{name: "missing during the benchmark", pod: nil, running: true,
		want: failed(dbbenchv1alpha1.ReasonDatabasePodDeleted, true), says: []string{"db-a1"}},
	{name: "being deleted", pod: pod("db-a1", corev1.PodRunning, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }),
		want: failed(dbbenchv1alpha1.ReasonDatabasePodDeleted, true), says: []string{"db-a1"}},
	{name: "evicted", pod: pod("db-a1", corev1.PodFailed, withReason(podReasonEvicted, "The node was low on resource: memory.")), running: true,
		want: failed(dbbenchv1alpha1.ReasonDatabaseEvicted, true), says: []string{"low on resource"}},
	{name: "node lost", pod: pod("db-a1", corev1.PodRunning, withReason(podReasonNodeLost, "node-3 is unreachable")),
		want: failed(dbbenchv1alpha1.ReasonNodeLost, true), says: []string{"node-3"}},
	{name: "deleted by taint eviction once the node stopped answering", pod: pod("db-a1", corev1.PodRunning, taintEvicted, onNode("dbbench-node-2")), running: true,
		want: failed(dbbenchv1alpha1.ReasonNodeLost, true), says: []string{"dbbench-node-2", "Taint manager: deleting due to NoExecute taint"}},
	{name: "preempted", pod: pod("db-a1", corev1.PodFailed, withReason(podReasonPreempted, "")),
		want: failed(dbbenchv1alpha1.ReasonDatabaseEvicted, true), says: []string{podReasonPreempted}},
	{name: "disruption target", pod: pod("db-a1", corev1.PodRunning, withCondition(corev1.DisruptionTarget, corev1.ConditionTrue, "")), running: true,
		want: failed(dbbenchv1alpha1.ReasonDatabaseEvicted, true), says: []string{"db-a1"}},
	{name: "disruption target False is no disruption", pod: pod("db-a1", corev1.PodRunning, withCondition(corev1.DisruptionTarget, corev1.ConditionFalse, "")), running: true},
	{name: "pod failed", pod: pod("db-a1", corev1.PodFailed, withReason("UnexpectedAdmissionError", "allocating hugepages")),
		want: failed(dbbenchv1alpha1.ReasonDatabasePodFailed, true), says: []string{"hugepages"}},
	{name: "invalid image name", pod: pod("db-a1", corev1.PodPending, withContainer(waiting("InvalidImageName", "couldn't parse image name"))),
		want: failed(dbbenchv1alpha1.ReasonInvalidImage, false), says: []string{"mariadb:11.8"}},
	{name: "image never pulled", pod: pod("db-a1", corev1.PodPending, withContainer(waiting("ErrImageNeverPull", "image not present"))),
		want: failed(dbbenchv1alpha1.ReasonInvalidImage, false), says: []string{"image not present"}},
	{name: "image pull back-off waits for the ready timeout", pod: pod("db-a1", corev1.PodPending, withContainer(waiting("ImagePullBackOff", "pulling")))},
	{name: "a crash during the benchmark is a finding", pod: pod("db-a1", corev1.PodRunning, withContainer(restartedSaying(1, 137, containerReasonOOMKilled, ""))), running: true, answered: true,
		want: failed(dbbenchv1alpha1.ReasonDatabaseCrashed, false), says: []string{"exit code 137, " + containerReasonOOMKilled}},
	{name: "a crash during the benchmark quotes the server", pod: pod("db-a1", corev1.PodRunning, withContainer(restartedSaying(1, 134, "Error", "[Note] x\n[ERROR] mariadbd got signal 6 ;\n"))), running: true, answered: true,
		want: failed(dbbenchv1alpha1.ReasonDatabaseCrashed, false), says: []string{"exit code 134", "[ERROR] mariadbd got signal 6"}},
	{name: "an unknown option at start: the config is rejected, quoting the server", pod: pod("db-a1", corev1.PodRunning, withContainer(restarted(1, 7, "Error"))),
		want: failed(dbbenchv1alpha1.ReasonConfigRejected, false), says: []string{"exit code 7", "2026-11-24  3:04:05 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_foo=1'"}},
	{name: "rejected while the client waits for the server: still a start failure", pod: pod("db-a1", corev1.PodRunning, withContainer(restarted(1, 7, "Error"))), running: true,
		want: failed(dbbenchv1alpha1.ReasonConfigRejected, false), says: []string{"unknown variable 'innodb_foo=1'"}},
	{name: "postgres refuses a parameter", pod: pod("db-a1", corev1.PodRunning, withContainer(restartedSaying(1, 1, "Error",
		"2026-11-24 03:04:05.000 UTC [1] LOG:  unrecognized configuration parameter \"shared_bufers\" in file \"/etc/postgresql/dbbench.conf\" line 1\n2026-11-24 03:04:05.000 UTC [1] FATAL:  configuration file \"/etc/postgresql/dbbench.conf\" contains errors\n"))),
		want: failed(dbbenchv1alpha1.ReasonConfigRejected, false), says: []string{`unrecognized configuration parameter "shared_bufers"`}},
	{name: "a server that cannot start for another reason", pod: pod("db-a1", corev1.PodRunning, withContainer(restartedSaying(2, 1, "Error",
		"[ERROR] Can't start server: Bind on TCP/IP port: Address already in use\n[ERROR] Aborting\n"))),
		want: failed(dbbenchv1alpha1.ReasonDatabaseStartFailed, false), says: []string{"Address already in use"}},
	{name: "exited at start without a log", pod: pod("db-a1", corev1.PodRunning, withContainer(restartedSaying(1, 1, "Error", ""))),
		want: failed(dbbenchv1alpha1.ReasonDatabaseStartFailed, false), says: []string{"exit code 1"}},
	{name: "healthy", pod: pod("db-a1", corev1.PodRunning, withContainer(corev1.ContainerStatus{Name: "database", Ready: true})), running: true},
}

func TestDatabaseFailure(t *testing.T) {
	for _, tc := range databaseCases {
		t.Run(tc.name, func(t *testing.T) {
			f := databaseFailure("db-a1", tc.pod, tc.running, tc.answered)
			if d := cmp.Diff(tc.want, verdictOf(false, f)); d != "" {
				t.Errorf("databaseFailure (-want +got):\n%s", d)
			}
			requireMessageSays(t, f, tc.says...)
		})
	}
}

func job(conds ...batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "client-a1"}}
	for _, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"})
	}
	return j
}

func progress(phase agentapi.Phase, class agentapi.FailureClass, msg string) *agentapi.Progress {
	return &agentapi.Progress{Attempt: 1, Phase: phase, Step: "update-index", Error: msg, FailureClass: class}
}

type clientCase struct {
	name string
	prog *agentapi.Progress
	doc  bool
	job  *batchv1.Job
	pods []*corev1.Pod
	want verdict
	says []string
}

var clientCases = []clientCase{
	{name: "nothing yet"},
	{name: "job running", job: job(), prog: progress(agentapi.PhaseRunning, "", "")},
	{name: "agent done with its document ends the cell before the Job does", prog: progress(agentapi.PhaseDone, "", ""), doc: true,
		want: verdict{Done: true}},
	{name: "agent done, document not seen yet, Job running", prog: progress(agentapi.PhaseDone, "", ""), job: job()},
	{name: "job complete after the agent's done", prog: progress(agentapi.PhaseDone, "", ""), job: job(batchv1.JobComplete),
		want: verdict{Done: true}},
	{name: "job complete without a progress record", job: job(batchv1.JobComplete),
		want: failed(dbbenchv1alpha1.ReasonNoResults, false), says: []string{"client-a1"}},
	{name: "job complete with the agent still running", prog: progress(agentapi.PhaseRunning, "", ""), job: job(batchv1.JobComplete),
		want: failed(dbbenchv1alpha1.ReasonNoResults, false), says: []string{"client-a1"}},
	{name: "a step failed", prog: progress(agentapi.PhaseFailed, agentapi.FailureBenchmark, "Duplicate entry '7'"), job: job(batchv1.JobFailed),
		want: failed(dbbenchv1alpha1.ReasonBenchmarkFailed, false), says: []string{"update-index", "Duplicate entry '7'"}},
	{name: "the agent gave up on the server", prog: progress(agentapi.PhaseFailed, agentapi.FailureInfrastructure, "server unreachable"), job: job(batchv1.JobFailed),
		want: failed(dbbenchv1alpha1.ReasonAgentFailed, true), says: []string{"server unreachable"}},
	{name: "the agent's report wins over its pod", prog: progress(agentapi.PhaseFailed, agentapi.FailureBenchmark, "syntax error"), job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withContainer(terminated(3, "Error", "")))},
		want: failed(dbbenchv1alpha1.ReasonBenchmarkFailed, false), says: []string{"syntax error"}},
	{name: "a failed agent record before the Job ends decides nothing yet", prog: progress(agentapi.PhaseFailed, agentapi.FailureBenchmark, "syntax error"), job: job()},
	{name: "client's node lost, before the Job counts the pod as failed", prog: progress(agentapi.PhaseRunning, "", ""), job: job(),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodRunning, taintEvicted, onNode("dbbench-node-3"))},
		want: failed(dbbenchv1alpha1.ReasonNodeLost, true), says: []string{"client-a1-x", "dbbench-node-3"}},
	{name: "client's node lost, the Job failed", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodRunning, taintEvicted, onNode("dbbench-node-3"))},
		want: failed(dbbenchv1alpha1.ReasonNodeLost, true), says: []string{"dbbench-node-3"}},
	{name: "client evicted", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withReason(podReasonEvicted, "ephemeral storage"))},
		want: failed(dbbenchv1alpha1.ReasonClientEvicted, true), says: []string{"ephemeral storage"}},
	{name: "client out of memory", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withContainer(terminated(137, containerReasonOOMKilled, "")))},
		want: failed(dbbenchv1alpha1.ReasonClientOOMKilled, true), says: []string{"client-a1-x"}},
	{name: "exit code 2: benchmark failed", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withContainer(terminated(agentapi.ExitBenchmarkFailed, "Error", "FATAL: bad lua")))},
		want: failed(dbbenchv1alpha1.ReasonBenchmarkFailed, false), says: []string{"FATAL: bad lua"}},
	{name: "exit code 4: invalid plan", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withContainer(terminated(agentapi.ExitInvalidTask, "Error", "plan: no steps")))},
		want: failed(dbbenchv1alpha1.ReasonBenchmarkFailed, false), says: []string{"code 4"}},
	{name: "the server does not run with the variant's settings", prog: func() *agentapi.Progress {
		pr := progress(agentapi.PhaseFailed, agentapi.FailureBenchmark, "max_connections: requested 77 on line 3, effective 200")
		pr.Reason, pr.Step = agentapi.FailureConfigNotApplied, ""
		return pr
	}(), job: job(batchv1.JobFailed),
		want: failed(dbbenchv1alpha1.ReasonConfigNotApplied, false), says: []string{"max_connections: requested 77 on line 3, effective 200"}},
	{name: "exit code 5: config not applied, without a progress record", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withContainer(terminated(agentapi.ExitConfigNotApplied, "Error", "max_connections: requested 77")))},
		want: failed(dbbenchv1alpha1.ReasonConfigNotApplied, false), says: []string{"max_connections: requested 77"}},
	{name: "exit code 3: server unreachable", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodFailed, withContainer(terminated(agentapi.ExitServerUnreachable, "Error", "dial tcp: refused")))},
		want: failed(dbbenchv1alpha1.ReasonAgentFailed, true), says: []string{"dial tcp"}},
	{name: "a pod still running says nothing", job: job(batchv1.JobFailed),
		pods: []*corev1.Pod{pod("client-a1-x", corev1.PodRunning, withContainer(corev1.ContainerStatus{Name: "agent"}))},
		want: failed(dbbenchv1alpha1.ReasonClientFailed, true), says: []string{"BackoffLimitExceeded"}},
	{name: "job failed without pods", job: job(batchv1.JobFailed),
		want: failed(dbbenchv1alpha1.ReasonClientFailed, true), says: []string{"client-a1", "BackoffLimitExceeded"}},
}

func TestClientOutcome(t *testing.T) {
	for _, tc := range clientCases {
		t.Run(tc.name, func(t *testing.T) {
			done, f := clientOutcome(tc.prog, tc.doc, tc.job, tc.pods)
			if d := cmp.Diff(tc.want, verdictOf(done, f)); d != "" {
				t.Errorf("clientOutcome (-want +got):\n%s", d)
			}
			requireMessageSays(t, f, tc.says...)
		})
	}
}

type deadlineCase struct {
	name string
	f    *failure
	want verdict
	says []string
}

func deadlineCases() []deadlineCase {
	pending := pod("db-a1", corev1.PodPending, withContainer(waiting("ImagePullBackOff", "Back-off pulling image")))
	const (
		dataField = "spec.databases[0].storage.volumeClaim"
		logField  = "spec.databases[0].storage.log.volumeClaim"
		unbound   = "PodScheduled: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims"
	)
	return []deadlineCase{
		{name: "not ready, within the limit", f: notReadyFailure(pending, 59*time.Second, time.Minute)},
		{name: "not ready at the limit", f: notReadyFailure(pending, time.Minute, time.Minute),
			want: failed(dbbenchv1alpha1.ReasonDatabaseNotReady, true),
			says: []string{"db-a1", "1m0s", "ImagePullBackOff Back-off pulling image"}},
		{name: "cell timeout, within the limit", f: cellTimeoutFailure(2, time.Hour-time.Second, time.Hour)},
		{name: "cell timeout past the limit", f: cellTimeoutFailure(2, 2*time.Hour, time.Hour),
			want: failed(dbbenchv1alpha1.ReasonCellTimeout, true), says: []string{"attempt 2", "1h0m0s"}},
		{name: "claims bound or pending within the limit", f: claimFailure([]claimState{
			{name: "c-data-a1", field: dataField, bound: true, class: "local-path", classFound: true},
			{name: "c-log-a1", field: logField, class: "local-path", classFound: true}}, 59*time.Second, time.Minute, unbound)},
		{name: "a claim's class does not exist: at once, not retried", f: claimFailure([]claimState{
			{name: "c-data-a1", field: dataField, bound: true, class: "local-path", classFound: true},
			{name: "c-log-a1", field: logField, class: "fast-ssd"}}, time.Second, time.Minute, unbound),
			want: failed(dbbenchv1alpha1.ReasonStorageClassNotFound, false),
			says: []string{"c-log-a1", `"fast-ssd"`, logField + ".storageClassName"}},
		{name: "no class and no default class", f: claimFailure([]claimState{{name: "c-data-a1", field: dataField, noClass: true}}, time.Second, time.Minute, unbound),
			want: failed(dbbenchv1alpha1.ReasonStorageClassNotFound, false),
			says: []string{"c-data-a1", dataField + ".storageClassName"}},
		{name: "a static claim (class \"\") is not checked", f: claimFailure([]claimState{{name: "c-data-a1", field: dataField}}, time.Second, time.Minute, unbound)},
		{name: "a claim of an existing class unbound at the limit: retried", f: claimFailure([]claimState{
			{name: "c-data-a1", field: dataField, class: "local-path", classFound: true}}, time.Minute, time.Minute, unbound),
			want: failed(dbbenchv1alpha1.ReasonVolumeClaimNotBound, true),
			says: []string{"c-data-a1", dataField, `"local-path"`, "1m0s", unbound}},
		{name: "templated object not ready, within readyTimeout", f: templateReadyFailure("pg", "Cluster c-target", "Ready", "", 9*time.Minute, 10*time.Minute)},
		{name: "templated object not ready at readyTimeout", f: templateReadyFailure("pg", "Cluster c-target", "Ready", "", 10*time.Minute, 10*time.Minute),
			want: failed(dbbenchv1alpha1.ReasonTemplateNotReady, false),
			says: []string{"Cluster c-target", "Ready", "10m0s", "databases[pg].template.readyTimeout"}},
		{name: "templated object not ready, with what it says", f: templateReadyFailure("pg", "Cluster c-target", "Ready",
			`status.phase "Setting up primary"`, 10*time.Minute, 10*time.Minute),
			want: failed(dbbenchv1alpha1.ReasonTemplateNotReady, false),
			says: []string{"Cluster c-target", "Ready", "10m0s", "databases[pg].template.readyTimeout", `status.phase "Setting up primary"`}},
	}
}

// templateCreateCases are the API server's answers to creating a templated
// object.
var templateCreateCases = []struct {
	name string
	err  error
	want verdict
	says []string
}{
	{name: "created"},
	{name: "no such kind", err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "postgresql.cnpg.io", Kind: "Cluster"}},
		want: failed(dbbenchv1alpha1.ReasonTemplateRejected, false), says: []string{"databases[pg].template.object: no matches for kind"}},
	{name: "no RBAC right", err: apierrors.NewForbidden(schema.GroupResource{Group: "postgresql.cnpg.io", Resource: "clusters"}, "c", errors.New("RBAC")),
		want: failed(dbbenchv1alpha1.ReasonTemplateRejected, false), says: []string{"rbac.templateKinds"}},
	{name: "invalid object", err: apierrors.NewInvalid(schema.GroupKind{Kind: "Cluster"}, "c", nil),
		want: failed(dbbenchv1alpha1.ReasonTemplateRejected, false), says: []string{"databases[pg].template.object"}},
	{name: "the API failed (the pass retries)", err: errors.New("etcdserver: request timed out")},
}

func TestTemplateCreateFailure(t *testing.T) {
	for _, tc := range templateCreateCases {
		t.Run(tc.name, func(t *testing.T) {
			f := templateCreateFailure("pg", tc.err)
			if d := cmp.Diff(tc.want, verdictOf(false, f)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			requireMessageSays(t, f, tc.says...)
		})
	}
}

func TestDeadlines(t *testing.T) {
	for _, tc := range deadlineCases() {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, verdictOf(false, tc.f)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			requireMessageSays(t, tc.f, tc.says...)
		})
	}
}

type configCase struct {
	name string
	cm   *corev1.ConfigMap
	err  error
	text string
	want verdict
	says []string
}

var configCases = []configCase{
	{name: "present", cm: &corev1.ConfigMap{Data: map[string]string{"my.cnf": "[mysqld]\n"}}, text: "[mysqld]\n"},
	{name: "empty text is a text", cm: &corev1.ConfigMap{Data: map[string]string{"my.cnf": ""}}},
	{name: "no such ConfigMap", cm: &corev1.ConfigMap{}, err: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "tuned"),
		want: failed(dbbenchv1alpha1.ReasonConfigMissing, false), says: []string{"databases[maria].configs[tuned].configMapKeyRef: ConfigMap bench/tuned not found"}},
	{name: "no such key", cm: &corev1.ConfigMap{Data: map[string]string{"other": ""}},
		want: failed(dbbenchv1alpha1.ReasonConfigMissing, false), says: []string{`has no key "my.cnf"`}},
	{name: "the API failed", cm: &corev1.ConfigMap{}, err: errors.New("etcdserver: request timed out"),
		want: failed(dbbenchv1alpha1.ReasonAPIError, true), says: []string{"request timed out"}},
}

func TestConfigInput(t *testing.T) {
	ref := corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "tuned"}, Key: "my.cnf"}
	for _, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			text, f := configInput("databases[maria].configs[tuned].configMapKeyRef", "bench", ref, tc.cm, tc.err)
			if d := cmp.Diff(tc.want, verdictOf(false, f)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if text != tc.text {
				t.Errorf("text %q, want %q", text, tc.text)
			}
			requireMessageSays(t, f, tc.says...)
		})
	}
}

// classifiedReasons runs every case of the tables above and returns the
// reasons the classifiers returned.
func classifiedReasons() map[dbbenchv1alpha1.FailureReason]bool {
	out := map[dbbenchv1alpha1.FailureReason]bool{}
	add := func(f *failure) {
		if f != nil {
			out[f.reason] = true
		}
	}
	for _, tc := range databaseCases {
		add(databaseFailure("db-a1", tc.pod, tc.running, tc.answered))
	}
	for _, tc := range clientCases {
		_, f := clientOutcome(tc.prog, tc.doc, tc.job, tc.pods)
		add(f)
	}
	for _, tc := range deadlineCases() {
		add(tc.f)
	}
	for _, tc := range configCases {
		_, f := configInput("field", "ns", corev1.ConfigMapKeySelector{Key: "my.cnf"}, tc.cm, tc.err)
		add(f)
	}
	for _, tc := range templateCreateCases {
		add(templateCreateFailure("pg", tc.err))
	}
	for _, tc := range resultQualityCases {
		_, f := resultQuality(&results.Document{Steps: tc.steps})
		add(f)
	}
	return out
}

// TestEveryReasonHasAClassAndAMetricLabel: a reason a classifier returns
// without a class would fail cells it should retry; a retried reason outside
// the metric's label set would be counted as Other.
func TestEveryReasonHasAClassAndAMetricLabel(t *testing.T) {
	seen := classifiedReasons()
	for r := range seen {
		class, ok := failureClasses[r]
		if !ok {
			t.Errorf("reason %s has no class in failureClasses", r)
			continue
		}
		label := retryReasonLabel(string(r))
		switch {
		case class == agentapi.FailureInfrastructure && label != string(r):
			t.Errorf("retried reason %s is counted as %s in dbbench_cell_retries_total", r, label)
		case class == agentapi.FailureBenchmark && slices.Contains(RetryReasons, string(r)):
			t.Errorf("reason %s is never retried, yet is a label of dbbench_cell_retries_total", r)
		}
	}
	// The tables above cover the whole policy: a class without a case is
	// a reason nothing tests.
	for r := range failureClasses {
		if !seen[r] {
			t.Errorf("reason %s has a class but no test case returns it", r)
		}
	}
	if RetryReasons[0] == "" || !slices.IsSorted(RetryReasons) {
		t.Errorf("RetryReasons %v: want sorted, non-empty names", RetryReasons)
	}
}

func TestClientPodsOf(t *testing.T) {
	labelled := func(name, cell, role, attempt string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			dbbenchv1alpha1.LabelCell: cell, dbbenchv1alpha1.LabelRole: role, dbbenchv1alpha1.LabelAttempt: attempt,
		}}}
	}
	pods := map[string]*corev1.Pod{}
	for _, p := range []*corev1.Pod{
		labelled("c-a2-z", "c", specs.RoleClient, "2"),
		labelled("c-a2-b", "c", specs.RoleClient, "2"),
		labelled("c-a1-x", "c", specs.RoleClient, "1"),
		labelled("c-a2-db", "c", specs.RoleDatabase, "2"),
		labelled("d-a2-x", "d", specs.RoleClient, "2"),
	} {
		pods[p.Name] = p
	}
	var got []string
	for _, p := range clientPodsOf(pods, "c", 2) {
		got = append(got, p.Name)
	}
	if d := cmp.Diff([]string{"c-a2-b", "c-a2-z"}, got); d != "" {
		t.Errorf("client pods of c attempt 2 (-want +got):\n%s", d)
	}
}

func TestWaitingReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"a waiting container", pod("p", corev1.PodPending, withContainer(waiting("ErrImagePull", "not found"))), "ErrImagePull not found"},
		{"unschedulable", pod("p", corev1.PodPending, withCondition(corev1.PodScheduled, corev1.ConditionFalse, "0/3 nodes are available")), "PodScheduled: 0/3 nodes are available"},
		{"nothing to say", pod("p", corev1.PodPending), "phase Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitingReason(tc.pod); got != tc.want {
				t.Errorf("waitingReason = %q, want %q", got, tc.want)
			}
		})
	}
}

// qualityStep is a step result with a quality verdict: valid, re-run
// (replaced), and with the unreported (client starved) and stopped
// (server stopped) seconds of an invalid one.
func qualityStep(step string, threads int, valid, rerun bool, unreported, stall float64) results.StepResult {
	q := &results.Quality{Valid: valid, WindowSeconds: 10, MinSteadySamples: 8, StallSeconds: stall, StallLimitSeconds: 2,
		UnreportedSeconds: unreported, Attempts: 1}
	if !valid {
		q.Reasons = []results.QualityReason{results.QualityStalled}
	}
	if rerun {
		q.Attempts, q.Replaced = 2, &results.ReplacedRun{Reasons: []results.QualityReason{results.QualityStalled}, StallSeconds: 5}
	}
	return results.StepResult{Step: step, Threads: threads, DurationSeconds: 12, WarmupSeconds: 2, SteadyQPS: 1000, Quality: q}
}

// resultQualityCases are finished attempts with and without invalid results.
var resultQualityCases = []struct {
	name        string
	steps       []results.StepResult
	want        *dbbenchv1alpha1.CellQuality
	wantStarved bool
}{{
	name:  "written before the gate",
	steps: []results.StepResult{{Step: "point-query", Threads: 1, SteadyQPS: 1000}},
}, {
	name:  "every result valid at once",
	steps: []results.StepResult{qualityStep("point-query", 1, true, false, 0, 0)},
}, {
	name:  "a re-run that came out valid",
	steps: []results.StepResult{qualityStep("point-query", 1, true, true, 0, 0)},
	want:  &dbbenchv1alpha1.CellQuality{Rerun: 1},
}, {
	name:  "the server stopped while the client watched: flagged, not retried",
	steps: []results.StepResult{qualityStep("update-index", 8, false, false, 0, 5)},
	want:  &dbbenchv1alpha1.CellQuality{Invalid: 1, InvalidSteps: []string{"update-index@8: Stalled"}},
}, {
	name:  "the client did not run: retried",
	steps: []results.StepResult{qualityStep("point-query", 1, true, false, 0, 0), qualityStep("read-only-count", 8, false, true, 9.3, 9.76)},
	want:  &dbbenchv1alpha1.CellQuality{Invalid: 1, Rerun: 1, InvalidSteps: []string{"read-only-count@8: Stalled"}}, wantStarved: true,
}, {
	name:  "a late report under the limit is no starvation",
	steps: []results.StepResult{qualityStep("update-index", 8, false, false, 1, 3)},
	want:  &dbbenchv1alpha1.CellQuality{Invalid: 1, InvalidSteps: []string{"update-index@8: Stalled"}},
}}

// TestResultQuality is the rule that decides a finished attempt with
// invalid results: the status summary always, and a retry (ClientStarved,
// an infrastructure failure) only when the client itself did not run.
func TestResultQuality(t *testing.T) {
	for _, tt := range resultQualityCases {
		t.Run(tt.name, func(t *testing.T) {
			got, f := resultQuality(&results.Document{Steps: tt.steps})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("quality (-want +got):\n%s", diff)
			}
			if (f != nil) != tt.wantStarved {
				t.Fatalf("failure %+v, want starved %v", f, tt.wantStarved)
			}
			if f != nil && (f.reason != dbbenchv1alpha1.ReasonClientStarved || !f.retried()) {
				t.Errorf("failure %+v: want a retried ClientStarved", f)
			}
			requireMessageSays(t, f, "read-only-count@8", "9.3 s of 10 s")
		})
	}
	var many []results.StepResult
	for th := 1; th <= 12; th++ {
		many = append(many, qualityStep("point-query", th, false, false, 0, 5))
	}
	got, _ := resultQuality(&results.Document{Steps: many})
	if got.Invalid != 12 || len(got.InvalidSteps) != maxInvalidSteps {
		t.Errorf("12 invalid results: invalid %d, %d named; want 12 and %d", got.Invalid, len(got.InvalidSteps), maxInvalidSteps)
	}
}
