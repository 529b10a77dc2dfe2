package verdictformat

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/triage"
)

// The Regressed condition's statuses, as the verdict document holds them.
const (
	statusTrue    = "True"
	statusFalse   = "False"
	statusUnknown = "Unknown"
)

// verdictCaseName names the one case of a verdict that compared nothing
// (no history, an analysis that failed): a report then says so instead of
// showing an empty, green suite.
const verdictCaseName = "verdict"

// junitSuites is the document's root, in the common JUnit schema (the one
// Ant and Surefire write and Jenkins, GitLab and the GitHub test reporters
// read).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit is the verdict as JUnit XML: one testsuite, the run, named
// suite/run; one testcase per case, its classname suite.cell and its name
// step@threads metric. A Regressed case is a failure, an Acknowledged one
// skipped (an ack covers it), a Suspected one passes with what moved in
// its system-out. A verdict without cases is one case named verdict:
// skipped when there was nothing to compare with (NoHistory), an error
// when it could not be judged (Regressed=Unknown).
func JUnit(v triage.Verdict) ([]byte, error) {
	if v.Run == "" {
		return nil, fmt.Errorf("verdict: run required")
	}
	suite := junitSuite{Name: qualified(v.Suite, v.Run), Properties: properties(v), SystemOut: v.Message}
	if !v.JudgedAt.IsZero() {
		suite.Timestamp = v.JudgedAt.UTC().Format(time.RFC3339)
	}
	class := v.Suite
	if class == "" {
		class = v.Run
	}
	for _, c := range v.Cases {
		jc := junitCase{Name: c.Name(), ClassName: class + "." + c.Cell}
		switch c.Result {
		case triage.CaseRegressed:
			jc.Failure = &junitProblem{Message: caseMessage(c), Type: string(c.Result), Text: caseDetail(c)}
			suite.Failures++
		case triage.CaseAcknowledged:
			jc.Skipped = &junitProblem{Message: caseMessage(c)}
			suite.Skipped++
		case triage.CaseSuspected:
			jc.SystemOut = caseMessage(c) + "\n" + caseDetail(c)
		default:
			jc.SystemOut = caseDetail(c)
		}
		suite.Cases = append(suite.Cases, jc)
	}
	if len(v.Cases) == 0 {
		jc := junitCase{Name: verdictCaseName, ClassName: class}
		switch v.Status {
		case statusUnknown:
			jc.Error = &junitProblem{Message: v.Message, Type: v.Reason}
			suite.Errors++
		case statusTrue:
			// A verdict written before its cases: its regression still fails.
			jc.Failure = &junitProblem{Message: v.Message, Type: v.Reason}
			suite.Failures++
		default:
			jc.Skipped = &junitProblem{Message: v.Message}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "dbbench", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// properties are the verdict's own facts, for a reader of the report.
func properties(v triage.Verdict) []junitProperty {
	ps := []junitProperty{
		{Name: "dbbench.run", Value: v.Run},
		{Name: "dbbench.against", Value: v.Against},
		{Name: "dbbench.regressed", Value: v.Status},
		{Name: "dbbench.reason", Value: v.Reason},
	}
	if v.Suite != "" {
		ps = append(ps, junitProperty{Name: "dbbench.suite", Value: v.Suite})
	}
	if len(v.ComparedTo) > 0 {
		ps = append(ps, junitProperty{Name: "dbbench.comparedTo", Value: strings.Join(v.ComparedTo, ",")})
	}
	if v.Bisection != "" {
		ps = append(ps, junitProperty{Name: "dbbench.bisection", Value: v.Bisection})
	}
	if v.CasesLeftOut > 0 {
		ps = append(ps, junitProperty{Name: "dbbench.casesLeftOut", Value: fmt.Sprint(v.CasesLeftOut)})
	}
	return ps
}

// qualified is suite/run, or the run alone outside a suite.
func qualified(suite, run string) string {
	if suite == "" {
		return run
	}
	return suite + "/" + run
}

// caseMessage is the one line a report shows for a case that did not
// pass.
func caseMessage(c triage.VerdictCase) string {
	if c.Message != "" {
		return c.Message
	}
	return fmt.Sprintf("%s %s: %s", c.Cell, c.Name(), c.Result)
}

// caseDetail is the case's figures: "before 812.00, after 701.30 (-13.6%),
// p 0.0021, paired by block (5 blocks)".
func caseDetail(c triage.VerdictCase) string {
	var parts []string
	if c.Before != "" || c.After != "" {
		s := fmt.Sprintf("before %s, after %s", dash(c.Before), dash(c.After))
		if c.ChangePercent != "" {
			s += fmt.Sprintf(" (%s%%)", signed(c.ChangePercent))
		}
		parts = append(parts, s)
	}
	if c.PValue != "" {
		parts = append(parts, "p "+c.PValue)
	}
	if c.Method != "" {
		parts = append(parts, c.Method)
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// signed puts a + on a positive change so that its direction reads at a
// glance.
func signed(pct string) string {
	if pct == "" || strings.HasPrefix(pct, "-") || strings.HasPrefix(pct, "+") {
		return pct
	}
	if strings.Trim(pct, "0.") == "" {
		return pct
	}
	return "+" + pct
}
