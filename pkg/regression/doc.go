// Package regression decides whether a run regressed: the verdict between
// a run and its baseline run or its own baseline cells (JudgeRuns,
// JudgeBaseline: which test each point gets, the multiple-comparison
// correction, what change each point could have detected), the change
// points of a suite's series that are regressions (ChangePointRegressions),
// the suite's noise floors and variance components that the verdict and
// the planner fall back on (SuiteNoise, SuiteComponents), and the planning
// of a run's repeats and step lengths so that its verdict reaches a goal
// (PlanPoints, BuildPlanReport: `kubectl dbbench plan`).
//
// It works on run manifests (pkg/results) and uses pkg/analysis for the
// metric model and the tables it prints, and pkg/inference for the tests
// themselves; nothing here renders HTML. docs/noise.md describes the
// methods. The package has no Kubernetes imports.
package regression
