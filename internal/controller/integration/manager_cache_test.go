package integration_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
	"github.com/dbbench/dbbench/pkg/specs"
)

// TestManagerCachesTheConfigMapsItReads checks, on the manager's real
// cache, which ConfigMaps it holds: its cells' results and runs' results
// (which it reads), not a cell's config ConfigMap (which it writes once and
// never reads) nor anybody else's.
func TestManagerCachesTheConfigMapsItReads(t *testing.T) {
	requireEnvtest(t)
	ns := newNamespace(t)
	managed := func(role string) map[string]string {
		l := map[string]string{dbbenchv1alpha1.LabelManagedBy: dbbenchv1alpha1.ManagedByValue, dbbenchv1alpha1.LabelRun: "r"}
		if role != "" {
			l[dbbenchv1alpha1.LabelRole] = role
		}
		return l
	}
	// In creation order: the last one is cached, so once it is in the
	// cache, every earlier ConfigMap's event has been delivered too.
	cases := []struct {
		name   string
		labels map[string]string
		cached bool
	}{
		{"cell config", managed(specs.RoleConfig), false},
		{"not the manager's", map[string]string{dbbenchv1alpha1.LabelRole: specs.RoleResult}, false},
		{"run results", managed(""), true},
		{"cell results", managed(specs.RoleResult), true},
	}

	mgr, err := manager.New(cfg, manager.Options{MetricsAddr: "0", ProbeAddr: "0", SkipNameValidation: true})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager stopped: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	for i, tc := range cases {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm-" + string(rune('a'+i)), Labels: tc.labels}}
		if err := k8sClient.Create(ctx, cm); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	last := client.ObjectKey{Namespace: ns, Name: "cm-" + string(rune('a'+len(cases)-1))}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := mgr.GetCache().Get(ctx, last, &corev1.ConfigMap{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cell's results ConfigMap never reached the manager's cache: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i, tc := range cases {
		key := client.ObjectKey{Namespace: ns, Name: "cm-" + string(rune('a'+i))}
		err := mgr.GetCache().Get(ctx, key, &corev1.ConfigMap{})
		switch {
		case tc.cached && err != nil:
			t.Errorf("%s: not in the manager's cache: %v", tc.name, err)
		case !tc.cached && err == nil:
			t.Errorf("%s: in the manager's cache, want it left out", tc.name)
		case !tc.cached && !apierrors.IsNotFound(err):
			t.Errorf("%s: %v, want not found", tc.name, err)
		}
	}
}
