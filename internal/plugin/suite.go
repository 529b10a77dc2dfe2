package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// suiteOptions are what the commands that read every run of a suite
// (history, noise) share: the suite, where its runs are read from and the
// output flags.
type suiteOptions struct {
	sourceOptions
	Suite string
}

// Complete fills the suite from the only argument, the format and the
// source.
func (o *suiteOptions) Complete(args []string) error {
	o.Suite = args[0]
	return o.completeOutputAndSource(true)
}

// readSuiteRuns reads the suite's runs, oldest first: those in the object
// store or a directory with stored, the cluster's one at a time with read
// (see clusterSuiteRuns), since each command needs something else of a run
// there.
func readSuiteRuns[T any](
	ctx context.Context,
	o *suiteOptions,
	stored func([]*LocalRun) []T,
	read func(*dbbenchv1alpha1.BenchmarkRun) (T, error),
) ([]T, error) {
	if o.S3.src == nil && o.FromDir == "" {
		return clusterSuiteRuns(ctx, o.cluster, o.Suite, o.ErrOut, read)
	}
	lrs, err := o.storedRuns(ctx)
	if err != nil {
		return nil, err
	}
	return stored(lrs), nil
}

// storedRuns reads the suite's runs from the object store (--from-s3) or a
// directory (--from-dir), oldest first.
func (o *suiteOptions) storedRuns(ctx context.Context) ([]*LocalRun, error) {
	if o.S3.src != nil {
		if ctx == nil {
			ctx = context.Background()
		}
		return o.S3.src.Runs(ctx, o.Suite, o.ErrOut)
	}
	lrs, err := localSuiteRuns(o.FromDir, o.Suite)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(lrs, func(i, j int) bool { return lrs[i].Time.Before(lrs[j].Time) })
	return lrs, nil
}

// clusterSuiteRuns reads every run of a suite in the cluster, oldest first,
// with read; a run read fails for is skipped with a note on errOut, so that
// one broken run does not hide the suite's history. A suite with no run at
// all is an error.
func clusterSuiteRuns[T any](
	ctx context.Context,
	c *Cluster,
	suite string,
	errOut io.Writer,
	read func(*dbbenchv1alpha1.BenchmarkRun) (T, error),
) ([]T, error) {
	views, err := c.Runs(ctx, suite)
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		return nil, fmt.Errorf("no benchmarkrun in namespace %q has spec.suite %q", c.Namespace, suite)
	}
	var out []T
	for _, v := range views {
		r, err := read(v)
		if err != nil {
			fmt.Fprintf(errOut, "skipping run %s: %v\n", v.Name, err)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// localSuiteRuns loads the runs under dir (a subdirectory per run) that
// belong to suite, in directory order. None is an error that names the
// suites dir does hold, the usual cause being a misspelt suite.
func localSuiteRuns(dir, suite string) ([]*LocalRun, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var runs []*LocalRun
	suites := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		lr, err := LoadDir(filepath.Join(dir, e.Name()), e.Name())
		if err != nil {
			return nil, err
		}
		suites[lr.Suite] = true
		if lr.Suite == suite {
			runs = append(runs, lr)
		}
	}
	if len(runs) == 0 {
		var found []string
		for s := range suites {
			found = append(found, fmt.Sprintf("%q", s))
		}
		sort.Strings(found)
		return nil, fmt.Errorf("no run under %s belongs to suite %q (suites found: %s)", dir, suite, strings.Join(found, ", "))
	}
	return runs, nil
}
