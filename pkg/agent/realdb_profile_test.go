package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/profile"
	"github.com/dbbench/dbbench/pkg/results"
)

// isJIT tells the frames of PostgreSQL's LLVM JIT: its entry points
// jit_compile_expr (the postgres binary) and llvm_compile_expr
// (llvmjit.so), both exported by name, and LLVM itself, whose C++
// functions perf names "llvm::..." when libLLVM exports them and
// "[libLLVM-14.so.1]" (the library) when it does not.
func isJIT(fn string) bool {
	return fn == "jit_compile_expr" || fn == "llvm_compile_expr" || strings.HasPrefix(fn, "llvm::") || strings.HasPrefix(fn, "[libLLVM")
}

// profileTopN is how high the JIT must rank among the functions whose
// self share changed most.
const profileTopN = 3

// TestRealProfileExplain profiles PostgreSQL's point-query twice, on two
// servers whose only difference is the JIT: jit=off on A; on B jit=on with
// jit_above_cost=0, so every query, however cheap, is compiled with LLVM
// before it runs. It checks that the diff `kubectl dbbench explain` prints
// (profile.Diff by self share, explain's default) ranks the JIT among the
// top changes.
// Why the JIT: it is a stock setting of every PostgreSQL since 11 (on by
// default since 12) that moves an OLTP query's CPU into one known place,
// the compiler, a classic cause of OLTP regressions when the cost
// thresholds are low; and its entry points are exported by name. Shares of
// samples, not counts, are compared, which makes the ranking independent
// of how busy the (shared, 2-core) machine is; and the servers' backends
// are processes, which checks that the pass samples the postmaster's whole
// process tree.
//
// It also logs the profiler's cost: the profiled pass's QPS against the
// measured run's (the pass is separate, so the measured figures are not
// skewed; this says what the pass itself costs).
func TestRealProfileExplain(t *testing.T) {
	tier.Long(t)
	needRealDB(t)
	if !slices.Contains(realEngines(), agentapi.Postgres) {
		t.Skip("needs postgres in DBBENCH_REAL_DB_ENGINES")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Fatalf("perf is not installed (hack/test-deps.sh installs linux-perf): %v", err)
	}
	configs := map[string]string{
		"a": "jit = off\n",
		"b": "jit = on\njit_above_cost = 0\n",
	}
	profiles := map[string]*profile.Profile{}
	for _, name := range []string{"a", "b"} {
		port := startServerWithConfig(t, agentapi.Postgres, configs[name])
		p := realPlan(agentapi.Postgres, t.TempDir(), "point-query")
		p.Server.Port = port
		p.Workload.Threads = []int{2}
		p.Workload.ReadSeconds, p.Workload.WarmupSeconds = 8, 1
		p.Workload.Profile = &agentapi.Profile{Steps: []string{"point-query"}, Seconds: 10, FrequencyHz: 499}
		a := &Agent{Plan: p, Host: "127.0.0.1", User: realUser, Password: realPassword, Version: "test",
			Profiler: &PerfProfiler{Perf: perf}}
		res, compact, full := runRealAgent(t, a, 5*time.Minute, false)
		if res.ExitCode != agentapi.ExitOK {
			t.Fatalf("%s: exit %d: %v", name, res.ExitCode, res.Err)
		}
		for form, d := range map[string]*results.Document{"compact": compact, "full": full} {
			if len(d.Steps) != 1 || d.Steps[0].Profile == nil {
				t.Fatalf("%s %s: steps %+v, want one with a profile", name, form, d.Steps)
			}
		}
		st := full.Steps[0]
		pr := st.Profile
		if pr.Error != "" {
			t.Fatalf("%s: profile error: %s", name, pr.Error)
		}
		if pr.Tool != results.ProfileToolPerf || pr.Event != ProfileEvent || pr.FrequencyHz != 499 || pr.Seconds < 9 {
			t.Errorf("%s: profile %s/%s at %d Hz over %.1f s, want perf/cpu-clock at 499 Hz over about 10 s", name, pr.Tool, pr.Event, pr.FrequencyHz, pr.Seconds)
		}
		// Two busy backends for 10 s at 499 Hz are thousands of samples
		// on an idle machine; on this shared one (load 30 on 2 cores)
		// they got as little as a tenth of a core, 130 samples.
		if pr.Samples < 50 {
			t.Errorf("%s: %d samples, want at least 50", name, pr.Samples)
		}
		// Samples from backends, not only the postmaster: the pass
		// sampled the process tree.
		if !strings.Contains(pr.Folded, "PostgresMain") {
			t.Errorf("%s: no sample under PostgresMain (a backend)", name)
		}
		prof, err := profile.ParseFoldedString(pr.Folded)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		prof.Dropped = pr.Dropped
		profiles[name] = prof
		if pr.PassQPS <= 0 {
			t.Errorf("%s: the profiled pass recorded no QPS", name)
		}
		t.Logf("%s: measured %.0f QPS; profiled pass %.0f QPS (%+.1f %%), %d samples, %d dropped to fit, folded %d bytes",
			name, st.SteadyQPS, pr.PassQPS, 100*(pr.PassQPS/st.SteadyQPS-1), pr.Samples, pr.Dropped, len(pr.Folded))
	}
	// LLVM does not run in A. (jit_compile_expr does, briefly: it is
	// called for every expression and returns at once when jit=off.)
	for fn, sh := range profiles["a"].Shares() {
		if isJIT(fn) && fn != "jit_compile_expr" && sh.Inclusive > 0 {
			t.Errorf("A (jit=off) has %.2f %% of its samples in %s", 100*sh.Inclusive, fn)
		}
	}
	// Self shares: the leaf is always right, whereas stacks through
	// libraries built without frame pointers (libLLVM) stop short, so
	// inclusive shares of the callers are unreliable there.
	changes := profile.Diff(profiles["a"], profiles["b"], profile.RankSelf)
	var top []string
	best := 0
	for i, c := range changes[:min(len(changes), 15)] {
		top = append(top, c.Function)
		t.Logf("%2d. %+6.2f pp inclusive (%5.2f%% -> %5.2f%%), self %+6.2f pp  %s", i+1, 100*c.InclusiveDelta, 100*c.A.Inclusive, 100*c.B.Inclusive, 100*c.SelfDelta, c.Function)
		if best == 0 && isJIT(c.Function) {
			best = i + 1
		}
	}
	if best == 0 || best > profileTopN {
		t.Errorf("no JIT frame among the top %d changes; the top: %q", profileTopN, top)
	}
	if best > 0 && changes[best-1].SelfDelta <= 0 {
		t.Errorf("%s ranks %d but shrank", changes[best-1].Function, best)
	}
	// The flame graph draws LLVM (jit_compile_expr may be too narrow to
	// draw: most stacks through libLLVM stop short of it).
	svg := filepath.Join(t.TempDir(), "explain.svg")
	f, err := os.Create(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.WriteDiffSVG(f, profiles["a"], profiles["b"], profile.SVGOptions{Title: "point-query: jit=off -> jit=on, jit_above_cost=0"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := os.ReadFile(svg)
	if !strings.Contains(string(b), "[libLLVM") && !strings.Contains(string(b), "llvm::") {
		t.Errorf("the differential flame graph does not show LLVM")
	}
	if dir := os.Getenv("DBBENCH_PROFILE_KEEP"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "a.folded"), []byte(profiles["a"].Folded()), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "b.folded"), []byte(profiles["b"].Folded()), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "explain.svg"), b, 0o644)
	}
}
