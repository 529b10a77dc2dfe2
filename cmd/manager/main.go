// Command dbbench-manager runs the dbbench controllers.
package main

import (
	"flag"
	"os"

	"github.com/dbbench/dbbench/internal/controller/benchmarkrun"
	"github.com/dbbench/dbbench/internal/manager"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var opts manager.Options
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint (0 disables it).")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
	flag.StringVar(&opts.PprofAddr, "pprof-bind-address", "", "Address of net/http/pprof's profiles (empty or 0: off; opt-in, for profiling).")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false, "Elect a leader so that only one replica reconciles.")
	flag.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election lease (the pod's namespace when empty).")
	flag.StringVar(&opts.AgentImage, "agent-image", benchmarkrun.DefaultAgentImage, "Default image of the client pods' dbbench agent.")
	flag.StringVar(&opts.DatabaseImageRegistry, "database-image-registry", "", "Registry (host[:port][/prefix]) that mirrors Docker Hub: database images on Docker Hub are pulled from it under the same path (mariadb:10.11 from REGISTRY/library/mariadb:10.11).")
	flag.BoolVar(&opts.DisableCollector, "disable-hardware-collector", false, "Run database pods without the hardware-metrics sidecar.")
	flag.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 16, "Runs reconciled in parallel.")
	flag.Float64Var(&opts.KubeAPIQPS, "kube-api-qps", 500, "Sustained API requests per second of the manager's client.")
	flag.IntVar(&opts.KubeAPIBurst, "kube-api-burst", 1000, "Burst of API requests of the manager's client.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := manager.Run(ctrl.SetupSignalHandler(), manager.WithRateLimits(ctrl.GetConfigOrDie(), opts), opts); err != nil {
		ctrl.Log.Error(err, "Manager stopped")
		os.Exit(1)
	}
}
