//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
)

// TestResultsReachTheObjectStore: a real run with output.s3 ends with its
// results in a real S3 server (versitygw, started by hack/test-e2e.sh on the
// cluster's bridge): the manager, in its pod and with the chart's RBAC,
// reads the credentials Secret and uploads every cell's full document with
// its per-second series, the agent's and the database server's logs, the
// manifest and the HTML report.
func TestResultsReachTheObjectStore(t *testing.T) {
	tier.Core(t)
	endpoint := s3Endpoint(t)
	t.Parallel()
	ns := newNamespace(t, "store")
	const bucket, prefix = "e2e-results", "e2e"
	st, s3 := objectStore(t, endpoint, ns, bucket, prefix)

	run := smallRun(ns, "to-s3", "10.11")
	run.Spec.Workload.Steps = []string{"point-query", "update-index"}
	run.Spec.Output.S3 = s3
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run)
	eventually(t, 2*time.Minute, "ResultsUploaded=True", func() string {
		run = kubetest.GetRun(t, k8sClient, ns, run.Name)
		c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded)
		if c == nil || c.Status != metav1.ConditionTrue {
			return "ResultsUploaded: " + conditionString(c)
		}
		return ""
	})

	suite := run.Spec.Suite
	layout := st.Layout()
	m, err := st.GetManifest(ctx, suite, run.Name)
	if err != nil {
		t.Fatalf("reading the manifest back: %v", err)
	}
	if m.Run.UID != string(run.UID) || len(m.Cells) != 1 {
		t.Fatalf("manifest %+v, want run %s with 1 cell", m.Run, run.UID)
	}
	cell := run.Status.Cells[0].Name
	doc, err := st.GetCellDocument(ctx, suite, run.Name, cell)
	if err != nil {
		t.Fatalf("reading the cell's document back: %v", err)
	}
	if doc.Form != results.FormFull || doc.Run.Name != run.Name || doc.Cell.Name != cell {
		t.Errorf("stored document: form %q run %q cell %q", doc.Form, doc.Run.Name, doc.Cell.Name)
	}
	for _, s := range doc.Steps {
		if s.Series == nil || len(s.Series.QPS) == 0 {
			t.Errorf("stored document: %s@%d has no per-second series", s.Step, s.Threads)
		}
	}
	series, err := st.Get(ctx, layout.CellKey(suite, run.Name, cell, store.ObjectSeries))
	if err != nil {
		t.Fatalf("series.csv: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(series)), "\n")
	if len(lines) < 1+4*3 || !strings.HasPrefix(lines[0], "step,threads,t_seconds,qps") {
		t.Errorf("series.csv has %d lines, header %q; want a header and at least 3 samples per step × threads", len(lines), lines[0])
	}
	if b, err := st.Get(ctx, layout.CellKey(suite, run.Name, cell, store.ObjectAgentLog)); err != nil || len(b) == 0 {
		t.Errorf("agent.log: %d bytes, %v", len(b), err)
	}
	// The real MariaDB server's log, read through pods/log before the pod
	// was deleted.
	if b, err := st.Get(ctx, layout.CellKey(suite, run.Name, cell, store.ObjectServerLog)); err != nil || !strings.Contains(string(b), "ready for connections") {
		t.Errorf("server.log (%v): %d bytes, want the MariaDB server's log: %.300s", err, len(b), b)
	}
	if b, err := st.Get(ctx, layout.CellKey(suite, run.Name, cell, store.ObjectProvenance)); err != nil || !strings.Contains(string(b), "innodb_buffer_pool_size") {
		t.Errorf("provenance.json lacks the effective settings (%v): %.200s", err, b)
	}
	report, err := st.Get(ctx, layout.RunKey(suite, run.Name, store.ObjectReport))
	if err != nil || !strings.Contains(string(report), "<svg") || !strings.Contains(string(report), cell) {
		t.Errorf("report.html (%v): %d bytes, want an HTML report with charts naming %s", err, len(report), cell)
	}
}

func conditionString(c *metav1.Condition) string {
	if c == nil {
		return "absent"
	}
	return string(c.Status) + " " + c.Reason + ": " + c.Message
}
