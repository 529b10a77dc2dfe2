package sysbench

import (
	"path"
	"strconv"
	"strings"
)

// Command is a sysbench command line that a script echoed into the output
// file before running it, as the scripts behind the published studies do
// ("echo $sysbdir/sysbench --table-size=$nr ... run > sb.o.$sfx"): the
// one place such a file says how big the tables were.
type Command struct {
	// Line is the line number and text as found.
	Line Line
	// Args are the words after the sysbench executable (environment
	// assignments before it are left out), as split on blanks.
	Args []string
	// Script is the Lua script or built-in test ("oltp_point_select.lua",
	// "oltp_read_only"), as written; Verb the command after it ("run").
	Script, Verb string
	// Options are the --name=value words; a bare --name is "on".
	Options map[string]string
}

// Option returns the value of --name and whether it was given.
func (c *Command) Option(name string) (string, bool) {
	if c == nil {
		return "", false
	}
	v, ok := c.Options[name]
	return v, ok
}

// Int returns --name as a positive integer; false when absent or not one.
func (c *Command) Int(name string) (int64, bool) {
	v, ok := c.Option(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// sysbenchVerbs are the commands a sysbench invocation ends with.
var sysbenchVerbs = map[string]bool{"run": true, "prepare": true, "cleanup": true, "warmup": true, "prewarm": true, "help": true}

// ParseCommand reads a line that invokes sysbench: optional NAME=value
// environment words, an executable whose base name is "sysbench", then
// options, a script and a command, in any order sysbench accepts. It
// returns false for anything else, including sysbench's own banner
// ("sysbench 1.0.20 (using ...)"), which has no option.
func ParseCommand(n int, raw string) (*Command, bool) {
	words := strings.Fields(raw)
	i := 0
	for i < len(words) && isEnvAssignment(words[i]) {
		i++
	}
	if i >= len(words) || path.Base(words[i]) != "sysbench" {
		return nil, false
	}
	c := &Command{Line: Line{n, raw}, Args: append([]string(nil), words[i+1:]...), Options: map[string]string{}}
	for _, w := range c.Args {
		switch {
		case strings.HasPrefix(w, "--"):
			name, val, ok := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if !ok {
				val = "on"
			}
			c.Options[name] = val
		case sysbenchVerbs[w] && c.Verb == "":
			c.Verb = w
		case c.Script == "" && !strings.HasPrefix(w, "-"):
			c.Script = w
		}
	}
	if len(c.Options) == 0 || c.Script == "" {
		return nil, false
	}
	return c, true
}

// isEnvAssignment reports whether w is NAME=value as a shell puts it before
// a command (LANG=POSIX, LD_LIBRARY_PATH=..., LUA_PATH="...").
func isEnvAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
