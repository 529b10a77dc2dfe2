package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// agentExt reads the agent's extension of a document.
func agentExt(t *testing.T, d *results.Document) CellExtension {
	t.Helper()
	var ext CellExtension
	if raw, ok := d.Extensions[ExtensionKey]; ok {
		if err := json.Unmarshal(raw, &ext); err != nil {
			t.Fatalf("extension: %v", err)
		}
	}
	return ext
}

// outboxSink records every write, final ones with their attachments.
type outboxSink struct {
	docs  [][]byte
	blobs []map[string][]byte // nil for a non-final write
}

func (s *outboxSink) Write(_ context.Context, _ agentapi.Progress, doc []byte) error {
	s.docs = append(s.docs, doc)
	s.blobs = append(s.blobs, nil)
	return nil
}

func (s *outboxSink) WriteFinal(_ context.Context, _ agentapi.Progress, doc []byte, blobs map[string][]byte) error {
	s.docs = append(s.docs, doc)
	s.blobs = append(s.blobs, blobs)
	return nil
}

// finishedAgent is an agent whose cell has finished with steps carrying
// per-second series of seriesLen samples, and whose log holds logBytes of
// incompressible text.
func finishedAgent(t *testing.T, sink ResultSink, seriesLen, logBytes int) *Agent {
	t.Helper()
	a := &Agent{Plan: testPlan("point-query"), Sink: sink, Outbox: true}
	a.Plan.Results = agentapi.Results{ConfigMap: "c0-result"}
	a.logBuf = newLogBuffer(0)
	a.initDocument()
	a.reporter = &Reporter{Sink: sink, MinInterval: time.Second}
	a.progress = agentapi.Progress{Attempt: 1, Phase: agentapi.PhaseDone, StepsDone: 2, StepsTotal: 2}
	for _, th := range []int{1, 2} {
		se := &results.Series{IntervalSeconds: 1, LatencyPercentile: 95}
		for i := 0; i < seriesLen; i++ {
			// Values that do not repeat, so the series does not compress to nothing.
			v := 1000 + float64(th*i%997) + float64(i)/7
			se.QPS = append(se.QPS, v)
			se.TPS = append(se.TPS, v/10)
			se.LatencyMs = append(se.LatencyMs, 1+float64(i%13)/3)
			se.ErrorsPerSecond = append(se.ErrorsPerSecond, 0)
			se.ReconnectsPerSecond = append(se.ReconnectsPerSecond, 0)
		}
		a.doc.Steps = append(a.doc.Steps, results.StepResult{Step: "point-query", Group: "point", Threads: th,
			DurationSeconds: float64(seriesLen), SteadyQPS: 1000, SteadyTPS: 100, SteadySamples: seriesLen,
			FinalQPS: 1000, FinalTPS: 100, LatencyAvgMs: 1, LatencyMaxMs: 2, Series: se})
	}
	now := time.Now().UTC()
	a.doc.FinishedAt = &now
	a.doc.Status = results.Status{Outcome: results.OutcomeSucceeded}
	for n := 0; n < logBytes; {
		b := make([]byte, 60)
		_, _ = rand.Read(b)
		a.logf("noise %s", base64.StdEncoding.EncodeToString(b))
		n += 100
	}
	return a
}

// The final write fits the ConfigMap's budget by leaving out the agent log
// first, then the full document, and says so in the documents.
func TestOutboxBudget(t *testing.T) {
	// Sizes of this cell's encodings, to set budgets between them.
	probe := finishedAgent(t, &outboxSink{}, 3000, 200_000)
	var sizes struct{ compact, full, log int }
	if _, err := packOutbox(1<<30, 0, nil, func(notes []string) ([]byte, []byte, error) {
		setExt(&probe.doc.Extensions, probe.ext)
		full, err := results.Marshal(&probe.doc)
		if err != nil {
			return nil, nil, err
		}
		_, compact, err := results.Compact(&probe.doc, results.CompactOptions{})
		sizes.compact, sizes.full = len(compact), len(gzipBytes(full))
		return compact, nil, err
	}); err != nil {
		t.Fatal(err)
	}
	sizes.log = len(gzipBytes(probe.logBuf.Bytes()))
	if sizes.full < 10_000 || sizes.log < 100_000 {
		t.Fatalf("test data too small to tell the cases apart: %+v", sizes)
	}
	t.Logf("compact %d, full.json.gz %d, agent.log.gz %d bytes", sizes.compact, sizes.full, sizes.log)
	const slack = 2000 // progress.json, the notes, the fixed reserve
	all := sizes.compact + sizes.full + sizes.log
	for _, tc := range []struct {
		name     string
		budget   int
		logBytes int
		want     []string // attachments kept
		dropped  []string // notes, in order, by the key they name
	}{
		{"everything fits", all + slack, 200_000, []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog}, nil},
		{"default budget", 0, 200_000, []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog}, nil},
		{"log left out first", all - sizes.log/2, 200_000, []string{agentapi.ResultKeyFullDocument}, []string{agentapi.ResultKeyAgentLog}},
		{"then the full document", sizes.compact + sizes.full/2, 200_000, nil, []string{agentapi.ResultKeyAgentLog, agentapi.ResultKeyFullDocument}},
		{"compact alone over budget", sizes.compact / 2, 200_000, nil, []string{agentapi.ResultKeyAgentLog, agentapi.ResultKeyFullDocument}},
		{"a small log fits beside the full document", sizes.compact + sizes.full + slack + 3000, 100, []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &outboxSink{}
			a := finishedAgent(t, sink, 3000, tc.logBytes)
			a.ResultBudget = tc.budget
			if err := a.reportFinal(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(sink.docs) != 1 || sink.blobs[0] == nil {
				t.Fatalf("want one final write with attachments, got %d writes %v", len(sink.docs), sink.blobs)
			}
			blobs := sink.blobs[0]
			var kept []string
			for _, k := range []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog} {
				if _, ok := blobs[k]; ok {
					kept = append(kept, k)
				}
			}
			if strings.Join(kept, ",") != strings.Join(tc.want, ",") {
				t.Errorf("kept %v, want %v", kept, tc.want)
			}
			total := len(sink.docs[0])
			for _, b := range blobs {
				total += len(b)
			}
			budget := tc.budget
			if budget == 0 {
				budget = agentapi.ResultBudgetBytes
			}
			if len(kept) > 0 && total > budget {
				t.Errorf("the final write's values are %d bytes, over the budget %d", total, budget)
			}
			compact := validateDocument(t, sink.docs[0])
			notes := agentExt(t, compact).OutboxDropped
			if len(notes) != len(tc.dropped) {
				t.Fatalf("compact document's outboxDropped = %q, want notes on %v", notes, tc.dropped)
			}
			for i, k := range tc.dropped {
				if !strings.HasPrefix(notes[i], k+" (") || !strings.Contains(notes[i], "budget") {
					t.Errorf("note %d = %q, want it to name %s and the budget", i, notes[i], k)
				}
				if !strings.Contains(string(a.logBuf.Bytes()), "outbox: "+notes[i]) {
					t.Errorf("the agent did not log note %d", i)
				}
			}
			if full, ok := blobs[agentapi.ResultKeyFullDocument]; ok {
				d := validateDocument(t, gunzip(t, full))
				if d.Form != results.FormFull || d.Steps[0].Series == nil || len(d.Steps[0].Series.QPS) != 3000 {
					t.Errorf("full document: form %q, series %v", d.Form, d.Steps[0].Series != nil)
				}
				if got := agentExt(t, d).OutboxDropped; len(got) != len(tc.dropped) {
					t.Errorf("full document's outboxDropped = %q, want %d notes", got, len(tc.dropped))
				}
			}
			if l, ok := blobs[agentapi.ResultKeyAgentLog]; ok && !strings.Contains(string(gunzip(t, l)), "noise ") {
				t.Errorf("agent.log.gz does not hold the agent's log lines")
			}
		})
	}
}

func TestLogBufferKeepsHeadAndTail(t *testing.T) {
	b := newLogBuffer(800)
	for i := 0; i < 1000; i++ {
		_, _ = io.WriteString(b, strings.Repeat(string(rune('a'+i%26)), 9)+"\n")
	}
	got := string(b.Bytes())
	if !strings.HasPrefix(got, "aaaaaaaaa\nbbbbbbbbb\n") || !strings.HasSuffix(got, "lllllllll\n") {
		t.Errorf("head or tail lost:\n%s", got)
	}
	if !strings.Contains(got, "bytes of the agent log left out") || len(got) > 900 {
		t.Errorf("%d bytes kept of a bounded 800-byte log:\n%s", len(got), got)
	}
	small := newLogBuffer(800)
	_, _ = io.WriteString(small, "one\ntwo\n")
	if string(small.Bytes()) != "one\ntwo\n" {
		t.Errorf("a short log changed: %q", small.Bytes())
	}
}

// In a cluster the attachments ride on the final write only: progress
// writes carry none and remove an earlier attempt's.
func TestOutboxOnTheFinalWriteOnly(t *testing.T) {
	dir := t.TempDir()
	fakeSysbench := filepath.Join(dir, "sysbench")
	if err := os.WriteFile(fakeSysbench, []byte("#!/bin/sh\necho 'sysbench 1.0.20'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		outbox bool
	}{{"outbox", true}, {"no outbox", false}} {
		t.Run(tc.name, func(t *testing.T) {
			stale := []byte("an earlier attempt's log")
			cs := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c0-result", Namespace: "bench"},
				BinaryData: map[string][]byte{agentapi.ResultKeyAgentLog: stale, "other": []byte("kept")}})
			sink := &ConfigMapSink{Client: cs, Namespace: "bench", Name: "c0-result"}
			p := testPlan("point-query")
			p.Run.Namespace = "bench"
			p.Results = agentapi.Results{ConfigMap: "c0-result"}
			a := &Agent{Plan: p, Host: "127.0.0.1", User: "u", Sink: sink, SysbenchBinary: fakeSysbench, Outbox: tc.outbox}
			res := a.Run(context.Background())
			if res.ExitCode != agentapi.ExitServerUnreachable {
				t.Fatalf("exit %d (%v), want %d: nothing listens on port 1", res.ExitCode, res.Err, agentapi.ExitServerUnreachable)
			}
			var writes []*corev1.ConfigMap
			for _, act := range cs.Actions() {
				if u, ok := act.(k8stesting.UpdateAction); ok {
					writes = append(writes, u.GetObject().(*corev1.ConfigMap))
				}
			}
			if len(writes) < 2 {
				t.Fatalf("%d writes, want progress writes and a final one", len(writes))
			}
			for i, w := range writes[:len(writes)-1] {
				for _, k := range []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog} {
					if _, ok := w.BinaryData[k]; ok {
						t.Errorf("progress write %d carries %s", i, k)
					}
				}
				if string(w.BinaryData["other"]) != "kept" {
					t.Errorf("progress write %d dropped a key that is not the outbox's", i)
				}
			}
			last := writes[len(writes)-1]
			full, hasFull := last.BinaryData[agentapi.ResultKeyFullDocument]
			log, hasLog := last.BinaryData[agentapi.ResultKeyAgentLog]
			if !tc.outbox {
				if hasFull || hasLog {
					t.Errorf("without the outbox the final write carries %v", keys(last.BinaryData))
				}
				return
			}
			if !hasFull || !hasLog {
				t.Fatalf("final write carries %v, want %s and %s", keys(last.BinaryData), agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog)
			}
			d := validateDocument(t, gunzip(t, full))
			compact := validateDocument(t, []byte(last.Data[agentapi.ResultKeyDocument]))
			if d.Form != results.FormFull || d.Status.Outcome != results.OutcomeFailed || compact.Form != results.FormCompact ||
				!d.StartedAt.Equal(compact.StartedAt) || d.Cell.Attempt != compact.Cell.Attempt {
				t.Errorf("full document %s/%s does not match the compact one %s/%s", d.Form, d.Status.Outcome, compact.Form, compact.Status.Outcome)
			}
			l := string(gunzip(t, log))
			if !strings.Contains(l, "waiting up to") || !strings.Contains(l, "FAILED:") || strings.Contains(l, string(stale)) {
				t.Errorf("agent.log.gz:\n%s", l)
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
