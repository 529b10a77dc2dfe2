package reporthtml

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestWriteBisectionHTML(t *testing.T) {
	nan := math.NaN()
	c := BisectionChart{
		Title: "bisection <of> t1..t4", Key: "update-index@1", FirstBad: 3, Summary: "t3 is the first bad point",
		Points: []BisectionPoint{
			{Name: "t1", Verdict: "Good", Ratio: 1, Low: nan, High: nan},
			{Name: "reg/m:gone", Verdict: "Failed", Ratio: nan, Low: nan, High: nan, Note: "InvalidImage"},
			{Name: "t2", Verdict: "Good", Ratio: 0.97, Low: 0.9, High: 1.2},
			{Name: "t3", Verdict: "Bad", Ratio: 0.05, Low: 0.03, High: 0.09},
			{Name: "t3b", Verdict: "Untested", Ratio: nan, Low: nan, High: nan},
			{Name: "t4", Verdict: "Bad", Ratio: 0.02, Low: nan, High: nan},
		},
	}
	var buf bytes.Buffer
	if err := WriteBisectionHTML(&buf, c); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, tc := range []struct {
		what    string
		pattern string
		count   int
	}{
		{"a bar per measured point", `<rect class="bar"`, 4},
		{"the first bad bar outlined, once", `stroke="#000" stroke-width="2.5"><title>t3: Bad, ratio 0.05</title>`, 1},
		{"its label", `class="first-bad"`, 1},
		{"a whisker per finite interval", `class="whisker"`, 2},
		{"the failed point as an ×", `<text class="failed"[^>]*><title>reg/m:gone: Failed InvalidImage</title>×</text>`, 1},
		{"the untested point as a dot", `class="untested"`, 1},
		{"red for bad", `fill="#d62728"`, 2},
		{"the title escaped", `bisection &lt;of&gt; t1..t4`, 2},
		{"the good line at 1", `class="baseline"`, 1},
		{"the table row of the culprit", `<td>t3</td><td>Bad</td><td>0.05</td><td>\[0.03, 0.09\]</td><td>first bad</td>`, 1},
		{"no script", `<script`, 0},
	} {
		if n := len(regexp.MustCompile(tc.pattern).FindAllStringIndex(page, -1)); n != tc.count {
			t.Errorf("%s: %q found %d times, want %d", tc.what, tc.pattern, n, tc.count)
		}
	}
	if !strings.Contains(page, "QPS / QPS(good) at update-index@1") {
		t.Error("the chart does not name the step it draws")
	}
}
