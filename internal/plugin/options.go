package plugin

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// commandOptions is the kubectl Complete/Validate/Run pattern every
// command's options follow.
type commandOptions interface {
	Complete(args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the cobra RunE of a command: complete the options from the
// arguments, validate them, then run with the command's context.
func runE(o commandOptions) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

// sourceOptions are what every command that reads results shares: the
// output flags, the object store (--from-s3) beside --from-dir, the
// cluster access and the streams.
type sourceOptions struct {
	OutputFlags
	S3      S3Flags
	clients Clients
	cluster *Cluster
	genericiooptions.IOStreams
}

func newSourceOptions(streams genericiooptions.IOStreams, clients Clients) sourceOptions {
	return sourceOptions{IOStreams: streams, clients: clients}
}

// addFlags registers the output and object store flags (--suite with
// withSuite, for the commands that name a run rather than a suite).
func (o *sourceOptions) addFlags(cmd *cobra.Command, withSuite bool) {
	o.OutputFlags.AddFlags(cmd.Flags())
	o.S3.AddFlags(cmd.Flags(), withSuite)
}

// completeOutputAndSource completes the output flags, then the source the
// results are read from (--from-dir, --from-s3 or the cluster, which is
// connected only when needCluster).
func (o *sourceOptions) completeOutputAndSource(needCluster bool) error {
	if err := o.OutputFlags.Complete(); err != nil {
		return err
	}
	return o.completeSource(needCluster)
}

// completeSource completes the source alone (see completeSource).
func (o *sourceOptions) completeSource(needCluster bool) error {
	c, err := completeSource(&o.S3, o.FromDir, o.clients, needCluster)
	o.cluster = c
	return err
}
