package sysbench

import (
	"fmt"
	"strings"
)

// Line is one line of sysbench output with its 1-based number, kept so that
// every error and warning can point the reader at the exact place.
type Line struct {
	Number int
	Text   string
}

// ParseError reports a line the parser recognised (by its anchor) but could
// not read.
type ParseError struct {
	Line   int    // 1-based line number; 0 when the problem is the end of input
	Text   string // the offending line, as printed
	Reason string // what was wrong with it
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "sysbench output: " + e.Reason
	}
	return fmt.Sprintf("sysbench output line %d: %s: %q", e.Line, e.Reason, e.Text)
}

// FatalError reports that sysbench printed one or more `FATAL:` lines: the
// run (or prepare) failed, whatever else the output holds. The first line is
// usually the cause ("unable to connect", a SQL error); the rest are the
// consequences sysbench prints per thread.
type FatalError struct {
	Lines []Line // every FATAL line, in order; never empty
}

func (e *FatalError) Error() string {
	first := e.Lines[0]
	msg := fmt.Sprintf("sysbench failed, line %d: %s", first.Number, strings.TrimSpace(first.Text))
	if n := len(e.Lines) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more FATAL line", n)
		if n > 1 {
			msg += "s"
		}
		msg += ")"
	}
	return msg
}
