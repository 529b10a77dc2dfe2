package verdictformat

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/triage"
)

func sampleVerdict() triage.Verdict {
	return triage.Verdict{
		Run: "night-13", Suite: "pg16", Against: "ChangePoints", Status: "True", Reason: "Regressed",
		Message:    `1 step × thread pairs slower by 10% or more than change points over the last 13 runs: pg-16-small point-query@1 -17.6% <"&">`,
		ComparedTo: []string{"night-01", "night-12"}, JudgedAt: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC),
		Cases: []triage.VerdictCase{
			{Cell: "pg-16-small", Step: "point-query", Threads: 1, Metric: "Throughput", Result: triage.CaseRegressed,
				Before: "10423.00", After: "8589.00", ChangePercent: "-17.6", PValue: "0.0031", Method: "change points over the last 13 runs",
				Message: "pg-16-small point-query@1 -17.6% | drop"},
			{Cell: "pg-16-small", Step: "update-index", Threads: 1, Metric: "Throughput", Result: triage.CaseAcknowledged,
				ChangePercent: "-12.0", Message: "acknowledged by ack-1"},
			{Cell: "pg-16-small", Step: "read-only-count", Threads: 1, Metric: "Throughput", Result: triage.CaseSuspected,
				ChangePercent: "-11.0", Message: "suspected"},
			{Cell: "pg-16-small", Step: "insert", Threads: 1, Metric: "Throughput", Result: triage.CasePassed},
			{Cell: "pg-16-small", Step: "insert", Threads: 1, Metric: "P99Latency", Result: triage.CasePassed},
		},
	}
}

func TestJUnit(t *testing.T) {
	noCases := func(status, reason string) triage.Verdict {
		return triage.Verdict{Run: "r", Against: "PreviousRun", Status: status, Reason: reason, Message: "why"}
	}
	tests := []struct {
		name                                     string
		v                                        triage.Verdict
		tests, failures, errors, skipped, passed int
		firstCase, firstClass                    string
	}{
		{name: "cases", v: sampleVerdict(), tests: 5, failures: 1, skipped: 1, passed: 3,
			firstCase: "point-query@1 Throughput", firstClass: "pg16.pg-16-small"},
		{name: "nothing compared is skipped", v: noCases("False", "NoHistory"), tests: 1, skipped: 1, firstCase: "verdict", firstClass: "r"},
		{name: "not judged is an error", v: noCases("Unknown", "AnalysisFailed"), tests: 1, errors: 1, firstCase: "verdict", firstClass: "r"},
		{name: "regressed without cases fails", v: noCases("True", "Regressed"), tests: 1, failures: 1, firstCase: "verdict", firstClass: "r"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := JUnit(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(out), xml.Header) {
				t.Errorf("no XML header:\n%s", out)
			}
			var doc junitSuites
			if err := xml.Unmarshal(out, &doc); err != nil {
				t.Fatalf("not XML: %v\n%s", err, out)
			}
			if len(doc.Suites) != 1 {
				t.Fatalf("%d testsuites, want 1", len(doc.Suites))
			}
			s := doc.Suites[0]
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"tests", s.Tests, tc.tests}, {"failures", s.Failures, tc.failures}, {"errors", s.Errors, tc.errors},
				{"skipped", s.Skipped, tc.skipped}, {"testcases", len(s.Cases), tc.tests},
				{"root tests", doc.Tests, tc.tests}, {"root failures", doc.Failures, tc.failures},
			} {
				if c.got != c.want {
					t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
				}
			}
			passed := 0
			for _, c := range s.Cases {
				if c.Failure == nil && c.Error == nil && c.Skipped == nil {
					passed++
				}
			}
			if passed != tc.passed {
				t.Errorf("%d cases passed, want %d", passed, tc.passed)
			}
			if s.Cases[0].Name != tc.firstCase || s.Cases[0].ClassName != tc.firstClass {
				t.Errorf("first case %s / %s, want %s / %s", s.Cases[0].ClassName, s.Cases[0].Name, tc.firstClass, tc.firstCase)
			}
		})
	}
}

// The failure carries the case's message and figures; the suite its
// facts, its time and the condition's message, special characters intact.
func TestJUnitFailureAndSuite(t *testing.T) {
	v := sampleVerdict()
	out, err := JUnit(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Name != "pg16/night-13" || s.Timestamp != "2026-12-07T12:00:00Z" || s.SystemOut != v.Message {
		t.Errorf("suite %q at %q, system-out %q", s.Name, s.Timestamp, s.SystemOut)
	}
	f := s.Cases[0].Failure
	if f == nil || f.Message != v.Cases[0].Message || f.Type != "Regressed" ||
		f.Text != "before 10423.00, after 8589.00 (-17.6%), p 0.0031, change points over the last 13 runs" {
		t.Errorf("failure %+v", f)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["dbbench.regressed"] != "True" || props["dbbench.comparedTo"] != "night-01,night-12" || props["dbbench.suite"] != "pg16" {
		t.Errorf("properties %v", props)
	}
	if _, err := JUnit(triage.Verdict{}); err == nil {
		t.Error("a verdict without a run was encoded")
	}
}

func TestMarkdown(t *testing.T) {
	md := Markdown(sampleVerdict())
	for _, want := range []string{
		"### dbbench: regressed (1 of 5 cases)",
		"Run `night-13` of suite `pg16`, judged against `ChangePoints`: **Regressed=True** (Regressed)",
		"5 cases: 1 regressed, 1 suspected, 1 acknowledged, 2 passed.",
		"| **Regressed** | pg-16-small | point-query@1 | Throughput | 10423.00 | 8589.00 | -17.6 % | 0.0031 | pg-16-small point-query@1 -17.6% \\| drop |",
		"<details><summary>2 passed</summary>",
		"| pg-16-small | insert@1 | P99Latency | - | - | - | - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Regressed, then suspected, then acknowledged.
	r, s, a := strings.Index(md, "**Regressed**"), strings.Index(md, "**Suspected**"), strings.Index(md, "**Acknowledged**")
	if r < 0 || s < r || a < s {
		t.Errorf("not-passed cases out of order (%d, %d, %d):\n%s", r, s, a, md)
	}
	for _, tc := range []struct {
		name string
		v    triage.Verdict
		want string
	}{
		{"nothing compared", triage.Verdict{Run: "r", Status: "False", Reason: "NoHistory"}, "### dbbench: nothing compared"},
		{"not judged", triage.Verdict{Run: "r", Status: "Unknown", Reason: "AnalysisFailed"}, "### dbbench: not judged"},
		{"clean", triage.Verdict{Run: "r", Status: "False", Cases: []triage.VerdictCase{{Result: triage.CasePassed}}}, "### dbbench: no regression\n"},
		{"suspected", triage.Verdict{Run: "r", Status: "False", Cases: []triage.VerdictCase{{Result: triage.CaseSuspected}}},
			"### dbbench: no regression (1 suspected, not confirmed yet)"},
	} {
		if got := Markdown(tc.v); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q lacks %q", tc.name, got, tc.want)
		}
	}
}
