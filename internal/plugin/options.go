package plugin

import (
	"context"

	"github.com/spf13/cobra"
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

// completeWithSource completes the output flags, then the source the
// results are read from (--from-dir, --from-s3 or the cluster, which is
// connected only when needCluster).
func (f *OutputFlags) completeWithSource(s3 *S3Flags, clients Clients, needCluster bool) (*Cluster, error) {
	if err := f.Complete(); err != nil {
		return nil, err
	}
	return completeSource(s3, f.FromDir, clients, needCluster)
}
