// Command kubectl-dbbench is the dbbench kubectl plugin: put it on the PATH
// and run `kubectl dbbench report RUN`. All logic is in internal/plugin.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/internal/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cmd := plugin.NewCmdDBBench(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.ExecuteContext(ctx); err != nil {
		// A verdict's exit status (verdict --exit-code) is no error.
		var exit *plugin.ExitError
		if errors.As(err, &exit) {
			fmt.Fprintln(os.Stderr, exit.Message)
			os.Exit(exit.Code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
