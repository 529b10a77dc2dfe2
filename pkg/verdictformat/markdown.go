package verdictformat

import (
	"fmt"
	"strings"

	"github.com/dbbench/dbbench/pkg/triage"
)

// Markdown is the verdict as a pull request's comment or a job summary
// holds it: a headline with the outcome, the condition's message, a table
// of the cases that did not pass (regressed, then suspected, then
// acknowledged) and the passed ones folded away. GitHub, GitLab and Gitea
// render it alike (tables and <details> are in all three).
func Markdown(v triage.Verdict) string {
	counts := map[triage.CaseResult]int{}
	for _, c := range v.Cases {
		counts[c.Result]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### dbbench: %s\n\n", headline(v, counts))
	fmt.Fprintf(&b, "Run `%s`", v.Run)
	if v.Suite != "" {
		fmt.Fprintf(&b, " of suite `%s`", v.Suite)
	}
	fmt.Fprintf(&b, ", judged against `%s`: **Regressed=%s** (%s)\n\n", v.Against, v.Status, v.Reason)
	fmt.Fprintf(&b, "> %s\n", escapeQuote(v.Message))
	if len(v.Cases) > 0 {
		fmt.Fprintf(&b, "\n%d cases: %d regressed, %d suspected, %d acknowledged, %d passed.\n",
			len(v.Cases), counts[triage.CaseRegressed], counts[triage.CaseSuspected], counts[triage.CaseAcknowledged], counts[triage.CasePassed])
	}
	var notPassed []triage.VerdictCase
	for _, r := range []triage.CaseResult{triage.CaseRegressed, triage.CaseSuspected, triage.CaseAcknowledged} {
		for _, c := range v.Cases {
			if c.Result == r {
				notPassed = append(notPassed, c)
			}
		}
	}
	if len(notPassed) > 0 {
		b.WriteString("\n")
		writeTable(&b, notPassed, true)
	}
	var passed []triage.VerdictCase
	for _, c := range v.Cases {
		if c.Result == triage.CasePassed {
			passed = append(passed, c)
		}
	}
	if len(passed) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d passed</summary>\n\n", len(passed))
		writeTable(&b, passed, false)
		b.WriteString("\n</details>\n")
	}
	if v.Bisection != "" {
		fmt.Fprintf(&b, "\nBisection: `%s` (`kubectl dbbench regression %s`).\n", v.Bisection, v.Run)
	}
	return b.String()
}

// headline is the outcome in a few words, from the condition's status and
// the cases (the message says the rest).
func headline(v triage.Verdict, counts map[triage.CaseResult]int) string {
	switch {
	case v.Status == statusTrue && len(v.Cases) == 0:
		return "regressed"
	case v.Status == statusTrue:
		return fmt.Sprintf("regressed (%d of %d cases)", counts[triage.CaseRegressed], len(v.Cases))
	case v.Status != statusFalse:
		return "not judged"
	case len(v.Cases) == 0:
		return "nothing compared"
	case counts[triage.CaseSuspected] > 0:
		return fmt.Sprintf("no regression (%d suspected, not confirmed yet)", counts[triage.CaseSuspected])
	case counts[triage.CaseAcknowledged] > 0:
		return fmt.Sprintf("no regression (%d acknowledged)", counts[triage.CaseAcknowledged])
	}
	return "no regression"
}

// writeTable writes cases as a markdown table; withResult adds the result
// and the message columns.
func writeTable(b *strings.Builder, cases []triage.VerdictCase, withResult bool) {
	if withResult {
		b.WriteString("| result | cell | step@threads | metric | before | after | change | p | what |\n|---|---|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| cell | step@threads | metric | before | after | change | p |\n|---|---|---|---|---|---|---|\n")
	}
	for _, c := range cases {
		cells := []string{c.Cell, fmt.Sprintf("%s@%d", c.Step, c.Threads), c.Metric, dash(c.Before), dash(c.After), changeCell(c.ChangePercent), dash(c.PValue)}
		if withResult {
			cells = append([]string{"**" + string(c.Result) + "**"}, cells...)
			cells = append(cells, c.Message)
		}
		for i := range cells {
			cells[i] = escapeCell(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

func changeCell(pct string) string {
	if pct == "" {
		return "-"
	}
	return signed(pct) + " %"
}

// escapeCell keeps a table cell one cell: a pipe would end it and a
// newline the row.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// escapeQuote keeps a multi-line message inside its block quote.
func escapeQuote(s string) string {
	return strings.ReplaceAll(s, "\n", "\n> ")
}
