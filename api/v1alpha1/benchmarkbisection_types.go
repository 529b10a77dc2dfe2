package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkBisectionSpec localizes a regression across ordered builds: the
// known-good and known-bad points and the candidates between them.
// +kubebuilder:validation:XValidation:rule="has(self.runRef) != has(self.template)",message="runRef: set exactly one of runRef and template"
// +kubebuilder:validation:XValidation:rule="!(has(self.good.version) && has(self.bad.version) && self.good.version == self.bad.version) && !(has(self.good.image) && has(self.bad.image) && self.good.image == self.bad.image)",message="bad: must differ from good"
// +kubebuilder:validation:XValidation:rule="!has(self.template) || size(self.template.databases) == 1",message="template.databases: a bisection measures one database; list exactly one"
// +kubebuilder:validation:XValidation:rule="!has(self.template) || !has(self.judge) || !has(self.judge.steps) || !has(self.template.workload.steps) || self.judge.steps.all(s, s in self.template.workload.steps)",messageExpression="'judge.steps: ' + self.judge.steps.filter(s, !(s in self.template.workload.steps))[0] + ' is not a step of template.workload.steps'"
// +kubebuilder:validation:XValidation:rule="!has(self.template) || !has(self.judge) || !has(self.judge.threads) || !has(self.template.workload.threads) || self.judge.threads.all(t, t in self.template.workload.threads)",message="judge.threads: every thread count must be one of template.workload.threads"
type BenchmarkBisectionSpec struct {
	// runRef copies the database, config, workload, client, placement,
	// output and timeouts from a BenchmarkRun in the same namespace (the
	// run that regressed, typically). Set runRef or template.
	// +optional
	RunRef *BisectionRunRef `json:"runRef,omitempty"`

	// template is the run spec every round runs, inline, with exactly one
	// database (its versions are replaced by the round's points, its
	// first config variant is used). Set runRef or template.
	// +optional
	Template *BenchmarkRunSpec `json:"template,omitempty"`

	// good is the known-good point.
	Good BisectionPoint `json:"good"`

	// bad is the known-bad point.
	Bad BisectionPoint `json:"bad"`

	// candidates are the points between good and bad, in order (oldest
	// first).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=62
	// +listType=atomic
	Candidates []BisectionPoint `json:"candidates"`

	// judge names the steps and thread counts the verdicts look at.
	// +optional
	Judge BisectionJudge `json:"judge,omitempty"`

	// minMagnitudePercent: a point is bad when it is slower than good by
	// more than this on a judged step. Defaults to the referenced run's
	// spec.regression.minMagnitudePercent, else 5.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=99
	// +optional
	MinMagnitudePercent *int32 `json:"minMagnitudePercent,omitempty"`

	// maxPValue is the significance level of the one-sided tests between
	// runs (Welch's on per-repeat log QPS, Holm-adjusted over the judged
	// steps), a decimal string in (0, 1). Defaults to the referenced
	// run's spec.regression.maxPValue, else 0.05.
	// +kubebuilder:validation:Pattern=`^0?\.[0-9]*[1-9][0-9]*$`
	// +kubebuilder:validation:MaxLength=12
	// +optional
	MaxPValue string `json:"maxPValue,omitempty"`

	// magnitudeRule is how minMagnitudePercent enters the tests, as in a
	// run's spec.regression.magnitudeRule: Tested ("worse by more than
	// the magnitude") or Estimated ("worse", with the measured change at
	// least the magnitude). Defaults to the referenced run's, else Tested:
	// a bisection started by a verdict judges "worse" as that verdict did.
	// +optional
	MagnitudeRule RegressionMagnitudeRule `json:"magnitudeRule,omitempty"`

	// correction is the multiple-comparison procedure over a point's
	// judged step@threads and metrics (Holm or BenjaminiHochberg).
	// Defaults to the referenced run's, else Holm.
	// +optional
	Correction RegressionCorrection `json:"correction,omitempty"`

	// metrics are judged at every judged step@threads: Throughput,
	// P95Latency, P99Latency. Defaults to the referenced run's
	// spec.regression.metrics, else Throughput; with runRef and no judge,
	// each regressed step@threads is judged on the metrics it regressed
	// on, so a suite that regressed on p99 latency is bisected on it.
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	// +optional
	Metrics []RegressionMetric `json:"metrics,omitempty"`

	// confidence is how sure the search must be before it names a build:
	// the posterior probability, under the noise model of docs/bisect.md,
	// that the named build is the first bad one (a decimal string in
	// (0, 1)). Below it the builds around the change are measured again
	// (within maxCells), and a search that ends short of it is
	// Localized=False, reason Ambiguous, naming the builds that share the
	// probability. Default 0.9.
	// +kubebuilder:validation:Pattern=`^0?\.[0-9]*[1-9][0-9]*$`
	// +kubebuilder:validation:MaxLength=12
	// +optional
	Confidence string `json:"confidence,omitempty"`

	// explain says how the build the search names is explained: its engine
	// counters per operation against the last good build's, from the cells
	// the search measured, always; with profile, one more round (kind
	// Explain) runs both builds once each with an unmeasured profiled pass
	// of the judged step, and the explanation adds where the server's CPU
	// went (needs the profiler's privileges: docs/explain.md).
	// +optional
	Explain BisectionExplainSpec `json:"explain,omitempty"`

	// parallelism is how many candidates a round measures: each interval
	// that still holds the change is split into parallelism+1 parts.
	// Cells of a round run as the run's placement allows.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	Parallelism int32 `json:"parallelism,omitempty"`

	// repeats is how many cells measure each point per round (the tests
	// need 2 or more; 1 judges by the magnitude alone).
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Repeats int32 `json:"repeats,omitempty"`

	// maxCells is the budget: the bisection never starts a round that
	// would take its cells beyond it, and reports the interval reached.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxCells int32 `json:"maxCells,omitempty"`
}

// BisectionExplainSpec says how a localized build is explained.
type BisectionExplainSpec struct {
	// profile adds the explain round with on-CPU profiles of both builds.
	// +optional
	Profile bool `json:"profile,omitempty"`

	// seconds are sampled per profiled pass.
	// +kubebuilder:default=15
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +optional
	Seconds int32 `json:"seconds,omitempty"`
}

// BisectionRunRef names the run a bisection copies its benchmark from.
type BisectionRunRef struct {
	// name of the BenchmarkRun.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// database names the run's database to bisect; the first when empty.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Database string `json:"database,omitempty"`

	// config names the database's config variant to use; the first when
	// empty.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Config string `json:"config,omitempty"`
}

// BisectionPoint is one build: a version substituted into the database's
// image template, or an explicit image (a tag or a digest).
// +kubebuilder:validation:XValidation:rule="has(self.version) != has(self.image)",message="set exactly one of version and image"
type BisectionPoint struct {
	// version is substituted for {version} in the database's image.
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]*$`
	// +optional
	Version string `json:"version,omitempty"`

	// image is the whole image reference, e.g. registry/mariadb@sha256:….
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Image string `json:"image,omitempty"`
}

// BisectionJudge names what the verdicts look at.
type BisectionJudge struct {
	// steps to judge. Defaults to the steps named in the referenced run's
	// status.regression.regressed, else every step measured.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Steps []string `json:"steps,omitempty"`

	// threads are the thread counts to judge; all measured when empty
	// (with runRef and no steps given: those of status.regression).
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Threads []int32 `json:"threads,omitempty"`
}

// BisectionVerdict is what a point was judged to be.
// +kubebuilder:validation:Enum=Good;Bad;Inconclusive;Failed;Untested
type BisectionVerdict string

const (
	VerdictGood         BisectionVerdict = "Good"
	VerdictBad          BisectionVerdict = "Bad"
	VerdictInconclusive BisectionVerdict = "Inconclusive"
	VerdictFailed       BisectionVerdict = "Failed"
	VerdictUntested     BisectionVerdict = "Untested"
)

// BisectionPhase summarizes a bisection.
// +kubebuilder:validation:Enum=Searching;Localized;NotLocalized
type BisectionPhase string

const (
	BisectionSearching    BisectionPhase = "Searching"
	BisectionLocalized    BisectionPhase = "Localized"
	BisectionNotLocalized BisectionPhase = "NotLocalized"
)

// BisectionRoundKind is why a round was started.
// +kubebuilder:validation:Enum=Endpoints;Search;Confirm;Explain
type BisectionRoundKind string

const (
	// RoundEndpoints measures good and bad (round 0; again while their
	// difference is unsure, and after the regression changed size).
	RoundEndpoints BisectionRoundKind = "Endpoints"
	// RoundSearch measures candidates beside the ends of their interval.
	RoundSearch BisectionRoundKind = "Search"
	// RoundConfirm measures the builds around a change again, until one
	// reaches spec.confidence.
	RoundConfirm BisectionRoundKind = "Confirm"
	// RoundExplain runs the last good and the first bad build once more
	// with profiles, after the search (spec.explain.profile).
	RoundExplain BisectionRoundKind = "Explain"
)

// BisectionRound is one round: one BenchmarkRun measuring some points.
type BisectionRound struct {
	// index counts rounds from 0 (the endpoint round).
	Index int32 `json:"index"`
	// run is the round's BenchmarkRun.
	Run string `json:"run"`
	// kind is Endpoints, Search or Confirm.
	// +optional
	Kind BisectionRoundKind `json:"kind,omitempty"`
	// points are the indexes (into status.points) the round measures.
	// +listType=atomic
	Points []int32 `json:"points"`
	// references are the points of a search round measured as the
	// references its candidates are compared with, in the same slot (the
	// ends of their interval).
	// +listType=atomic
	// +optional
	References []int32 `json:"references,omitempty"`
	// cells is the number of cells of the round.
	Cells int32 `json:"cells"`
	// finished is set once the round's results were read.
	// +optional
	Finished bool `json:"finished,omitempty"`
	// invalidLeftOut counts the judged step results of the round's cells
	// that the quality gate marked invalid (the run's
	// status.cells[].quality): not values, so not among the round's
	// observations.
	// +optional
	InvalidLeftOut int32 `json:"invalidLeftOut,omitempty"`
}

// BisectionPointStatus is what is known of one point.
type BisectionPointStatus struct {
	// index is the point's position: 0 good, 1..n the candidates, n+1 bad.
	Index int32 `json:"index"`
	// name is the version or image.
	Name string `json:"name"`
	// verdict is Good, Bad, Inconclusive, Failed or Untested.
	Verdict BisectionVerdict `json:"verdict"`
	// runs is how many cells measured it successfully.
	// +optional
	Runs int32 `json:"runs,omitempty"`
	// measured counts the rounds that measured it.
	// +optional
	Measured int32 `json:"measured,omitempty"`
	// key is the judged step@threads the figures are of (the lowest
	// ratio).
	// +optional
	Key string `json:"key,omitempty"`
	// ratio is mean(point)/mean(good) at key, 4 significant digits.
	// +optional
	Ratio string `json:"ratio,omitempty"`
	// ratioLow and ratioHigh bound ratio at 95 % (Fieller), when both
	// sides have 2 runs or more and the good point's runs are steady
	// enough for a finite interval.
	// +optional
	RatioLow string `json:"ratioLow,omitempty"`
	// +optional
	RatioHigh string `json:"ratioHigh,omitempty"`
	// probability is the posterior probability that this point is the
	// first bad build, 3 decimals; empty when below 0.001 or not known.
	// +optional
	Probability string `json:"probability,omitempty"`
	// reason is the cell failure reason of a Failed point.
	// +optional
	Reason FailureReason `json:"reason,omitempty"`
	// message says more about a Failed point.
	// +optional
	Message string `json:"message,omitempty"`
}

// BisectionChange is an interval that holds a change from good to bad.
type BisectionChange struct {
	// lastGood is the last good point before the change.
	LastGood string `json:"lastGood"`
	// firstBad is the first bad point after it.
	FirstBad string `json:"firstBad"`
	// between are the points between them that could not be judged
	// (failed, inconclusive, or left untested by the budget); empty when
	// firstBad introduced the change.
	// +listType=atomic
	// +optional
	Between []string `json:"between,omitempty"`
}

// BisectionEndpoints are the figures of the endpoint check.
type BisectionEndpoints struct {
	// reproduced says the bad point was slower than good by more than the
	// magnitude on some judged step.
	Reproduced bool `json:"reproduced"`
	// key is the step@threads with the lowest bad/good ratio.
	// +optional
	Key string `json:"key,omitempty"`
	// ratio is mean(bad)/mean(good) at key.
	// +optional
	Ratio string `json:"ratio,omitempty"`
	// regressed are the step@threads the search judges candidates on.
	// +listType=atomic
	// +optional
	Regressed []string `json:"regressed,omitempty"`
}

// BisectionRule is the decision rule a search used, resolved from its
// spec and the referenced run's spec.regression.
type BisectionRule struct {
	MinMagnitudePercent int32                   `json:"minMagnitudePercent"`
	MagnitudeRule       RegressionMagnitudeRule `json:"magnitudeRule"`
	MaxPValue           string                  `json:"maxPValue"`
	Correction          RegressionCorrection    `json:"correction"`
	// +listType=atomic
	Metrics    []RegressionMetric `json:"metrics"`
	Confidence string             `json:"confidence"`
}

// BisectionEnvironmentChange is a round in which every build measured
// differently from the rounds before: the machine's load, the node or the
// time of day changed.
type BisectionEnvironmentChange struct {
	// round is the round's index.
	Round int32 `json:"round"`
	// shiftPercent is how much every build's figure moved in the round,
	// 100 × (ratio − 1), on the key the check used.
	// +optional
	ShiftPercent string `json:"shiftPercent,omitempty"`
	// key is the step@threads (and metric) the check used.
	Key string `json:"key"`
	// held says the regression kept its size in the round, so the
	// comparisons within rounds stand. False: it did not (ratioBefore,
	// ratioIn), the rounds before were set aside and the endpoints
	// measured again.
	Held bool `json:"held"`
	// ratioBefore and ratioIn are bad over good before and in the round.
	// +optional
	RatioBefore string `json:"ratioBefore,omitempty"`
	// +optional
	RatioIn string `json:"ratioIn,omitempty"`
}

// BisectionExplanation is what differs between the last good and the
// first bad build at the judged step: the engine counters per operation
// that moved most and, when profiled, the functions whose share of the
// server's on-CPU samples moved most. The bisection's report has the whole
// comparison and the differential flame graph.
type BisectionExplanation struct {
	// step and threads are the judged step@threads compared.
	Step    string `json:"step"`
	Threads int32  `json:"threads"`
	// counters are the counters per operation that moved most.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Counters []ExplainedCounter `json:"counters,omitempty"`
	// functions are the functions whose self share of the samples moved
	// most (profileThreads is the profiled pass's thread count).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Functions []ExplainedFunction `json:"functions,omitempty"`
	// +optional
	ProfileThreads int32 `json:"profileThreads,omitempty"`
	// round is the explain round's index, when profiled.
	// +optional
	Round *int32 `json:"round,omitempty"`
	// notes say what could not be compared and why.
	// +listType=atomic
	// +optional
	Notes []string `json:"notes,omitempty"`
}

// ExplainedCounter is one engine counter per operation on both builds.
type ExplainedCounter struct {
	Name string `json:"name"`
	// lastGood and firstBad are the means per operation over each build's
	// cells; ratio is firstBad/lastGood ("inf" from zero).
	LastGood string `json:"lastGood"`
	FirstBad string `json:"firstBad"`
	Ratio    string `json:"ratio"`
}

// ExplainedFunction is one function's share of the server's on-CPU
// samples on both builds, in percent.
type ExplainedFunction struct {
	Function string `json:"function"`
	// lastGoodSelfPercent and firstBadSelfPercent are the shares with the
	// function itself on CPU; changePoints is their difference.
	LastGoodSelfPercent string `json:"lastGoodSelfPercent"`
	FirstBadSelfPercent string `json:"firstBadSelfPercent"`
	ChangePoints        string `json:"changePoints"`
}

// BenchmarkBisectionStatus is the observed state of a bisection.
type BenchmarkBisectionStatus struct {
	// observedGeneration is the generation the status describes: 0 (the
	// default) until the controller has written a status, so that kstatus
	// and Argo CD read a new object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Localized, and ResultsUploaded when the runs upload to
	// an object store.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase is Searching, Localized or NotLocalized.
	// +optional
	Phase BisectionPhase `json:"phase,omitempty"`

	// firstBad names the candidate that introduced the regression, once
	// localized, and lastGood the build before it.
	// +optional
	FirstBad string `json:"firstBad,omitempty"`
	// +optional
	LastGood string `json:"lastGood,omitempty"`

	// explanation is what differs between lastGood and firstBad, attached
	// once localized (the Explained condition).
	// +optional
	Explanation *BisectionExplanation `json:"explanation,omitempty"`

	// confidence is the posterior probability that firstBad is the first
	// bad build (while searching: that the most likely build is), 3
	// decimals.
	// +optional
	Confidence string `json:"confidence,omitempty"`

	// likely are the builds most likely to be the first bad one, most
	// likely first, until they hold spec.confidence: one when localized,
	// several when Ambiguous.
	// +listType=atomic
	// +optional
	Likely []string `json:"likely,omitempty"`

	// rule is the decision rule the search judges with.
	// +optional
	Rule *BisectionRule `json:"rule,omitempty"`

	// endpoints are the figures of the endpoint check.
	// +optional
	Endpoints *BisectionEndpoints `json:"endpoints,omitempty"`

	// environment are the rounds in which every build measured
	// differently from the rounds before.
	// +listType=atomic
	// +optional
	Environment []BisectionEnvironmentChange `json:"environment,omitempty"`

	// epoch is the first round the search judges: 0, or the round in
	// which the regression last changed its size.
	// +optional
	Epoch int32 `json:"epoch,omitempty"`

	// rounds are the runs measured, in order.
	// +listType=atomic
	// +optional
	Rounds []BisectionRound `json:"rounds,omitempty"`

	// roundCount and cellsUsed total the rounds and cells so far.
	// +optional
	RoundCount int32 `json:"roundCount,omitempty"`
	// +optional
	CellsUsed int32 `json:"cellsUsed,omitempty"`

	// points are good, the candidates and bad, in order, with verdicts.
	// +listType=atomic
	// +optional
	Points []BisectionPointStatus `json:"points,omitempty"`

	// changes are the intervals holding a change from good to bad, in
	// order; more than one when results are not monotonic.
	// +listType=atomic
	// +optional
	Changes []BisectionChange `json:"changes,omitempty"`

	// startTime and completionTime bound the search.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// upload tracks the upload of the finished bisection's summary and
	// report to the object store of its runs' output.s3 (the
	// ResultsUploaded condition says why an attempt failed).
	// +optional
	Upload *BisectionUploadStatus `json:"upload,omitempty"`
}

// BisectionUploadStatus is the state of a bisection's upload.
type BisectionUploadStatus struct {
	// uploaded is true once the object store confirmed bisection.json
	// (after report.html).
	// +optional
	Uploaded bool `json:"uploaded,omitempty"`
	// url is the bisection's directory in the store,
	// s3://<bucket>/<prefix>/<suite>/_bisections/<name>/.
	// +optional
	URL string `json:"url,omitempty"`
	// failures counts the failed attempts since the last success; the wait
	// before the next doubles with each, up to 5 minutes.
	// +optional
	Failures int32 `json:"failures,omitempty"`
	// lastFailureTime is when the last failed attempt was made.
	// +optional
	LastFailureTime *metav1.Time `json:"lastFailureTime,omitempty"`
}

// BenchmarkBisection localizes a regression between a good and a bad
// build by measuring the candidates between them in rounds, each round a
// BenchmarkRun it owns.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bbis,categories=dbbench
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 50",message="metadata.name: must be at most 50 characters (rounds are named <bisection>-r<N>)"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="First Bad",type=string,JSONPath=`.status.firstBad`
// +kubebuilder:printcolumn:name="Confidence",type=string,JSONPath=`.status.confidence`
// +kubebuilder:printcolumn:name="Rounds",type=integer,JSONPath=`.status.roundCount`
// +kubebuilder:printcolumn:name="Cells",type=integer,JSONPath=`.status.cellsUsed`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Localized")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BenchmarkBisection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the search. It is immutable: a changed search is a new one.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create a new BenchmarkBisection instead"
	Spec BenchmarkBisectionSpec `json:"spec"`

	// status is the observed state.
	// +optional
	// +kubebuilder:default={}
	Status BenchmarkBisectionStatus `json:"status,omitempty"`
}

// BenchmarkBisectionList is a list of BenchmarkBisections.
//
// +kubebuilder:object:root=true
type BenchmarkBisectionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkBisection `json:"items"`
}

func init() {
	register(&BenchmarkBisection{}, &BenchmarkBisectionList{})
}
