package benchmarkrun

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
)

// The cell's outbox: with output.s3 the agent's final write into the cell's
// results ConfigMap also carries, in binaryData, the gzip'd full document
// (agentapi.ResultKeyFullDocument) and agent log (agentapi.ResultKeyAgentLog). The
// controller uploads them (the client pod never holds object-store
// credentials) and, once a status write has recorded the cell as uploaded,
// removes them from the ConfigMap; result.json (the compact document the
// status, the manifest and in-cluster reports read) stays.

// Bounds of the decompressed attachments: the agent's are a few MiB at most
// (900 KiB of gzip); anything far larger is not the agent's.
const (
	maxFullDocumentBytes = 64 << 20
	maxAgentLogBytes     = 16 << 20
)

var outboxKeys = []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog, agentapi.ResultKeyServerLog}

func hasOutbox(cm *corev1.ConfigMap) bool {
	for _, k := range outboxKeys {
		if _, ok := cm.BinaryData[k]; ok {
			return true
		}
	}
	return false
}

func gunzipLimited(b []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("more than %d bytes decompressed", limit)
	}
	return out, nil
}

// outboxDocument reads the agent's full document and log from a finished
// cell's results ConfigMap. The full document must belong to the same
// attempt as the compact one in result.json (same attempt, start and
// outcome). Without a usable full document it returns nil and why.
func outboxDocument(cm *corev1.ConfigMap, compact *results.Document) (*results.Document, []byte, string) {
	raw, ok := cm.BinaryData[agentapi.ResultKeyFullDocument]
	if !ok {
		return nil, nil, fmt.Sprintf("no %s in the results ConfigMap (an agent without the outbox, or left out over the ConfigMap budget: see the document's extension dbbench.io/agent, outboxDropped)", agentapi.ResultKeyFullDocument)
	}
	data, err := gunzipLimited(raw, maxFullDocumentBytes)
	if err != nil {
		return nil, nil, fmt.Sprintf("%s: %v", agentapi.ResultKeyFullDocument, err)
	}
	full, err := results.Unmarshal(data)
	if err != nil {
		return nil, nil, fmt.Sprintf("%s: %v", agentapi.ResultKeyFullDocument, err)
	}
	switch {
	case full.Form != results.FormFull:
		return nil, nil, fmt.Sprintf("%s: form %q, not %q", agentapi.ResultKeyFullDocument, full.Form, results.FormFull)
	case full.Cell.Attempt != compact.Cell.Attempt || !full.StartedAt.Equal(compact.StartedAt) || full.Status.Outcome != compact.Status.Outcome:
		return nil, nil, fmt.Sprintf("%s is attempt %d started %s (%s), %s is attempt %d started %s (%s): not the same attempt",
			agentapi.ResultKeyFullDocument, full.Cell.Attempt, full.StartedAt.Format(time.RFC3339), full.Status.Outcome,
			agentapi.ResultKeyDocument, compact.Cell.Attempt, compact.StartedAt.Format(time.RFC3339), compact.Status.Outcome)
	}
	var log []byte
	if raw, ok := cm.BinaryData[agentapi.ResultKeyAgentLog]; ok {
		if log, err = gunzipLimited(raw, maxAgentLogBytes); err != nil {
			log = []byte(fmt.Sprintf("dbbench controller: %s in the results ConfigMap %s is unreadable: %v\n", agentapi.ResultKeyAgentLog, cm.Name, err))
		}
	}
	return full, log, ""
}

// outboxServerLog is the database server's log the controller kept in the
// cell's outbox (keepServerLog), or nil.
func outboxServerLog(cm *corev1.ConfigMap) []byte {
	raw, ok := cm.BinaryData[agentapi.ResultKeyServerLog]
	if !ok {
		return nil
	}
	log, err := gunzipLimited(raw, maxAgentLogBytes)
	if err != nil {
		return []byte(fmt.Sprintf("dbbench controller: %s in the results ConfigMap %s is unreadable: %v\n", agentapi.ResultKeyServerLog, cm.Name, err))
	}
	return log
}

// cellUpload is what the controller uploads for a finished cell: the agent's
// full document from the outbox with its log when they are there, else the
// compact document of result.json lifted to the full form (no per-second
// series, no log). Both get the run's identity from the run object
// (StoreDocument). compact is modified.
func (p *runPass) cellUpload(c matrix.Cell, compact *results.Document) (*results.Document, store.CellExtras, error) {
	why := "the results ConfigMap is not in the cache"
	var serverLog []byte
	if cm := p.kids.results[specs.ResultConfigMapName(c)]; cm != nil {
		serverLog = outboxServerLog(cm)
		var full *results.Document
		var log []byte
		if full, log, why = outboxDocument(cm, compact); full != nil {
			doc, err := StoreDocument(p.run, c.Name, full)
			if err == nil {
				p.log.Info("Uploading the agent's full document", "cell", c.Name, "agentLogBytes", len(log), "serverLogBytes", len(serverLog))
				return doc, store.CellExtras{AgentLog: log, ServerLog: serverLog}, nil
			}
			why = fmt.Sprintf("%s: %v", agentapi.ResultKeyFullDocument, err)
		}
	}
	p.log.Info("Uploading the compact document in the full form (no per-second series, no agent log)", "cell", c.Name, "reason", why)
	doc, err := StoreDocument(p.run, c.Name, compact)
	return doc, store.CellExtras{ServerLog: serverLog}, err
}

// drainOutboxes removes the outbox's attachments from the results ConfigMaps
// of cells the status records as uploaded. It must run before this pass
// changes any cell's uploaded flag: the status read at the start of a pass
// is one a status write has recorded, so a manager that dies between the
// store's confirmation and the status write finds the attachments still
// there and uploads them again (the store's uploads are idempotent), and
// one that dies between the status write and the drain drains them on its
// next pass. A failed drain is retried on a later pass.
func (p *runPass) drainOutboxes(ctx context.Context, cells []matrix.Cell) {
	for i, c := range cells {
		if i >= len(p.run.Status.Cells) || !p.run.Status.Cells[i].Uploaded {
			continue
		}
		cm := p.kids.results[specs.ResultConfigMapName(c)]
		if cm == nil || !hasOutbox(cm) {
			continue
		}
		patch := []byte(fmt.Sprintf(`{"binaryData":{%q:null,%q:null,%q:null}}`, agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog, agentapi.ResultKeyServerLog))
		err := p.r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
		if err != nil && !apierrors.IsNotFound(err) {
			p.log.Error(err, "Draining the cell's outbox failed; retrying later", "cell", c.Name, "configMap", cm.Name)
			p.requeue.after(5 * time.Second)
			continue
		}
		p.log.V(1).Info("Drained the cell's outbox", "cell", c.Name, "configMap", cm.Name)
	}
}
