package integration_test

// The cell's outbox (the agent's full document and log in the results
// ConfigMap's binaryData), report.html, the retry annotation and the
// pre-flight check, against a real S3 server (versitygw). These tests run
// only with DBBENCH_REAL_S3=1:
//
//	DBBENCH_REAL_S3=1 KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go test ./controllers/ -run Upload -v

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// outboxSamples is the length of each step's per-second series.
const outboxSamples = 40

// fullDocument is a cell's full document as the agent keeps it: two
// point-query steps with per-second series.
func fullDocument(t *testing.T, cell string) *results.Document {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	doc := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run:       results.Run{Name: "r"},
		Cell:      results.Cell{Name: cell, Engine: "mariadb", Version: "11.8", Repeat: 1, Attempt: 1},
		StartedAt: now.Add(-time.Minute), FinishedAt: &now,
		Status:     results.Status{Outcome: results.OutcomeSucceeded},
		Provenance: results.Provenance{ServerVersion: "11.8.3-MariaDB", DatabaseNode: results.Host{NodeName: "node-a"}},
	}
	for _, th := range []int{1, 4} {
		se := &results.Series{IntervalSeconds: 1, LatencyPercentile: 95}
		for i := 0; i < outboxSamples; i++ {
			q := float64(1000*th) + float64(i%7)
			se.QPS, se.TPS = append(se.QPS, q), append(se.TPS, q)
			se.LatencyMs = append(se.LatencyMs, 0.5+float64(i%3)/10)
			se.ErrorsPerSecond, se.ReconnectsPerSecond = append(se.ErrorsPerSecond, 0), append(se.ReconnectsPerSecond, 0)
		}
		doc.Steps = append(doc.Steps, results.StepResult{Step: "point-query", Group: "point", Threads: th, DurationSeconds: outboxSamples,
			SteadyQPS: float64(1000 * th), SteadyTPS: float64(1000 * th), SteadySamples: outboxSamples, FinalQPS: float64(1000 * th), FinalTPS: float64(1000 * th),
			Queries: int64(1000 * th * outboxSamples), Transactions: int64(1000 * th * outboxSamples), LatencyAvgMs: 0.6, LatencyMaxMs: 3, Series: se})
	}
	return doc
}

// agentWithOutbox plays the agent's final write with the outbox: result.json
// (compact), full.json.gz and agent.log.gz; then the Job's success.
func agentWithOutbox(t *testing.T, ns string, job *batchv1.Job, attempt int, agentLog string) {
	t.Helper()
	cm := strings.TrimSuffix(job.Name, fmt.Sprintf("-client-a%d", attempt)) + "-result"
	full := fullDocument(t, job.Labels[dbbenchv1alpha1.LabelCell])
	fullJSON, err := results.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	_, compact, err := results.Compact(full, results.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw := fmt.Sprintf(`{"attempt":%d,"phase":"Done","stepsDone":2,"stepsTotal":2}`, attempt)
	eventuallyNoConflict(t, func() error {
		obj := &corev1.ConfigMap{}
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: cm}, obj); err != nil {
			return err
		}
		obj.Data = map[string]string{agentapi.ResultKeyProgress: raw, agentapi.ResultKeyDocument: string(compact)}
		obj.BinaryData = map[string][]byte{agentapi.ResultKeyFullDocument: gz(t, fullJSON), agentapi.ResultKeyAgentLog: gz(t, []byte(agentLog))}
		return k8sClient.Update(ctx, obj)
	})
	finishJob(t, job, true)
}

func finishedRun(r *dbbenchv1alpha1.BenchmarkRun) bool {
	return meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
}

func resultConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &cm); err != nil {
		t.Fatalf("results ConfigMap %s: %v", name, err)
	}
	return &cm
}

// A cell whose results ConfigMap carries the outbox gets its full document
// (series.csv) and agent.log in the bucket, and the outbox is drained while
// result.json stays; a cell without it falls back to the compact document.
// The run's report.html names the cells.
func TestUploadCellOutboxAndReport(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	startManager(t, nil)
	run := s3Run(t, srv, ns, "outbox", s3SecretKey)

	// The first cell's agent has the outbox, the second's is an older one.
	agentLog := "[08:00:00] waiting up to 10m0s for mariadb\n[08:00:01] step point-query threads=1\n"
	var outboxCell, plainCell string
	compactOf := map[string]string{}
	deadline := time.Now().Add(60 * time.Second)
	for !finishedRun(kubetest.GetRun(t, k8sClient, ns, run.Name)) {
		if time.Now().After(deadline) {
			t.Fatalf("run did not finish: %s", cellPhases(kubetest.GetRun(t, k8sClient, ns, run.Name)))
		}
		for _, pod := range dbPods(t, ns, run.Name) {
			if pod.DeletionTimestamp == nil && pod.Status.PodIP == "" {
				markPodReady(t, &pod, "node-1", "10.88.0.20")
			}
		}
		for _, job := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
			if len(job.Status.Conditions) != 0 {
				continue
			}
			env := map[string]string{}
			for _, e := range job.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			if env[agentapi.EnvOutbox] != "true" {
				t.Errorf("client Job %s: %s = %q, want true with output.s3", job.Name, agentapi.EnvOutbox, env[agentapi.EnvOutbox])
			}
			cm := strings.TrimSuffix(job.Name, "-client-a1") + "-result"
			if outboxCell == "" {
				outboxCell = cm
				agentWithOutbox(t, ns, &job, 1, agentLog)
			} else {
				plainCell = cm
				agentCompletes(t, ns, &job, 1)
			}
			compactOf[cm] = resultConfigMap(t, ns, cm).Data[agentapi.ResultKeyDocument]
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := waitUpload(t, ns, run.Name, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)

	st := srv.store(t, s3SecretKey)
	layout := store.Layout{Prefix: s3Prefix}
	for _, tc := range []struct {
		cm        string
		series    bool
		wantLog   string
		fromAgent bool
	}{
		{outboxCell, true, agentLog, true},
		{plainCell, false, "", false},
	} {
		var cs *dbbenchv1alpha1.CellStatus
		for i := range got.Status.Cells {
			if got.Status.Cells[i].ResultConfigMap == tc.cm {
				cs = &got.Status.Cells[i]
			}
		}
		if cs == nil || !cs.Uploaded {
			t.Fatalf("cell of %s: %+v, want it uploaded", tc.cm, cs)
		}
		key := func(obj string) string { return layout.CellKey(s3Suite, run.Name, cs.Name, obj) }
		doc, err := st.GetCellDocument(ctx, s3Suite, run.Name, cs.Name)
		if err != nil {
			t.Fatalf("cell %s: %v", cs.Name, err)
		}
		if doc.Run.UID != string(got.UID) || doc.Cell.Name != cs.Name || doc.Form != results.FormFull {
			t.Errorf("cell %s: stored document run %+v cell %q form %q", cs.Name, doc.Run, doc.Cell.Name, doc.Form)
		}
		csv, csvErr := st.Get(ctx, key(store.ObjectSeries))
		log, logErr := st.Get(ctx, key(store.ObjectAgentLog))
		if tc.series {
			if len(doc.Steps) != 2 || doc.Steps[0].Series == nil || len(doc.Steps[0].Series.QPS) != outboxSamples {
				t.Errorf("cell %s: result.json has no per-second series of %d samples: %+v", cs.Name, outboxSamples, doc.Steps)
			}
			if csvErr != nil || strings.Count(string(csv), "\n") != 1+2*outboxSamples {
				t.Errorf("cell %s: series.csv (%v) has %d lines, want a header and %d rows", cs.Name, csvErr, strings.Count(string(csv), "\n"), 2*outboxSamples)
			}
			if logErr != nil || string(log) != tc.wantLog {
				t.Errorf("cell %s: agent.log = %q (%v), want the agent's log", cs.Name, log, logErr)
			}
		} else {
			if doc.Steps[0].Series != nil {
				t.Errorf("cell %s: a compact-only cell has a series", cs.Name)
			}
			if !errors.Is(csvErr, store.ErrNotFound) || !errors.Is(logErr, store.ErrNotFound) {
				t.Errorf("cell %s: series.csv (%v) and agent.log (%v) should not exist without the outbox", cs.Name, csvErr, logErr)
			}
		}
		// The outbox is drained; result.json, which the status and the
		// in-cluster reports read, stays as the agent wrote it.
		eventually(t, "the outbox of "+tc.cm+" drained", func() string {
			cm := resultConfigMap(t, ns, tc.cm)
			if len(cm.BinaryData) != 0 {
				return fmt.Sprintf("binaryData still holds %d keys", len(cm.BinaryData))
			}
			if cm.Data[agentapi.ResultKeyDocument] != compactOf[tc.cm] {
				return "result.json changed"
			}
			return ""
		})
	}

	// report.html, beside the manifest, names every cell.
	html, err := st.Get(ctx, layout.RunKey(s3Suite, run.Name, store.ObjectReport))
	if err != nil {
		t.Fatalf("report.html: %v", err)
	}
	if !bytes.Contains(html, []byte("<html")) {
		t.Errorf("report.html is not HTML: %.200s", html)
	}
	for _, cs := range got.Status.Cells {
		if !bytes.Contains(html, []byte(cs.Name)) {
			t.Errorf("report.html does not name cell %s", cs.Name)
		}
	}

	// A manager that stopped between the status write and the drain finds
	// the outbox again: it drains it and uploads nothing twice (result.json
	// stays the agent's full document).
	before, err := st.Stat(ctx, layout.CellKey(s3Suite, run.Name, cellOf(got, outboxCell), store.ObjectResult))
	if err != nil {
		t.Fatal(err)
	}
	eventuallyNoConflict(t, func() error {
		cm := resultConfigMap(t, ns, outboxCell)
		cm.BinaryData = map[string][]byte{agentapi.ResultKeyFullDocument: gz(t, []byte(`{"not":"read"}`)), agentapi.ResultKeyAgentLog: gz(t, []byte("stale"))}
		return k8sClient.Update(ctx, cm)
	})
	eventually(t, "the outbox drained again", func() string {
		if n := len(resultConfigMap(t, ns, outboxCell).BinaryData); n != 0 {
			return fmt.Sprintf("binaryData holds %d keys", n)
		}
		return ""
	})
	after, err := st.Stat(ctx, layout.CellKey(s3Suite, run.Name, cellOf(got, outboxCell), store.ObjectResult))
	if err != nil || after.SHA256 != before.SHA256 {
		t.Errorf("result.json changed after the re-drain: %s → %s (%v)", before.SHA256, after.SHA256, err)
	}
}

func cellOf(run *dbbenchv1alpha1.BenchmarkRun, resultCM string) string {
	for _, cs := range run.Status.Cells {
		if cs.ResultConfigMap == resultCM {
			return cs.Name
		}
	}
	return ""
}

// runEvents lists the Events about a run.
func runEvents(t *testing.T, ns, run string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "BenchmarkRun" && e.Regarding.Name == run {
			out = append(out, e)
		}
	}
	return out
}

func annotateRun(t *testing.T, ns, name, key, value string) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)))
	if err := k8sClient.Patch(ctx, kubetest.GetRun(t, k8sClient, ns, name), patch); err != nil {
		t.Fatalf("annotating the run: %v", err)
	}
}

// requireUploadAdvice checks that an upload condition the user must act on
// names what to fix: the field, bucket, endpoint or Secret, and the
// annotation that retries at once. No field carries them: the text is the
// contract there, its wording around them free.
func requireUploadAdvice(t *testing.T, c *metav1.Condition, says ...string) {
	t.Helper()
	for _, want := range says {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the condition should say %q: %s", want, condString(c))
		}
	}
}

// Refused credentials are UploadFailed and retried with the backoff; once
// the Secret is fixed, the retry annotation uploads at once and is removed.
func TestUploadWrongCredentialsRetriedAfterTheSecretIsFixed(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	rm := startManager(t, nil)
	run := s3Run(t, srv, ns, "badcreds", "not-the-secret")
	driveCellsToCompletion(t, ns, run.Name)
	got := waitUpload(t, ns, run.Name, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploadFailed)
	requireUploadAdvice(t, uploadCondition(got), s3Bucket, "credentials refused", run.Name+"-s3", dbbenchv1alpha1.AnnotationRetryUpload)
	if !meta.IsStatusConditionTrue(got.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
		t.Errorf("the cells' outcome should not depend on the upload: %s", cellPhases(got))
	}
	if got.Status.Upload.RetryRequiresAnnotation {
		t.Errorf("refused credentials are retried with the backoff, not only on the annotation: %+v", got.Status.Upload)
	}

	// Retried with the backoff: past its end (the clock is fake; the
	// requeue is real and at most the first step), another attempt fails.
	failures := got.Status.Upload.Failures
	rm.clock.SetTime(rm.clock.Now().Add(time.Hour))
	eventually(t, "a retry with the backoff", func() string {
		r := kubetest.GetRun(t, k8sClient, ns, run.Name)
		if r.Status.Upload.Failures <= failures {
			return fmt.Sprintf("failures %d, %s", r.Status.Upload.Failures, condString(uploadCondition(r)))
		}
		if c := uploadCondition(r); c.Reason != dbbenchv1alpha1.ReasonUploadFailed {
			return condString(c)
		}
		return ""
	})
	if keys, err := srv.store(t, s3SecretKey).List(ctx, s3Prefix+"/"); err != nil || len(keys) != 0 {
		t.Errorf("the bucket should be empty: %v %v", keys, err)
	}

	// Fix the Secret and ask for the retry; the clock does not move, so the
	// backoff alone would not retry.
	var sec corev1.Secret
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: run.Name + "-s3"}, &sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["secretAccessKey"] = []byte(s3SecretKey)
	if err := k8sClient.Update(ctx, &sec); err != nil {
		t.Fatal(err)
	}
	annotateRun(t, ns, run.Name, dbbenchv1alpha1.AnnotationRetryUpload, "now")
	got = waitUpload(t, ns, run.Name, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)
	checkUploaded(t, srv, got)
	if got.Status.Upload.Failures != 0 || got.Status.Upload.LastFailureTime != nil {
		t.Errorf("status.upload = %+v, want the failures reset", got.Status.Upload)
	}
	eventually(t, "the annotation removed", func() string {
		if v, ok := kubetest.GetRun(t, k8sClient, ns, run.Name).Annotations[dbbenchv1alpha1.AnnotationRetryUpload]; ok {
			return "still there: " + v
		}
		return ""
	})
}

// The pre-flight check finds a missing bucket before the first cell: a
// condition naming spec.output.s3 and a Warning event, while the benchmark
// runs. The upload then fails for good (not retried) until the bucket exists
// and the run is annotated.
func TestUploadPreflightMissingBucket(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	startManager(t, nil)
	const missing = "dbbench-not-created-yet"
	run := s3RunWith(t, srv, ns, "preflight", s3SecretKey, func(r *dbbenchv1alpha1.BenchmarkRun) { r.Spec.Output.S3.Bucket = missing })

	got := waitUpload(t, ns, run.Name, metav1.ConditionFalse, dbbenchv1alpha1.ReasonPreflightFailed)
	requireUploadAdvice(t, uploadCondition(got), "spec.output.s3", missing, srv.Endpoint(), run.Name+"-s3", "bucket does not exist")
	eventually(t, "the pre-flight Warning event", func() string {
		var seen []string
		for _, e := range runEvents(t, ns, run.Name) {
			if e.Reason == dbbenchv1alpha1.ReasonPreflightFailed && e.Type == corev1.EventTypeWarning {
				return ""
			}
			seen = append(seen, e.Type+" "+e.Reason)
		}
		return fmt.Sprintf("events %q", seen)
	})
	// The benchmark proceeds: its cells are created and finish.
	eventually(t, "the first cell's database pod", func() string {
		if len(dbPods(t, ns, run.Name)) == 0 {
			return "no database pod"
		}
		return ""
	})
	if pc := uploadCondition(kubetest.GetRun(t, k8sClient, ns, run.Name)); pc.Reason != dbbenchv1alpha1.ReasonPreflightFailed {
		t.Errorf("the pre-flight finding should stand until an upload is attempted: %s", condString(pc))
	}
	driveCellsToCompletion(t, ns, run.Name)
	got = waitUpload(t, ns, run.Name, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploadFailed)
	// retryRequiresAnnotation says it to programs, the message to people.
	if !got.Status.Upload.RetryRequiresAnnotation {
		t.Errorf("a missing bucket is not retried by itself: %+v", got.Status.Upload)
	}
	requireUploadAdvice(t, uploadCondition(got), missing, dbbenchv1alpha1.AnnotationRetryUpload)
	if !meta.IsStatusConditionTrue(got.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
		t.Errorf("the run should succeed without its upload: %s", cellPhases(got))
	}
	for _, cs := range got.Status.Cells {
		if cs.Uploaded {
			t.Errorf("cell %s uploaded into a missing bucket", cs.Name)
		}
	}

	// Create the bucket and ask for the retry.
	st, err := store.New(store.Config{Endpoint: srv.Endpoint(), Bucket: missing, Prefix: s3Prefix, AccessKeyID: s3AccessKey, SecretAccessKey: s3SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	annotateRun(t, ns, run.Name, dbbenchv1alpha1.AnnotationRetryUpload, "1")
	got = waitUpload(t, ns, run.Name, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)
	if got.Status.Upload.RetryRequiresAnnotation {
		t.Errorf("the retry annotation should clear retryRequiresAnnotation: %+v", got.Status.Upload)
	}
	if m, err := st.GetManifest(ctx, s3Suite, run.Name); err != nil || len(m.Cells) != len(got.Status.Cells) {
		t.Errorf("manifest after the retry: %v", err)
	}
	eventually(t, "the annotation removed", func() string {
		if _, ok := kubetest.GetRun(t, k8sClient, ns, run.Name).Annotations[dbbenchv1alpha1.AnnotationRetryUpload]; ok {
			return "still there"
		}
		return ""
	})
}
