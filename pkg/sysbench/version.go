package sysbench

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a parsed sysbench version, from `sysbench --version` or from the
// first line of any sysbench run ("sysbench 1.0.20 (using system LuaJIT
// 2.1.0-beta3)"). The behaviour differences dbbench must handle depend on it,
// so the methods below name them rather than leaving callers to compare
// numbers.
type Version struct {
	Major, Minor, Patch int
	// Build is what follows the numbers after a '-', e.g. the git hash of a
	// master build ("df89d34" in "1.1.0-df89d34"); empty for releases.
	Build string
	// LuaJIT is the parenthesised note, e.g. "using system LuaJIT 2.1.0-beta3".
	LuaJIT string
	// Raw is the whole line as printed.
	Raw string
}

// ParseVersion reads the first non-empty line of s, which must start with
// "sysbench " and a dotted version ("1.0", "1.0.20", "1.1.0-df89d34"; a
// trailing ':' as in old "sysbench 1.0:  multi-threaded ..." banners is
// accepted).
func ParseVersion(s string) (Version, error) {
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseVersionLine(line)
		if err != nil {
			return Version{}, &ParseError{Line: i + 1, Text: line, Reason: err.Error()}
		}
		return v, nil
	}
	return Version{}, &ParseError{Reason: "no version line (empty input)"}
}

func parseVersionLine(line string) (Version, error) {
	rest, ok := strings.CutPrefix(line, "sysbench ")
	if !ok {
		return Version{}, fmt.Errorf("not a sysbench version line")
	}
	rest = strings.TrimSpace(rest)
	word, tail, _ := strings.Cut(rest, " ")
	word = strings.TrimSuffix(word, ":")
	v := Version{Raw: line}
	nums, build, _ := strings.Cut(word, "-")
	v.Build = build
	parts := strings.Split(nums, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q is not MAJOR.MINOR[.PATCH]", word)
	}
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 6 {
			return Version{}, fmt.Errorf("version %q: %q is not a number", word, p)
		}
		*dst[i] = n
	}
	tail = strings.TrimSpace(tail)
	if strings.HasPrefix(tail, "(") {
		if end := strings.IndexByte(tail, ')'); end > 0 {
			v.LuaJIT = tail[1:end]
		}
	}
	return v, nil
}

// String returns "MAJOR.MINOR.PATCH[-BUILD]".
func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Build != "" {
		s += "-" + v.Build
	}
	return s
}

// AtLeast reports whether v is major.minor.patch or newer.
func (v Version) AtLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

// HasWarmupTime reports whether sysbench accepts --warmup-time (1.1 and
// later). Without it, warm-up must be dropped from the interval series.
func (v Version) HasWarmupTime() bool { return v.AtLeast(1, 1, 0) }

// HasZipfian reports whether --rand-type=zipfian exists (1.1 and later);
// 1.0.20 scripts need their own generator for zipfian keys.
func (v Version) HasZipfian() bool { return v.AtLeast(1, 1, 0) }

// MySQLSSLOff returns the option that disables TLS to MySQL/MariaDB: 1.0.20
// takes a boolean, 1.1 an ssl-mode name.
func (v Version) MySQLSSLOff() string {
	if v.AtLeast(1, 1, 0) {
		return "--mysql-ssl=disabled"
	}
	return "--mysql-ssl=off"
}
