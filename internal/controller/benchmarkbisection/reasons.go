package benchmarkbisection

import dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"

// Reasons of the events about a BenchmarkBisection (the Localized
// condition's reasons are in the API package).
const (
	EventRoundCreated       = "RoundCreated"
	EventEndpointsChecked   = "EndpointsChecked"
	EventEnvironmentChanged = "EnvironmentChanged"
	// EventBisectionExplained announces a change of the Explained
	// condition, named after it.
	EventBisectionExplained = dbbenchv1alpha1.BisectionConditionExplained
	// EventBisectionLocalized and EventBisectionNotLocalized announce the
	// bisection's end, named after the phase it ends in.
	EventBisectionLocalized    = string(dbbenchv1alpha1.BisectionLocalized)
	EventBisectionNotLocalized = string(dbbenchv1alpha1.BisectionNotLocalized)
)
