package integration_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
)

// runStatuses records every status the API server stores for one run, from
// a watch opened before the run is created: a watch delivers every write in
// order, so a test sees the first terminal status itself, not whatever a
// poll happens to read after it.
type runStatuses struct {
	mu   sync.Mutex
	seen []dbbenchv1alpha1.BenchmarkRunStatus
	// errs are the watch's error events.
	errs []string
}

// watchRunStatuses starts recording the statuses of run ns/name; call it
// before creating the run. The watch ends with the test.
func watchRunStatuses(t *testing.T, ns, name string) *runStatuses {
	t.Helper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	// From resourceVersion 0, the API server's watch cache as it is: the
	// run does not exist yet, so every write to it comes after. (With no
	// resourceVersion the server waits for its cache to reach etcd's
	// latest revision, which Debian's etcd 3.4, without progress
	// notifications, reports only when something else is written.)
	w, err := wc.Watch(wctx, &dbbenchv1alpha1.BenchmarkRunList{}, client.InNamespace(ns), client.MatchingFields{"metadata.name": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}})
	if err != nil {
		cancel()
		t.Fatalf("watching run %s: %v", name, err)
	}
	rs := &runStatuses{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			rs.mu.Lock()
			switch run, ok := ev.Object.(*dbbenchv1alpha1.BenchmarkRun); {
			case ev.Type == watch.Error:
				rs.errs = append(rs.errs, fmt.Sprintf("%+v", ev.Object))
			case ok && (ev.Type == watch.Added || ev.Type == watch.Modified):
				rs.seen = append(rs.seen, *run.Status.DeepCopy())
			}
			rs.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		<-done
	})
	return rs
}

// runFinished reports whether a status is terminal (Succeeded or Failed).
func runFinished(st *dbbenchv1alpha1.BenchmarkRunStatus) bool {
	return meta.IsStatusConditionTrue(st.Conditions, dbbenchv1alpha1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(st.Conditions, dbbenchv1alpha1.ConditionFailed)
}

// firstFinal waits for the run's first terminal status and returns it.
func (rs *runStatuses) firstFinal(t *testing.T) dbbenchv1alpha1.BenchmarkRunStatus {
	t.Helper()
	var first dbbenchv1alpha1.BenchmarkRunStatus
	eventually(t, "a terminal status", func() string {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if len(rs.errs) > 0 {
			t.Fatalf("watching the run: %v", rs.errs)
		}
		for i := range rs.seen {
			if runFinished(&rs.seen[i]) {
				first = rs.seen[i]
				return ""
			}
		}
		return fmt.Sprintf("%d statuses, none terminal", len(rs.seen))
	})
	return first
}

// finalStaysFinal is the rule "a finished run is final": it waits for the
// run's first terminal status, then for quiet seconds, and fails if any
// status stored after the first terminal one differs from it. A run without
// output.s3 has nothing left to do once it has finished.
func (rs *runStatuses) finalStaysFinal(t *testing.T, quiet time.Duration) dbbenchv1alpha1.BenchmarkRunStatus {
	t.Helper()
	first := rs.firstFinal(t)
	time.Sleep(quiet)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	after := false
	for i := range rs.seen {
		st := &rs.seen[i]
		if !after {
			after = runFinished(st)
			continue
		}
		if !equality.Semantic.DeepEqual(*st, first) {
			t.Errorf("the run's status changed after it was final (-first terminal +later):\n%s", cmp.Diff(first, *st))
			return first
		}
	}
	return first
}
