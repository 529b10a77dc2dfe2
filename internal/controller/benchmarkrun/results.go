package benchmarkrun

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/triage"
	"github.com/dbbench/dbbench/pkg/verdictformat"
)

// writeRunResults writes the run-level results ConfigMap once every cell has
// finished: the run manifest, with each cell's per-step QPS summary and where
// its full document lives, and beside it the run's verdict v (nil: none)
// as its document with every case and as JUnit XML. The per-cell documents
// stay in their own ConfigMaps, so nothing is copied twice.
func (p *runPass) writeRunResults(ctx context.Context, m *results.Manifest, v *triage.Verdict) error {
	name := specs.RunResultsConfigMapName(p.run)
	p.run.Status.Results = &dbbenchv1alpha1.ResultsReference{}
	if !p.run.Spec.Output.ConfigMap.IsEnabled() {
		return nil
	}
	data, err := results.MarshalManifest(m)
	if errors.Is(err, results.ErrTooLarge) {
		// Keep the index and drop the summaries: reports then read the
		// cells' own documents.
		slim := *m
		slim.Cells = append([]results.ManifestCell(nil), m.Cells...)
		for i := range slim.Cells {
			slim.Cells[i].QPS, slim.Cells[i].RowsPerSecond = nil, nil
		}
		data, err = results.MarshalManifest(&slim)
	}
	if err != nil {
		return fmt.Errorf("encoding the run manifest: %w", err)
	}
	values := map[string]string{agentapi.RunResultKeyManifest: string(data)}
	if err := addVerdict(values, v, agentapi.ResultBudgetBytes-len(data)); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.run.Namespace, Labels: map[string]string{
			dbbenchv1alpha1.LabelManagedBy: dbbenchv1alpha1.ManagedByValue, dbbenchv1alpha1.LabelRun: p.run.Name, dbbenchv1alpha1.LabelRole: specs.RoleRunData,
		}},
		Immutable: ptr.To(true),
		Data:      values,
	}
	if err := p.create(ctx, cm); err != nil {
		return err
	}
	p.run.Status.Results.ConfigMap = name
	return nil
}

// addVerdict puts the verdict document and its JUnit form into values
// within budget bytes. A verdict too large for it keeps its cases that did
// not pass (the passed ones are left out, and the document counts them),
// then none: the condition and status.regression still say the verdict.
func addVerdict(values map[string]string, v *triage.Verdict, budget int) error {
	if v == nil {
		return nil
	}
	for _, keep := range []func([]triage.VerdictCase) []triage.VerdictCase{allCases, failedCases, noCases} {
		w := *v
		w.Cases = keep(v.Cases)
		w.CasesLeftOut = len(v.Cases) - len(w.Cases)
		doc, err := triage.MarshalVerdict(w)
		if err != nil {
			return fmt.Errorf("encoding the verdict: %w", err)
		}
		junit, err := verdictformat.JUnit(w)
		if err != nil {
			return fmt.Errorf("encoding the verdict as JUnit: %w", err)
		}
		if len(doc)+len(junit) <= budget {
			values[agentapi.RunResultKeyVerdict], values[agentapi.RunResultKeyJUnit] = string(doc), string(junit)
			return nil
		}
	}
	return nil
}

func allCases(cs []triage.VerdictCase) []triage.VerdictCase { return cs }

func failedCases(cs []triage.VerdictCase) []triage.VerdictCase {
	var out []triage.VerdictCase
	for _, c := range cs {
		if c.Result != triage.CasePassed {
			out = append(out, c)
		}
	}
	return out
}

func noCases([]triage.VerdictCase) []triage.VerdictCase { return nil }

// manifest indexes the cells; a cell without a readable document still gets
// an entry with its phase, so the manifest says what is missing.
func (p *runPass) manifest(cells []matrix.Cell) *results.Manifest {
	m := &results.Manifest{
		SchemaVersion: results.ManifestSchemaV1,
		Run:           results.Run{Name: p.run.Name, Namespace: p.run.Namespace, UID: string(p.run.UID), Suite: p.run.Spec.Suite},
		UpdatedAt:     p.now.UTC(),
		Baseline:      matrix.BaselineName(p.run),
	}
	for i, c := range cells {
		cs := p.run.Status.Cells[i]
		cmName := specs.ResultConfigMapName(c)
		entry := results.ManifestCell{
			Cell: results.Cell{
				Name: c.Name, Database: c.Database.Name, Engine: string(c.Database.Engine),
				Version: c.Version, Config: c.Config.Name, Repeat: int(c.Repeat), Attempt: int(cs.Attempts),
				Block: int(c.Block),
			},
			Phase: string(cs.Phase),
		}
		if cm := p.kids.results[cmName]; cm != nil {
			if raw, ok := cm.Data[agentapi.ResultKeyDocument]; ok {
				if doc, err := results.Unmarshal([]byte(raw)); err == nil {
					entry = results.NewManifestCell(doc, string(cs.Phase), cmName, p.cellObjectKey(c.Name))
					// The controller placed the cell: its block is the
					// controller's to say, whatever agent wrote the document.
					entry.Name, entry.Block = c.Name, int(c.Block)
				} else {
					p.log.Info("Skipped an unreadable results document", "cell", c.Name, "configMap", cmName, "error", err.Error())
				}
				entry.ConfigMap = cmName
			}
		}
		if entry.Image == "" {
			entry.Image = c.Image
		}
		if entry.ImageDigest == "" {
			// The runtime's digest of the database image: the document
			// cannot know it (the agent runs in the client pod).
			entry.ImageDigest = cs.ImageDigest
		}
		entry.Environment = p.environment(entry.Environment, cs.Node, p.clientImageDigest(c, cs.Attempts))
		m.Cells = append(m.Cells, entry)
	}
	return m
}

// environment completes a cell's environment with what the controller
// knows: the database pod's node, the client image's digest and the
// cluster's version.
func (p *runPass) environment(e *results.Environment, node, clientDigest string) *results.Environment {
	var out results.Environment
	if e != nil {
		out = *e
	}
	if node != "" {
		// The database pod's node, which the document cannot always
		// know (its host is the client's when the server's is unknown).
		out.Node = node
	}
	if out.ClientImageDigest == "" {
		out.ClientImageDigest = clientDigest
	}
	out.KubernetesVersion = p.r.KubernetesVersion
	if out == (results.Environment{}) {
		return nil
	}
	return &out
}

// clientImageDigest is the runtime's digest of the image the client of
// the cell's attempt ran, from its pod, which its Job keeps ("" when the
// pod is gone or its container never started): the agent inside it cannot
// know its own image's digest.
func (p *runPass) clientImageDigest(c matrix.Cell, attempt int32) string {
	for _, obj := range cellChildren(p.kids.pods, c.ObjectBase, specs.RoleClient) {
		if pod, ok := obj.(*corev1.Pod); ok && attemptOf(pod) == attempt {
			if d := imageDigestOf(pod, specs.AgentContainer); d != "" {
				return d
			}
		}
	}
	return ""
}
