package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/site"
	"github.com/dbbench/dbbench/pkg/store"
)

// SiteOptions are the options of `site SUITE`.
type SiteOptions struct {
	Suite string
	// Dir receives the site: index.html, site.json and the charted runs'
	// and the bisections' report.html at their places in the bucket.
	Dir string
	// Publish writes index.html and site.json back to the bucket.
	Publish  bool
	LastRuns int
	S3       S3Flags
	// now is the generation time (tests fix it).
	now func() time.Time
	genericiooptions.IOStreams
}

// NewCmdSite builds `kubectl dbbench site SUITE`.
func NewCmdSite(streams genericiooptions.IOStreams) *cobra.Command {
	o := &SiteOptions{IOStreams: streams, now: time.Now}
	cmd := &cobra.Command{
		Use:   "site SUITE --from-s3 s3://BUCKET[/PREFIX] (-o DIR | --publish)",
		Short: "Build a suite's static site from the object store: charts, change points, triage",
		Long: `Build the suite's site from what the object store holds: index.html charts
every step × threads series of the last runs with its change points by
status, the noise band, the acknowledged points and what else changed at
each (docs/reports.md, "The suite's site"); site.json holds the same as
data. The controller regenerates it in the bucket when a run of the suite
finishes or an acknowledgement changes; this command builds the same
pages for any copy.

-o DIR writes index.html and site.json with the charted runs' and the
bisections' report.html beside them, as in the bucket, so the directory
opens in a browser with no server and nothing fetched. --publish writes
index.html and site.json back to the bucket (the controller's job, done by
hand). A corrupt or foreign object in the bucket is skipped with a note.`,
		Example: `  kubectl dbbench site nightly --from-s3 s3://bench/team --s3-endpoint http://minio:9000 -o ./nightly-site
  kubectl dbbench site nightly --from-s3 s3://bench/team --publish`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVarP(&o.Dir, "output-dir", "o", "", "Write the site into this directory (created).")
	cmd.Flags().BoolVar(&o.Publish, "publish", false, "Write index.html and site.json back to the bucket.")
	cmd.Flags().IntVar(&o.LastRuns, "last", site.DefaultLastRuns, "Chart the newest N runs.")
	o.S3.AddFlags(cmd.Flags(), false)
	return cmd
}

// Complete connects to the store.
func (o *SiteOptions) Complete(args []string) error {
	o.Suite = args[0]
	if !o.S3.Enabled() {
		return errors.New("--from-s3: required (the site is built from the suite's object store)")
	}
	return o.S3.Complete()
}

// Validate checks the flags.
func (o *SiteOptions) Validate() error {
	switch {
	case o.Dir == "" && !o.Publish:
		return errors.New("-o DIR or --publish: say where the site goes")
	case o.LastRuns < 2:
		return fmt.Errorf("--last %d: must be at least 2", o.LastRuns)
	}
	return nil
}

// Run builds the site and writes it.
func (o *SiteOptions) Run(ctx context.Context) error {
	src := o.S3.src
	st := src.Store
	in, err := st.ReadSuite(ctx, o.Suite, o.LastRuns)
	if err != nil {
		return fmt.Errorf("reading %s under %s: %w", suiteLabel(o.Suite), src.where(), src.explain(err))
	}
	if len(in.Runs) == 0 {
		return fmt.Errorf("no run of %s under %s (no %s)", suiteLabel(o.Suite), src.where(),
			st.URL(st.Layout().SuitePrefix(o.Suite)+"*/"+store.ObjectManifest))
	}
	idx, err := site.Build(in, site.Options{LastRuns: o.LastRuns, Now: o.now()})
	if err != nil {
		return err
	}
	files, err := site.Files(idx, site.RenderOptions{Segment: store.EscapeSegment})
	if err != nil {
		return err
	}
	for _, n := range idx.Notes {
		fmt.Fprintf(o.ErrOut, "note: %s\n", n)
	}
	if o.Dir != "" {
		if err := o.writeDir(ctx, st, idx, files); err != nil {
			return err
		}
	}
	if o.Publish {
		if _, err := st.PublishSite(ctx, o.Suite, files); err != nil {
			return fmt.Errorf("publishing the site: %w", src.explain(err))
		}
		fmt.Fprintf(o.Out, "published %s\n", st.URL(st.Layout().SuiteKey(o.Suite, store.ObjectSiteIndex)))
	}
	open, acked := 0, 0
	for _, c := range idx.ChangePoints {
		switch {
		case c.State != site.StateOpen:
			acked++
		case c.Worse:
			open++
		}
	}
	fmt.Fprintf(o.Out, "suite %s: %d of %d runs charted, %s, %s (%s, %d acknowledged or invalid)\n",
		o.Suite, len(idx.Runs), idx.RunsInSuite, count(len(idx.Series), "series", "series"), count(len(idx.ChangePoints), "change point", "change points"),
		count(open, "open slowdown", "open slowdowns"), acked)
	return nil
}

// count is "1 thing" or "n things".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeDir writes the site's files and copies the pages they link.
func (o *SiteOptions) writeDir(ctx context.Context, st *store.Store, idx *site.Index, files map[string][]byte) error {
	write := func(rel string, data []byte) error {
		p := filepath.Join(o.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := write(n, files[n]); err != nil {
			return err
		}
	}
	copyPage := func(key, rel string) error {
		data, err := st.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(o.ErrOut, "note: %s is gone, not copied\n", st.URL(key))
			return nil
		}
		if err != nil {
			return fmt.Errorf("copying %s: %w", st.URL(key), o.S3.src.explain(err))
		}
		return write(rel, data)
	}
	l := st.Layout()
	for _, r := range idx.Runs {
		if r.Report {
			if err := copyPage(l.RunKey(o.Suite, r.Name, store.ObjectReport), store.EscapeSegment(r.Name)+"/"+site.ReportFile); err != nil {
				return err
			}
		}
	}
	for _, b := range idx.Bisections {
		if b.Report {
			if err := copyPage(l.BisectionKey(o.Suite, b.Name, store.ObjectReport), site.BisectionsDir+"/"+store.EscapeSegment(b.Name)+"/"+site.ReportFile); err != nil {
				return err
			}
		}
	}
	abs, _ := filepath.Abs(filepath.Join(o.Dir, site.FileIndex))
	fmt.Fprintf(o.Out, "wrote %s (open it in a browser: file://%s)\n", o.Dir, abs)
	return nil
}
