package framework

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// cond is a condition of a table row: "Type=Status/Reason".
func cond(s string) metav1.Condition {
	typ, rest, _ := strings.Cut(s, "=")
	st, reason, _ := strings.Cut(rest, "/")
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(st), Reason: reason, Message: "the " + reason + " message"}
}

func conds(ss ...string) []metav1.Condition {
	out := make([]metav1.Condition, len(ss))
	for i, s := range ss {
		out[i] = cond(s)
	}
	return out
}

// healthRow is one status of one kind and what both readers must say of it
// once the controller has added its health conditions: kstatus (cli-utils
// itself, the library Flux and kubectl-based tools use) and Argo CD (the
// health script of config/argocd, run in gopher-lua as Argo CD runs it).
type healthRow struct {
	name string
	// object is a BenchmarkRun, BenchmarkSchedule, BenchmarkAck or
	// BenchmarkBisection with the conditions its controller sets.
	object runtime.Object
	// kstatus is the kstatus result, argo the Argo CD health status; both
	// messages must contain reason.
	kstatus kstatus.Status
	argo    string
	reason  string
}

func run(cs ...string) runtime.Object {
	return &dbbenchv1alpha1.BenchmarkRun{TypeMeta: metav1.TypeMeta{APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkRun"},
		Status: dbbenchv1alpha1.BenchmarkRunStatus{Conditions: conds(cs...)}}
}

func schedule(cs ...string) runtime.Object {
	return &dbbenchv1alpha1.BenchmarkSchedule{TypeMeta: metav1.TypeMeta{APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkSchedule"},
		Status: dbbenchv1alpha1.BenchmarkScheduleStatus{Conditions: conds(cs...)}}
}

func ack(cs ...string) runtime.Object {
	return &dbbenchv1alpha1.BenchmarkAck{TypeMeta: metav1.TypeMeta{APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkAck"},
		Status: dbbenchv1alpha1.BenchmarkAckStatus{Conditions: conds(cs...)}}
}

func bisection(cs ...string) runtime.Object {
	return &dbbenchv1alpha1.BenchmarkBisection{TypeMeta: metav1.TypeMeta{APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkBisection"},
		Status: dbbenchv1alpha1.BenchmarkBisectionStatus{Conditions: conds(cs...)}}
}

const (
	current    = kstatus.CurrentStatus
	inProgress = kstatus.InProgressStatus
	failedK    = kstatus.FailedStatus
)

// healthTable is the one table of the semantics of docs/design.md,
// "Conditions GitOps tools read", read by both tools.
var healthTable = []healthRow{
	// BenchmarkRun.
	{"run pending", run(), inProgress, "Progressing", healthReasonPending},
	{"run in its pre-flight", run("Progressing=True/PreflightRunning", "PreflightPassed=Unknown/PreflightRunning"), inProgress, "Progressing", dbbenchv1alpha1.ReasonPreflightRunning},
	{"run with cells running", run("Progressing=True/CellsRunning"), inProgress, "Progressing", dbbenchv1alpha1.ReasonCellsRunning},
	{"run succeeded", run("Progressing=False/Finished", "Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded"),
		current, "Healthy", dbbenchv1alpha1.ReasonAllCellsSucceeded},
	{"run succeeded, no regression", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "Regressed=False/NoRegression"),
		current, "Healthy", dbbenchv1alpha1.ReasonAllCellsSucceeded},
	{"run succeeded, regression suspected", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "Regressed=False/RegressionSuspected"),
		current, "Healthy", dbbenchv1alpha1.ReasonAllCellsSucceeded},
	{"run succeeded, regression acknowledged", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "Regressed=False/RegressionAcknowledged"),
		current, "Healthy", dbbenchv1alpha1.ReasonAllCellsSucceeded},
	{"run regressed", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "Regressed=True/Regressed"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonRegressed},
	{"run regressed by its environment", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "Regressed=True/EnvironmentChanged"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonEnvironmentChanged},
	{"run whose verdict failed", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "Regressed=Unknown/AnalysisFailed"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonAnalysisFailed},
	{"run with cells failed", run("Succeeded=False/CellsFailed", "Failed=True/CellsFailed"), failedK, "Degraded", dbbenchv1alpha1.ReasonCellsFailed},
	{"run failed in its pre-flight", run("Succeeded=False/PreflightFailed", "Failed=True/PreflightFailed"), failedK, "Degraded", dbbenchv1alpha1.ReasonPreflightFailed},
	{"run with an invalid spec", run("Succeeded=False/InvalidSpec", "Failed=True/InvalidSpec"), failedK, "Degraded", dbbenchv1alpha1.ReasonInvalidSpec},
	{"run uploading", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "ResultsUploaded=False/Uploading"),
		inProgress, "Progressing", dbbenchv1alpha1.ReasonUploading},
	{"run retrying its upload", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "ResultsUploaded=False/UploadPending"),
		inProgress, "Progressing", dbbenchv1alpha1.ReasonUploadPending},
	{"run whose upload the user must repair", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "ResultsUploaded=False/UploadFailed"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonUploadFailed},
	{"run whose bucket is missing", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "ResultsUploaded=False/PreflightFailed"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonPreflightFailed},
	{"run uploaded", run("Succeeded=True/AllCellsSucceeded", "Failed=False/AllCellsSucceeded", "ResultsUploaded=True/Uploaded"),
		current, "Healthy", dbbenchv1alpha1.ReasonAllCellsSucceeded},
	{"run failed, uploaded", run("Succeeded=False/CellsFailed", "Failed=True/CellsFailed", "ResultsUploaded=True/Uploaded"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonCellsFailed},

	// BenchmarkSchedule.
	{"schedule not read yet", schedule(), inProgress, "Progressing", healthReasonPending},
	{"schedule scheduling", schedule("Ready=True/Scheduled"), current, "Healthy", dbbenchv1alpha1.ScheduleReasonScheduled},
	{"schedule suspended", schedule("Ready=True/Suspended"), current, "Healthy", dbbenchv1alpha1.ScheduleReasonSuspended},
	{"schedule invalid", schedule("Ready=False/InvalidSchedule"), failedK, "Degraded", dbbenchv1alpha1.ScheduleReasonInvalidSchedule},
	{"schedule in an unknown time zone", schedule("Ready=False/InvalidTimeZone"), failedK, "Degraded", dbbenchv1alpha1.ScheduleReasonInvalidTimeZone},

	// BenchmarkAck.
	{"ack not checked yet", ack(), inProgress, "Progressing", healthReasonChecking},
	{"ack whose suite cannot be read", ack("Accepted=Unknown/HistoryUnreadable"), inProgress, "Progressing", dbbenchv1alpha1.AckReasonHistoryUnreadable},
	{"ack of a run not found", ack("Accepted=False/RunNotFound", "Published=False/RunNotFound"), failedK, "Degraded", dbbenchv1alpha1.AckReasonRunNotFound},
	{"ack of a step not measured", ack("Accepted=False/StepNotFound", "Published=False/StepNotFound"), failedK, "Degraded", dbbenchv1alpha1.AckReasonStepNotFound},
	{"ack accepted, publishing", ack("Accepted=True/Accepted"), inProgress, "Progressing", healthReasonChecking},
	{"ack accepted and published", ack("Accepted=True/Accepted", "Published=True/Published"), current, "Healthy", dbbenchv1alpha1.AckReasonPublished},
	{"ack accepted, no object store", ack("Accepted=True/Accepted", "Published=False/NoObjectStore"), current, "Healthy", dbbenchv1alpha1.AckReasonNoObjectStore},
	{"ack accepted, publication retried", ack("Accepted=True/Accepted", "Published=False/PublishFailed"), inProgress, "Progressing", dbbenchv1alpha1.AckReasonPublishFailed},
	{"ack accepted, key held elsewhere", ack("Accepted=True/Accepted", "Published=False/Conflict"), failedK, "Degraded", dbbenchv1alpha1.AckReasonConflict},

	// BenchmarkBisection.
	{"bisection not started", bisection(), inProgress, "Progressing", healthReasonPending},
	{"bisection searching", bisection("Localized=Unknown/Searching"), inProgress, "Progressing", dbbenchv1alpha1.BisectionReasonSearching},
	{"bisection localized, explaining", bisection("Localized=True/Localized", "Explained=Unknown/Explaining"), inProgress, "Progressing", dbbenchv1alpha1.BisectionReasonExplaining},
	{"bisection localized, upload pending", bisection("Localized=True/Localized", "Explained=True/Explained", "ResultsUploaded=False/UploadPending"),
		inProgress, "Progressing", dbbenchv1alpha1.ReasonUploadPending},
	{"bisection localized, upload refused", bisection("Localized=True/Localized", "Explained=True/Explained", "ResultsUploaded=False/UploadFailed"),
		failedK, "Degraded", dbbenchv1alpha1.ReasonUploadFailed},
	{"bisection localized and explained", bisection("Localized=True/Localized", "Explained=True/Explained"), current, "Healthy", dbbenchv1alpha1.BisectionReasonLocalized},
	{"bisection localized, nothing to explain", bisection("Localized=True/Localized", "Explained=False/NothingToCompare", "ResultsUploaded=True/Uploaded"),
		current, "Healthy", dbbenchv1alpha1.BisectionReasonLocalized},
	{"bisection: endpoints not reproduced", bisection("Localized=False/EndpointsNotReproduced"), current, "Healthy", dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced},
	{"bisection: an endpoint failed", bisection("Localized=False/EndpointFailed"), failedK, "Degraded", dbbenchv1alpha1.BisectionReasonEndpointFailed},
	{"bisection: budget exhausted", bisection("Localized=False/BudgetExhausted"), failedK, "Degraded", dbbenchv1alpha1.BisectionReasonBudgetExhausted},
	{"bisection: narrowed", bisection("Localized=False/Narrowed"), failedK, "Degraded", dbbenchv1alpha1.BisectionReasonNarrowed},
	{"bisection: ambiguous", bisection("Localized=False/Ambiguous"), failedK, "Degraded", dbbenchv1alpha1.BisectionReasonAmbiguous},
	{"bisection: a round failed", bisection("Localized=False/RoundFailed"), failedK, "Degraded", dbbenchv1alpha1.BisectionReasonRoundFailed},
	{"bisection: invalid spec", bisection("Localized=False/InvalidSpec"), failedK, "Degraded", dbbenchv1alpha1.BisectionReasonInvalidSpec},
}

// withHealth adds the health conditions as the kind's controller does when
// it writes the status, and the generations it writes them with.
func withHealth(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	now := time.Now()
	switch o := obj.(type) {
	case *dbbenchv1alpha1.BenchmarkRun:
		o.Generation, o.Status.ObservedGeneration = 1, 1
		SetHealth(&o.Status.Conditions, 1, now, RunHealth(&o.Status))
	case *dbbenchv1alpha1.BenchmarkSchedule:
		o.Generation, o.Status.ObservedGeneration = 1, 1
		SetHealth(&o.Status.Conditions, 1, now, ScheduleHealth(&o.Status))
	case *dbbenchv1alpha1.BenchmarkAck:
		o.Generation, o.Status.ObservedGeneration = 1, 1
		SetHealth(&o.Status.Conditions, 1, now, AckHealth(&o.Status))
	case *dbbenchv1alpha1.BenchmarkBisection:
		o.Generation, o.Status.ObservedGeneration = 1, 1
		SetHealth(&o.Status.Conditions, 1, now, BisectionHealth(&o.Status))
	default:
		t.Fatalf("%T is no dbbench kind", obj)
	}
	return obj
}

func TestHealthForKstatusAndArgoCD(t *testing.T) {
	script, err := os.ReadFile("../../../config/argocd/health.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range healthTable {
		t.Run(row.name, func(t *testing.T) {
			// A copy: the table's objects must stay as declared for the
			// next -count iteration.
			withHealthOnce := withHealth(t, row.object.DeepCopyObject())
			u := toUnstructured(t, withHealthOnce)
			res, err := kstatus.Compute(u)
			if err != nil {
				t.Fatal(err)
			}
			// A controller's next pass reads the conditions health wrote:
			// the answer must not change with nothing else changed.
			again, err := kstatus.Compute(toUnstructured(t, withHealth(t, withHealthOnce.DeepCopyObject())))
			if err != nil {
				t.Fatal(err)
			}
			if again.Status != res.Status {
				t.Errorf("kstatus after a second pass: %s %q, after the first %s: health reads its own conditions", again.Status, again.Message, res.Status)
			}
			// kstatus names the deciding condition's reason in the
			// condition it reports (none for Current).
			var reasons []string
			for _, c := range res.Conditions {
				reasons = append(reasons, c.Reason)
			}
			if res.Status != row.kstatus || row.kstatus != current && !slices.Contains(reasons, row.reason) {
				t.Errorf("kstatus: %s %q (reasons %v), want %s with reason %s", res.Status, res.Message, reasons, row.kstatus, row.reason)
			}
			// Argo CD's health is a status and a message only: the message
			// naming the deciding reason is how its users learn why.
			status, msg := argoHealth(t, string(script), u)
			if status != row.argo || !strings.Contains(msg, row.reason) {
				t.Errorf("Argo CD: %s %q, want %s naming %s", status, msg, row.argo, row.reason)
			}
			// Exactly one of the three is True.
			var on []string
			for _, c := range []string{dbbenchv1alpha1.ConditionReady, dbbenchv1alpha1.ConditionReconciling, dbbenchv1alpha1.ConditionStalled} {
				for _, have := range conditionsOf(t, u) {
					if have["type"] == c && have["status"] == "True" {
						on = append(on, c)
					}
				}
			}
			if len(on) != 1 {
				t.Errorf("True among Ready, Reconciling, Stalled: %v, want exactly one", on)
			}
		})
	}
}

// TestHealthBeforeTheFirstStatus: an object the controller has not written
// yet reads as in progress to both tools: the CRDs default status to an
// observedGeneration of 0 (kstatus would call an object without status and
// conditions Current).
func TestHealthBeforeTheFirstStatus(t *testing.T) {
	script, err := os.ReadFile("../../../config/argocd/health.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"BenchmarkRun", "BenchmarkSchedule", "BenchmarkAck", "BenchmarkBisection"} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": dbbenchv1alpha1.GroupVersion.String(), "kind": kind,
			"metadata": map[string]any{"name": "x", "generation": int64(1)},
			"status":   map[string]any{"observedGeneration": int64(0)},
		}}
		res, err := kstatus.Compute(u)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != inProgress {
			t.Errorf("%s: kstatus %s, want InProgress", kind, res.Status)
		}
		if status, _ := argoHealth(t, string(script), u); status != "Progressing" {
			t.Errorf("%s: Argo CD %s, want Progressing", kind, status)
		}
		crd, err := os.ReadFile("../../../config/crd/bases/dbbench.io_" + strings.ToLower(kind) + "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Spec struct {
				Versions []struct {
					Schema struct {
						OpenAPIV3Schema struct {
							Properties map[string]struct {
								Default    any `json:"default"`
								Properties map[string]struct {
									Default any `json:"default"`
								} `json:"properties"`
							} `json:"properties"`
						} `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(crd, &doc); err != nil {
			t.Fatal(err)
		}
		st := doc.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
		if st.Default == nil || st.Properties["observedGeneration"].Default == nil {
			t.Errorf("%s's CRD: status default %v, observedGeneration default %v; want both, so a new object is InProgress",
				kind, st.Default, st.Properties["observedGeneration"].Default)
		}
	}
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func conditionsOf(t *testing.T, u *unstructured.Unstructured) []map[string]any {
	t.Helper()
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		out = append(out, c.(map[string]any))
	}
	return out
}

// argoHealth runs the health script as Argo CD does: the object converted
// from JSON into Lua tables as the global obj, the script's returned table
// read for status and message.
func argoHealth(t *testing.T, script string, u *unstructured.Unstructured) (status, message string) {
	t.Helper()
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var obj any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		t.Fatalf("health script: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health script returned %v", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case bool:
		return lua.LBool(x)
	}
	return lua.LNil
}

// TestArgoCDConfigMapHoldsTheScript: every kind's key in
// config/argocd/argocd-cm.yaml holds config/argocd/health.lua unchanged.
func TestArgoCDConfigMapHoldsTheScript(t *testing.T) {
	script, err := os.ReadFile("../../../config/argocd/health.lua")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../../config/argocd/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"BenchmarkRun", "BenchmarkSchedule", "BenchmarkAck", "BenchmarkBisection"} {
		key := "resource.customizations.health.dbbench.io_" + kind
		if got := cm.Data[key]; got != string(script) {
			t.Errorf("argocd-cm.yaml's %s differs from health.lua (%d and %d bytes): regenerate it", key, len(got), len(script))
		}
	}
}
