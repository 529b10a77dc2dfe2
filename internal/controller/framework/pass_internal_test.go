package framework

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// shellPass is a pass that creates something on its first go (a done
// event) and reports a state (an ordinary event) on every go.
type shellPass struct {
	Events
	created     *bool
	afterWrites *int
	rec         events.EventRecorder
	obj         *dbbenchv1alpha1.BenchmarkRun
}

func (p *shellPass) Reconcile(context.Context) (ctrl.Result, error) {
	if !*p.created {
		*p.created = true
		p.DoneEvent(false, "Created", "Create", "created the child")
	}
	p.Event(false, "State", "Judge", "the state of this pass")
	return ctrl.Result{}, nil
}

func (p *shellPass) EmitEvents(statusWritten bool) { p.Events.Emit(p.rec, p.obj, statusWritten) }

func (p *shellPass) AfterWrite(context.Context) error { *p.afterWrites++; return nil }

// The shell of every controller: a pass whose status write conflicts is
// redone on a fresh copy; the first pass's done event (an object it
// created, which the redo finds there) is emitted anyway, its ordinary
// events are not, and the redo's are, once; afterWrite runs once, after
// the write that succeeded.
func TestReconcilePassKeepsTheEventsOfWhatHappened(t *testing.T) {
	run := &dbbenchv1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "r"}}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(run).Build()
	rec := events.NewFakeRecorder(10)
	created, afterWrites, writes := false, 0, 0
	_, err := Reconcile(context.Background(), c, c, client.ObjectKeyFromObject(run), "run",
		func(r *dbbenchv1alpha1.BenchmarkRun) *shellPass {
			return &shellPass{created: &created, afterWrites: &afterWrites, rec: rec, obj: r}
		},
		func(_ context.Context, _, _ *dbbenchv1alpha1.BenchmarkRun) error {
			if writes++; writes == 1 {
				return apierrors.NewConflict(schema.GroupResource{Resource: "benchmarkruns"}, "r", nil)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	want := "Normal Created created the child|Normal State the state of this pass"
	if strings.Join(got, "|") != want || writes != 2 || afterWrites != 1 {
		t.Fatalf("events %q, %d writes, %d afterWrites; want %q, 2, 1", got, writes, afterWrites, want)
	}
}
