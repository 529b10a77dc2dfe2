package agent

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/workload"
)

// StepKind says where a step comes from.
type StepKind string

const (
	KindCatalog StepKind = "catalog"
	KindTPCC    StepKind = "tpcc"
	KindCustom  StepKind = "custom"
	// KindPgbench is a pgbench built-in script run by pgbench itself
	// (pgbench.go), on pgbench's tables.
	KindPgbench StepKind = "pgbench"
)

// TPCCScript is our TPC-C implementation (lua/dbbench/tpcc.lua).
const TPCCScript = OursPrefix + "tpcc"

// EnvTPCCDataDivisor shrinks the TPC-C data set (tpcc.lua --data_divisor) for
// tests and demos; it is not part of the plan because results with a divisor
// other than 1 are not TPC-C.
const EnvTPCCDataDivisor = "DBBENCH_TPCC_DATA_DIVISOR"

// RunStep is one resolved step of the plan: what to run and for how long.
type RunStep struct {
	Name    string
	Kind    StepKind
	Script  string
	Args    []string
	Seconds int
	Threads []int
	Catalog workload.Step // for KindCatalog
}

// ResolveSteps turns the plan's step names into runnable steps, in order. An
// unknown name is an error that names it (and the closest catalog names).
func ResolveSteps(p *agentapi.Task) ([]RunStep, error) {
	wl := p.Workload
	custom := map[string]agentapi.CustomStep{}
	for _, c := range wl.Custom {
		custom[c.Name] = c
	}
	out := make([]RunStep, 0, len(wl.Steps))
	for i, name := range wl.Steps {
		if c, ok := custom[name]; ok {
			if c.Script == "" {
				return nil, fmt.Errorf("workload.custom %q: script is empty", name)
			}
			secs := c.DurationSeconds
			if secs <= 0 {
				secs = wl.ReadSeconds
			}
			out = append(out, RunStep{Name: name, Kind: KindCustom, Script: c.Script, Args: c.Args, Seconds: secs, Threads: wl.Threads})
			continue
		}
		if name == workload.TPCCStep {
			t := tpccConfig(wl)
			threads := t.Threads
			if len(threads) == 0 {
				threads = wl.Threads
			}
			args := []string{
				"--scale=" + strconv.Itoa(t.Warehouses),
				"--tables=" + strconv.Itoa(t.Tables),
				"--use_fk=" + boolInt(t.UseForeignKeys),
				"--trx_level=" + t.Isolation,
			}
			if d := os.Getenv(EnvTPCCDataDivisor); d != "" {
				args = append(args, "--data_divisor="+d)
			}
			out = append(out, RunStep{Name: name, Kind: KindTPCC, Script: TPCCScript, Args: args, Seconds: t.DurationSeconds, Threads: threads})
			continue
		}
		if b := workload.PgbenchBuiltin(name); b != "" {
			secs := wl.ReadSeconds
			if name == workload.PgbenchTPCBStep {
				secs = wl.WriteSeconds
			}
			out = append(out, RunStep{Name: name, Kind: KindPgbench, Script: b, Seconds: secs, Threads: wl.Threads})
			continue
		}
		s, ok := workload.Lookup(name)
		if !ok {
			_, err := workload.Resolve([]string{name})
			return nil, fmt.Errorf("workload.steps[%d]: %s (steps are catalog names, %q, or custom step names)",
				i, strings.TrimPrefix(err.Error(), "steps[0]: "), workload.TPCCStep)
		}
		secs := wl.ReadSeconds
		if s.Duration == workload.WriteDuration {
			secs = wl.WriteSeconds
		}
		out = append(out, RunStep{Name: name, Kind: KindCatalog, Script: s.Script, Args: s.Args, Seconds: secs, Threads: wl.Threads, Catalog: s})
	}
	return out, nil
}

// tpccConfig fills TPC-C defaults.
func tpccConfig(wl agentapi.Workload) agentapi.TPCC {
	t := agentapi.TPCC{}
	if wl.TPCC != nil {
		t = *wl.TPCC
	}
	if t.Warehouses < 1 {
		t.Warehouses = 1
	}
	if t.Tables < 1 {
		t.Tables = 1
	}
	if t.DurationSeconds < 1 {
		t.DurationSeconds = wl.WriteSeconds
	}
	switch t.Isolation {
	case "RR", "RC", "SER":
	default:
		t.Isolation = "RR"
	}
	return t
}

func boolInt(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
