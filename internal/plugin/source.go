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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
)

// RunGVR is the BenchmarkRun resource.
var RunGVR = schema.GroupVersionResource{Group: "dbbench.io", Version: "v1alpha1", Resource: "benchmarkruns"}

// Keys of the results ConfigMaps (the controller's and the agent's).
const (
	ManifestKey = "manifest.json" // run-level ConfigMap <run>-results
	DocumentKey = "result.json"   // per-cell ConfigMap
	ProgressKey = "progress.json" // per-cell ConfigMap, while running
)

// RunView is the part of a BenchmarkRun the plugin reads. It is decoded from
// the object's JSON, so the plugin does not need the API package's Go types
// and keeps working with runs written by newer controllers.
type RunView struct {
	Name         string
	Namespace    string
	Suite        string
	Created      time.Time
	Phase        string
	Progress     string
	CurrentStep  string
	StartTime    *time.Time
	Cells        []CellView
	ResultsCM    string
	BaselineName string
}

// CellView is one entry of status.cells.
type CellView struct {
	Name            string `json:"name"`
	Phase           string `json:"phase"`
	CurrentStep     string `json:"currentStep,omitempty"`
	StepsDone       int    `json:"stepsDone,omitempty"`
	StepsTotal      int    `json:"stepsTotal,omitempty"`
	Attempts        int    `json:"attempts,omitempty"`
	Node            string `json:"node,omitempty"`
	Message         string `json:"message,omitempty"`
	ResultConfigMap string `json:"resultConfigMap,omitempty"`
	// StartTime and CompletionTime are the controller's view of the cell.
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

type runObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Suite string `json:"suite"`
	} `json:"spec"`
	Status struct {
		Phase       string       `json:"phase"`
		Progress    string       `json:"progress"`
		CurrentStep string       `json:"currentStep"`
		StartTime   *metav1.Time `json:"startTime"`
		Cells       []CellView   `json:"cells"`
		Results     *struct {
			ConfigMap string `json:"configMap"`
		} `json:"results"`
	} `json:"status"`
}

func runViewOf(u *unstructured.Unstructured) (*RunView, error) {
	var o runObject
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &o); err != nil {
		return nil, fmt.Errorf("reading BenchmarkRun %s: %w", u.GetName(), err)
	}
	v := &RunView{Name: o.Name, Namespace: o.Namespace, Suite: o.Spec.Suite, Created: o.CreationTimestamp.Time,
		Phase: o.Status.Phase, Progress: o.Status.Progress, CurrentStep: o.Status.CurrentStep, Cells: o.Status.Cells}
	if o.Status.StartTime != nil {
		t := o.Status.StartTime.Time
		v.StartTime = &t
	}
	v.ResultsCM = o.Name + "-results"
	if o.Status.Results != nil && o.Status.Results.ConfigMap != "" {
		v.ResultsCM = o.Status.Results.ConfigMap
	}
	return v, nil
}

// When is the run's time in a history: its start, else its creation.
func (r *RunView) When() time.Time {
	if r.StartTime != nil {
		return *r.StartTime
	}
	return r.Created
}

// Cluster reads runs and results from a cluster.
type Cluster struct {
	Dynamic   dynamic.Interface
	Core      kubernetes.Interface
	Namespace string
}

// Run gets one BenchmarkRun.
func (c *Cluster) Run(ctx context.Context, name string) (*RunView, error) {
	u, err := c.Dynamic.Resource(RunGVR).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("benchmarkrun %q not found in namespace %q", name, c.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("getting benchmarkrun %s/%s: %w", c.Namespace, name, err)
	}
	return runViewOf(u)
}

// Runs lists the runs of a suite (spec.suite), oldest first.
func (c *Cluster) Runs(ctx context.Context, suite string) ([]*RunView, error) {
	list, err := c.Dynamic.Resource(RunGVR).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing benchmarkruns in %q: %w", c.Namespace, err)
	}
	var out []*RunView
	for i := range list.Items {
		v, err := runViewOf(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if v.Suite == suite {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].When().Before(out[j].When()) })
	return out, nil
}

// Dataset loads a run's results: the cells' documents (hardware figures and
// series included) or, when no cell document is readable, the run manifest's
// QPS summary. It also returns the run's baseline cell from the manifest
// ("" when there is no manifest yet).
func (c *Cluster) Dataset(ctx context.Context, run *RunView) (*analysis.Dataset, string, error) {
	ds, err := c.dataset(ctx, run)
	if err != nil {
		return nil, "", err
	}
	base := ""
	if cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, run.ResultsCM, metav1.GetOptions{}); err == nil {
		if _, m, err := analysis.ReadResult([]byte(cm.Data[ManifestKey])); err == nil && m != nil {
			base = m.Baseline
		}
	}
	return ds, base, nil
}

// CellDocument is a cell's status entry with its results document.
type CellDocument struct {
	Cell CellView
	Doc  *results.Document
}

// Documents reads the cells' results documents from their result
// ConfigMaps. Cells without a readable document are listed in missing, with
// the reason in notes; a document that is there but unreadable is an error.
func (c *Cluster) Documents(ctx context.Context, run *RunView) (found []CellDocument, missing, notes []string, err error) {
	for _, cell := range run.Cells {
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
		raw, ok := cm.Data[DocumentKey]
		if !ok {
			notes = append(notes, fmt.Sprintf("cell %s (%s): configmap %s has no %s yet", cell.Name, cell.Phase, cell.ResultConfigMap, DocumentKey))
			missing = append(missing, cell.Name)
			continue
		}
		doc, _, err := analysis.ReadResult([]byte(raw))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("cell %s: configmap %s key %s: %w", cell.Name, cell.ResultConfigMap, DocumentKey, err)
		}
		if doc == nil {
			return nil, nil, nil, fmt.Errorf("cell %s: configmap %s key %s holds a manifest, not a cell document", cell.Name, cell.ResultConfigMap, DocumentKey)
		}
		found = append(found, CellDocument{Cell: cell, Doc: doc})
	}
	return found, missing, notes, nil
}

func (c *Cluster) dataset(ctx context.Context, run *RunView) (*analysis.Dataset, error) {
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
		cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, run.ResultsCM, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("run %s has no readable cell results and its results configmap %s: %w", run.Name, run.ResultsCM, err)
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
	raw, ok := cm.Data[ManifestKey]
	if !ok {
		return nil, fmt.Errorf("configmap %s has no %s", cm.Name, ManifestKey)
	}
	_, m, err := analysis.ReadResult([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("configmap %s key %s: %w", cm.Name, ManifestKey, err)
	}
	if m == nil {
		return nil, fmt.Errorf("configmap %s key %s holds a cell document, not a manifest", cm.Name, ManifestKey)
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
