package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
)

// Environment variables the S3 source reads when no credentials file is
// given (the AWS CLI's names). The secret is never a flag: flags end up in
// shell history and in `ps`.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvRegion          = "AWS_REGION"
	EnvEndpointS3      = "AWS_ENDPOINT_URL_S3"
	EnvEndpoint        = "AWS_ENDPOINT_URL"
)

// DefaultS3Endpoint is used when neither --s3-endpoint nor
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL is set.
const DefaultS3Endpoint = "https://s3.amazonaws.com"

// S3Flags select an S3-compatible object store as the source of runs
// (what the controller uploads with spec.output.s3, laid out as
// docs/results-store.md says).
type S3Flags struct {
	URL             string // --from-s3 s3://BUCKET[/PREFIX]
	Endpoint        string
	CredentialsFile string
	Region          string
	VirtualHost     bool
	// Suite is the suite of the runs named on the command line (report,
	// compare); history takes it as its argument.
	Suite string

	src *S3Source
}

// AddFlags registers the flags; withSuite adds --suite (report, compare).
func (f *S3Flags) AddFlags(fs *pflag.FlagSet, withSuite bool) {
	fs.StringVar(&f.URL, "from-s3", "", "Read runs from an S3-compatible object store: s3://BUCKET[/PREFIX] (the layout of docs/results-store.md) instead of the cluster.")
	fs.StringVar(&f.Endpoint, "s3-endpoint", "", "Object store URL, e.g. http://minio.storage:9000 (default: $"+EnvEndpointS3+", $"+EnvEndpoint+", else "+DefaultS3Endpoint+").")
	fs.StringVar(&f.CredentialsFile, "s3-credentials-file", "", "File with the access key and secret (\"accessKeyID=...\" and \"secretAccessKey=...\" lines, or an AWS credentials file's [default] profile); default: $"+EnvAccessKeyID+" and $"+EnvSecretAccessKey+".")
	fs.StringVar(&f.Region, "s3-region", "", "Region (default: $"+EnvRegion+", else asked from the store).")
	fs.BoolVar(&f.VirtualHost, "s3-virtual-host", false, "Address the bucket as BUCKET.HOST instead of HOST/BUCKET.")
	if withSuite {
		fs.StringVar(&f.Suite, "suite", "", "With --from-s3: the suite (spec.suite) the runs belong to; empty for runs without a suite.")
	}
}

// Enabled reports whether --from-s3 was given.
func (f *S3Flags) Enabled() bool { return f.URL != "" }

// completeSource completes the source the runs are read from: the object
// store (--from-s3, completed here), a directory (--from-dir), or the
// cluster, whose clients it returns when needCluster and neither flag is
// given.
func completeSource(s3 *S3Flags, fromDir string, clients Clients, needCluster bool) (*Cluster, error) {
	if s3.Enabled() {
		if fromDir != "" {
			return nil, fmt.Errorf("--from-dir and --from-s3: choose one source")
		}
		return nil, s3.Complete()
	}
	if fromDir != "" || !needCluster {
		return nil, nil
	}
	return clients.Cluster()
}

// Complete parses the URL, reads the credentials and makes the store
// client (no request is sent yet).
func (f *S3Flags) Complete() error {
	if !f.Enabled() {
		return nil
	}
	bucket, prefix, err := ParseS3URL(f.URL)
	if err != nil {
		return fmt.Errorf("--from-s3: %w", err)
	}
	access, secret, err := s3Credentials(f.CredentialsFile)
	if err != nil {
		return err
	}
	endpoint := f.Endpoint
	for _, env := range []string{EnvEndpointS3, EnvEndpoint} {
		if endpoint == "" {
			endpoint = os.Getenv(env)
		}
	}
	if endpoint == "" {
		endpoint = DefaultS3Endpoint
	}
	region := f.Region
	if region == "" {
		region = os.Getenv(EnvRegion)
	}
	s, err := store.New(store.Config{Endpoint: endpoint, Bucket: bucket, Prefix: prefix, Region: region,
		AccessKeyID: access, SecretAccessKey: secret, VirtualHostStyle: f.VirtualHost,
		// A person is waiting: a few quick retries, not a controller's 15 s.
		Backoff:        store.Backoff{Initial: 200 * time.Millisecond, Max: 2 * time.Second, Multiplier: 2, Jitter: 0.5, MaxAttempts: 3},
		RequestTimeout: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("--s3-endpoint: %w", err)
	}
	f.src = &S3Source{Store: s, Endpoint: endpoint}
	return nil
}

// ParseS3URL splits s3://BUCKET[/PREFIX] into the bucket and the prefix.
func ParseS3URL(s string) (bucket, prefix string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "", err
	}
	if u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q: want s3://BUCKET[/PREFIX]", s)
	}
	return u.Host, strings.Trim(u.Path, "/"), nil
}

// s3Credentials reads the access key and secret from path, or from the
// environment when path is empty.
func s3Credentials(path string) (access, secret string, err error) {
	if path == "" {
		access, secret = os.Getenv(EnvAccessKeyID), os.Getenv(EnvSecretAccessKey)
		if access == "" || secret == "" {
			return "", "", fmt.Errorf("--from-s3 needs credentials: --s3-credentials-file FILE, or $%s and $%s", EnvAccessKeyID, EnvSecretAccessKey)
		}
		return access, secret, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("--s3-credentials-file: %w", err)
	}
	defer fh.Close()
	access, secret, err = parseCredentials(fh)
	if err != nil {
		return "", "", fmt.Errorf("--s3-credentials-file %s: %w", path, err)
	}
	return access, secret, nil
}

// parseCredentials reads "name = value" / "name: value" lines. Names are
// matched without regard to case, "_" or "-": accessKeyID or
// aws_access_key_id (or AWS_ACCESS_KEY_ID), secretAccessKey or
// aws_secret_access_key. In a file with [sections] (the AWS CLI's
// ~/.aws/credentials) only lines before the first section and in [default]
// count. Blank lines and lines starting with # or ; are ignored. The error
// never includes a value.
func parseCredentials(r io.Reader) (access, secret string, err error) {
	sc := bufio.NewScanner(r)
	section, n := "", 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		if section != "" && section != "default" {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return "", "", fmt.Errorf("line %d: want NAME=VALUE", n)
		}
		name := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(line[:i])))
		name = strings.TrimPrefix(strings.TrimPrefix(name, "export "), "aws")
		value := strings.Trim(strings.TrimSpace(line[i+1:]), `"'`)
		switch name {
		case "accesskeyid":
			access = value
		case "secretaccesskey":
			secret = value
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	if access == "" || secret == "" {
		return "", "", errors.New("want an access key (accessKeyID or aws_access_key_id) and a secret (secretAccessKey or aws_secret_access_key)")
	}
	return access, secret, nil
}

// S3Source reads runs from an object store through pkg/store.
type S3Source struct {
	Store    *store.Store
	Endpoint string
}

// where is "s3://BUCKET/PREFIX/" for messages.
func (s *S3Source) where() string {
	p := s.Store.Layout().Prefix
	if p = strings.Trim(p, "/"); p != "" {
		p += "/"
	}
	return "s3://" + s.Store.Bucket() + "/" + p
}

// explain turns a store error into a message that says what to check.
func (s *S3Source) explain(err error) error {
	var er minio.ErrorResponse
	switch {
	case errors.As(err, &er) && er.Code == "NoSuchBucket":
		return fmt.Errorf("bucket %q does not exist at %s: %w", s.Store.Bucket(), s.Endpoint, err)
	case errors.Is(err, store.ErrAuth):
		return fmt.Errorf("%s refused the credentials (check --s3-credentials-file or $%s/$%s): %w",
			s.Endpoint, EnvAccessKeyID, EnvSecretAccessKey, err)
	case errors.Is(err, store.ErrTransient):
		return fmt.Errorf("cannot reach %s: %w", s.Endpoint, err)
	}
	return err
}

func suiteLabel(suite string) string {
	if suite == "" {
		return "runs without a suite"
	}
	return fmt.Sprintf("suite %q", suite)
}

// Run loads one run: its manifest, then every cell's full document. The
// dataset is built as LoadDir builds it from the same files, so a report
// reads the same from the store as from a directory of the run's documents
// and manifest. name labels the dataset ("" means the run's name).
func (s *S3Source) Run(ctx context.Context, suite, run, name string) (*LocalRun, error) {
	m, err := s.Store.GetManifest(ctx, suite, run)
	if errors.Is(err, store.ErrNotFound) {
		return nil, s.notFound(ctx, suite, run)
	}
	if err != nil {
		return nil, s.explain(err)
	}
	return s.load(ctx, m, name)
}

// notFound says a run is missing and lists the runs that are there.
func (s *S3Source) notFound(ctx context.Context, suite, run string) error {
	msg := fmt.Sprintf("run %q not found in %s under %s (no %s)", run, suiteLabel(suite), s.where(), s.Store.URL(s.Store.Layout().RunKey(suite, run, store.ObjectManifest)))
	ms, err := s.Store.ListRuns(ctx, suite)
	if err != nil && len(ms) == 0 {
		return fmt.Errorf("%s; listing the runs: %w", msg, s.explain(err))
	}
	if len(ms) == 0 {
		return fmt.Errorf("%s; %s has no runs there", msg, suiteLabel(suite))
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Run.Name
	}
	return fmt.Errorf("%s; runs there: %s", msg, strings.Join(names, ", "))
}

// load reads a manifest's cell documents and assembles the run.
func (s *S3Source) load(ctx context.Context, m *results.Manifest, name string) (*LocalRun, error) {
	var docs []*results.Document
	var notes []string
	for _, c := range m.Cells {
		d, err := s.Store.GetCellDocument(ctx, m.Run.Suite, m.Run.Name, c.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			notes = append(notes, fmt.Sprintf("cell %s (%s) has no %s in the store", c.Name, c.Phase, store.ObjectResult))
			continue
		case err != nil:
			return nil, fmt.Errorf("run %s cell %s: %w", m.Run.Name, c.Name, s.explain(err))
		}
		docs = append(docs, d)
	}
	if name == "" {
		name = m.Run.Name
	}
	lr, err := assembleRun(name, docs, m)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", m.Run.Name, err)
	}
	if len(docs) > 0 {
		// Cells the manifest lists but the store lacks stay visible.
		for _, c := range m.Cells {
			if _, ok := lr.Data.Cell(c.Name); !ok {
				_ = lr.Data.AddCell(analysis.CellMeta{Name: c.Name})
			}
		}
	}
	lr.Data.Notes = append(lr.Data.Notes, notes...)
	return lr, nil
}

// Runs loads every run of suite that has a manifest (store.ListRuns), in
// the store's time order. Manifests that cannot be read are reported on
// warn and left out, as the cluster source skips unreadable runs.
func (s *S3Source) Runs(ctx context.Context, suite string, warn io.Writer) ([]*LocalRun, error) {
	ms, err := s.Store.ListRuns(ctx, suite)
	var le *store.ListError
	switch {
	case errors.As(err, &le):
		fmt.Fprintf(warn, "warning: %v\n", err)
	case err != nil:
		return nil, fmt.Errorf("listing %s under %s: %w", suiteLabel(suite), s.where(), s.explain(err))
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no run of %s under %s (no %s)", suiteLabel(suite), s.where(),
			s.Store.URL(s.Store.Layout().SuitePrefix(suite)+"*/"+store.ObjectManifest))
	}
	out := make([]*LocalRun, len(ms))
	errs := make([]error, len(ms))
	// Four reads at a time; each run's error is kept in its slot, so the
	// group itself never fails.
	var g errgroup.Group
	g.SetLimit(4)
	for i, m := range ms {
		g.Go(func() error {
			out[i], errs[i] = s.load(ctx, m, "")
			return nil
		})
	}
	_ = g.Wait()
	var runs []*LocalRun
	for i, lr := range out {
		if errs[i] != nil {
			if errors.Is(errs[i], store.ErrAuth) || errors.Is(errs[i], store.ErrTransient) {
				return nil, errs[i] // the store, not the run, is the problem
			}
			fmt.Fprintf(warn, "skipping run %s: %v\n", ms[i].Run.Name, errs[i])
			continue
		}
		runs = append(runs, lr)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("none of the %d run(s) of %s under %s could be read", len(ms), suiteLabel(suite), s.where())
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Time.Before(runs[j].Time) })
	return runs, nil
}
