package dbconfig

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ---------------------------------------------------------------- MySQL/MariaDB

// mysqlSizeSuffix are the option parser's size suffixes (my_getopt's
// eval_num_suffix), powers of 1024, case-insensitive.
var mysqlSizeSuffix = map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40, 'p': 1 << 50, 'e': 1 << 60}

// ParseMySQLSize reads an integer option value with an optional size suffix:
// "256M" → 268435456, "1g" → 1073741824, "-1" → -1.
func ParseMySQLSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	mult := int64(1)
	if m, ok := mysqlSizeSuffix[lower(s[len(s)-1])]; ok {
		mult, s = m, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if n != 0 && (n > math.MaxInt64/mult || n < math.MinInt64/mult) {
		return 0, false
	}
	return n * mult, true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// ParseMySQLBool reads a boolean option value as the option parser does:
// ON/TRUE/1 and OFF/FALSE/0, case-insensitive. SHOW VARIABLES prints ON/OFF.
func ParseMySQLBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "1":
		return true, true
	case "off", "false", "0":
		return false, true
	}
	return false, false
}

// MySQLEqual reports whether a value requested in an option file is the value
// SHOW GLOBAL VARIABLES reports, and the requested value in the server's
// terms when that differs from the text ("256M" → "268435456"). Rules, in
// order: the same text ignoring case (enums: "O_DIRECT" = "o_direct");
// booleans (ON = TRUE = 1); integers with size suffixes; decimals ("0.5" =
// "0.500000"); comma-separated sets in any order (sql_mode); paths that
// differ by a trailing '/' (datadir).
func MySQLEqual(requested, effective string) (bool, string) {
	r, e := strings.TrimSpace(requested), strings.TrimSpace(effective)
	if strings.EqualFold(r, e) {
		return true, ""
	}
	if rb, ok := ParseMySQLBool(r); ok {
		if eb, ok := ParseMySQLBool(e); ok {
			return rb == eb, onOff(rb)
		}
	}
	if rn, ok := ParseMySQLSize(r); ok {
		norm := strconv.FormatInt(rn, 10)
		if en, ok := ParseMySQLSize(e); ok {
			return rn == en, norm
		}
		if ef, err := strconv.ParseFloat(e, 64); err == nil {
			return float64(rn) == ef, norm
		}
		return false, norm
	}
	if rf, err := strconv.ParseFloat(r, 64); err == nil {
		if ef, err := strconv.ParseFloat(e, 64); err == nil {
			return nearlyEqual(rf, ef), ""
		}
	}
	if strings.Contains(r, ",") || strings.Contains(e, ",") {
		return sameSet(r, e), ""
	}
	if strings.HasPrefix(r, "/") && strings.TrimRight(r, "/") == strings.TrimRight(e, "/") {
		return true, ""
	}
	return false, ""
}

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

func nearlyEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func sameSet(a, b string) bool {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, f := range strings.Split(s, ",") {
			if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
				m[f] = true
			}
		}
		return m
	}
	sa, sb := set(a), set(b)
	if len(sa) != len(sb) {
		return false
	}
	for k := range sa {
		if !sb[k] {
			return false
		}
	}
	return true
}

// ------------------------------------------------------------------- PostgreSQL

// PGSetting is one row of pg_settings, the columns verification uses.
type PGSetting struct {
	Name string
	// Setting is the value in Unit (pg_settings.setting).
	Setting string
	// Unit is pg_settings.unit: "", "B", "kB", "8kB", "MB", "16MB", "ms",
	// "s", "min".
	Unit string
	// Vartype is bool, integer, real, enum or string.
	Vartype string
	// Source, SourceFile and SourceLine say where the value came from
	// (SourceFile and SourceLine only for superusers and
	// pg_read_all_settings).
	Source     string
	SourceFile string
	SourceLine int
	// PendingRestart: the configuration file has a value the server
	// applies only on restart.
	PendingRestart bool
}

// pgUnits are PostgreSQL's unit names (case-sensitive, as the server reads
// them), in bytes for memory and milliseconds for time.
var pgMemoryUnits = map[string]float64{"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
var pgTimeUnits = map[string]float64{"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}

var pgUnitColumn = regexp.MustCompile(`^(\d*)\s*([A-Za-z]+)$`)

// pgUnit reads a pg_settings unit ("8kB") as a multiple of a base unit and
// whether it is a memory unit.
func pgUnit(u string) (factor float64, memory bool, err error) {
	m := pgUnitColumn.FindStringSubmatch(strings.TrimSpace(u))
	if m == nil {
		return 0, false, fmt.Errorf("unit %q is not a PostgreSQL unit", u)
	}
	n := 1.0
	if m[1] != "" {
		n, _ = strconv.ParseFloat(m[1], 64)
	}
	if f, ok := pgMemoryUnits[m[2]]; ok {
		return n * f, true, nil
	}
	if f, ok := pgTimeUnits[m[2]]; ok {
		return n * f, false, nil
	}
	return 0, false, fmt.Errorf("unit %q is not a PostgreSQL unit", u)
}

var pgNumberWithUnit = regexp.MustCompile(`^([+-]?(?:0x[0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))\s*([A-Za-z]*)$`)

// PGToSettingUnit converts a requested numeric value ("8GB", "250ms", "128")
// to the setting's unit, as the server does: a number without a unit is
// already in it; a unit must be of the setting's kind (memory or time).
func PGToSettingUnit(requested, unit string) (float64, error) {
	m := pgNumberWithUnit.FindStringSubmatch(strings.TrimSpace(requested))
	if m == nil {
		return 0, fmt.Errorf("%q is not a number with an optional unit", requested)
	}
	var n float64
	if strings.HasPrefix(strings.TrimLeft(m[1], "+-"), "0x") {
		i, err := strconv.ParseInt(strings.Replace(m[1], "0x", "", 1), 16, 64)
		if err != nil {
			return 0, err
		}
		n = float64(i)
	} else {
		n, _ = strconv.ParseFloat(m[1], 64)
	}
	if m[2] == "" {
		return n, nil
	}
	if unit == "" {
		return 0, fmt.Errorf("%q has a unit but the setting takes none", requested)
	}
	sf, smem, err := pgUnit(unit)
	if err != nil {
		return 0, err
	}
	rf, rmem, err := pgUnit(m[2])
	if err != nil {
		return 0, fmt.Errorf("%q: %v (units are case-sensitive: kB, MB, GB, TB, us, ms, s, min, h, d)", requested, err)
	}
	if rmem != smem {
		return 0, fmt.Errorf("%q: unit %s is not a unit of %s", requested, m[2], unit)
	}
	return n * rf / sf, nil
}

// ParsePGBool reads a boolean as PostgreSQL's parse_bool: on/off, true/false,
// yes/no, 1/0 and unambiguous prefixes ("t", "of"), case-insensitive.
func ParsePGBool(s string) (bool, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "":
		return false, false
	case s == "1":
		return true, true
	case s == "0":
		return false, true
	case strings.HasPrefix("true", s), strings.HasPrefix("yes", s):
		return true, true
	case strings.HasPrefix("false", s), strings.HasPrefix("no", s):
		return false, true
	case len(s) >= 2 && s == "on":
		return true, true
	case len(s) >= 2 && strings.HasPrefix("off", s):
		return false, true
	}
	return false, false
}

// PostgresEqual reports whether a requested value is the setting's effective
// one, by the setting's type: bool by ParsePGBool; integer converted to the
// setting's unit and rounded as the server rounds; real converted and
// compared within rounding; enum ignoring case (and as booleans, for enums
// that accept on/off such as synchronous_commit); string exactly, else
// ignoring case (the server canonicalises some, e.g. TimeZone 'utc' → UTC).
// The second result is the requested value in the server's terms when it
// differs from the text ("8GB" → "1048576×8kB").
func PostgresEqual(requested string, s PGSetting) (bool, string, error) {
	r, e := strings.TrimSpace(requested), strings.TrimSpace(s.Setting)
	switch s.Vartype {
	case "bool":
		rb, ok := ParsePGBool(r)
		if !ok {
			return false, "", fmt.Errorf("%q is not a boolean", requested)
		}
		eb, _ := ParsePGBool(e)
		return rb == eb, onOffPG(rb), nil
	case "integer", "real":
		x, err := PGToSettingUnit(r, s.Unit)
		if err != nil {
			return false, "", err
		}
		ef, err := strconv.ParseFloat(e, 64)
		if err != nil {
			return false, "", fmt.Errorf("the server's value %q is not a number", e)
		}
		if s.Vartype == "integer" {
			// The server rounds a converted value to the nearest unit (rint).
			x = math.RoundToEven(x)
		}
		norm := strconv.FormatFloat(x, 'f', -1, 64)
		if s.Unit != "" {
			norm += "×" + s.Unit
		}
		if norm == r {
			norm = ""
		}
		return nearlyEqual(x, ef), norm, nil
	case "enum":
		if strings.EqualFold(r, e) {
			return true, "", nil
		}
		if rb, ok := ParsePGBool(r); ok {
			if eb, ok := ParsePGBool(e); ok {
				return rb == eb, onOffPG(rb), nil
			}
		}
		return false, "", nil
	}
	return r == e || strings.EqualFold(r, e), "", nil
}

func onOffPG(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
