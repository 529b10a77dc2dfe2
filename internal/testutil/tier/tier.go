// Package tier sorts the suites that need real servers or a real cluster
// into the two tiers of the test gate (docs/testing.md, "Two tiers"):
//
//   - core: what `make test` runs on every change, within its time budget:
//     every controller path and target kind once, the agent's parsing and
//     behaviour on real servers;
//   - long: what `make test-long` adds: calibration against measured
//     figures, long chains of real runs, chaos and node loss.
//
// Every test of those suites starts with tier.Core(t) or tier.Long(t)
// (checked by this package's test, which reads their sources), so none is
// in neither tier and docs/testing.md can list each one's.
package tier

import (
	"os"
	"testing"
)

// Env selects the tiers that run: "core" (the default), "long" or "all".
const Env = "DBBENCH_TEST_TIER"

// The tiers, as Env names them.
const (
	NameCore = "core"
	NameLong = "long"
	NameAll  = "all"
)

// selected is Env's value, "core" when unset.
func selected() string {
	if v := os.Getenv(Env); v != "" {
		return v
	}
	return NameCore
}

// Core marks a test of the core tier: it runs unless only the long tier
// was asked for.
func Core(t testing.TB) {
	t.Helper()
	check(t)
	if selected() == NameLong {
		t.Skipf("core tier (make test runs it); %s=long runs the long tier only", Env)
	}
}

// Long marks a test of the long tier: it runs only when Env asks for it
// (make test-long).
func Long(t testing.TB) {
	t.Helper()
	check(t)
	if s := selected(); s != NameLong && s != NameAll {
		t.Skipf("long tier: make test-long runs it (%s=long or all)", Env)
	}
}

// check fails a test run with an Env that names no tier, rather than
// skipping everything silently.
func check(t testing.TB) {
	t.Helper()
	switch selected() {
	case NameCore, NameLong, NameAll:
	default:
		t.Fatalf("%s=%q: want %s, %s or %s", Env, os.Getenv(Env), NameCore, NameLong, NameAll)
	}
}
