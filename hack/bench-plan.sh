#!/usr/bin/env bash
# bench-plan.sh is `make bench-plan`: the plan the planner designs for a goal
# (a calibrated 10 % slowdown found with power 0.9) against the reference
# method's fixed plan (300-s read steps), on real MariaDB rounds: the first
# half of a run's rounds is the history the plans come from, the second half
# is held out to measure the designed plan's detection and A/A rates
# (test/bench/verdicts/plan.go, and the verdict paired by round:
# test/bench/verdicts/paired.go; docs/benchmarks.md, "Designed against fixed
# plans").
#
# By default it replays the committed logs of real runs (about a minute);
# PLAN_FRESH=1 measures a new run first (make bench-verdicts' harness, root,
# VERDICTS_* sizes; about 25 min at the defaults) and plans from it.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

if [ -n "${PLAN_FRESH:-}" ]; then
	exec hack/bench-verdicts.sh "$@"
fi
logs=test/bench/verdicts/testdata
replay() {
	local log=$1
	shift
	echo "== ${log} (real run, replayed)"
	go run ./test/bench/verdicts -replay "${logs}/${log}" -plan-only "$@"
	echo
}
replay run-2026-11-24.log
replay run-2026-11-24-40rounds.log -rounds 40
replay run-2026-11-24-maxweight.log
replay run-2026-11-24-10s.log -seconds 10
