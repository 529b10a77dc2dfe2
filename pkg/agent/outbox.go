package agent

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"sync"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// The cell's outbox: with Agent.Outbox set (agentapi.EnvOutbox), the agent's final write
// into the results ConfigMap also carries, in binaryData, the gzip'd full
// document (per-second series) and the gzip'd agent log, for the controller
// to upload to object storage. The client pod never holds object-store
// credentials; the controller uploads and then removes the attachments.

// logBuffer keeps the agent's log lines for the outbox, bounded: the first
// head bytes and the last max-head bytes, with a line saying how much was
// left out in between.
type logBuffer struct {
	mu      sync.Mutex
	max     int
	head    []byte
	tail    []byte
	dropped int64
}

// DefaultLogBufferBytes bounds the agent log kept for the outbox (before
// compression); a cell's log is normally a few tens of KiB.
const DefaultLogBufferBytes = 1 << 20

func newLogBuffer(limit int) *logBuffer {
	if limit <= 0 {
		limit = DefaultLogBufferBytes
	}
	return &logBuffer{max: limit}
}

func (b *logBuffer) headMax() int { return b.max / 8 }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.headMax() - len(b.head); room > 0 && len(b.tail) == 0 && b.dropped == 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	// Trim the tail to its share once it is twice over, so trimming copies
	// amortise to O(1) per byte.
	tailMax := b.max - b.headMax()
	if len(b.tail) > 2*tailMax {
		cut := len(b.tail) - tailMax
		b.dropped += int64(cut)
		b.tail = append(b.tail[:0:0], b.tail[cut:]...)
	}
	return n, nil
}

// Bytes is the kept log: head, a note of what was left out, tail.
func (b *logBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail, dropped := b.tail, b.dropped
	if tailMax := b.max - b.headMax(); len(tail) > tailMax {
		dropped += int64(len(tail) - tailMax)
		tail = tail[len(tail)-tailMax:]
	}
	var out bytes.Buffer
	out.Write(b.head)
	if dropped > 0 {
		fmt.Fprintf(&out, "\n[... %d bytes of the agent log left out ...]\n", dropped)
	}
	out.Write(tail)
	return out.Bytes()
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// outboxEncoder encodes the final documents with notes (the outbox's
// explanations of what was left out) recorded in them: the compact document
// for result.json and the gzip'd full document.
type outboxEncoder func(notes []string) (compact, fullGz []byte, err error)

// outboxPack is what the final write carries.
type outboxPack struct {
	compact []byte
	blobs   map[string][]byte
	notes   []string
}

// packOutbox fits the final write into budget bytes of ConfigMap values, of
// which fixed are taken by other keys (progress.json): the compact document
// always; then the full document and the agent log if everything fits; else
// the full document alone (the log is left out first); else neither. What
// was left out is said in notes, which encode records in the documents.
func packOutbox(budget, fixed int, logGz []byte, encode outboxEncoder) (*outboxPack, error) {
	compact, fullGz, err := encode(nil)
	if err != nil {
		return nil, err
	}
	if fixed+len(compact)+len(fullGz)+len(logGz) <= budget {
		blobs := map[string][]byte{agentapi.ResultKeyFullDocument: fullGz}
		if len(logGz) > 0 {
			blobs[agentapi.ResultKeyAgentLog] = logGz
		}
		return &outboxPack{compact: compact, blobs: blobs}, nil
	}
	var notes []string
	if len(logGz) > 0 {
		notes = append(notes, fmt.Sprintf("%s (%d bytes) left out of the results ConfigMap: with it the ConfigMap's values would be %d bytes, over the %d-byte budget; the object store gets no agent.log (the pod log has it)",
			agentapi.ResultKeyAgentLog, len(logGz), fixed+len(compact)+len(fullGz)+len(logGz), budget))
		if compact, fullGz, err = encode(notes); err != nil {
			return nil, err
		}
		if fixed+len(compact)+len(fullGz) <= budget {
			return &outboxPack{compact: compact, blobs: map[string][]byte{agentapi.ResultKeyFullDocument: fullGz}, notes: notes}, nil
		}
	}
	notes = append(notes, fmt.Sprintf("%s (%d bytes) left out of the results ConfigMap: with it the ConfigMap's values would be %d bytes, over the %d-byte budget; the object store gets the compact document in the full form, without per-second series (no series.csv)",
		agentapi.ResultKeyFullDocument, len(fullGz), fixed+len(compact)+len(fullGz), budget))
	if compact, _, err = encode(notes); err != nil {
		return nil, err
	}
	return &outboxPack{compact: compact, notes: notes}, nil
}
