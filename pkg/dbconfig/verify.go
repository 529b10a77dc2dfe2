package dbconfig

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Outcome is what verification concluded about one setting.
type Outcome string

const (
	// Verified: the server reports the requested value.
	Verified Outcome = "Verified"
	// NotApplied: the server reports another value; the variant is not
	// what runs.
	NotApplied Outcome = "NotApplied"
	// Unverified: the server cannot confirm it either way (Reason says why).
	Unverified Outcome = "Unverified"
)

// Check is the verdict on one setting (or include directive) of a variant.
type Check struct {
	// Name is the server's name for the setting; for an include, the
	// directive ("!includedir").
	Name string
	Line int
	// Requested is the value as written; Normalized the same in the
	// server's terms when that differs ("256M" → "268435456").
	Requested  string
	Normalized string
	// Effective is the value the server reports ("" when it reports none).
	Effective string
	// Source is where the server says the effective value came from
	// (pg_settings source and file:line, MariaDB's GLOBAL_VALUE_ORIGIN,
	// MySQL's VARIABLE_SOURCE), when it says.
	Source  string
	Outcome Outcome
	// Reason explains an Unverified or NotApplied outcome.
	Reason string
}

// Effective is what the server reports about one setting. For PostgreSQL
// PG carries the pg_settings row; for MySQL/MariaDB Value and Source.
type Effective struct {
	Value  string
	Source string
	PG     *PGSetting
}

// Report is the verification of a variant against a running server.
type Report struct {
	Checks   []Check
	Mistakes []Mistake
}

// Count returns how many checks have the outcome.
func (r *Report) Count(o Outcome) int {
	n := 0
	for _, c := range r.Checks {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

// Err is a *NotAppliedError when any setting is not in effect, else nil.
func (r *Report) Err() error {
	var bad []Check
	for _, c := range r.Checks {
		if c.Outcome == NotApplied {
			bad = append(bad, c)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &NotAppliedError{Settings: bad, Mistakes: r.Mistakes}
}

// NotAppliedError says which settings of a variant the server does not run
// with, and the variant's structural mistakes that may explain why.
type NotAppliedError struct {
	Settings []Check
	Mistakes []Mistake
}

func (e *NotAppliedError) Error() string {
	parts := make([]string, 0, len(e.Settings))
	for _, c := range e.Settings {
		req := c.Requested
		if c.Normalized != "" {
			req += " (= " + c.Normalized + ")"
		}
		eff := c.Effective
		if eff == "" {
			eff = `""`
		}
		s := fmt.Sprintf("%s: requested %s on line %d, effective %s", c.Name, req, c.Line, eff)
		if c.Source != "" {
			s += " from " + c.Source
		}
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		parts = append(parts, s)
	}
	msg := fmt.Sprintf("config variant not in effect: %d setting(s) differ: %s", len(e.Settings), strings.Join(parts, "; "))
	if len(e.Mistakes) > 0 {
		ms := make([]string, 0, len(e.Mistakes))
		for _, m := range e.Mistakes {
			ms = append(ms, m.String())
		}
		msg += "; the variant has mistakes: " + strings.Join(ms, "; ")
	}
	return msg
}

// Skipped is a setting a server of the given version does not read.
type Skipped struct {
	Setting Setting
	Reason  string
}

// Requested returns the settings a server of the engine and version reads
// from the variant, the last assignment of each name winning as it does in
// the server, and the ones it does not read (other sections). A setting
// before any section header is counted as requested: the user meant it for
// the server, and comparing it names the setting that did not apply.
func Requested(v *Variant, serverVersion string) ([]Setting, []Skipped) {
	var skipped []Skipped
	last := map[string]int{}
	var read []Setting
	for _, s := range v.Settings {
		if v.Engine.mysqlFamily() && s.Section != "" && !ServerReads(v.Engine, serverVersion, s.Section) {
			skipped = append(skipped, Skipped{Setting: s, Reason: notReadReason(v.Engine, serverVersion, s.Section)})
			continue
		}
		if i, ok := last[s.Name]; ok {
			read[i] = s
			continue
		}
		last[s.Name] = len(read)
		read = append(read, s)
	}
	return read, skipped
}

// harnessOwned are settings dbbench itself sets on the server's command line
// (pkg/specs: PostgreSQL gets -c listen_addresses=* so the client can
// connect whatever the variant says); a variant's value for them is
// overridden on purpose.
var harnessOwned = map[Engine]map[string]bool{Postgres: {"listen_addresses": true}}

// Verify compares the settings of v that a server of serverVersion reads with
// the effective values, keyed by the server's lower-case name.
func Verify(v *Variant, serverVersion string, effective map[string]Effective) *Report {
	rep := &Report{Mistakes: append([]Mistake(nil), v.Mistakes...)}
	read, skipped := Requested(v, serverVersion)
	for _, s := range read {
		var c Check
		if v.Engine.mysqlFamily() {
			c = verifyMySQL(s, effective)
		} else {
			c = verifyPostgres(s, effective)
		}
		rep.Checks = append(rep.Checks, c)
	}
	for _, sk := range skipped {
		rep.Checks = append(rep.Checks, Check{Name: sk.Setting.Name, Line: sk.Setting.Line, Requested: requestedText(sk.Setting),
			Outcome: Unverified, Reason: sk.Reason})
	}
	for _, inc := range v.Includes {
		rep.Checks = append(rep.Checks, Check{Name: inc.Directive, Line: inc.Line, Requested: inc.Path, Outcome: Unverified,
			Reason: "the server reads another file whose settings are not in the variant's text"})
	}
	sort.SliceStable(rep.Checks, func(i, j int) bool { return rep.Checks[i].Line < rep.Checks[j].Line })
	return rep
}

func requestedText(s Setting) string {
	if !s.HasValue {
		return "(no value)"
	}
	return s.Value
}

// mysqlPluginLoad are options that name plugin libraries to load: what
// they load shows in the plugins' own variables, not in a variable of theirs.
var mysqlPluginLoad = map[string]bool{"plugin_load": true, "plugin_load_add": true}

// mysqlAliases are options whose variable has another name.
var mysqlAliases = map[string]string{"default_time_zone": "time_zone"}

// verifyMySQL resolves an option to a variable the way the option parser
// does (exact name first, then the skip-/disable-/enable- prefixes) and
// compares values.
func verifyMySQL(s Setting, eff map[string]Effective) Check {
	c := Check{Name: s.Name, Line: s.Line, Requested: requestedText(s)}
	want, hasWant := s.Value, s.HasValue
	name := s.Name
	if a, ok := mysqlAliases[name]; ok {
		name = a
	}
	e, found := eff[name]
	if !found {
		for _, p := range []struct {
			prefix string
			value  bool
		}{{"skip_", false}, {"disable_", false}, {"enable_", true}} {
			rest, ok := strings.CutPrefix(name, p.prefix)
			if !ok {
				continue
			}
			if e, found = eff[rest]; found {
				b := p.value
				if hasWant {
					// skip-x=0 is x=1: the prefix inverts the value given.
					if vb, ok := ParseMySQLBool(want); ok && !vb {
						b = !b
					}
				}
				name, want, hasWant = rest, onOff(b), true
				c.Normalized = want
				break
			}
		}
	}
	c.Name = name
	switch {
	case mysqlPluginLoad[name]:
		c.Outcome, c.Reason = Unverified, "plugin-load options name libraries; the plugins' own variables are what the server reports"
		return c
	case !found && (strings.HasPrefix(name, "maximum_") || strings.HasPrefix(name, "autoset_")):
		c.Outcome, c.Reason = Unverified, "the prefix sets a limit or an automatic value, which the server does not report"
		return c
	case !found && s.Loose:
		c.Outcome, c.Reason = Unverified, fmt.Sprintf("loose- option for a variable the server does not have (%s): it ignored the option; check the spelling or the plugin", name)
		return c
	case !found:
		c.Outcome, c.Reason = Unverified, fmt.Sprintf("the server reports no variable %s (a start-up option without a variable)", name)
		return c
	}
	c.Effective, c.Source = e.Value, e.Source
	if !hasWant {
		// A bare option turns a boolean on.
		want, c.Normalized = "ON", "ON"
	} else if name == "log_bin" {
		if _, ok := ParseMySQLBool(want); !ok {
			// log-bin=NAME names the binary log's files; the variable says
			// whether logging is on.
			c.Normalized, want = "ON", "ON"
		}
	}
	ok, norm := MySQLEqual(want, e.Value)
	if c.Normalized == "" && norm != "" && norm != c.Requested {
		c.Normalized = norm
	}
	if ok {
		c.Outcome = Verified
	} else {
		c.Outcome = NotApplied
		if s.Section == "" {
			c.Reason = "set before any [section] header"
		}
	}
	return c
}

func verifyPostgres(s Setting, eff map[string]Effective) Check {
	c := Check{Name: s.Name, Line: s.Line, Requested: s.Value}
	e, found := eff[s.Name]
	if !found || e.PG == nil {
		c.Outcome = Unverified
		c.Reason = fmt.Sprintf("the server reports no setting %s", s.Name)
		if strings.Contains(s.Name, ".") {
			c.Reason += " (a module's setting: is the module loaded?)"
		}
		return c
	}
	pg := e.PG
	c.Effective = pg.Setting
	if pg.Unit != "" {
		c.Effective += "×" + pg.Unit
	}
	c.Source = pgSource(pg)
	if harnessOwned[Postgres][s.Name] && pg.Source == "command line" {
		c.Outcome, c.Reason = Unverified, "dbbench sets it on the server's command line"
		return c
	}
	ok, norm, err := PostgresEqual(s.Value, *pg)
	c.Normalized = norm
	switch {
	case err != nil:
		// The server would not have started with a value it cannot read:
		// the file it read is not this text.
		c.Outcome, c.Reason = NotApplied, err.Error()
	case ok:
		c.Outcome = Verified
	default:
		c.Outcome = NotApplied
		if pg.PendingRestart {
			c.Reason = "pending restart: the server read a new value but applies it only when restarted"
		}
	}
	return c
}

func pgSource(pg *PGSetting) string {
	src := pg.Source
	if pg.SourceFile != "" {
		src += " " + pg.SourceFile
		if pg.SourceLine > 0 {
			src += ":" + strconv.Itoa(pg.SourceLine)
		}
	}
	return src
}
