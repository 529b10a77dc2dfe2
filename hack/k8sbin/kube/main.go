// Command kube is every Kubernetes component the local cluster and envtest
// run, as one multi-call binary in the shape of the old hyperkube: it runs
// the component it is called by (hack/build-k8s.sh links kube-apiserver,
// kubelet, ... to it), or the one its first argument names. One binary is
// linked once: six links of ~100 MB binaries each were a minute of a cold
// make test, their packages being shared anyway.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// components are the commands by the names upstream builds them as.
var components = map[string]func() *cobra.Command{
	"kube-apiserver":          func() *cobra.Command { return apiserver.NewAPIServerCommand() },
	"kube-controller-manager": func() *cobra.Command { return controllermanager.NewControllerManagerCommand() },
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kube-proxy":              func() *cobra.Command { return proxy.NewProxyCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
}

func main() {
	name := filepath.Base(os.Args[0])
	if _, ok := components[name]; !ok && name != "kubectl" && len(os.Args) > 1 {
		// kube COMPONENT ARGS...: the component sees the argv it would
		// have as its own binary (kubectl's plugin lookup reads os.Args).
		name, os.Args = os.Args[1], os.Args[1:]
	}
	if name == "kubectl" {
		command := kubectl.NewDefaultKubectlCommand()
		if err := cli.RunNoErrOutput(command); err != nil {
			kubectlutil.CheckErr(err)
		}
		os.Exit(0)
	}
	newCommand, ok := components[name]
	if !ok {
		names := []string{"kubectl"}
		for n := range components {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "kube: run as one of %v (a link of that name, or the name as the first argument)\n", names)
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
