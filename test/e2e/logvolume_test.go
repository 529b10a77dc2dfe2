//go:build e2e

package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// TestLogVolumeOnTheCluster: a MariaDB cell with storage.log (an emptyDir)
// runs with its redo log on the second volume, and every step's results
// carry the disk figures of both volumes, resolved to the node's devices by
// the collector sidecar. On the local cluster both emptyDirs are on the
// node's one disk: the results and the report must say "shared device"
// rather than present the repeated figures as a split.
func TestLogVolumeOnTheCluster(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "logvol")
	run := smallRun(ns, "logvol", "10.11")
	run.Spec.Workload.Threads = []int32{2}
	run.Spec.Databases[0].Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	createRun(t, run)
	start := time.Now()
	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	t.Logf("run finished in %s: %s", time.Since(start).Round(time.Second), runSummary(run))
	requireSucceeded(t, run)
	cs := run.Status.Cells[0]
	doc := resultDocument(t, ns, cs)
	requireAllSteps(t, run, cs, doc, cellAttempt(t, cs))

	for _, s := range doc.Steps {
		h := s.Hardware
		if h == nil {
			t.Fatalf("%s@%d: no hardware figures", s.Step, s.Threads)
		}
		data, lg := h.Volume(specs.DataVolume), h.Volume(specs.LogVolume)
		if data == nil || lg == nil {
			t.Fatalf("%s@%d: volumes %+v, want data and log", s.Step, s.Threads, h.Volumes)
		}
		stalled := stalledOnRecord(s)
		t.Logf("%s@%d: data %s (shared %v, unresolved %q) wKB/o %v; log %s wKB/o %v; stalled %v",
			s.Step, s.Threads, data.Device, data.SharedDevice, data.Unresolved, deref(data.WriteKBPerOp), lg.Device, deref(lg.WriteKBPerOp), stalled)
		// A step the loaded machine stalled through its window (which
		// requireAllSteps accepts when the gate flagged it) has no
		// throughput to divide by: its per-op figures are rightly absent,
		// its device and per-second figures are not.
		for _, v := range []*results.VolumeIO{data, lg} {
			perOp := v.WriteKBPerOp != nil && v.IOsPerOp != nil
			if v.Device == "" || v.Unresolved != "" || v.WriteKBPerSecond == nil || v.IOsPerSecond == nil || (!perOp && !stalled) {
				t.Errorf("%s@%d: volume %s not attributed to a device (stalled %v): %+v", s.Step, s.Threads, v.Name, stalled, v)
			}
		}
		if same := data.Device == lg.Device; data.SharedDevice != same || lg.SharedDevice != same {
			t.Errorf("%s@%d: data on %s, log on %s, sharedDevice %v/%v", s.Step, s.Threads, data.Device, lg.Device, data.SharedDevice, lg.SharedDevice)
		}
	}
	// And the report says it, under the hardware-efficiency table.
	ds, err := analysis.FromDocuments(run.Name, []*results.Document{doc})
	if err != nil {
		t.Fatal(err)
	}
	hw, err := analysis.HWEfficiency(ds, analysis.HWOptions{Step: "update-index", Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := analysis.WriteTables(&text, analysis.FormatTable, hw.Tables()); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", text.String())
	if !strings.Contains(text.String(), "I/O by volume") || !strings.Contains(text.String(), "log wKB/o") {
		t.Errorf("report has no I/O-by-volume block:\n%s", text.String())
	}
	if d := doc.Steps[0].Hardware.Volume(specs.DataVolume); d != nil && d.SharedDevice && !strings.Contains(text.String(), "shared device") {
		t.Errorf("report does not say the volumes share a device:\n%s", text.String())
	}
}

func deref(v *float64) any {
	if v == nil {
		return "absent"
	}
	return *v
}
