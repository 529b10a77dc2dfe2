package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dblua "github.com/dbbench/dbbench/lua"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// OursPrefix marks a catalog script that dbbench ships (lua/dbbench/*.lua).
const OursPrefix = "dbbench/"

// Sysbench runs the sysbench binary against one server.
type Sysbench struct {
	// Binary is the sysbench executable ("sysbench" from PATH by default).
	Binary string
	// ScriptsDir holds dbbench's Lua scripts (dbbench/*.lua below it).
	ScriptsDir string
	Engine     agentapi.Engine
	Host       string
	Port       int
	Database   string
	User       string
	Password   string
	// Version is the detected sysbench version (it decides the TLS option).
	Version sysbench.Version
}

// Invocation is one sysbench command and what came of it.
type Invocation struct {
	// Command is the exact argv, password redacted (results.RedactCommand).
	Command []string
	Output  string
	Parsed  *sysbench.Output
	Elapsed time.Duration
	// RepeatedIntervals counts interval lines the parser left out because
	// their second repeated the previous one's (sysbench.Output).
	RepeatedIntervals int
	// Err is why the command failed (nil on success).
	Err error
}

// ErrNoSysbench is returned when the sysbench binary cannot be found.
var ErrNoSysbench = errors.New("sysbench binary not found")

// DetectVersion runs `sysbench --version`.
func (s *Sysbench) DetectVersion(ctx context.Context) error {
	bin, err := s.binary()
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("running %s --version: %w: %s", bin, err, strings.TrimSpace(string(out)))
	}
	v, err := sysbench.ParseVersion(string(out))
	if err != nil {
		return fmt.Errorf("reading sysbench version: %w", err)
	}
	s.Version = v
	return nil
}

func (s *Sysbench) binary() (string, error) {
	b := s.Binary
	if b == "" {
		b = "sysbench"
	}
	p, err := exec.LookPath(b)
	if err != nil {
		return "", fmt.Errorf("%w: %q (install it: apt-get install sysbench): %v", ErrNoSysbench, b, err)
	}
	return p, nil
}

// ScriptPath turns a catalog Script into what sysbench takes: stock names stay
// bare (sysbench finds them in its own directory), ours become file paths.
func (s *Sysbench) ScriptPath(script string) string {
	if name, ok := strings.CutPrefix(script, OursPrefix); ok {
		return filepath.Join(s.ScriptsDir, "dbbench", name+".lua")
	}
	return script
}

// ConnArgs are the driver options for the server, TLS off explicitly.
func (s *Sysbench) ConnArgs() []string {
	// sysbench names each driver's options after the driver.
	driver := "mysql"
	if s.Engine == agentapi.Postgres {
		driver = "pgsql"
	}
	args := []string{"--db-driver=" + driver}
	for _, o := range [][2]string{{"host", s.Host}, {"port", strconv.Itoa(s.Port)}, {"user", s.User},
		{"password", s.Password}, {"db", s.Database}} {
		args = append(args, "--"+driver+"-"+o[0]+"="+o[1])
	}
	if driver == "mysql" {
		args = append(args, s.Version.MySQLSSLOff())
	}
	return args
}

// Run executes `sysbench SCRIPT CONN... ARGS... COMMAND` and parses the
// output. A non-zero exit, a FATAL line or unreadable output is an error.
func (s *Sysbench) Run(ctx context.Context, script string, args []string, command string, log io.Writer) *Invocation {
	return s.run(ctx, script, args, command, log, "")
}

// StopEarlyScript is the wrapper that runs a step's script and ends it
// when a file appears (lua/dbbench/stop_early.lua).
const StopEarlyScript = OursPrefix + "stop_early"

// RunStoppable is Run of `run` through StopEarlyScript: creating stopFile
// (which must not exist yet) ends the run early, each thread after its
// current event, and sysbench still prints its final report. The recorded
// command names the wrapper and, before it, the two environment variables
// that tell it the step's script and the file ("env" first, as a shell
// would run it).
func (s *Sysbench) RunStoppable(ctx context.Context, script string, args []string, stopFile string, log io.Writer) *Invocation {
	return s.run(ctx, script, args, "run", log, stopFile)
}

func (s *Sysbench) run(ctx context.Context, script string, args []string, command string, log io.Writer, stopFile string) *Invocation {
	inv := &Invocation{}
	bin, err := s.binary()
	if err != nil {
		inv.Err = err
		return inv
	}
	var env, prefix []string
	scriptArg := s.ScriptPath(script)
	if stopFile != "" {
		env = []string{"DBBENCH_STEP_SCRIPT=" + scriptArg, "DBBENCH_STOP_FILE=" + stopFile}
		prefix = append([]string{"env"}, env...)
		scriptArg = s.ScriptPath(StopEarlyScript)
	}
	full := append([]string{scriptArg}, s.ConnArgs()...)
	full = append(full, args...)
	full = append(full, command)
	inv.Command = results.RedactCommand(append(append(prefix, filepath.Base(bin)), full...))

	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "LUA_PATH="+filepath.Join(s.ScriptsDir, "dbbench", "?.lua")+";;")
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	var w io.Writer = &buf
	if log != nil {
		w = io.MultiWriter(&buf, log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	runErr := cmd.Run()
	inv.Elapsed = time.Since(start)
	inv.Output = buf.String()
	if s.Password != "" {
		inv.Output = strings.ReplaceAll(inv.Output, s.Password, results.Redacted)
	}
	parsed, perr := sysbench.ParseString(inv.Output)
	if parsed != nil {
		inv.RepeatedIntervals = len(parsed.RepeatedIntervals)
	}
	inv.Parsed = parsed
	switch {
	case ctx.Err() != nil:
		inv.Err = fmt.Errorf("sysbench %s %s: %w", script, command, ctx.Err())
	case perr != nil:
		var fatal *sysbench.FatalError
		if errors.As(perr, &fatal) {
			inv.Err = fmt.Errorf("sysbench %s %s: %s", script, command, fatalSummary(fatal))
		} else if runErr != nil {
			inv.Err = fmt.Errorf("sysbench %s %s: %w: %s", script, command, runErr, tail(inv.Output, 12))
		} else {
			inv.Err = fmt.Errorf("sysbench %s %s: %w", script, command, perr)
		}
	case runErr != nil:
		inv.Err = fmt.Errorf("sysbench %s %s: %w: %s", script, command, runErr, tail(inv.Output, 12))
	}
	return inv
}

// fatalSummary is the FATAL lines, joined, at most a few.
func fatalSummary(f *sysbench.FatalError) string {
	var parts []string
	for i, l := range f.Lines {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("(%d more)", len(f.Lines)-i))
			break
		}
		parts = append(parts, strings.TrimSpace(l.Text))
	}
	return strings.Join(parts, " | ")
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, " | ")
}

// ExtractScripts writes the embedded Lua scripts to dir/dbbench/*.lua.
func ExtractScripts(dir string) error {
	return fs.WalkDir(dblua.Scripts, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := dblua.Scripts.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
