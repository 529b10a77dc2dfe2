package framework

import (
	"context"
	"fmt"
	"time"

	"github.com/dbbench/dbbench/pkg/site"
	"github.com/dbbench/dbbench/pkg/store"
)

// sitePassTimeout bounds the regeneration of a suite's site: reading the
// suite's manifests, verdicts, bisections and acks, and writing two
// objects.
const sitePassTimeout = time.Minute

// PublishSite regenerates a suite's site in the store from what the store
// holds (store.ReadSuite, site.Build) and returns the index's URL.
func PublishSite(ctx context.Context, s *store.Store, suite string, now time.Time) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, sitePassTimeout)
	defer cancel()
	in, err := s.ReadSuite(ctx, suite, site.DefaultLastRuns)
	if err != nil {
		return "", fmt.Errorf("reading suite %q from the object store: %w", suite, err)
	}
	idx, err := site.Build(in, site.Options{Now: now})
	if err != nil {
		return "", err
	}
	files, err := site.Files(idx, site.RenderOptions{Segment: store.EscapeSegment})
	if err != nil {
		return "", err
	}
	if _, err := s.PublishSite(ctx, suite, files); err != nil {
		return "", fmt.Errorf("writing the site of suite %q: %w", suite, err)
	}
	return s.URL(s.Layout().SuiteKey(suite, store.ObjectSiteIndex)), nil
}
