package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/workload"
)

// LocalOptions describe a local-mode run: one cell against a server that is
// already listening, results in a directory.
type LocalOptions struct {
	PlanFile     string // a plan.json; the flags below then only override
	Engine       string
	Host         string
	Port         int
	User         string
	PasswordFile string
	Database     string
	// Steps is a comma-separated list of step names, or a set name
	// ("standard", "extended").
	Steps string
	// Workload are the workload knobs' flags (--tables, --threads, the
	// durations, --tpcc-*, ...), applied over the plan file or the local
	// defaults.
	Workload agentapi.WorkloadFlags
	// Custom are NAME=PATH[:SECONDS] Lua steps.
	Custom       []string
	Out          string
	ReadyTimeout int
	// ServerConfigFile is the config variant's text to verify (verify.go).
	ServerConfigFile string
}

// Build returns the plan and password for a local run.
func (o *LocalOptions) Build() (*agentapi.Task, string, error) {
	p := &agentapi.Task{}
	if o.PlanFile != "" {
		b, err := os.ReadFile(o.PlanFile)
		if err != nil {
			return nil, "", err
		}
		if err := json.Unmarshal(b, p); err != nil {
			return nil, "", fmt.Errorf("reading plan %s: %w", o.PlanFile, err)
		}
	} else {
		p.APIVersion = agentapi.APIVersion
		p.Run = agentapi.RunRef{Name: "local"}
		p.Cell = agentapi.Cell{Name: "local", Repeat: 1, Attempt: 1}
		p.Workload = agentapi.Workload{Tables: 1, TableSize: 10000, ReadSeconds: 60, WriteSeconds: 60, Threads: []int{1}, PreparedStatements: true}
		p.Server.ReadyTimeoutSeconds = 60
	}
	if o.Engine != "" {
		p.Server.Engine = agentapi.Engine(o.Engine)
		p.Cell.Engine = p.Server.Engine
		p.Cell.Database = o.Engine
	}
	if o.Port != 0 {
		p.Server.Port = o.Port
	} else if p.Server.Port == 0 {
		p.Server.Port = p.Server.Engine.DefaultPort()
	}
	if o.Database != "" {
		p.Server.Database = o.Database
	} else if p.Server.Database == "" {
		p.Server.Database = "sbtest"
	}
	if o.ReadyTimeout > 0 {
		p.Server.ReadyTimeoutSeconds = o.ReadyTimeout
	}
	wl := &p.Workload
	if o.Steps != "" {
		switch set := workload.Set(o.Steps); set {
		case workload.SetStandard, workload.SetExtended:
			steps, _ := workload.BySet(set)
			wl.Steps = nil
			for _, s := range steps {
				wl.Steps = append(wl.Steps, s.Name)
			}
		default:
			wl.Steps = splitList(o.Steps)
		}
	}
	if err := o.Workload.Apply(wl); err != nil {
		return nil, "", err
	}
	for _, c := range o.Custom {
		name, rest, ok := strings.Cut(c, "=")
		if !ok || name == "" || rest == "" {
			return nil, "", fmt.Errorf("--custom %q: want NAME=PATH[:SECONDS]", c)
		}
		cs := agentapi.CustomStep{Name: name, Script: rest}
		if i := strings.LastIndex(rest, ":"); i > 0 {
			if n, err := strconv.Atoi(rest[i+1:]); err == nil {
				cs.Script, cs.DurationSeconds = rest[:i], n
			}
		}
		if abs, err := filepath.Abs(cs.Script); err == nil {
			cs.Script = abs
		}
		wl.Custom = append(wl.Custom, cs)
	}
	if o.Out != "" {
		p.Results.Dir = o.Out
		p.Results.ConfigMap = ""
	}
	password := ""
	if o.PasswordFile != "" {
		b, err := os.ReadFile(o.PasswordFile)
		if err != nil {
			return nil, "", fmt.Errorf("--password-file: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	} else {
		password = os.Getenv(agentapi.EnvPassword)
	}
	return p, password, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// LoadPlanFile reads the plan the controller mounted ($DBBENCH_PLAN).
func LoadPlanFile(path string) (*agentapi.Task, error) {
	if path == "" {
		path = filepath.Join(agentapi.TaskDir, agentapi.TaskFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	p := &agentapi.Task{}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return p, nil
}
