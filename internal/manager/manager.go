// Package manager wires the dbbench controllers into a controller-runtime
// manager. It is shared by cmd/manager, the envtest suite and the controller
// benchmark, so that they all run the same configuration.
package manager

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkack"
	"github.com/dbbench/dbbench/internal/controller/benchmarkbisection"
	"github.com/dbbench/dbbench/internal/controller/benchmarkrun"
	"github.com/dbbench/dbbench/internal/controller/benchmarkschedule"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/specs"
)

// Options configure the manager.
type Options struct {
	MetricsAddr string
	ProbeAddr   string
	// PprofAddr serves net/http/pprof (--pprof-bind-address; empty or "0":
	// off). Profiles show what the manager spends its CPU on; they are
	// opt-in because they expose the process's internals.
	PprofAddr               string
	LeaderElection          bool
	LeaderElectionNamespace string
	AgentImage              string
	// DatabaseImageRegistry is where database pods pull Docker Hub images
	// from (--database-image-registry; empty: Docker Hub itself).
	DatabaseImageRegistry   string
	DisableCollector        bool
	MaxConcurrentReconciles int
	// KubeAPIQPS and KubeAPIBurst rate-limit the manager's API client. A
	// cell costs a handful of writes, so client-go's defaults (5/10) would
	// make a large matrix wait on the client rather than on the cluster.
	KubeAPIQPS   float64
	KubeAPIBurst int
	// Clock replaces the real clock in tests.
	Clock clock.PassiveClock
	// SkipNameValidation allows several managers in one process (tests and
	// benchmarks start and stop managers; metrics names would clash).
	SkipNameValidation bool
	// PodLogs replaces the pods/log reader (a client-go clientset): tests
	// on an API server without kubelets give a reader of their own.
	PodLogs benchmarkrun.PodLogReader
}

// Scheme holds the types the manager reads and writes.
func Scheme() *runtime.Scheme {
	return framework.Scheme()
}

// LeaderElectionID names the Lease the replicas elect their leader with (in
// the leader election namespace); its holder identity starts with the
// leader's hostname, its pod's name.
const LeaderElectionID = "dbbench-manager.dbbench.io"

// New builds a manager with the dbbench controllers registered. Pods, Jobs
// and ConfigMaps are cached only when dbbench manages them: a benchmark
// operator must not hold every pod of a large cluster in memory.
func New(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	managed := labels.SelectorFromSet(labels.Set{dbbenchv1alpha1.LabelManagedBy: dbbenchv1alpha1.ManagedByValue})
	configMaps, err := cachedConfigMaps()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		Controller:              config.Controller{SkipNameValidation: &opts.SkipNameValidation},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: managed},
			&batchv1.Job{}:      {Label: managed},
			&corev1.ConfigMap{}: {Label: configMaps},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	r := &benchmarkrun.Reconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Scheme:                  mgr.GetScheme(),
		Recorder:                mgr.GetEventRecorder("dbbench-manager"),
		Clock:                   opts.Clock,
		AgentImage:              opts.AgentImage,
		DatabaseImageRegistry:   opts.DatabaseImageRegistry,
		DisableCollector:        opts.DisableCollector,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
	}
	// The cluster's version goes into every manifest's environment; a
	// cluster that does not say leaves it empty.
	if dc, err := discovery.NewDiscoveryClientForConfig(cfg); err == nil {
		if v, err := dc.ServerVersion(); err == nil {
			r.KubernetesVersion = v.GitVersion
		}
	}
	r.PodLogs = opts.PodLogs
	if r.PodLogs == nil {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("creating the clientset for pod logs: %w", err)
		}
		r.PodLogs = podLogs{cs}
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the BenchmarkRun controller: %w", err)
	}
	sr := &benchmarkschedule.Reconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("dbbench-manager"),
		Clock:    opts.Clock,
	}
	if err := errors.Join(sr.SetupWithManager(mgr), benchmarkrun.SetupMetricsWithManager(mgr)); err != nil {
		return nil, fmt.Errorf("setting up the BenchmarkSchedule controller and metrics: %w", err)
	}
	br := &benchmarkbisection.Reconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("dbbench-manager"),
		Clock:    opts.Clock,
	}
	if err := br.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the BenchmarkBisection controller: %w", err)
	}
	ar := &benchmarkack.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("dbbench-manager"),
		Clock:     opts.Clock,
	}
	if err := ar.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the BenchmarkAck controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// cachedConfigMaps selects the ConfigMaps the manager caches and watches:
// its own, but not a cell's config ConfigMap (role config), which it
// writes once and never reads. Half of a cell's ConfigMaps, they would
// cost a watch event each and memory for the life of the run, and their
// creation would wake the run for a pass with nothing to do.
func cachedConfigMaps() (labels.Selector, error) {
	managed, err := labels.NewRequirement(dbbenchv1alpha1.LabelManagedBy, selection.Equals, []string{dbbenchv1alpha1.ManagedByValue})
	if err != nil {
		return nil, err
	}
	notConfig, err := labels.NewRequirement(dbbenchv1alpha1.LabelRole, selection.NotEquals, []string{specs.RoleConfig})
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*managed, *notConfig), nil
}

// WithRateLimits applies the options' client rate limits to cfg.
func WithRateLimits(cfg *rest.Config, opts Options) *rest.Config {
	if opts.KubeAPIQPS > 0 {
		cfg.QPS = float32(opts.KubeAPIQPS)
	}
	if opts.KubeAPIBurst > 0 {
		cfg.Burst = opts.KubeAPIBurst
	}
	return cfg
}

// Run builds the manager and runs it until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	mgr, err := New(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// podLogs reads container logs through the pods/log subresource.
type podLogs struct{ cs kubernetes.Interface }

func (l podLogs) ContainerLog(ctx context.Context, namespace, pod, container string, limitBytes int64, previous bool) ([]byte, error) {
	// The end of the log, at most limitBytes of it: tailLines picks the
	// end, limitBytes then caps what it returns.
	tail := int64(5000)
	return l.cs.CoreV1().
		Pods(namespace).
		GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &tail, LimitBytes: &limitBytes, Previous: previous}).
		DoRaw(ctx)
}
