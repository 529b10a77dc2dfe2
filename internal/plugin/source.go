package plugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// RunGVR is the BenchmarkRun resource.
var RunGVR = dbbenchv1alpha1.GroupVersion.WithResource("benchmarkruns")

// runFrom converts a BenchmarkRun read through the dynamic client to the
// API's type. Fields the API package does not know (a newer controller's)
// are ignored, so the plugin keeps reading runs of newer controllers.
func runFrom(u *unstructured.Unstructured) (*dbbenchv1alpha1.BenchmarkRun, error) {
	run := &dbbenchv1alpha1.BenchmarkRun{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, run); err != nil {
		return nil, fmt.Errorf("reading BenchmarkRun %s: %w", u.GetName(), err)
	}
	return run, nil
}

// runTime is the run's time in a history: its start, else its creation.
func runTime(run *dbbenchv1alpha1.BenchmarkRun) time.Time {
	if run.Status.StartTime != nil {
		return run.Status.StartTime.Time
	}
	return run.CreationTimestamp.Time
}

// resultsConfigMap is the run's run-level results ConfigMap: the one its
// status names, else the name the controller gives it.
func resultsConfigMap(run *dbbenchv1alpha1.BenchmarkRun) string {
	if r := run.Status.Results; r != nil && r.ConfigMap != "" {
		return r.ConfigMap
	}
	return specs.RunResultsConfigMapName(run)
}

// Cluster reads runs and results from a cluster.
type Cluster struct {
	Dynamic   dynamic.Interface
	Core      kubernetes.Interface
	Namespace string
}

// Run gets one BenchmarkRun.
func (c *Cluster) Run(ctx context.Context, name string) (*dbbenchv1alpha1.BenchmarkRun, error) {
	u, err := c.Dynamic.Resource(RunGVR).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("benchmarkrun %q not found in namespace %q", name, c.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("getting benchmarkrun %s/%s: %w", c.Namespace, name, err)
	}
	return runFrom(u)
}

// Runs lists the runs of a suite (spec.suite), oldest first.
func (c *Cluster) Runs(ctx context.Context, suite string) ([]*dbbenchv1alpha1.BenchmarkRun, error) {
	list, err := c.Dynamic.Resource(RunGVR).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing benchmarkruns in %q: %w", c.Namespace, err)
	}
	var out []*dbbenchv1alpha1.BenchmarkRun
	for i := range list.Items {
		run, err := runFrom(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if run.Spec.Suite == suite {
			out = append(out, run)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return runTime(out[i]).Before(runTime(out[j])) })
	return out, nil
}

// Dataset loads a run's results: the cells' documents (hardware figures and
// series included) or, when no cell document is readable, the run manifest's
// QPS summary. It also returns the run's baseline cell from the manifest
// ("" when there is no manifest yet).
func (c *Cluster) Dataset(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun) (*analysis.Dataset, string, error) {
	ds, err := c.dataset(ctx, run)
	if err != nil {
		return nil, "", err
	}
	base := ""
	if cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, resultsConfigMap(run), metav1.GetOptions{}); err == nil {
		if _, m, err := analysis.ReadResult([]byte(cm.Data[agentapi.RunResultKeyManifest])); err == nil && m != nil {
			base = m.Baseline
		}
	}
	return ds, base, nil
}

// CellDocument is a cell's status entry with its results document.
type CellDocument struct {
	Cell dbbenchv1alpha1.CellStatus
	Doc  *results.Document
}

// Documents reads the cells' results documents from their result
// ConfigMaps. Cells without a readable document are listed in missing, with
// the reason in notes; a document that is there but unreadable is an error.
func (c *Cluster) Documents(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun) (found []CellDocument, missing, notes []string, err error) {
	for _, cell := range run.Status.Cells {
		if cell.ResultConfigMap == "" {
			missing = append(missing, cell.Name)
			continue
		}
		cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, cell.ResultConfigMap, metav1.GetOptions{})
		if err != nil {
			notes = append(notes, fmt.Sprintf("cell %s: configmap %s: %v", cell.Name, cell.ResultConfigMap, err))
			missing = append(missing, cell.Name)
			continue
		}
		raw, ok := cm.Data[agentapi.ResultKeyDocument]
		if !ok {
			notes = append(notes, fmt.Sprintf("cell %s (%s): configmap %s has no %s yet", cell.Name, cell.Phase, cell.ResultConfigMap, agentapi.ResultKeyDocument))
			missing = append(missing, cell.Name)
			continue
		}
		doc, _, err := analysis.ReadResult([]byte(raw))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("cell %s: configmap %s key %s: %w", cell.Name, cell.ResultConfigMap, agentapi.ResultKeyDocument, err)
		}
		if doc == nil {
			return nil, nil, nil, fmt.Errorf("cell %s: configmap %s key %s holds a manifest, not a cell document", cell.Name, cell.ResultConfigMap, agentapi.ResultKeyDocument)
		}
		found = append(found, CellDocument{Cell: cell, Doc: doc})
	}
	return found, missing, notes, nil
}

func (c *Cluster) dataset(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun) (*analysis.Dataset, error) {
	found, missing, notes, err := c.Documents(ctx, run)
	if err != nil {
		return nil, err
	}
	docs := make([]*results.Document, len(found))
	for i, f := range found {
		docs[i] = f.Doc
	}
	if len(docs) == 0 {
		// Nothing per cell: the manifest may still have the summaries.
		name := resultsConfigMap(run)
		cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("run %s has no readable cell results and its results configmap %s: %w", run.Name, name, err)
		}
		ds, err := manifestDataset(cm)
		if err != nil {
			return nil, err
		}
		ds.Notes = append(notes, ds.Notes...)
		return ds, nil
	}
	ds, err := analysis.FromDocuments(run.Name, docs)
	if err != nil {
		return nil, err
	}
	for _, m := range missing {
		_ = ds.AddCell(analysis.CellMeta{Name: m})
		notes = append(notes, fmt.Sprintf("cell %s has no results", m))
	}
	ds.Notes = append(ds.Notes, notes...)
	return ds, nil
}

func manifestDataset(cm *corev1.ConfigMap) (*analysis.Dataset, error) {
	raw, ok := cm.Data[agentapi.RunResultKeyManifest]
	if !ok {
		return nil, fmt.Errorf("configmap %s has no %s", cm.Name, agentapi.RunResultKeyManifest)
	}
	_, m, err := analysis.ReadResult([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("configmap %s key %s: %w", cm.Name, agentapi.RunResultKeyManifest, err)
	}
	if m == nil {
		return nil, fmt.Errorf("configmap %s key %s holds a cell document, not a manifest", cm.Name, agentapi.RunResultKeyManifest)
	}
	return analysis.FromManifest(m)
}

// LocalRun is a run read from files.
type LocalRun struct {
	Name  string
	Suite string
	Time  time.Time
	// Base is the manifest's baseline cell, when there is a manifest.
	Base string
	Data *analysis.Dataset
	// Manifest describes the run as a manifest: the stored one, or one
	// built from the documents (with the stored one's noise floor and
	// workload digest) when there are documents.
	Manifest *results.Manifest
	// Docs are the cell documents read, in the run's cell order (none
	// when only the manifest was there).
	Docs []*results.Document
}

// LoadDir reads every *.json file of dir: cell documents (full or compact)
// and at most one run manifest. Documents win over the manifest; the
// manifest is used when there are none. name labels the dataset; it
// defaults to the documents' run name, then the directory's name. Files of
// an unknown schema version are an error that names the file.
func LoadDir(dir, name string) (*LocalRun, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var docs []*results.Document
	var manifest *results.Manifest
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		d, m, err := analysis.ReadResult(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m != nil {
			if manifest != nil {
				return nil, fmt.Errorf("%s: a second run manifest in %s", path, dir)
			}
			manifest = m
			continue
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 && manifest == nil {
		return nil, fmt.Errorf("%s: no results documents (*.json) found", dir)
	}
	if name == "" && len(docs) == 0 {
		name = filepath.Base(dir)
	}
	return assembleRun(name, docs, manifest)
}

// assembleRun builds a run from its cell documents and manifest (either
// may be missing, not both): documents in the manifest's cell order, the
// manifest's QPS summary when there are no documents. name labels the
// dataset; it defaults to the documents' run name, then the manifest's.
// LoadDir and the S3 source share it, so both read a run the same way.
func assembleRun(name string, docs []*results.Document, manifest *results.Manifest) (*LocalRun, error) {
	var err error
	lr := &LocalRun{}
	if manifest != nil {
		lr.Base = manifest.Baseline
	}
	switch {
	case len(docs) > 0:
		order := map[string]int{}
		if manifest != nil {
			for i, c := range manifest.Cells {
				order[c.Name] = i + 1
			}
		}
		sort.SliceStable(docs, func(i, j int) bool {
			oi, oj := order[docs[i].Cell.Name], order[docs[j].Cell.Name]
			if oi != oj && oi != 0 && oj != 0 {
				return oi < oj
			}
			return cellLess(docs[i], docs[j])
		})
		if name == "" {
			name = docs[0].Run.Name
		}
		lr.Suite = docs[0].Run.Suite
		lr.Time = docs[0].StartedAt
		for _, d := range docs {
			if d.StartedAt.Before(lr.Time) {
				lr.Time = d.StartedAt
			}
		}
		if lr.Data, err = analysis.FromDocuments(name, docs); err != nil {
			return nil, err
		}
	case manifest != nil:
		if lr.Data, err = analysis.FromManifest(manifest); err != nil {
			return nil, err
		}
		lr.Suite, lr.Time = manifest.Run.Suite, manifest.UpdatedAt
		if name == "" {
			name = manifest.Run.Name
		}
	default:
		return nil, fmt.Errorf("no results documents and no run manifest")
	}
	lr.Name, lr.Data.Name = name, name
	lr.Manifest = manifest
	lr.Docs = docs
	if len(docs) > 0 {
		lr.Manifest = manifestFromDocuments(name, docs, manifest)
	}
	return lr, nil
}

// cellLess orders documents as a run's matrix does when there is no
// manifest: by start time, then cell name.
func cellLess(a, b *results.Document) bool {
	if !a.StartedAt.Equal(b.StartedAt) {
		return a.StartedAt.Before(b.StartedAt)
	}
	return a.Cell.Name < b.Cell.Name
}
