package specs

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// HostnameTopologyKey makes a pod (anti-)affinity term mean "the same node".
const HostnameTopologyKey = "kubernetes.io/hostname"

// withCellTerms returns the user's affinity with dbbench's own terms merged
// in. Placement is the scheduler's job: exclusivity is a required pod
// anti-affinity against other cells' exclusive pods in every namespace, and
// the client's node policy is a required pod (anti-)affinity to its cell's
// database pod.
func withCellTerms(user *corev1.Affinity, run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, client bool) *corev1.Affinity {
	a := &corev1.Affinity{}
	if user != nil {
		a = user.DeepCopy()
	}
	if exclusive(run) {
		term := corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{dbbenchv1alpha1.LabelExclusive: labelTrue},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: dbbenchv1alpha1.LabelCell, Operator: metav1.LabelSelectorOpNotIn, Values: []string{c.ObjectBase},
				}},
			},
			// An empty selector means every namespace: other runs'
			// benchmarks disturb results as much as this run's.
			NamespaceSelector: &metav1.LabelSelector{},
			TopologyKey:       HostnameTopologyKey,
		}
		a.PodAntiAffinity = ensureAnti(a.PodAntiAffinity)
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
	}
	// clientNode places the client relative to the cell's database pod; an
	// external target has none, and where its server runs is not ours to
	// know, so the policy cannot be enforced there (docs/design.md).
	if client && !c.External() {
		dbTerm := corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{dbbenchv1alpha1.LabelCell: c.ObjectBase, dbbenchv1alpha1.LabelRole: RoleDatabase}},
			TopologyKey:   HostnameTopologyKey,
		}
		switch run.Spec.Placement.ClientNode {
		case dbbenchv1alpha1.ClientSameNode, "":
			if a.PodAffinity == nil {
				a.PodAffinity = &corev1.PodAffinity{}
			}
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, dbTerm)
		case dbbenchv1alpha1.ClientOtherNode:
			a.PodAntiAffinity = ensureAnti(a.PodAntiAffinity)
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, dbTerm)
		}
	}
	if a.NodeAffinity == nil && a.PodAffinity == nil && a.PodAntiAffinity == nil {
		return nil
	}
	return a
}

// nodeNameField is the node field a node affinity can match on: the
// node's name, which (unlike the hostname label) always exists.
const nodeNameField = "metadata.name"

// PinToNode makes node the only node pod may be scheduled on (a blocked
// run's cells after its block's first: spec.placement.blocks). The
// requirement is ANDed into every required node selector term the pod has
// (the terms are ORed, so each must carry it), or is the only term. The
// rest of the pod's affinity stays: on a node the rest forbids, the pod
// stays Pending, and the cell fails DatabaseNotReady as any unschedulable
// cell does.
func PinToNode(pod *corev1.Pod, node string) {
	req := corev1.NodeSelectorRequirement{Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	a := pod.Spec.Affinity
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	if a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	sel := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(sel.NodeSelectorTerms) == 0 {
		sel.NodeSelectorTerms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range sel.NodeSelectorTerms {
		sel.NodeSelectorTerms[i].MatchFields = append(sel.NodeSelectorTerms[i].MatchFields, req)
	}
}

// PinnedNode is the node PinToNode pinned pod to, or "".
func PinnedNode(pod *corev1.Pod) string {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == nodeNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

func ensureAnti(p *corev1.PodAntiAffinity) *corev1.PodAntiAffinity {
	if p == nil {
		return &corev1.PodAntiAffinity{}
	}
	return p
}

// NodeLossTolerationSeconds is how long a benchmark pod stays bound to a
// node that stopped answering before Kubernetes evicts it. The default
// (300 s, added by the DefaultTolerationSeconds admission plugin) suits a
// service waiting out a short partition; a benchmark cell on a lost node
// measures nothing, and the sooner its pods go, the sooner the controller
// retries the cell on another node (reason NodeLost).
const NodeLossTolerationSeconds int64 = 30

// withNodeLossTolerations returns the user's tolerations plus a
// NodeLossTolerationSeconds toleration of the unreachable and not-ready
// taints, for each of the two the user does not already tolerate with a
// NoExecute (or any) effect.
func withNodeLossTolerations(user []corev1.Toleration) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), user...)
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		if slices.ContainsFunc(user, func(t corev1.Toleration) bool {
			return (t.Key == key || t.Key == "" && t.Operator == corev1.TolerationOpExists) &&
				(t.Effect == corev1.TaintEffectNoExecute || t.Effect == "")
		}) {
			continue
		}
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(NodeLossTolerationSeconds)})
	}
	return out
}
