package benchmarkrun

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/serverlog"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The manager reads the database container's log of a finished cell, to
// keep it as server.log in the object store.
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get

// PodLogReader reads the end of a container's log. controller-runtime's
// client has no pods/log; the manager wires a client-go clientset.
type PodLogReader interface {
	// ContainerLog reads the end of the log of the running container, or
	// of the one before it (previous), which restarted.
	ContainerLog(ctx context.Context, namespace, pod, container string, limitBytes int64, previous bool) ([]byte, error)
}

const (
	// serverLogLimit bounds the server log kept per cell: start-up
	// warnings and the end of a long log, well inside the ConfigMap's
	// budget once compressed.
	serverLogLimit = 256 << 10
	// serverLogTimeout bounds the read, which the cell's release waits for.
	serverLogTimeout = 10 * time.Second
)

// keepServerLog puts the log of the cell's database container into the
// cell's outbox (binaryData ResultKeyServerLog of its results ConfigMap)
// when the cell ends, before the pod is deleted (once: later passes that
// retry the deletion do not read the log again), so that the upload of this pass or a later one
// sends it as server.log. Only with output.s3, and best effort: a log that
// cannot be read is noted in the manager's log and the cell goes on.
func (p *runPass) keepServerLog(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus, pod *corev1.Pod) {
	// A pre-flight pair's results are not uploaded; its failure message
	// already quotes the server's error lines.
	if p.run.Spec.Output.S3 == nil || p.r.PodLogs == nil || cs.Uploaded || pod == nil || pod.Status.Phase == corev1.PodPending || c.Preflight {
		return
	}
	cm := p.kids.results[specs.ResultConfigMapName(c)]
	if cm == nil {
		return
	}
	if _, ok := cm.BinaryData[agentapi.ResultKeyServerLog]; ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, serverLogTimeout)
	defer cancel()
	raw, err := p.r.PodLogs.ContainerLog(ctx, pod.Namespace, pod.Name, specs.DatabaseContainer, serverLogLimit, false)
	if err != nil || len(raw) == 0 {
		p.log.Info("The database server's log is not kept", "cell", c.Name, "pod", pod.Name, "error", fmt.Sprint(err))
		return
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw) //nolint:errcheck // a bytes.Buffer does not fail
	zw.Close()    // a gzip.Writer over a bytes.Buffer does not fail either
	if size := configMapBytes(cm) + gz.Len(); size > results.MaxConfigMapBytes {
		p.log.Info("The database server's log is not kept: the results ConfigMap would exceed 1 MiB", "cell", c.Name, "bytes", size)
		return
	}
	patch := fmt.Appendf(nil, `{"binaryData":{%q:%q}}`, agentapi.ResultKeyServerLog, base64.StdEncoding.EncodeToString(gz.Bytes()))
	// Patch decodes the answer into cm, the pass's copy: this pass's
	// upload sees the log.
	if err := p.r.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		p.log.Info("Keeping the database server's log failed", "cell", c.Name, "configMap", cm.Name, "error", err.Error())
		return
	}
	p.log.V(1).Info("Kept the database server's log", "cell", c.Name, "bytes", len(raw))
}

// configMapBytes is the size of a ConfigMap's data as the API server's 1 MiB
// limit counts it: keys and values, binary values decoded.
func configMapBytes(cm *corev1.ConfigMap) int {
	n := 0
	for k, v := range cm.Data {
		n += len(k) + len(v)
	}
	for k, v := range cm.BinaryData {
		n += len(k) + len(v)
	}
	return n
}

// startLogLimit bounds the log read for a server that would not start: its
// errors come before it exits, at the end of a short log.
const startLogLimit = 64 << 10

// startFailureFromLog completes the message of a server that exited before
// it answered when its termination message held no error line (a kubelet
// that did not fill it from the log): the log of the container that exited
// is read once, and the failure's reason and message are taken from it.
func (p *runPass) startFailureFromLog(ctx context.Context, pod *corev1.Pod, f *failure) {
	if f.reason != dbbenchv1alpha1.ReasonDatabaseStartFailed || p.r.PodLogs == nil || pod == nil {
		return
	}
	for _, st := range pod.Status.ContainerStatuses {
		last := st.LastTerminationState.Terminated
		if st.Name != specs.DatabaseContainer || last == nil || len(serverlog.ErrorLines(last.Message)) > 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, serverLogTimeout)
		raw, err := p.r.PodLogs.ContainerLog(ctx, pod.Namespace, pod.Name, specs.DatabaseContainer, startLogLimit, true)
		cancel()
		if err != nil || len(raw) == 0 {
			p.log.Info("The log of a database server that did not start could not be read", "pod", pod.Name, "error", fmt.Sprint(err))
			return
		}
		*f = *startFailure(last.ExitCode, last.Reason, string(raw))
		return
	}
}
