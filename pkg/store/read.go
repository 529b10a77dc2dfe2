package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/dbbench/dbbench/pkg/results"
)

// GetManifest reads a run's manifest. A manifest of another schema version
// is refused with *results.UnsupportedVersionError (wrapped).
func (s *Store) GetManifest(ctx context.Context, suite, run string) (*results.Manifest, error) {
	return getDecoded(ctx, s, s.layout.RunKey(suite, run, ObjectManifest), results.UnmarshalManifest)
}

// GetCellDocument reads a cell's full results document.
func (s *Store) GetCellDocument(ctx context.Context, suite, run, cell string) (*results.Document, error) {
	return getDecoded(ctx, s, s.layout.CellKey(suite, run, cell, ObjectResult), results.Unmarshal)
}

// getDecoded reads key and decodes it; a decoding error names the object's
// URL, a read error is the store's own (it names the key).
func getDecoded[T any](ctx context.Context, s *Store, key string, decode func([]byte) (T, error)) (T, error) {
	data, err := s.Get(ctx, key)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := decode(data)
	if err != nil {
		return v, fmt.Errorf("%s: %w", s.URL(key), err)
	}
	return v, nil
}

// ListError is returned by ListRuns, together with the manifests it could
// read, when some runs' manifests could not be read or decoded (for
// example, written by a newer dbbench). History can go on without them.
type ListError struct {
	// Failed maps a manifest key to why it was skipped.
	Failed map[string]error
}

func (e *ListError) Error() string {
	keys := make([]string, 0, len(e.Failed))
	for k := range e.Failed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d run manifest(s) skipped:", len(keys))
	for _, k := range keys {
		fmt.Fprintf(&b, " %s: %v;", k, e.Failed[k])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// ListRuns returns the manifests of suite's runs ("" is the runs without a
// suite) in time order: by UpdatedAt (when the run's final manifest was
// written), then by run name. Runs without a manifest yet (still uploading)
// are left out. If some manifests cannot be read, it returns the others and
// a *ListError; a failure to list at all returns no manifests.
func (s *Store) ListRuns(ctx context.Context, suite string) ([]*results.Manifest, error) {
	entries, err := s.list(ctx, s.layout.SuitePrefix(suite), false)
	if err != nil {
		return nil, err
	}
	var runs []string
	for _, e := range entries {
		if !isDir(e) {
			continue
		}
		seg := strings.TrimSuffix(e[strings.LastIndex(strings.TrimSuffix(e, "/"), "/")+1:], "/")
		name, err := UnescapeSegment(seg)
		if err != nil || name == "" {
			continue // not written by this layout
		}
		runs = append(runs, name)
	}
	type got struct {
		m   *results.Manifest
		err error
	}
	res := make([]got, len(runs))
	// A few reads at a time: enough to hide latency, gentle on the store.
	// Each run's error is kept in its slot, so the group itself never fails.
	var g errgroup.Group
	g.SetLimit(4)
	for i, run := range runs {
		g.Go(func() error {
			res[i].m, res[i].err = s.GetManifest(ctx, suite, run)
			return nil
		})
	}
	_ = g.Wait()
	var out []*results.Manifest
	failed := map[string]error{}
	for i, r := range res {
		switch {
		case r.err == nil:
			out = append(out, r.m)
		case errors.Is(r.err, ErrNotFound):
		case errors.Is(r.err, ErrTransient) || errors.Is(r.err, ErrAuth):
			return nil, r.err // the store, not the run, is the problem
		default:
			failed[s.layout.RunKey(suite, runs[i], ObjectManifest)] = r.err
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.Before(out[j].UpdatedAt)
		}
		return out[i].Run.Name < out[j].Run.Name
	})
	if len(failed) > 0 {
		return out, &ListError{Failed: failed}
	}
	return out, nil
}
