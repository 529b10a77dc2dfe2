package integration_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkrun"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
)

// scrape gathers metrics.Registry and returns the series of one family as
// "label=value,…" → value (the sample count for histograms).
func scrape(t *testing.T, family string) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			out[labelString(m)] = value(m)
		}
	}
	return out
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func withLabel(name string, values ...string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, name+"="+v)
	}
	sort.Strings(out)
	return out
}

func TestMetricLabelSetsAreBounded(t *testing.T) {
	reasons := append(slices.Clone(benchmarkrun.RetryReasons), benchmarkrun.RetryReasonOther)
	before := scrape(t, "dbbench_cell_retries_total")
	// Every series exists before anything happened.
	if got, want := keys(before), withLabel("reason", reasons...); !slices.Equal(got, want) {
		t.Fatalf("retry series %v\nwant %v", got, want)
	}

	benchmarkrun.RecordRetry(string(dbbenchv1alpha1.ReasonDatabaseEvicted))
	benchmarkrun.RecordRetry("run-4711-cell-mariadb-11.8") // never a label value
	benchmarkrun.RecordRetry("")
	after := scrape(t, "dbbench_cell_retries_total")
	if got, want := keys(after), withLabel("reason", reasons...); !slices.Equal(got, want) {
		t.Fatalf("retry series after unknown reasons %v\nwant %v", got, want)
	}
	if d := after["reason=Other"] - before["reason=Other"]; d != 2 {
		t.Errorf("Other grew by %v, want 2", d)
	}
	if d := after["reason=DatabaseEvicted"] - before["reason=DatabaseEvicted"]; d != 1 {
		t.Errorf("DatabaseEvicted grew by %v, want 1", d)
	}

	durBefore := scrape(t, "dbbench_cell_duration_seconds")
	benchmarkrun.RecordCellFinished(benchmarkrun.OutcomeSucceeded, 42*time.Minute)
	benchmarkrun.RecordCellFinished("exploded", time.Minute)
	dur := scrape(t, "dbbench_cell_duration_seconds")
	if got, want := keys(dur), withLabel("outcome", "failed", "succeeded"); !slices.Equal(got, want) {
		t.Fatalf("duration series %v, want %v", got, want)
	}
	if dur["outcome=succeeded"]-durBefore["outcome=succeeded"] != 1 || dur["outcome=failed"]-durBefore["outcome=failed"] != 1 {
		t.Errorf("duration samples %v, before %v", dur, durBefore)
	}

	upBefore, failBefore := scrape(t, "dbbench_uploads_total"), scrape(t, "dbbench_upload_failures_total")
	benchmarkrun.RecordUpload(benchmarkrun.UploadKindCell, nil)
	benchmarkrun.RecordUpload(benchmarkrun.UploadKindRun, errors.New("503 Slow Down"))
	up, fail := scrape(t, "dbbench_uploads_total"), scrape(t, "dbbench_upload_failures_total")
	if got, want := keys(up), withLabel("kind", "cell", "run"); !slices.Equal(got, want) {
		t.Fatalf("upload series %v, want %v", got, want)
	}
	if up["kind=cell"]-upBefore["kind=cell"] != 1 || up["kind=run"]-upBefore["kind=run"] != 1 {
		t.Errorf("uploads %v, before %v", up, upBefore)
	}
	if fail["kind=run"]-failBefore["kind=run"] != 1 || fail["kind=cell"] != failBefore["kind=cell"] {
		t.Errorf("upload failures %v, before %v", fail, failBefore)
	}
}

// TestMetricGaugesCountTheRunsInTheCache scrapes the registry the manager
// serves and compares dbbench_runs and dbbench_cells with the runs on the
// API server, counted by phase.
func TestMetricGaugesCountTheRunsInTheCache(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := matrixRun(ns, "metrics")
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	eventually(t, "the run's cells in its status", func() string {
		if r := kubetest.GetRun(t, k8sClient, ns, "metrics"); len(r.Status.Cells) != 6 {
			return fmt.Sprintf("%d cells", len(r.Status.Cells))
		}
		return ""
	})

	eventually(t, "gauges equal to the API server's runs", func() string {
		var list dbbenchv1alpha1.BenchmarkRunList
		if err := k8sClient.List(ctx, &list); err != nil {
			return err.Error()
		}
		wantRuns := map[string]float64{"phase=Pending": 0, "phase=Running": 0, "phase=Succeeded": 0, "phase=Failed": 0}
		wantCells := map[string]float64{"phase=Pending": 0, "phase=Starting": 0, "phase=Running": 0, "phase=Succeeded": 0, "phase=Failed": 0}
		for _, r := range list.Items {
			ph := string(r.Status.Phase)
			if ph == "" {
				ph = "Pending"
			}
			wantRuns["phase="+ph]++
			for _, c := range r.Status.Cells {
				wantCells["phase="+string(c.Phase)]++
			}
		}
		gotRuns, gotCells := scrape(t, "dbbench_runs"), scrape(t, "dbbench_cells")
		if fmt.Sprint(gotRuns) != fmt.Sprint(wantRuns) || fmt.Sprint(gotCells) != fmt.Sprint(wantCells) {
			return fmt.Sprintf("dbbench_runs %v, want %v; dbbench_cells %v, want %v", gotRuns, wantRuns, gotCells, wantCells)
		}
		return ""
	})

	// The run is counted: its phase and its six cells.
	r := kubetest.GetRun(t, k8sClient, ns, "metrics")
	if got := scrape(t, "dbbench_runs")["phase="+string(r.Status.Phase)]; got < 1 {
		t.Errorf("dbbench_runs{phase=%q} = %v", r.Status.Phase, got)
	}
	var cells float64
	for _, v := range scrape(t, "dbbench_cells") {
		cells += v
	}
	if cells < 6 {
		t.Errorf("dbbench_cells sum to %v, want at least the run's 6", cells)
	}
}
