package v1alpha1

// The conditions every kind carries for tools that know none of them:
// kstatus (cli-utils' pkg/kstatus, read by Flux's kustomize-controller,
// kubectl-based tools and Config Sync) and the Argo CD health scripts in
// config/argocd. Exactly one of the three is True at a time
// (docs/design.md, "Conditions GitOps tools read"):
const (
	// ConditionReady is True when the object is finished and well: a run
	// succeeded, found no regression and uploaded what it had to; a
	// schedule creates runs or is suspended as told; an ack is accepted
	// and published; a bisection localized the change or showed it is not
	// there.
	ConditionReady = "Ready"
	// ConditionReconciling is True while work is under way: cells or a
	// pre-flight running, an upload or an explanation still to come,
	// rounds in flight.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the object cannot become Ready without
	// a change: a failed run, a regressed one (the suite's health shows
	// the regression until it is fixed or acknowledged), an upload the
	// user must repair, an invalid schedule, a refused ack, a bisection
	// that ended without an answer.
	ConditionStalled = "Stalled"
)
