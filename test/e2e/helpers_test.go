//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// newNamespace creates a namespace of the test's own. When the test ends it
// dumps what a person needs to debug a failure (manager logs, events, runs,
// pods and their logs) and deletes the namespace; DBBENCH_E2E_KEEP=1 keeps
// the namespace of a failed test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "e2e-" + prefix + "-",
		Labels:       map[string]string{e2eLabel: "true"},
	}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Logf("namespace %s", ns.Name)
	t.Cleanup(func() {
		if t.Failed() {
			dumpNamespace(t, ns.Name)
			if os.Getenv("DBBENCH_E2E_KEEP") != "" {
				t.Logf("keeping namespace %s (DBBENCH_E2E_KEEP)", ns.Name)
				return
			}
		}
		// Background: the namespace controller removes the runs' pods;
		// hack/test-e2e.sh waits for the namespaces to go at the end.
		if err := k8sClient.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// eventually polls cond every interval until it returns "" (done) or the
// timeout passes, then fails the test with cond's last explanation. It logs
// the explanation whenever it changes, so a -v log shows progress.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	const interval = time.Second
	start := time.Now()
	deadline := start.Add(timeout)
	var last string
	for {
		msg := cond()
		if msg == "" {
			t.Logf("%s after %s", what, time.Since(start).Round(time.Second))
			return
		}
		if msg != last {
			t.Logf("[%s] waiting for %s: %s", time.Since(start).Round(time.Second), what, msg)
			last = msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, last)
		}
		time.Sleep(interval)
	}
}

// smallRun is a real but short run: MariaDB at the given versions, one table
// of 2000 rows, three steps at 1 and 2 threads for 3 s each (1 s warm-up),
// on any node and next to other runs (the local cluster has one node).
func smallRun(ns, name string, versions ...string) *dbbenchv1alpha1.BenchmarkRun {
	return &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Suite: "e2e",
			Databases: []dbbenchv1alpha1.DatabaseSpec{{
				Name: "mariadb", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: versions,
				Configs: []dbbenchv1alpha1.ConfigVariant{{
					Name:   "small",
					Inline: ptr.To("[mysqld]\ninnodb_buffer_pool_size=64M\ninnodb_flush_log_at_trx_commit=2\n"),
				}},
			}},
			Workload: dbbenchv1alpha1.WorkloadSpec{
				Steps:            []string{"point-query", "update-index", "read-only-count"},
				Tables:           1,
				TableSize:        2000,
				ReadSeconds:      3,
				WriteSeconds:     3,
				WarmupSeconds:    ptr.To[int32](1),
				Threads:          []int32{1, 2},
				FlushWaitSeconds: 3,
			},
			Placement: dbbenchv1alpha1.PlacementSpec{
				ExclusiveNodes:   ptr.To(false),
				MaxParallelCells: 2,
			},
			// Headroom over the default 3 attempts: the loaded machine has
			// starved a cell's client twice in a row (ClientStarved, which
			// cellAttempt accepts), and the fault tests add a retry of
			// their own on top.
			Retry: dbbenchv1alpha1.RetrySpec{MaxAttemptsPerCell: 5},
		},
	}
}

func createRun(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun) {
	t.Helper()
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run %s/%s: %v", run.Namespace, run.Name, err)
	}
}

// runSummary is one line: the run's phase and progress and each cell's
// phase, attempt and step, for progress logs and timeout messages.
func runSummary(run *dbbenchv1alpha1.BenchmarkRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s phase=%q progress=%q", run.Name, run.Status.Phase, run.Status.Progress)
	for _, c := range run.Status.Cells {
		fmt.Fprintf(&b, "; %s %s a%d", c.Name, c.Phase, c.Attempts)
		if c.CurrentStep != "" {
			fmt.Fprintf(&b, " %s %d/%d", c.CurrentStep, c.StepsDone, c.StepsTotal)
		}
	}
	return b.String()
}

// waitForRunFinished waits until the run is Succeeded or Failed and returns it.
func waitForRunFinished(t *testing.T, ns, name string, timeout time.Duration) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	var run *dbbenchv1alpha1.BenchmarkRun
	eventually(t, timeout, "run "+name+" to finish", func() string {
		run = kubetest.GetRun(t, k8sClient, ns, name)
		requireClientJobsHaveHost(t, run)
		switch run.Status.Phase {
		case dbbenchv1alpha1.RunSucceeded, dbbenchv1alpha1.RunFailed:
			return ""
		}
		return runSummary(run)
	})
	return run
}

// waitForCellPhase waits until cell i of the run has the phase and returns
// the run as it was then.
func waitForCellPhase(t *testing.T, ns, name string, i int, phase dbbenchv1alpha1.CellPhase, timeout time.Duration) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	var run *dbbenchv1alpha1.BenchmarkRun
	eventually(t, timeout, fmt.Sprintf("cell %d of run %s to be %s", i, name, phase), func() string {
		run = kubetest.GetRun(t, k8sClient, ns, name)
		if len(run.Status.Cells) > i && run.Status.Cells[i].Phase == phase {
			return ""
		}
		if run.Status.Phase == dbbenchv1alpha1.RunSucceeded || run.Status.Phase == dbbenchv1alpha1.RunFailed {
			t.Fatalf("run finished before cell %d was %s: %s", i, phase, runSummary(run))
		}
		return runSummary(run)
	})
	return run
}

// requireSucceeded fails the test unless the run and every cell succeeded.
func requireSucceeded(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun) {
	t.Helper()
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded {
		t.Fatalf("run ended %s, want Succeeded: %s; cell messages: %s; agents' progress records: %s",
			run.Status.Phase, runSummary(run), cellMessages(run), progressRecords(run))
	}
	for _, c := range run.Status.Cells {
		if c.Phase != dbbenchv1alpha1.CellSucceeded {
			t.Errorf("cell %s is %s, want Succeeded: %s", c.Name, c.Phase, c.Message)
		}
	}
	if !meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
		t.Errorf("condition Succeeded is not True: %+v", run.Status.Conditions)
	}
}

func cellMessages(run *dbbenchv1alpha1.BenchmarkRun) string {
	var m []string
	for _, c := range run.Status.Cells {
		if c.Message != "" {
			m = append(m, c.Name+": "+c.Message)
		}
	}
	return strings.Join(m, "; ")
}

// managerPods are the pods of the manager Deployment, by its own selector.
func managerPods(t *testing.T) []corev1.Pod {
	t.Helper()
	var dep appsv1.Deployment
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: systemNamespace, Name: managerDeployment}, &dep); err != nil {
		t.Fatalf("getting the manager Deployment: %v", err)
	}
	return kubetest.ListPods(t, k8sClient, systemNamespace, dep.Spec.Selector.MatchLabels)
}

// dumpNamespace records what explains a failure: the manager's logs, the
// namespace's events, its runs as YAML, its Jobs, and every pod with the
// logs of each container. With DBBENCH_E2E_DUMP_DIR (hack/test-e2e.sh sets
// it) the dump goes to a file there and the test logs its path, so that the
// test's own errors stay the last lines before its "--- FAIL" (all that a
// CI excerpt may show) and the script prints the dumps after the suite;
// without it the dump is logged.
func dumpNamespace(t *testing.T, ns string) {
	t.Helper()
	var b bytes.Buffer
	section := func(format string, a ...any) { fmt.Fprintf(&b, "\n===== "+format+" =====\n", a...) }

	for _, p := range managerPods(t) {
		section("manager pod %s/%s (node %s, phase %s)", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase)
		b.WriteString(podLogs(p, "manager", 400))
	}

	section("events in %s", ns)
	var events corev1.EventList
	if err := k8sClient.List(ctx, &events, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(&b, "listing events: %v\n", err)
	}
	sort.SliceStable(events.Items, func(i, j int) bool { return eventTime(events.Items[i]).Before(eventTime(events.Items[j])) })
	for _, e := range events.Items {
		fmt.Fprintf(&b, "%s %s %s/%s %s: %s (x%d)\n", eventTime(e).Format("15:04:05"), e.Type,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, max(e.Count, 1))
	}

	var runs dbbenchv1alpha1.BenchmarkRunList
	if err := k8sClient.List(ctx, &runs, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(&b, "listing runs: %v\n", err)
	}
	for i := range runs.Items {
		r := &runs.Items[i]
		r.ManagedFields = nil
		out, _ := yaml.Marshal(r)
		section("BenchmarkRun %s", r.Name)
		b.Write(out)
	}

	section("jobs in %s", ns)
	for _, j := range kubetest.ListJobs(t, k8sClient, ns, nil) {
		fmt.Fprintf(&b, "%s active=%d succeeded=%d failed=%d conditions=%v\n", j.Name, j.Status.Active, j.Status.Succeeded, j.Status.Failed, jobConditions(j))
	}

	for _, p := range kubetest.ListPods(t, k8sClient, ns, nil) {
		section("pod %s (node %s, phase %s %s)", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Reason)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				fmt.Fprintf(&b, "condition %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		for _, c := range p.Spec.Containers {
			fmt.Fprintf(&b, "--- container %s\n", c.Name)
			b.WriteString(podLogs(p, c.Name, 200))
		}
	}
	if dir := os.Getenv("DBBENCH_E2E_DUMP_DIR"); dir != "" {
		path := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"."+ns+".log")
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = os.WriteFile(path, b.Bytes(), 0o644)
		}
		if err == nil {
			t.Logf("dump of namespace %s: %s (%d lines)", ns, path, bytes.Count(b.Bytes(), []byte("\n")))
			return
		}
		t.Logf("writing the dump of namespace %s: %v", ns, err)
	}
	t.Logf("dump of namespace %s:\n%s", ns, b.String())
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func jobConditions(j batchv1.Job) []string {
	var out []string
	for _, c := range j.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return out
}

// podLogs returns the last lines of a container's log, or why there is none.
func podLogs(p corev1.Pod, container string, lines int64) string {
	if p.Spec.NodeName == "" {
		return "(not scheduled)\n"
	}
	if strings.HasPrefix(p.Spec.NodeName, fakeNodePrefix) {
		return "(on a kwok node: no container ran)\n"
	}
	if !slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == container }) {
		return fmt.Sprintf("(no container %s)\n", container)
	}
	raw, err := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)\n", err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// cellLabels select a cell's children of one role.
func cellLabels(run *dbbenchv1alpha1.BenchmarkRun, cell, role string) map[string]string {
	return map[string]string{dbbenchv1alpha1.LabelRun: run.Name, dbbenchv1alpha1.LabelCell: matrix.ObjectBase(run.Name, string(run.UID), cell), dbbenchv1alpha1.LabelRole: role}
}

func jobNames(jobs []batchv1.Job) []string {
	var n []string
	for _, j := range jobs {
		n = append(n, j.Name)
	}
	return n
}

// progressRecords are the agents' last progress records (progress.json of
// each cell's result ConfigMap): which attempt reported what.
func progressRecords(run *dbbenchv1alpha1.BenchmarkRun) string {
	var out []string
	for _, c := range run.Status.Cells {
		var cm corev1.ConfigMap
		if c.ResultConfigMap == "" {
			continue
		}
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: c.ResultConfigMap}, &cm); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", c.Name, err))
			continue
		}
		out = append(out, fmt.Sprintf("%s (status attempt %d): %s", c.Name, c.Attempts, cm.Data[agentapi.ResultKeyProgress]))
	}
	return strings.Join(out, "; ")
}

// requireClientJobsHaveHost fails at once when a client Job was created
// without its database pod's IP: the agent would wait for a server at ":3306"
// until its own timeout (10 min) instead of the test's.
func requireClientJobsHaveHost(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun) {
	t.Helper()
	for _, j := range kubetest.ListJobs(t, k8sClient, run.Namespace, map[string]string{dbbenchv1alpha1.LabelRun: run.Name, dbbenchv1alpha1.LabelRole: specs.RoleClient}) {
		for _, c := range j.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == agentapi.EnvHost && e.Value == "" && e.ValueFrom == nil {
					t.Fatalf("client job %s (attempt %s) was created with an empty %s: its database pod had no IP yet; %s",
						j.Name, j.Labels[dbbenchv1alpha1.LabelAttempt], agentapi.EnvHost, runSummary(run))
				}
			}
		}
	}
}
