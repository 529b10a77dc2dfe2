package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// ResultSink receives the agent's reports: the Progress record and, when it
// changed, the compact results document.
type ResultSink interface {
	// Write stores progress and, if document is not nil, the document.
	Write(ctx context.Context, progress agentapi.Progress, document []byte) error
}

// OutboxSink is a ResultSink whose final write can carry attachments (the
// cell's outbox, see agentapi.ResultKeyFullDocument): the ConfigMap sink puts
// them in the ConfigMap's binaryData.
type OutboxSink interface {
	ResultSink
	// WriteFinal stores progress, the document and the attachments, and
	// removes outbox attachments not in blobs (left by an earlier write).
	WriteFinal(ctx context.Context, progress agentapi.Progress, document []byte, blobs map[string][]byte) error
}

// outboxKeys are the binaryData keys of the cell's outbox.
var outboxKeys = []string{agentapi.ResultKeyFullDocument, agentapi.ResultKeyAgentLog}

// DirSink writes progress.json and result.json into a directory (local mode).
// Files are replaced atomically, so a reader never sees half a document.
type DirSink struct{ Dir string }

func (d DirSink) Write(_ context.Context, p agentapi.Progress, doc []byte) error {
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return err
	}
	pb, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(d.Dir, agentapi.ResultKeyProgress), pb); err != nil {
		return err
	}
	if doc != nil {
		return writeAtomic(filepath.Join(d.Dir, agentapi.ResultKeyDocument), doc)
	}
	return nil
}

// WriteFull stores the full-form document (per-second series) beside it.
func (d DirSink) WriteFull(_ context.Context, full []byte) error {
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(d.Dir, FullDocumentFile), full)
}

// FullDocumentFile is the full form's file name in a DirSink.
const FullDocumentFile = "result-full.json"

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ConfigMapSink writes into the cell's results ConfigMap, which the
// controller created empty. It only gets and updates that one ConfigMap (the
// agent's Role allows nothing else), retrying on write conflicts.
type ConfigMapSink struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string
}

// NewInClusterConfigMapSink builds a ConfigMapSink from the pod's service
// account.
func NewInClusterConfigMapSink(namespace, name string) (*ConfigMapSink, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("in-cluster Kubernetes config: %w", err)
	}
	cfg.UserAgent = "dbbench-agent"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &ConfigMapSink{Client: cs, Namespace: namespace, Name: name}, nil
}

// Write stores progress and the document. It removes the outbox's
// attachments, which only a final write carries: a progress write means an
// attempt is running, so attachments there are an earlier attempt's.
func (c *ConfigMapSink) Write(ctx context.Context, p agentapi.Progress, doc []byte) error {
	return c.write(ctx, p, doc, nil)
}

// WriteFinal is Write with the outbox's attachments in binaryData.
func (c *ConfigMapSink) WriteFinal(ctx context.Context, p agentapi.Progress, doc []byte, blobs map[string][]byte) error {
	return c.write(ctx, p, doc, blobs)
}

func (c *ConfigMapSink) write(ctx context.Context, p agentapi.Progress, doc []byte, blobs map[string][]byte) error {
	pb, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cm, err := c.Client.CoreV1().ConfigMaps(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("results ConfigMap %s/%s does not exist (the controller creates it): %w", c.Namespace, c.Name, err)
			}
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[agentapi.ResultKeyProgress] = string(pb)
		if doc != nil {
			cm.Data[agentapi.ResultKeyDocument] = string(doc)
		}
		for _, k := range outboxKeys {
			delete(cm.BinaryData, k)
		}
		for k, v := range blobs {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[k] = v
		}
		_, err = c.Client.CoreV1().ConfigMaps(c.Namespace).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "dbbench-agent"})
		return err
	})
}

// Reporter rate-limits writes to a sink: progress-only updates at most once
// per MinInterval, forced writes (a finished step, the end) always. A
// progress-only update that was held back is sent with the next write.
type Reporter struct {
	Sink        ResultSink
	MinInterval time.Duration
	Now         func() time.Time

	mu       sync.Mutex
	last     time.Time
	lastDoc  []byte
	Writes   int // how many writes reached the sink
	LastErr  error
	Failures int
}

// Report sends progress (and doc, when not nil). force bypasses the limit.
func (r *Reporter) Report(ctx context.Context, p agentapi.Progress, doc []byte, force bool) error {
	return r.report(ctx, p, doc, force, nil)
}

// ReportFinal sends the final progress and document, with the outbox's
// attachments when the sink is an OutboxSink (blobs are dropped otherwise).
func (r *Reporter) ReportFinal(ctx context.Context, p agentapi.Progress, doc []byte, blobs map[string][]byte) error {
	return r.report(ctx, p, doc, true, blobs)
}

func (r *Reporter) report(ctx context.Context, p agentapi.Progress, doc []byte, force bool, blobs map[string][]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	t := now()
	if doc != nil {
		r.lastDoc = doc
	}
	if !force && doc == nil && !r.last.IsZero() && t.Sub(r.last) < r.MinInterval {
		return nil
	}
	p.UpdatedAt = t.UTC().Format(time.RFC3339)
	var send []byte
	if doc != nil || force {
		send = r.lastDoc
	}
	var err error
	if ob, ok := r.Sink.(OutboxSink); ok && blobs != nil {
		err = ob.WriteFinal(ctx, p, send, blobs)
	} else {
		err = r.Sink.Write(ctx, p, send)
	}
	r.last = t
	r.Writes++
	if err != nil {
		r.LastErr = err
		r.Failures++
	}
	return err
}
