package integration_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
)

// serverLogs stands in for the pods/log subresource, which needs a kubelet
// that envtest does not have (the e2e suite reads real ones). It answers
// with a log naming the pod and container asked for.
type serverLogs struct {
	mu    sync.Mutex
	asked []string
}

func (s *serverLogs) ContainerLog(_ context.Context, ns, pod, container string, limit int64, _ bool) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, fmt.Sprintf("%s/%s/%s/%d", ns, pod, container, limit))
	return []byte(serverLogText(pod, container)), nil
}

func serverLogText(pod, container string) string {
	return fmt.Sprintf("2026-11-21 10:00:00 0 [Note] %s/%s: ready for connections.\n", pod, container)
}

// The database container's log of each finished cell goes to the bucket as
// server.log, through the cell's outbox, which is then drained.
func TestUploadKeepsTheServerLog(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	logs := &serverLogs{}
	startManagerWith(t, nil, func(o *manager.Options) { o.PodLogs = logs })
	run := s3Run(t, srv, ns, "serverlog", s3SecretKey)
	driveUntil(t, ns, run.Name, "the run to finish", finishedRun)
	got := waitUpload(t, ns, run.Name, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)

	st := srv.store(t, s3SecretKey)
	layout := store.Layout{Prefix: s3Prefix}
	for _, cs := range got.Status.Cells {
		if cs.Phase != dbbenchv1alpha1.CellSucceeded {
			t.Fatalf("cell %s is %s", cs.Name, cs.Phase)
		}
		pod := fmt.Sprintf("%s-db-a%d", strings.TrimSuffix(cs.ResultConfigMap, "-result"), cs.Attempts)
		b, err := st.Get(ctx, layout.CellKey(s3Suite, run.Name, cs.Name, store.ObjectServerLog))
		if err != nil {
			t.Fatalf("cell %s: server.log: %v (pods/log asked for %v)", cs.Name, err, logs.asked)
		}
		if want := serverLogText(pod, specs.DatabaseContainer); string(b) != want {
			t.Errorf("cell %s: server.log = %q, want %q", cs.Name, b, want)
		}
		eventually(t, "the outbox drained of "+agentapi.ResultKeyServerLog, func() string {
			cm := resultConfigMap(t, ns, cs.ResultConfigMap)
			if _, ok := cm.BinaryData[agentapi.ResultKeyServerLog]; ok {
				return cs.ResultConfigMap + " still holds " + agentapi.ResultKeyServerLog
			}
			if cm.Data[agentapi.ResultKeyDocument] == "" {
				return cs.ResultConfigMap + " lost result.json"
			}
			return ""
		})
	}
}
