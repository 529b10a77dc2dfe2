package dbconfig

import (
	"fmt"
	"strings"
)

// Setting is one assignment in a variant, in file order.
type Setting struct {
	// Name is the canonical name: MySQL/MariaDB lower-case with '-' read as
	// '_' and the loose- prefix removed; PostgreSQL lower-case.
	Name string
	// Raw is the name as written ("loose-innodb-buffer-pool-size").
	Raw string
	// Value is the value with quotes and escapes resolved; HasValue is false
	// for a MySQL/MariaDB option given without "=value".
	Value    string
	HasValue bool
	// Section is the MySQL/MariaDB option group, lower-case, "" before the
	// first header (and always for PostgreSQL).
	Section string
	// Loose is set for a MySQL/MariaDB loose- option: the server ignores it
	// (with a warning) when it does not know the name.
	Loose bool
	Line  int
}

// Include is a directive that makes the server read another file: its
// settings are outside the variant's text and cannot be checked from it.
type Include struct {
	// Directive is "!include", "!includedir", "include", "include_if_exists"
	// or "include_dir".
	Directive string
	Path      string
	Section   string
	Line      int
}

// MistakeKind classifies a structural mistake in a variant.
type MistakeKind string

const (
	// MistakeNoSection: a MySQL/MariaDB setting before any [section]
	// header; no program reads it as its own.
	MistakeNoSection MistakeKind = "SettingWithoutSection"
	// MistakeBadSection: a "[" line without its "]".
	MistakeBadSection MistakeKind = "MalformedSection"
	// MistakeSectionInPostgres: a [section] line in a postgresql.conf
	// variant (a MySQL option file given to PostgreSQL?).
	MistakeSectionInPostgres MistakeKind = "SectionInPostgresConfig"
	// MistakeSyntax: a line the engine's parser refuses.
	MistakeSyntax MistakeKind = "Syntax"
	// MistakeUnknownDirective: a "!" line other than !include/!includedir.
	MistakeUnknownDirective MistakeKind = "UnknownDirective"
	// MistakeSectionNotRead: a server section that no version of the
	// matrix reads (see CheckSections).
	MistakeSectionNotRead MistakeKind = "SectionNotRead"
)

// Mistake is a structural mistake, located by line (1-based).
type Mistake struct {
	Line    int
	Kind    MistakeKind
	Message string
}

func (m Mistake) String() string { return fmt.Sprintf("line %d: %s", m.Line, m.Message) }

// Variant is a parsed config variant.
type Variant struct {
	Engine   Engine
	Settings []Setting
	Includes []Include
	// Sections are the MySQL/MariaDB section headers in file order, with
	// their lines.
	Sections []SectionLine
	Mistakes []Mistake
}

// SectionLine is a [section] header.
type SectionLine struct {
	Name string // lower-case, trimmed
	Line int
}

// Parse reads a variant's text written for engine. It never fails: what the
// engine would refuse or misread is reported in Mistakes, and the rest is
// parsed as the engine would.
func Parse(engine Engine, text string) *Variant {
	v := &Variant{Engine: engine}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if engine.mysqlFamily() {
		parseOptionFile(v, lines)
	} else {
		parsePostgres(v, lines)
	}
	return v
}

func (v *Variant) mistake(line int, kind MistakeKind, format string, a ...any) {
	v.Mistakes = append(v.Mistakes, Mistake{Line: line, Kind: kind, Message: fmt.Sprintf(format, a...)})
}

// CanonicalMySQLName is how the MySQL/MariaDB option parser compares names:
// case-insensitive, '-' and '_' alike.
func CanonicalMySQLName(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
}

// parseOptionFile follows the option-file rules of MySQL and MariaDB
// (my_default.c): full-line comments with '#' or ';', a '#' comment after the
// value outside quotes, "[group]" headers, "name", "name = value" with
// surrounding spaces removed, single or double quotes around the value,
// backslash escapes inside it, and !include / !includedir.
func parseOptionFile(v *Variant, lines []string) {
	section := ""
	noSectionReported := false
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		switch line[0] {
		case '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				v.mistake(n, MistakeBadSection, "section header %q has no closing ']'", line)
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			v.Sections = append(v.Sections, SectionLine{Name: section, Line: n})
			continue
		case '!':
			dir, arg, _ := strings.Cut(line, " ")
			dir = strings.ToLower(dir)
			arg = strings.TrimSpace(arg)
			if (dir == "!include" || dir == "!includedir") && arg != "" {
				v.Includes = append(v.Includes, Include{Directive: dir, Path: arg, Section: section, Line: n})
			} else {
				v.mistake(n, MistakeUnknownDirective, "%q is not !include FILE or !includedir DIR", line)
			}
			continue
		}
		line = strings.TrimSpace(stripOptionComment(line))
		name, value, hasValue := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if name == "" {
			v.mistake(n, MistakeSyntax, "%q has no option name before '='", line)
			continue
		}
		if strings.ContainsAny(name, " \t") {
			v.mistake(n, MistakeSyntax, "option name %q contains a space (missing '='?)", name)
			continue
		}
		if section == "" && !noSectionReported {
			// The server does not take options outside a group as its own;
			// the first one is enough to name the mistake.
			v.mistake(n, MistakeNoSection, "%q comes before any [section] header; the server reads only its own sections such as [mysqld]", name)
			noSectionReported = true
		}
		s := Setting{Raw: name, Section: section, Line: n, HasValue: hasValue}
		if hasValue {
			s.Value = unquoteOptionValue(strings.TrimSpace(value))
		}
		s.Name = CanonicalMySQLName(name)
		if rest, ok := strings.CutPrefix(s.Name, "loose_"); ok {
			s.Name, s.Loose = rest, true
		}
		if s.Name == "" {
			v.mistake(n, MistakeSyntax, "%q is a prefix without an option name", name)
			continue
		}
		v.Settings = append(v.Settings, s)
	}
}

// stripOptionComment removes a '#' comment that starts outside quotes.
func stripOptionComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == 0 && c == '#':
			return line[:i]
		}
	}
	return line
}

// unquoteOptionValue removes matching quotes and resolves the option file's
// escapes (\b \t \n \r \\ \s and escaped quotes).
func unquoteOptionValue(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch v[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 's':
			b.WriteByte(' ')
		case '\\', '\'', '"':
			b.WriteByte(v[i])
		default:
			// Unknown escapes keep their backslash (Windows paths).
			b.WriteByte('\\')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// postgresIncludes are postgresql.conf's include directives.
var postgresIncludes = map[string]bool{"include": true, "include_if_exists": true, "include_dir": true}

// parsePostgres follows postgresql.conf's rules (guc-file.l): "name = value"
// or "name value", names case-insensitive, '#' comments outside quotes,
// values in single quotes (a quote inside doubled or backslash-escaped) or a bare token such as
// 8GB, and the include directives.
func parsePostgres(v *Variant, lines []string) {
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			v.mistake(n, MistakeSectionInPostgres, "%q: postgresql.conf has no [sections] (is this a MySQL option file?)", line)
			continue
		}
		nameEnd := 0
		for nameEnd < len(line) && isPGNameByte(line[nameEnd], nameEnd == 0) {
			nameEnd++
		}
		if nameEnd == 0 {
			v.mistake(n, MistakeSyntax, "%q does not start with a setting name", line)
			continue
		}
		name := strings.ToLower(line[:nameEnd])
		rest := strings.TrimSpace(line[nameEnd:])
		if strings.HasPrefix(rest, "=") {
			rest = strings.TrimSpace(rest[1:])
		}
		value, tail, err := pgValue(rest)
		if err != nil {
			v.mistake(n, MistakeSyntax, "%s: %v", name, err)
			continue
		}
		if t := strings.TrimSpace(tail); t != "" && t[0] != '#' {
			v.mistake(n, MistakeSyntax, "%s: unexpected %q after the value (quote a value with spaces)", name, t)
			continue
		}
		if postgresIncludes[name] {
			v.Includes = append(v.Includes, Include{Directive: name, Path: value, Line: n})
			continue
		}
		v.Settings = append(v.Settings, Setting{Name: name, Raw: line[:nameEnd], Value: value, HasValue: true, Line: n})
	}
}

func isPGNameByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c >= '0' && c <= '9', c == '$', c == '.':
		return !first
	}
	return false
}

// pgValue reads one value: a quoted string or a bare token.
func pgValue(s string) (value, tail string, err error) {
	if s == "" || s[0] == '#' {
		return "", s, fmt.Errorf("no value")
	}
	if s[0] != '\'' {
		end := strings.IndexAny(s, " \t#")
		if end < 0 {
			end = len(s)
		}
		return s[:end], s[end:], nil
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\'':
			return b.String(), s[i+1:], nil
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated quoted value %s", s)
}
