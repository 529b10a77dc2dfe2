package benchmarkrun

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
)

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// Which full document from a cell's outbox is uploaded, and when the
// controller falls back to the compact one.
func TestUploadOutboxDocument(t *testing.T) {
	start := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	end := start.Add(time.Minute)
	full := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run: results.Run{Name: "r"}, Cell: results.Cell{Name: "c", Engine: "mariadb", Version: "11.8", Repeat: 1, Attempt: 2},
		StartedAt: start, FinishedAt: &end, Status: results.Status{Outcome: results.OutcomeSucceeded},
		Steps: []results.StepResult{{Step: "point-query", Threads: 1, DurationSeconds: 3, SteadyQPS: 10, SteadyTPS: 10, SteadySamples: 3,
			Series: &results.Series{IntervalSeconds: 1, LatencyPercentile: 95, QPS: []float64{9, 10, 11}, TPS: []float64{9, 10, 11},
				LatencyMs: []float64{1, 1, 1}, ErrorsPerSecond: []float64{0, 0, 0}, ReconnectsPerSecond: []float64{0, 0, 0}}}},
	}
	fullJSON, err := results.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	compact, compactJSON, err := results.Compact(full, results.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attempt1 := *full
	attempt1.Cell.Attempt = 1
	attempt1JSON, _ := results.Marshal(&attempt1)
	huge := gzipped(bytes.Repeat([]byte(" "), maxFullDocumentBytes+1))

	for _, tc := range []struct {
		name    string
		binary  map[string][]byte
		wantDoc bool
		wantLog string
		why     string
	}{
		{"full document and log", map[string][]byte{agentapi.ResultKeyFullDocument: gzipped(fullJSON), agentapi.ResultKeyAgentLog: gzipped([]byte("log\n"))}, true, "log\n", ""},
		{"full document without log", map[string][]byte{agentapi.ResultKeyFullDocument: gzipped(fullJSON)}, true, "", ""},
		{"unreadable log", map[string][]byte{agentapi.ResultKeyFullDocument: gzipped(fullJSON), agentapi.ResultKeyAgentLog: []byte("not gzip")}, true, "unreadable", ""},
		{"no outbox", nil, false, "", "no " + agentapi.ResultKeyFullDocument},
		{"log alone", map[string][]byte{agentapi.ResultKeyAgentLog: gzipped([]byte("log"))}, false, "", "no " + agentapi.ResultKeyFullDocument},
		{"not gzip", map[string][]byte{agentapi.ResultKeyFullDocument: fullJSON}, false, "", "gzip"},
		{"not a document", map[string][]byte{agentapi.ResultKeyFullDocument: gzipped([]byte(`{"x":1}`))}, false, "", agentapi.ResultKeyFullDocument},
		{"compact form", map[string][]byte{agentapi.ResultKeyFullDocument: gzipped(compactJSON)}, false, "", "form"},
		{"another attempt", map[string][]byte{agentapi.ResultKeyFullDocument: gzipped(attempt1JSON)}, false, "", "not the same attempt"},
		{"too large", map[string][]byte{agentapi.ResultKeyFullDocument: huge}, false, "", "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{BinaryData: tc.binary}
			cm.Name = "c-result"
			doc, log, why := outboxDocument(cm, compact)
			if (doc != nil) != tc.wantDoc {
				t.Fatalf("document %v (why %q), want %v", doc != nil, why, tc.wantDoc)
			}
			if doc != nil && (doc.Steps[0].Series == nil || len(doc.Steps[0].Series.QPS) != 3) {
				t.Errorf("the full document lost its series")
			}
			if !strings.Contains(string(log), tc.wantLog) || (tc.wantLog == "" && len(log) != 0) {
				t.Errorf("log %q, want %q", log, tc.wantLog)
			}
			if !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want it to contain %q", why, tc.why)
			}
		})
	}
}

// How the store's errors are retried.
func TestUploadFailurePolicy(t *testing.T) {
	for _, tc := range []struct {
		kind store.Kind
		want framework.RetryPolicy
	}{
		{store.KindTransient, framework.RetryWait},
		{store.KindIntegrity, framework.RetryWait},
		{store.KindAuth, framework.RetryFixSecret},
		{store.KindPermanent, framework.RetryNever},
		{store.KindConflict, framework.RetryNever},
	} {
		err := &store.Error{Op: "put", Bucket: "b", Key: "k", Kind: tc.kind, Err: errors.New("cause")}
		if got := framework.StoreFailure(err).Policy; got != tc.want {
			t.Errorf("%v: policy %d, want %d", tc.kind, got, tc.want)
		}
	}
	if got := framework.StoreFailure(errors.New("invalid document")).Policy; got != framework.RetryNever {
		t.Errorf("an error that is not the store's: policy %d, want never", got)
	}
}
