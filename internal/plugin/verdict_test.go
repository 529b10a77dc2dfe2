package plugin

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/triage"
)

// judgedRun is a finished run of suite nightly with a Regressed condition
// of status, its bisection in the status and its results ConfigMap named.
func judgedRun(name, status, reason string) *unstructured.Unstructured {
	run := runObj(name, "nightly", time.Now(), "Succeeded", nil)
	run.Object["spec"].(map[string]any)["regression"] = map[string]any{"against": "ChangePoints"}
	st := run.Object["status"].(map[string]any)
	st["conditions"] = []any{map[string]any{"type": "Regressed", "status": status, "reason": reason,
		"lastTransitionTime": "2026-12-07T12:00:00Z", "message": "what the verdict found"}}
	st["results"] = map[string]any{"configMap": name + "-results"}
	st["regression"] = map[string]any{"bisection": name + "-bisect"}
	return run
}

// writtenVerdictCM is the results ConfigMap with the verdict document the
// controller writes beside the manifest.
func writtenVerdictCM(t *testing.T, run string, cases ...triage.VerdictCase) *corev1.ConfigMap {
	t.Helper()
	doc, err := triage.MarshalVerdict(triage.Verdict{Run: run, Against: "ChangePoints", Status: "True", Reason: "Regressed", Cases: cases})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: run + "-results", Namespace: "bench"},
		Data: map[string]string{agentapi.RunResultKeyVerdict: string(doc)}}
}

func TestVerdictFormats(t *testing.T) {
	cases := []triage.VerdictCase{
		{Cell: "maria", Step: "update-index", Threads: 1, Metric: "Throughput", Result: triage.CaseRegressed, ChangePercent: "-86.0", Message: "maria update-index@1 -86.0%"},
		{Cell: "maria", Step: "point-query", Threads: 1, Metric: "Throughput", Result: triage.CasePassed},
	}
	clients := newFakeCluster(t, []*unstructured.Unstructured{judgedRun("night-6", "True", "Regressed"), judgedRun("night-1", "False", "NoHistory")},
		[]*corev1.ConfigMap{writtenVerdictCM(t, "night-6", cases...)})

	out, _, err := runCmd(t, clients, "verdict", "night-6", "--format", "junit")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil || doc.Tests != 2 || doc.Failures != 1 || doc.Suites[0].Name != "nightly/night-6" {
		t.Fatalf("junit (%v):\n%s", err, out)
	}
	// The bisection comes from the status, which started it after the
	// document was written.
	if !strings.Contains(out, `name="dbbench.bisection" value="night-6-bisect"`) {
		t.Errorf("junit lacks the bisection:\n%s", out)
	}

	out, _, err = runCmd(t, clients, "verdict", "night-6")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "markdown", out, out, []string{"### dbbench: regressed (1 of 2 cases)", "| **Regressed** | maria | update-index@1 |", "<details><summary>1 passed</summary>"})

	out, _, err = runCmd(t, clients, "verdict", "night-6", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := triage.UnmarshalVerdict([]byte(out))
	if err != nil || len(v.Cases) != 2 || v.Bisection != "night-6-bisect" || v.Message != "what the verdict found" {
		t.Fatalf("json (%v): %+v", err, v)
	}

	// Without a written document (no results ConfigMap): the status's
	// verdict, no cases.
	out, _, err = runCmd(t, clients, "verdict", "night-1", "--format", "junit")
	if err != nil || !strings.Contains(out, `<testcase name="verdict" classname="nightly">`) || !strings.Contains(out, `skipped="1"`) {
		t.Fatalf("junit of a run without its document (%v):\n%s", err, out)
	}
}

func TestVerdictExitCodeAndBadInput(t *testing.T) {
	clients := newFakeCluster(t, []*unstructured.Unstructured{
		judgedRun("bad", "True", "Regressed"), judgedRun("good", "False", "NoRegression"), judgedRun("unknown", "Unknown", "AnalysisFailed"),
		runObj("plain", "", time.Now(), "Succeeded", nil),
	}, nil)
	for _, tc := range []struct {
		run  string
		code int
	}{{"bad", ExitRegressed}, {"good", 0}, {"unknown", ExitNotJudged}} {
		_, _, err := runCmd(t, clients, "verdict", tc.run, "--exit-code")
		var exit *ExitError
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s: %v", tc.run, err)
		case tc.code != 0 && (!errors.As(err, &exit) || exit.Code != tc.code):
			t.Errorf("%s: error %v, want exit code %d", tc.run, err, tc.code)
		}
	}
	// Without --exit-code a regression is no error.
	if _, _, err := runCmd(t, clients, "verdict", "bad"); err != nil {
		t.Errorf("without --exit-code: %v", err)
	}
	if _, _, err := runCmd(t, clients, "verdict", "bad", "--format", "xml"); err == nil || !strings.Contains(err.Error(), `--format "xml": want junit, markdown or json`) {
		t.Errorf("a bad --format: %v", err)
	}
	if _, _, err := runCmd(t, clients, "verdict", "plain"); err == nil || !strings.Contains(err.Error(), "plain has no regression verdict") {
		t.Errorf("a run without a verdict: %v", err)
	}
}
