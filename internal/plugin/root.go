// Package plugin is the kubectl-dbbench command: reports, comparisons,
// histories with change points and live progress of dbbench BenchmarkRuns,
// read from the cluster or from local results files, and an importer for
// old sysbench output. Every command follows kubectl's Options pattern
// (Complete, Validate, Run) and writes to injected IOStreams.
package plugin

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Clients gives commands their cluster access; tests inject fakes.
type Clients interface {
	Cluster() (*Cluster, error)
}

// configClients builds clients from kubectl's flags (--kubeconfig,
// --context, --namespace, ...), so any kubeconfig context works.
type configClients struct {
	flags *genericclioptions.ConfigFlags
}

func (c configClients) Cluster() (*Cluster, error) {
	rc, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	ns, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("resolving the namespace: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &Cluster{Dynamic: dyn, Core: core, Namespace: ns}, nil
}

// NewCmdDBBench is the root command with kubectl's connection flags.
func NewCmdDBBench(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	cmd := newRoot(streams, configClients{flags})
	flags.AddFlags(cmd.PersistentFlags())
	return cmd
}

// NewCmdDBBenchWithClients is the root command with the given cluster
// access (tests).
func NewCmdDBBenchWithClients(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	return newRoot(streams, clients)
}

func newRoot(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-dbbench",
		Short: "Reports, comparisons and regression histories of dbbench BenchmarkRuns",
		Long: `kubectl dbbench reads dbbench BenchmarkRuns and their results ConfigMaps (or
local results files with --from-dir) and prints the tables database
performance studies publish: relative throughput against a base cell, group
statistics, hardware efficiency per operation, scale-up, throughput over
time, repeats, and change points across the runs of a suite.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(
		NewCmdReport(streams, clients),
		NewCmdCompare(streams, clients),
		NewCmdExplain(streams, clients),
		NewCmdHistory(streams, clients),
		NewCmdNoise(streams, clients),
		NewCmdPlan(streams, clients),
		NewCmdWatch(streams, clients),
		NewCmdImport(streams),
		NewCmdTiming(streams, clients),
		NewCmdBisect(streams, clients),
		NewCmdRegression(streams, clients),
		NewCmdVerdict(streams, clients),
		NewCmdSite(streams),
		NewCmdAck(streams, clients),
		NewCmdUnack(streams, clients),
	)
	return cmd
}
