package v1alpha1

// Condition types and reasons of a BenchmarkBisection.
const (
	// BisectionConditionLocalized is Unknown while the search runs, True
	// when a candidate was found to introduce the regression (the message
	// and status.firstBad name it), False when the search ended without
	// one (the reason says why).
	BisectionConditionLocalized = "Localized"

	// BisectionReasonSearching: rounds are still being measured.
	BisectionReasonSearching = "Searching"
	// BisectionReasonLocalized: the first bad candidate is known.
	BisectionReasonLocalized = "Localized"
	// BisectionReasonEndpointsNotReproduced: the bad point is not slower
	// than the good one by the rule's magnitude (status.endpoints has the
	// measured ratio).
	BisectionReasonEndpointsNotReproduced = "EndpointsNotReproduced"
	// BisectionReasonEndpointFailed: the good or the bad point did not run.
	BisectionReasonEndpointFailed = "EndpointFailed"
	// BisectionReasonNarrowed: the search ended with failed or inconclusive
	// candidates between the last good and the first bad point; the
	// interval is in status.changes[0].
	BisectionReasonNarrowed = "Narrowed"
	// BisectionReasonBudgetExhausted: the next round would exceed
	// spec.budget; status.changes has the interval reached.
	BisectionReasonBudgetExhausted = "BudgetExhausted"
	// BisectionReasonInvalidSpec: the spec cannot be run (the referenced
	// run is missing, names no database, judges no step).
	BisectionReasonInvalidSpec = "InvalidSpec"
	// BisectionReasonRoundFailed: a round's run failed as a whole (not
	// cell by cell), so its points could not be judged.
	BisectionReasonRoundFailed = "RoundFailed"
	// BisectionReasonAmbiguous: the search narrowed the change down but
	// no build reached spec.confidence within the budget and the confirm
	// rounds; status.likely names the builds that share the probability.
	BisectionReasonAmbiguous = "Ambiguous"
	// BisectionConditionExplained is set once a bisection localized: True
	// when status.explanation says what differs between the last good and
	// the first bad build, False when nothing could be compared (the
	// reason says why), Unknown while the explain round runs.
	BisectionConditionExplained = "Explained"
	// BisectionReasonExplaining: the explain round is running.
	BisectionReasonExplaining = "Explaining"
	// BisectionReasonExplained: status.explanation is attached.
	BisectionReasonExplained = "Explained"
	// BisectionReasonNothingToCompare: neither engine counters nor
	// profiles of the judged step were found on both builds.
	BisectionReasonNothingToCompare = "NothingToCompare"
	// BisectionReasonExplainRoundFailed: the explain round's run failed.
	BisectionReasonExplainRoundFailed = "ExplainRoundFailed"

	// BisectionReasonEnvironmentUnstable: the regression changed its size
	// between rounds (status.environment) more often than the search
	// restarts for.
	BisectionReasonEnvironmentUnstable = "EnvironmentUnstable"
)
