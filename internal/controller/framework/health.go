package framework

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// Health is an object's state as tools that know no dbbench kind read it:
// kstatus (Flux, kubectl-based tools) and Argo CD's health scripts
// (config/argocd). Each kind derives it from its own conditions
// (RunHealth, ScheduleHealth, AckHealth, BisectionHealth) when its status
// is written, and SetHealth turns it into the Ready, Reconciling and
// Stalled conditions (api/v1alpha1/health.go).
type Health struct {
	state healthState
	// reason and message explain the state in all three conditions.
	reason, message string
}

type healthState int

const (
	// healthReconciling: work is under way (kstatus InProgress, Argo CD
	// Progressing).
	healthReconciling healthState = iota
	// healthReady: finished and well (kstatus Current, Argo CD Healthy).
	healthReady
	// healthStalled: nothing more happens without a change (kstatus
	// Failed, Argo CD Degraded).
	healthStalled
)

func ready(reason, msg string) Health       { return Health{healthReady, reason, msg} }
func reconciling(reason, msg string) Health { return Health{healthReconciling, reason, msg} }
func stalled(reason, msg string) Health     { return Health{healthStalled, reason, msg} }

// fromCondition is h with c's reason and message, or with fallbackReason
// when c is nil or has no reason.
func fromCondition(state healthState, c *metav1.Condition, fallbackReason, fallbackMsg string) Health {
	if c == nil || c.Reason == "" {
		return Health{state, fallbackReason, fallbackMsg}
	}
	return Health{state, c.Reason, c.Message}
}

// SetHealth sets the Ready, Reconciling and Stalled conditions from h, one
// of them True.
func SetHealth(conds *[]metav1.Condition, generation int64, now time.Time, h Health) {
	for _, c := range []struct {
		typ string
		on  bool
	}{
		{dbbenchv1alpha1.ConditionReady, h.state == healthReady},
		{dbbenchv1alpha1.ConditionReconciling, h.state == healthReconciling},
		{dbbenchv1alpha1.ConditionStalled, h.state == healthStalled},
	} {
		status := metav1.ConditionFalse
		if c.on {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(conds, metav1.Condition{Type: c.typ, Status: status, Reason: h.reason, Message: h.message,
			ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now)})
	}
}

// Health reasons that are no condition's own.
const (
	healthReasonPending  = "Pending"
	healthReasonChecking = "Checking"
)

// RunHealth: a run reconciles until it has finished, and then while its
// results are still being uploaded; it is stalled when it failed, regressed,
// could not be judged, or waits for the user to repair its upload; else
// ready.
func RunHealth(st *dbbenchv1alpha1.BenchmarkRunStatus) Health {
	conds := st.Conditions
	if !st.Finished() {
		return fromCondition(healthReconciling, meta.FindStatusCondition(conds, dbbenchv1alpha1.ConditionProgressing),
			healthReasonPending, "The run has not started yet")
	}
	if c := meta.FindStatusCondition(conds, dbbenchv1alpha1.ConditionFailed); c != nil && c.Status == metav1.ConditionTrue {
		return fromCondition(healthStalled, c, dbbenchv1alpha1.ReasonCellsFailed, "")
	}
	if c := meta.FindStatusCondition(conds, dbbenchv1alpha1.ConditionRegressed); c != nil && c.Status != metav1.ConditionFalse {
		// True: a regression (or an environment change) was found;
		// Unknown: the verdict could not be computed, and is not redone.
		return fromCondition(healthStalled, c, dbbenchv1alpha1.ReasonRegressed, "")
	}
	if c := meta.FindStatusCondition(conds, dbbenchv1alpha1.ConditionResultsUploaded); c != nil && c.Status != metav1.ConditionTrue {
		switch c.Reason {
		case dbbenchv1alpha1.ReasonUploadFailed, dbbenchv1alpha1.ReasonPreflightFailed:
			// Refused credentials, a missing bucket: the user must act.
			return fromCondition(healthStalled, c, dbbenchv1alpha1.ReasonUploadFailed, "")
		default:
			return fromCondition(healthReconciling, c, dbbenchv1alpha1.ReasonUploading, "")
		}
	}
	return fromCondition(healthReady, meta.FindStatusCondition(conds, dbbenchv1alpha1.ConditionSucceeded), dbbenchv1alpha1.ReasonAllCellsSucceeded, "")
}

// ScheduleHealth: a schedule whose spec parses is ready, whether it creates
// runs or is suspended as told; an invalid one is stalled until its spec
// changes.
func ScheduleHealth(st *dbbenchv1alpha1.BenchmarkScheduleStatus) Health {
	c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.ScheduleConditionReady)
	switch {
	// Ready is also the condition health writes: Pending is its own
	// answer for a schedule not read yet, which stays Pending until the
	// schedule's pass sets Ready.
	case c == nil || c.Reason == healthReasonPending:
		return reconciling(healthReasonPending, "The schedule has not been read yet")
	case c.Reason == dbbenchv1alpha1.ScheduleReasonInvalidSchedule || c.Reason == dbbenchv1alpha1.ScheduleReasonInvalidTimeZone:
		return stalled(c.Reason, c.Message)
	default:
		return ready(c.Reason, c.Message)
	}
}

// AckHealth: an ack is ready once accepted and published (or accepted with
// no object store to publish to); stalled when refused or when another
// namespace's ack holds its key; reconciling while it is checked or its
// publication is retried.
func AckHealth(st *dbbenchv1alpha1.BenchmarkAckStatus) Health {
	acc := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.AckConditionAccepted)
	if acc == nil || acc.Status == metav1.ConditionUnknown {
		return fromCondition(healthReconciling, acc, healthReasonChecking, "The ack has not been checked yet")
	}
	if acc.Status == metav1.ConditionFalse {
		return stalled(acc.Reason, acc.Message)
	}
	pub := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.AckConditionPublished)
	switch {
	case pub == nil:
		return reconciling(healthReasonChecking, "Accepted; not published yet")
	case pub.Status == metav1.ConditionTrue:
		return ready(pub.Reason, acc.Message)
	case pub.Reason == dbbenchv1alpha1.AckReasonNoObjectStore:
		return ready(pub.Reason, acc.Message+"; "+pub.Message)
	case pub.Reason == dbbenchv1alpha1.AckReasonConflict:
		return stalled(pub.Reason, pub.Message)
	default:
		return reconciling(pub.Reason, pub.Message)
	}
}

// bisectionAnswers are the Localized reasons of a search that ended with an
// answer: the first bad point, or that the bad point is not worse.
var bisectionAnswers = map[string]bool{
	dbbenchv1alpha1.BisectionReasonLocalized:              true,
	dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced: true,
}

// BisectionHealth: a bisection reconciles while it searches, explains or
// uploads; it is ready once it answered and all of that is done, stalled
// when it ended without an answer (a failed endpoint or round, the budget
// spent, failed or inconclusive points left, an invalid spec) or its upload
// needs the user.
func BisectionHealth(st *dbbenchv1alpha1.BenchmarkBisectionStatus) Health {
	loc := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	if loc == nil || loc.Status == metav1.ConditionUnknown {
		return fromCondition(healthReconciling, loc, healthReasonPending, "The search has not started yet")
	}
	if !bisectionAnswers[loc.Reason] {
		return stalled(loc.Reason, loc.Message)
	}
	if c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.BisectionConditionExplained); loc.Status == metav1.ConditionTrue &&
		(c == nil || c.Status == metav1.ConditionUnknown) {
		return fromCondition(healthReconciling, c, dbbenchv1alpha1.BisectionReasonExplaining, "")
	}
	if c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c != nil && c.Status != metav1.ConditionTrue {
		if c.Reason == dbbenchv1alpha1.ReasonUploadFailed {
			return stalled(c.Reason, c.Message)
		}
		return reconciling(c.Reason, c.Message)
	}
	return ready(loc.Reason, loc.Message)
}
