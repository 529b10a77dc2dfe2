// Package serverlog reads what a database server said about why it stopped:
// the error lines of a MySQL, MariaDB or PostgreSQL log, and whether they
// say the configuration was refused. The controller puts these lines into a
// failed cell's message, so that a user reads the server's own words
// ("unknown variable 'innodb_bufer_pool_size=256M'") instead of an exit code.
package serverlog

import (
	"regexp"
	"strings"
)

// errorLine matches the lines the three servers write when they refuse to
// start or stop with an error. MySQL and MariaDB tag them [ERROR] (MariaDB
// 10.x and MySQL 8 both); PostgreSQL uses FATAL, PANIC and ERROR severities,
// and its postmaster writes LOG lines that name the file and line of a
// configuration error.
var errorLine = regexp.MustCompile(`\[ERROR\]|\[FATAL\]|(^|[\s:])(FATAL|PANIC|ERROR):\s|unknown (variable|option)|unrecognized configuration parameter|invalid value for parameter|syntax error in file|contains errors|Found option without preceding group|could not (create|open|bind|map)`)

// configRefusal matches error lines that blame the configuration text: an
// unknown or misspelled option, a bad value, a syntax error.
var configRefusal = regexp.MustCompile(`(?i)unknown (variable|option)|unrecognized configuration parameter|invalid value for parameter|syntax error in file|configuration file .* contains errors|Found option without preceding group|parameter .* cannot be changed|incorrect (argument|value)|out of range|invalid (integer|boolean) value|Error while setting value`)

// noise matches error-tagged lines that are consequences, not causes: the
// server's own "Aborting" and shutdown messages after the real error.
var noise = regexp.MustCompile(`Aborting|Shutdown complete|database system is shut down|Unknown/unsupported storage engine`)

// maxLines bounds how many lines a message carries; the first errors are
// the causes, later ones mostly follow from them.
const maxLines = 5

// ErrorLines returns up to five distinct error lines of a server log, in log
// order, trimmed of surrounding space. Lines that only report the shutdown
// that followed an error are left out unless nothing else is there.
func ErrorLines(log string) []string {
	var found, fallback []string
	seen := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] || !errorLine.MatchString(line) {
			continue
		}
		seen[line] = true
		if noise.MatchString(line) {
			fallback = append(fallback, line)
			continue
		}
		if len(found) < maxLines {
			found = append(found, line)
		}
	}
	if len(found) == 0 && len(fallback) > 0 {
		if len(fallback) > maxLines {
			fallback = fallback[:maxLines]
		}
		return fallback
	}
	return found
}

// ConfigRefused reports whether any of the lines blames the configuration.
func ConfigRefused(lines []string) bool {
	for _, l := range lines {
		if configRefusal.MatchString(l) {
			return true
		}
	}
	return false
}
