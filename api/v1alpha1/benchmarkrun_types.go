package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Engine is a database engine.
// +kubebuilder:validation:Enum=mysql;mariadb;postgres
type Engine string

const (
	EngineMySQL    Engine = "mysql"
	EngineMariaDB  Engine = "mariadb"
	EnginePostgres Engine = "postgres"
)

// BenchmarkRunSpec declares a benchmark matrix: every (database, version,
// config variant, repeat) combination becomes one cell with a fresh server and
// a fresh data load; the workload steps then run in order inside the cell,
// once per client thread count.
//
// +kubebuilder:validation:XValidation:rule="self.databases.all(d, (has(d.versions) ? size(d.versions) : 1) * (has(d.configs) ? size(d.configs) : 1) * (has(self.workload.precision) ? self.workload.precision.maxRepeats : self.workload.repeats) <= 100)",message="databases: a database may contribute at most 100 cells (versions × configs × workload.repeats, or workload.precision.maxRepeats); split the matrix into several runs"
// +kubebuilder:validation:XValidation:rule="!has(self.baseline) || self.databases.exists(d, d.name == self.baseline.database && (!has(self.baseline.version) || (has(d.versions) ? self.baseline.version in d.versions : self.baseline.version == 'external')) && (!has(self.baseline.config) || (has(d.configs) ? d.configs.exists(c, c.name == self.baseline.config) : self.baseline.config == 'default')))",message="baseline: must name a database of spec.databases and, when given, one of its versions and config variants"
// +kubebuilder:validation:XValidation:rule="!has(self.baseline) || !has(self.baseline.repeat) || self.baseline.repeat <= self.workload.repeats",message="baseline.repeat: must not exceed workload.repeats"
// +kubebuilder:validation:XValidation:rule="!has(self.workload) || !has(self.workload.steps) || !self.workload.steps.exists(s, s.startsWith('pgbench-')) || self.databases.all(d, d.engine == 'postgres')",message="workload.steps: the pgbench steps run against PostgreSQL only: every databases[].engine must be postgres"
// +kubebuilder:validation:XValidation:rule="!has(self.regression) || has(self.suite) || (has(self.regression.against) && self.regression.against == 'Baseline')",message="regression: needs suite, whose earlier runs it compares against (or against: Baseline, the run's own baseline)"
// +kubebuilder:validation:XValidation:rule="!has(self.workload) || !has(self.workload.adaptive) || !has(self.workload.adaptive.betweenRunCVFromSuite) || !self.workload.adaptive.betweenRunCVFromSuite || has(self.suite)",message="workload.adaptive.betweenRunCVFromSuite: needs suite, whose history the noise comes from"
// +kubebuilder:validation:XValidation:rule="self.placement.qosClass != 'Guaranteed' || self.databases.all(d, has(d.external) || has(d.template) || has(d.resources) && has(d.resources.limits) && 'cpu' in d.resources.limits && 'memory' in d.resources.limits && (type(d.resources.limits.cpu) == int || d.resources.limits.cpu in ['1','2','3','4','5','6','7','8','10','12','16','20','24','32','40','48','64','96','128','192','256']))",message="placement.qosClass: Guaranteed needs databases[].resources.limits with a whole number of CPUs and a memory limit (for every database dbbench starts a server of; an external or templated one's server is not dbbench's)"
// +kubebuilder:validation:XValidation:rule="self.placement.qosClass != 'Guaranteed' || !has(self.client.resources) || !has(self.client.resources.limits) || !('cpu' in self.client.resources.limits) || type(self.client.resources.limits.cpu) == int || self.client.resources.limits.cpu in ['1','2','3','4','5','6','7','8','10','12','16','20','24','32','40','48','64','96','128','192','256']",message="client.resources.limits.cpu: Guaranteed QoS needs a whole number of CPUs"
type BenchmarkRunSpec struct {
	// suite names the regression suite this run belongs to; runs of one suite
	// form a history that reports and change-point detection compare.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Suite string `json:"suite,omitempty"`

	// databases lists the servers under test. Every database contributes
	// versions × configs × workload.repeats cells (with workload.precision,
	// up to versions × configs × maxRepeats).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Databases []DatabaseSpec `json:"databases"`

	// workload says which sysbench steps run in each cell, on how much data,
	// for how long and at which client concurrencies.
	// +kubebuilder:default={}
	// +optional
	Workload WorkloadSpec `json:"workload"`

	// client configures the client pod that runs the dbbench agent.
	// +kubebuilder:default={}
	// +optional
	Client ClientSpec `json:"client"`

	// placement says where database and client pods run, and how isolated
	// they are from each other and from other cells.
	// +kubebuilder:default={}
	// +optional
	Placement PlacementSpec `json:"placement"`

	// baseline is the cell that reports compare against, and whose
	// combination regression.against Baseline judges the others against.
	// Defaults to the first version of the first database with its first
	// config variant.
	// +optional
	Baseline *BaselineSpec `json:"baseline,omitempty"`

	// regression judges the finished run against the history of its suite
	// and sets the Regressed condition (for kubectl wait, Argo CD health and
	// alerts). It needs suite.
	// +optional
	Regression *RegressionSpec `json:"regression,omitempty"`

	// output says where results go besides the per-cell results ConfigMaps.
	// +kubebuilder:default={}
	// +optional
	Output OutputSpec `json:"output"`

	// timeouts bound how long a cell may take before the attempt counts as
	// an infrastructure failure.
	// +kubebuilder:default={}
	// +optional
	Timeouts TimeoutsSpec `json:"timeouts"`

	// retry is the budget for retrying cells that failed because of the
	// infrastructure (pod evicted, node lost, image pull, client OOM, server
	// not ready in time). Benchmark failures are never retried.
	// +kubebuilder:default={}
	// +optional
	Retry RetrySpec `json:"retry"`

	// preflight checks, before the first cell, that every (database,
	// version, config variant) pair starts and runs with its settings, so a
	// bad variant fails the run at once rather than when its cell comes up.
	// +kubebuilder:default={}
	// +optional
	Preflight PreflightSpec `json:"preflight"`

	// goal is the precision the run is designed for: a slowdown to find
	// with a power under the run's verdict (regression's rule, magnitude
	// and level; the defaults without it), or a half-width of every
	// compared ratio's interval. Before the first cell the controller
	// predicts what the run's design (its step lengths and repeats)
	// reaches, from the suite's measured noise (kubectl dbbench noise) or
	// the defaults, and records it in status.plan with the cheapest design
	// that reaches the goal; with onOutOfReach: Fail (the default) a
	// design that falls short fails the run at once (reason GoalOutOfReach)
	// instead of spending its cell-hours. After the last cell status.plan
	// says whether the precision achieved met the goal. kubectl dbbench
	// plan --for shows the same prediction before applying.
	// docs/noise.md, "Planning a run".
	// +optional
	Goal *GoalSpec `json:"goal,omitempty"`
}

// GoalSpec is the precision a run is designed for.
// +kubebuilder:validation:XValidation:rule="has(self.detectPercent) != has(self.halfWidthPercent)",message="goal: set detectPercent or halfWidthPercent, one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.detectPercent) || (type(self.detectPercent) == int ? (self.detectPercent > 0 && self.detectPercent < 100) : (self.detectPercent.matches('^[0-9]{1,2}([.][0-9]{1,6})?$') && double(self.detectPercent) > 0.0 && double(self.detectPercent) < 100.0))",message="detectPercent: must be a number above 0 and below 100, a whole number or a decimal string such as \"7.5\""
// +kubebuilder:validation:XValidation:rule="!has(self.halfWidthPercent) || (type(self.halfWidthPercent) == int ? (self.halfWidthPercent > 0 && self.halfWidthPercent <= 100) : (self.halfWidthPercent.matches('^[0-9]{1,3}([.][0-9]{1,6})?$') && double(self.halfWidthPercent) > 0.0 && double(self.halfWidthPercent) <= 100.0))",message="halfWidthPercent: must be a number above 0 and at most 100, a whole number or a decimal string such as \"2.5\""
// +kubebuilder:validation:XValidation:rule="!has(self.powerPercent) || has(self.detectPercent)",message="powerPercent: only with detectPercent"
type GoalSpec struct {
	// detectPercent is the true slowdown, in percent, the run must find
	// with powerPercent probability. A whole number or a decimal string.
	// +kubebuilder:validation:XIntOrString
	// +optional
	DetectPercent *intstr.IntOrString `json:"detectPercent,omitempty"`

	// powerPercent is the probability, in percent, of finding a
	// detectPercent slowdown (default 90).
	// +kubebuilder:validation:Minimum=51
	// +kubebuilder:validation:Maximum=99
	// +optional
	PowerPercent int32 `json:"powerPercent,omitempty"`

	// halfWidthPercent asks every compared ratio's 95 % interval to lie
	// within ±this percent of it (each combination against the baseline,
	// per step and thread count). A whole number or a decimal string.
	// +kubebuilder:validation:XIntOrString
	// +optional
	HalfWidthPercent *intstr.IntOrString `json:"halfWidthPercent,omitempty"`

	// onOutOfReach is what happens when the design is predicted to fall
	// short of the goal: Fail (the default) ends the run before its first
	// cell with reason GoalOutOfReach and the cheapest design that would
	// reach it in status.plan; Run runs it anyway, status.plan saying so.
	// +kubebuilder:validation:Enum=Fail;Run
	// +kubebuilder:default=Fail
	// +optional
	OnOutOfReach GoalAction `json:"onOutOfReach,omitempty"`
}

// GoalAction is what a run does with a design predicted to fall short.
type GoalAction string

const (
	// GoalFail fails the run before its first cell.
	GoalFail GoalAction = "Fail"
	// GoalRun runs it anyway.
	GoalRun GoalAction = "Run"
)

// PreflightSpec configures the check a run makes before its first cell.
type PreflightSpec struct {
	// enabled runs the pre-flight (the default): before the first cell,
	// each (database, version, config variant) pair starts a server once,
	// as its cells would but without loading data or running steps, and the
	// agent checks that the server answers and runs with every setting of
	// the variant; then those pods go. Pairs start in parallel up to
	// placement.maxParallelCells. If any pair fails, the run ends Failed
	// with the condition PreflightPassed=False naming every failing pair and
	// the server's error lines, and no cell starts. It costs one server
	// start per pair; a run of a single pair skips it, since its first cell
	// makes the same checks before its load, and so does a run whose cells
	// all start at once (no more cells than placement.maxParallelCells),
	// where a bad pair then fails its own cells while the others run.
	// false starts the cells at once.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// DatabaseSpec is one database engine with its versions and config variants.
// The config-variant rules below (printed by hack/config-rules.py) refuse text
// the server would ignore or reject: options before any [section] for MySQL
// and MariaDB, sections no server reads, [sections] in postgresql.conf, lines
// that are not name=value. The message names the variant and the line.
// +kubebuilder:validation:XValidation:rule="has(self.external) != has(self.versions)",message="external: give either external (a database dbbench does not start) or versions, not both and not neither"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || (!has(self.image) && !has(self.configs) && !has(self.args) && !has(self.env) && (!has(self.storage) || !has(self.storage.volumeClaim)) && (!has(self.resources) || (!has(self.resources.limits) && !has(self.resources.requests))))",message="external: image, configs, args, env, storage.volumeClaim and resources describe a server dbbench starts; an external target's server is not dbbench's to configure"
// +kubebuilder:validation:XValidation:rule="!(has(self.external) && has(self.template))",message="template: give either external (a server that runs already) or template (an object dbbench creates per cell), not both"
// +kubebuilder:validation:XValidation:rule="!has(self.template) || (!has(self.image) && !has(self.configs) && !has(self.args) && !has(self.env) && (!has(self.storage) || !has(self.storage.volumeClaim)) && (!has(self.resources) || (!has(self.resources.limits) && !has(self.resources.requests))))",message="template: image, configs, args, env, storage.volumeClaim and resources describe a server dbbench starts; a templated object's server is its operator's to configure (in template.object)"
// +kubebuilder:validation:XValidation:rule="!has(self.versions) || size(self.versions) == 1 || !has(self.image) || self.image.contains('{version}')",message="image: must contain {version} when several versions are listed, or every cell would run the same image"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[0].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[1].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[2].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[3].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[4].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[5].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[6].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && !self.configs[7].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-][^\\r\\n]*') + '\" sets an option before any [section] header; the server reads options only under a section such as [mysqld]'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql','mariadb']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#]'))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.-]+[ \\t]+[^ \\t\\r\\n=#][^\\r\\n]*') + '\" is not an option line: write name or name=value, not a space-separated value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[0].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[0].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[1].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[1].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[2].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[2].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[3].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[3].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[4].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[4].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[5].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[5].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[6].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[6].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mysql']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[7].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[7].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[0].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[0].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[1].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[1].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[2].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[2].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[3].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[3].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[4].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[4].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[5].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[5].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[6].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[6].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['mariadb']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.-]') && self.configs[7].inline.matches(r'(?m)^[ \\t]*\\[') && !self.configs[7].inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$'))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r'(?m)^[ \\t]*\\['))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r'(?m)^[ \\t]*\\[[^\\r\\n]*') + '\" is a [section] header, which postgresql.conf does not have: write name = value lines'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$'))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r'(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?(#.*)?\\r?$') + '\" sets no value: write name = value'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 0 || !has(self.configs[0].inline) || !(self.configs[0].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[0].inline: line \"' + self.configs[0].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 1 || !has(self.configs[1].inline) || !(self.configs[1].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[1].inline: line \"' + self.configs[1].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 2 || !has(self.configs[2].inline) || !(self.configs[2].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[2].inline: line \"' + self.configs[2].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 3 || !has(self.configs[3].inline) || !(self.configs[3].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[3].inline: line \"' + self.configs[3].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 4 || !has(self.configs[4].inline) || !(self.configs[4].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[4].inline: line \"' + self.configs[4].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 5 || !has(self.configs[5].inline) || !(self.configs[5].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[5].inline: line \"' + self.configs[5].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 6 || !has(self.configs[6].inline) || !(self.configs[6].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[6].inline: line \"' + self.configs[6].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!(self.engine in ['postgres']) || !has(self.configs) || size(self.configs) <= 7 || !has(self.configs[7].inline) || !(self.configs[7].inline.matches(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\"))",messageExpression="'configs[7].inline: line \"' + self.configs[7].inline.find(r\"(?m)^[ \\t]*[A-Za-z_][A-Za-z0-9_.$]*[ \\t]*(=[ \\t]*)?'([^'\\\\\\n]|'{2}|\\\\.)*$\") + '\" has a quoted value that is not closed on its line'"
// +kubebuilder:validation:XValidation:rule="!has(self.configs) || !self.configs.exists(c, has(c.cpuScalePercent)) || (has(self.resources) && has(self.resources.limits) && 'cpu' in self.resources.limits)",message="configs[].cpuScalePercent: scales resources.limits.cpu, which is not set"
type DatabaseSpec struct {
	// name identifies the database in cell names and reports.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// engine is the database engine: mysql, mariadb or postgres.
	Engine Engine `json:"engine"`

	// versions are the versions to compare, in report order. Each becomes
	// the {version} of the image template. Required unless external is set
	// (an external target's version is what its server reports).
	// +listType=set
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=40
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]*$`
	Versions []string `json:"versions,omitempty"`

	// external is a database dbbench does not start: each cell's client
	// connects to it, loads its tables into a database of its own
	// (dbbench_<run>_<cell>), runs the steps and drops that database. The
	// fresh-server method's guarantees do not hold there (docs/design.md,
	// "External targets"); the results' provenance says so.
	// +optional
	External *ExternalDatabase `json:"external,omitempty"`

	// template is an object (any namespaced kind, typically another
	// operator's database resource) that dbbench creates per cell with
	// the cell's {version}, waits for until its readyCondition is True,
	// benchmarks like an external target and deletes when the cell ends.
	// +optional
	Template *DatabaseTemplate `json:"template,omitempty"`

	// image is the image template; {version} is replaced by each version.
	// Defaults to the official image of the engine: mysql:{version},
	// mariadb:{version} or postgres:{version}. Images must honour the
	// official images' contract (credentials from environment variables,
	// config drop-in directory, data directory, standard port).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Image string `json:"image,omitempty"`

	// imagePullPolicy of the database container.
	// +kubebuilder:default=IfNotPresent
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// configs are named server configuration variants (my.cnf drop-in or
	// postgresql.conf). Every version runs with every variant. When empty, one
	// variant named "default" runs the server with its defaults.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Configs []ConfigVariant `json:"configs,omitempty"`

	// resources of the database container. With placement.qosClass
	// Guaranteed, limits are required and requests are set equal to them.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// storage holds the data directory: an emptyDir by default, or a
	// PersistentVolumeClaim created per cell.
	// +kubebuilder:default={}
	// +optional
	Storage StorageSpec `json:"storage"`

	// args are extra arguments for the server process.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Args []string `json:"args,omitempty"`

	// env are extra environment variables for the database container.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// ExternalDatabase is the endpoint and credentials of a database server that
// something other than dbbench runs.
type ExternalDatabase struct {
	// host is the server's address as the client pod resolves it: a
	// Service name in the run's namespace, <service>.<namespace> for
	// another namespace, or any DNS name or IP.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Host string `json:"host"`

	// port of the server; the engine's standard port (3306, 5432) when
	// unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// database is an existing database the client connects to first, to
	// create and later drop its own (for PostgreSQL "postgres" when unset;
	// for MySQL and MariaDB none is needed). dbbench never writes to it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Database string `json:"database,omitempty"`

	// credentialsSecret names a Secret in the run's namespace with the
	// account's user and password. The account needs the right to create
	// and drop databases (CREATE/DROP on dbbench_* for MySQL and MariaDB,
	// CREATEDB for PostgreSQL).
	CredentialsSecret CredentialsSecretRef `json:"credentialsSecret"`
}

// CredentialsSecretRef is a Secret with a user and a password key.
type CredentialsSecretRef struct {
	// name of the Secret in the run's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// userKey is the key holding the user name.
	// +kubebuilder:default=username
	// +optional
	UserKey string `json:"userKey,omitempty"`

	// passwordKey is the key holding the password.
	// +kubebuilder:default=password
	// +optional
	PasswordKey string `json:"passwordKey,omitempty"`
}

// ConfigVariant is a named server configuration: inline text or a key of a
// ConfigMap in the run's namespace. An empty variant means server defaults.
// +kubebuilder:validation:XValidation:rule="!(has(self.inline) && has(self.configMapKeyRef))",message="configs[]: set at most one of inline and configMapKeyRef"
// +kubebuilder:validation:XValidation:rule="!has(self.inline) || !self.inline.matches(r'^([ \\t\\r]*([#;][^\\n]*)?\\n)*[ \\t]*[^ \\t\\r\\n#;!\\[](?s:.*)\\n[ \\t]*\\[')",messageExpression="'line \"' + self.inline.find(r'(?m)^[ \\t]*[^ \\t\\r\\n#;!\\[][^\\r\\n]*') + '\" sets an option before the first [section] header, where the server does not read it'",fieldPath=".inline"
// +kubebuilder:validation:XValidation:rule="!has(self.inline) || !self.inline.matches(r'(?m)^[ \\t]*[A-Za-z0-9_.$-]*[^A-Za-z0-9_.$\\- \\t\\r\\n=#;!\\[]')",messageExpression="'line \"' + self.inline.find(r'(?m)^[ \\t]*[A-Za-z0-9_.$-]*[^A-Za-z0-9_.$\\- \\t\\r\\n=#;!\\[][^\\r\\n]*') + '\" is not a setting: write name = value (no colon; names are letters, digits, _ . -)'",fieldPath=".inline"
// +kubebuilder:validation:XValidation:rule="!has(self.inline) || !self.inline.matches(r'(?m)^[ \\t]*\\[([^\\]\\n]*$|[^\\]\\n]*\\][ \\t]*[^ \\t\\r\\n#;])')",messageExpression="'line \"' + self.inline.find(r'(?m)^[ \\t]*\\[([^\\]\\n]*$|[^\\]\\n]*\\][ \\t]*[^ \\t\\r\\n#;])[^\\r\\n]*') + '\" is not a section header: write [name] alone on its line'",fieldPath=".inline"
type ConfigVariant struct {
	// name identifies the variant in cell names and reports.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// inline is the configuration text: a my.cnf drop-in for MySQL and
	// MariaDB (with its [mysqld] section), or postgresql.conf lines. At most
	// 16 KiB, which keeps the apply-time checks of the text within the API
	// server's cost budget; longer text goes in a ConfigMap (configMapKeyRef),
	// which the agent still verifies against the server.
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	Inline *string `json:"inline,omitempty"`

	// configMapKeyRef takes the configuration text from a ConfigMap key in
	// the run's namespace. It is copied into the cell when the cell starts.
	// +optional
	ConfigMapKeyRef *corev1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty"`

	// cpuScalePercent gives this variant's database container a CPU limit
	// (the CFS quota) of this percentage of the database's
	// resources.limits.cpu, which must be set: 90 runs the server with 10 %
	// less CPU time than a variant without it. It is a calibrated slowdown
	// the engine cannot see (its settings and configuration text are
	// unchanged), for checking that a regression suite detects a known
	// slowdown. It only slows a server kept CPU-bound: give the workload
	// enough client threads to saturate the limit, or the quota costs
	// nothing. Unset means the limit as given.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=100
	// +optional
	CPUScalePercent *int32 `json:"cpuScalePercent,omitempty"`
}

// StorageSpec selects the volume for the data directory.
// +kubebuilder:validation:XValidation:rule="!(has(self.emptyDir) && has(self.volumeClaim))",message="storage: set at most one of emptyDir and volumeClaim"
type StorageSpec struct {
	// emptyDir keeps data on the node's ephemeral storage (the default),
	// optionally in memory (medium: Memory).
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`

	// volumeClaim creates a PersistentVolumeClaim per cell attempt.
	// +optional
	VolumeClaim *VolumeClaimSpec `json:"volumeClaim,omitempty"`

	// log puts the redo log (MariaDB/MySQL innodb_log_group_home_dir) or
	// the WAL (PostgreSQL initdb --waldir) on a volume of its own, so the
	// results report I/O per operation for the log and the data apart.
	// Unset keeps the log in the data directory. log: {} is an emptyDir.
	// +optional
	Log *LogVolumeSpec `json:"log,omitempty"`
}

// LogVolumeSpec selects the volume for the redo log or WAL.
// +kubebuilder:validation:XValidation:rule="!(has(self.emptyDir) && has(self.volumeClaim))",message="storage.log: set at most one of emptyDir and volumeClaim"
type LogVolumeSpec struct {
	// emptyDir keeps the log on the node's ephemeral storage (the default).
	// On most nodes that is the same disk as an emptyDir data directory:
	// the results then flag the two volumes as sharing a device.
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`

	// volumeClaim creates a second PersistentVolumeClaim per cell attempt
	// for the log, e.g. of a storage class on another disk.
	// +optional
	VolumeClaim *VolumeClaimSpec `json:"volumeClaim,omitempty"`
}

// VolumeClaimSpec is the per-cell PersistentVolumeClaim.
type VolumeClaimSpec struct {
	// storageClassName of the claim; the cluster default when empty.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// size of the claim.
	Size resource.Quantity `json:"size"`
}

// StepSet names a predefined list of steps.
// +kubebuilder:validation:Enum=standard;extended
type StepSet string

const (
	// StepSetStandard is the 32 reported microbenchmark steps in order.
	StepSetStandard StepSet = "standard"
	// StepSetExtended is the 42-step variant with `.pre` read steps first.
	StepSetExtended StepSet = "extended"
)

// WorkloadSpec is what each cell runs.
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || self.steps.all(s, s in ['delete','hot-points','insert','point-query','point-query.pre','points-covered-pk','points-covered-pk.pre','points-covered-si','points-covered-si.pre','points-notcovered-pk','points-notcovered-pk.pre','points-notcovered-si','points-notcovered-si.pre','random-points_range=10','random-points_range=100','random-points_range=100.pre','random-points_range=1000','range-covered-pk','range-covered-pk.pre','range-covered-si','range-covered-si.pre','range-notcovered-pk','range-notcovered-pk.pre','range-notcovered-si','range-notcovered-si.pre','read-only-count','read-only-distinct','read-only-order','read-only-simple','read-only-sum','read-only_range=10','read-only_range=100','read-only_range=10000','read-write_range=10','read-write_range=100','scan','update-index','update-inlist','update-nonindex','update-one','update-zipf','write-only','tpcc','pgbench-tpcb','pgbench-select'] || (has(self.customSteps) && self.customSteps.exists(c, c.name == s)))",messageExpression="'steps: ' + self.steps.filter(s, !(s in ['delete','hot-points','insert','point-query','point-query.pre','points-covered-pk','points-covered-pk.pre','points-covered-si','points-covered-si.pre','points-notcovered-pk','points-notcovered-pk.pre','points-notcovered-si','points-notcovered-si.pre','random-points_range=10','random-points_range=100','random-points_range=100.pre','random-points_range=1000','range-covered-pk','range-covered-pk.pre','range-covered-si','range-covered-si.pre','range-notcovered-pk','range-notcovered-pk.pre','range-notcovered-si','range-notcovered-si.pre','read-only-count','read-only-distinct','read-only-order','read-only-simple','read-only-sum','read-only_range=10','read-only_range=100','read-only_range=10000','read-write_range=10','read-write_range=100','scan','update-index','update-inlist','update-nonindex','update-one','update-zipf','write-only','tpcc','pgbench-tpcb','pgbench-select']) && !(has(self.customSteps) && self.customSteps.exists(c, c.name == s)))[0] + ' is neither a catalog step, tpcc, pgbench-tpcb, pgbench-select, nor the name of a customSteps entry'"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || !has(self.repeats) || self.repeats == 1",message="repeats: must be 1 (or unset) with precision, which decides the number of repeats itself (precision.minRepeats to precision.maxRepeats)"
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || !('tpcc' in self.steps) || has(self.tpcc)",message="tpcc: steps lists tpcc, so workload.tpcc must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.fixedRate) || !has(self.steps) || !self.steps.exists(s, s.startsWith('pgbench-')) || (has(self.fixedRate.steps) && !self.fixedRate.steps.exists(s, s.startsWith('pgbench-')))",message="fixedRate: the pgbench steps have no fixed-rate runs; list fixedRate.steps without them"
// +kubebuilder:validation:XValidation:rule="!has(self.warmupSeconds) || ((!has(self.readSeconds) || self.warmupSeconds < self.readSeconds) && (!has(self.writeSeconds) || self.warmupSeconds < self.writeSeconds))",message="warmupSeconds: must be shorter than readSeconds and writeSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.fixedRate) || !has(self.fixedRate.steps) || self.fixedRate.steps.all(s, (has(self.steps) ? s in self.steps : s in ['delete','hot-points','insert','point-query','point-query.pre','points-covered-pk','points-covered-pk.pre','points-covered-si','points-covered-si.pre','points-notcovered-pk','points-notcovered-pk.pre','points-notcovered-si','points-notcovered-si.pre','random-points_range=10','random-points_range=100','random-points_range=100.pre','random-points_range=1000','range-covered-pk','range-covered-pk.pre','range-covered-si','range-covered-si.pre','range-notcovered-pk','range-notcovered-pk.pre','range-notcovered-si','range-notcovered-si.pre','read-only-count','read-only-distinct','read-only-order','read-only-simple','read-only-sum','read-only_range=10','read-only_range=100','read-only_range=10000','read-write_range=10','read-write_range=100','scan','update-index','update-inlist','update-nonindex','update-one','update-zipf','write-only'] && (!s.endsWith('.pre') || (has(self.stepSet) && self.stepSet == 'extended'))))",messageExpression="'fixedRate.steps: ' + self.fixedRate.steps.filter(s, !(has(self.steps) ? s in self.steps : s in ['delete','hot-points','insert','point-query','point-query.pre','points-covered-pk','points-covered-pk.pre','points-covered-si','points-covered-si.pre','points-notcovered-pk','points-notcovered-pk.pre','points-notcovered-si','points-notcovered-si.pre','random-points_range=10','random-points_range=100','random-points_range=100.pre','random-points_range=1000','range-covered-pk','range-covered-pk.pre','range-covered-si','range-covered-si.pre','range-notcovered-pk','range-notcovered-pk.pre','range-notcovered-si','range-notcovered-si.pre','read-only-count','read-only-distinct','read-only-order','read-only-simple','read-only-sum','read-only_range=10','read-only_range=100','read-only_range=10000','read-write_range=10','read-write_range=100','scan','update-index','update-inlist','update-nonindex','update-one','update-zipf','write-only'] && (!s.endsWith('.pre') || (has(self.stepSet) && self.stepSet == 'extended'))))[0] + ' is not one of workload.steps (or of the stepSet when steps is empty)'"
// +kubebuilder:validation:XValidation:rule="!has(self.profile) || !has(self.steps) || self.profile.steps.all(s, s in self.steps)",message="profile.steps: every step must be one of workload.steps"
// +kubebuilder:validation:XValidation:rule="!has(self.adaptive) || !has(self.adaptive.minSeconds) || ((!has(self.readSeconds) || self.adaptive.minSeconds <= self.readSeconds) && (!has(self.writeSeconds) || self.adaptive.minSeconds <= self.writeSeconds))",message="adaptive.minSeconds: must not exceed readSeconds and writeSeconds (the maximum)"
type WorkloadSpec struct {
	// stepSet selects a predefined step list when steps is empty: standard
	// (the 32 reported steps) or extended (the 42-step variant, which also
	// runs `.pre` copies of 10 read steps before the writes).
	// +kubebuilder:default=standard
	// +optional
	StepSet StepSet `json:"stepSet,omitempty"`

	// steps, when set, replaces stepSet: catalog step names, "tpcc", or names
	// of customSteps, run in the order given (the catalog's order is the
	// methodology's; keep it unless you know why not).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +optional
	Steps []string `json:"steps,omitempty"`

	// tables is the number of sysbench tables (sbtest1..N).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// tableSize is the number of rows per table.
	// +kubebuilder:default=1000000
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=10000000000
	// +optional
	TableSize int64 `json:"tableSize,omitempty"`

	// readSeconds is how long each read-only step is measured, after its
	// warm-up.
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	ReadSeconds int32 `json:"readSeconds,omitempty"`

	// writeSeconds is how long each write step is measured, after its
	// warm-up.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	WriteSeconds int32 `json:"writeSeconds,omitempty"`

	// warmupSeconds run at the start of every step, before its measured
	// time, and are dropped from the per-second series before steady-state
	// throughput is computed.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	// +optional
	WarmupSeconds *int32 `json:"warmupSeconds,omitempty"`

	// threads are the client concurrencies; every step runs once per value,
	// in this order, inside the same cell (a sweep, for scale-up reports).
	// +kubebuilder:default={1}
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=4096
	// +optional
	Threads []int32 `json:"threads,omitempty"`

	// preparedStatements runs the steps with server-side prepared statements.
	// +kubebuilder:default=true
	// +optional
	PreparedStatements *bool `json:"preparedStatements,omitempty"`

	// repeats runs every (database, version, config) combination this many
	// times, each as its own cell, so reports can show the spread. Leave it
	// at 1 with precision, which decides the number of repeats itself.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Repeats int32 `json:"repeats,omitempty"`

	// precision repeats the matrix until its comparisons are precise enough
	// (adaptive repeats), instead of a fixed number of repeats: the
	// controller runs every combination in rounds, reversing the cell order
	// each round (A B C, C B A, ...) so that a drift of the environment
	// cancels, and after each round from minRepeats on it stops once the
	// 95 % interval of every compared ratio (each combination against the
	// baseline, per step and thread count) lies within ±targetPercent % of
	// the ratio, or after maxRepeats rounds. status.precision shows the
	// rounds and the precision reached; docs/noise.md the rule and its
	// small bias.
	// +optional
	Precision *PrecisionSpec `json:"precision,omitempty"`

	// flushWaitSeconds caps the wait for the engine's flush after the load;
	// 0 uses the reference method's min(1200, 60 + rows/1e6) seconds.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=7200
	// +optional
	FlushWaitSeconds int32 `json:"flushWaitSeconds,omitempty"`

	// pgbench configures the pgbench steps (pgbench-tpcb, pgbench-select:
	// PostgreSQL's pgbench and its built-in TPC-B-like and select-only
	// scripts, on pgbench's own tables). They run their readSeconds or
	// writeSeconds whatever workload.adaptive says.
	// +optional
	Pgbench *PgbenchSpec `json:"pgbench,omitempty"`

	// tpcc configures the TPC-C step; it runs where steps lists "tpcc".
	// +optional
	TPCC *TPCCSpec `json:"tpcc,omitempty"`

	// customSteps are user Lua scripts for sysbench, run where steps lists
	// their names.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	CustomSteps []CustomStep `json:"customSteps,omitempty"`

	// fixedRate adds fixed-rate (open-loop) runs: after each step's
	// closed-loop run at a thread count, the same step at the same thread
	// count with sysbench --rate, which generates transactions at the target
	// rate whatever the server does and times each from when it was
	// generated, so response time is compared at a known load (a closed
	// loop only slows its clients down and hides the queueing). Each run is
	// its own result step, "<step>@<fraction>peak" or "<step>@<rate>tps".
	// +optional
	FixedRate *FixedRateSpec `json:"fixedRate,omitempty"`

	// counters tunes the engine counters the agent reads around every
	// measured run and records per operation with the results (SHOW GLOBAL
	// STATUS on MySQL and MariaDB; pg_stat_database, pg_stat_wal,
	// pg_stat_bgwriter, pg_stat_checkpointer and pg_stat_io on PostgreSQL,
	// as the server's version has them). A default set is always read.
	// +optional
	Counters *CountersSpec `json:"counters,omitempty"`

	// profile asks for on-CPU profiles of the database server from an
	// unmeasured run of the chosen steps after the measured ones (needs a
	// privileged collector sidecar; see ProfileSpec). Off by default.
	// +optional
	Profile *ProfileSpec `json:"profile,omitempty"`

	// adaptive makes every closed-loop step end once more seconds would no
	// longer improve its value meaningfully: after the warm-up and at least
	// minSeconds, when its mean's within-run 95 % interval is at most half
	// the between-run noise's (betweenRunCVPercent), or at most
	// ±targetHalfWidthPercent %; at the latest after readSeconds,
	// writeSeconds, a custom step's or TPC-C's durationSeconds, which
	// become the maximum. Each result says what the step ran and why it
	// stopped (stopReason). Unset (the default) runs the reference
	// method's fixed durations. Fixed-rate runs, the profiled pass and the
	// load's warm-up step keep their configured time. docs/agent.md,
	// "Adaptive step duration".
	// +optional
	Adaptive *AdaptiveSpec `json:"adaptive,omitempty"`
}

// AdaptiveSpec is the adaptive step duration's rule.
// +kubebuilder:validation:XValidation:rule="has(self.betweenRunCVPercent) || has(self.targetHalfWidthPercent)",message="adaptive: set betweenRunCVPercent, targetHalfWidthPercent or both"
// +kubebuilder:validation:XValidation:rule="!has(self.betweenRunCVPercent) || (type(self.betweenRunCVPercent) == int ? (self.betweenRunCVPercent > 0 && self.betweenRunCVPercent <= 100) : (self.betweenRunCVPercent.matches('^[0-9]{1,3}([.][0-9]{1,6})?$') && double(self.betweenRunCVPercent) > 0.0 && double(self.betweenRunCVPercent) <= 100.0))",message="betweenRunCVPercent: must be a number above 0 and at most 100, a whole number or a decimal string such as \"1.5\""
// +kubebuilder:validation:XValidation:rule="!has(self.targetHalfWidthPercent) || (type(self.targetHalfWidthPercent) == int ? (self.targetHalfWidthPercent > 0 && self.targetHalfWidthPercent <= 100) : (self.targetHalfWidthPercent.matches('^[0-9]{1,3}([.][0-9]{1,6})?$') && double(self.targetHalfWidthPercent) > 0.0 && double(self.targetHalfWidthPercent) <= 100.0))",message="targetHalfWidthPercent: must be a number above 0 and at most 100, a whole number or a decimal string such as \"0.5\""
type AdaptiveSpec struct {
	// minSeconds steady seconds (after the warm-up) run before a step may
	// stop; at most readSeconds and writeSeconds.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	MinSeconds int32 `json:"minSeconds,omitempty"`

	// betweenRunCVPercent is the between-run noise of a step's value, a
	// coefficient of variation in percent (the run level of `kubectl
	// dbbench noise`): a step stops, Converged, once its mean's within-run
	// 95 % half-width is at most 0.5 × 1.96 × this, when the within-run
	// error adds at most a quarter to a run's variance and more seconds
	// barely change it. A whole number or a decimal string such as "1.5".
	// +kubebuilder:validation:XIntOrString
	// +optional
	BetweenRunCVPercent *intstr.IntOrString `json:"betweenRunCVPercent,omitempty"`

	// targetHalfWidthPercent stops a step, TargetReached, once its mean's
	// within-run 95 % half-width is at most this percent of it. A whole
	// number or a decimal string such as "0.5".
	// +kubebuilder:validation:XIntOrString
	// +optional
	TargetHalfWidthPercent *intstr.IntOrString `json:"targetHalfWidthPercent,omitempty"`

	// betweenRunCVFromSuite takes each (step, threads)'s between-run noise
	// from the suite's history instead: the run level of its variance
	// components (kubectl dbbench noise) where it rests on 4 df or more,
	// read once when the run starts and recorded in status.adaptive;
	// betweenRunCVPercent (or the target alone) where it has none. Needs
	// suite.
	// +optional
	BetweenRunCVFromSuite bool `json:"betweenRunCVFromSuite,omitempty"`
}

// PrecisionSpec is the precision target of adaptive repeats.
// +kubebuilder:validation:XValidation:rule="type(self.targetPercent) == int ? (self.targetPercent > 0 && self.targetPercent <= 100) : (self.targetPercent.matches('^[0-9]{1,3}([.][0-9]{1,6})?$') && double(self.targetPercent) > 0.0 && double(self.targetPercent) <= 100.0)",message="targetPercent: must be a number above 0 and at most 100, a whole number or a decimal string such as \"0.5\""
// +kubebuilder:validation:XValidation:rule="!has(self.minRepeats) || self.minRepeats <= self.maxRepeats",message="minRepeats: must not exceed maxRepeats"
type PrecisionSpec struct {
	// targetPercent is the precision to reach, in percent of each compared
	// ratio: 2 stops once every ratio's 95 % interval lies within ±2 % of
	// it. A whole number, or a decimal string such as "0.5". Intervals
	// shrink with the square root of the repeats: halving the target takes
	// about four times the rounds.
	// +kubebuilder:validation:XIntOrString
	TargetPercent intstr.IntOrString `json:"targetPercent"`

	// minRepeats rounds run before the target is checked (an interval needs
	// two runs per side; more make an early stop on a lucky round less
	// likely).
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=20
	// +optional
	MinRepeats int32 `json:"minRepeats,omitempty"`

	// maxRepeats bounds the rounds: the run stops after this many whether
	// or not the target was met (status.precision says which).
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=20
	MaxRepeats int32 `json:"maxRepeats"`
}

// CountersSpec adds engine counters to the default set.
type CountersSpec struct {
	// extra are counter names read besides the default set: SHOW GLOBAL
	// STATUS variable names on MySQL and MariaDB (case-insensitive, e.g.
	// Innodb_pages_written); on PostgreSQL view.column, e.g.
	// pg_stat_database.conflicts or pg_stat_wal.wal_buffers_full, and for
	// pg_stat_io view.backend_type.object.column with spaces as
	// underscores, summed over contexts, e.g.
	// pg_stat_io.autovacuum_worker.relation.hits. Only cumulative counters
	// make sense (a gauge that falls is recorded as decreased); a name the
	// server does not report is recorded as missing, and the run goes on.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z][A-Za-z0-9_.]*$`
	// +optional
	Extra []string `json:"extra,omitempty"`
}

// PgbenchSpec configures the pgbench steps.
type PgbenchSpec struct {
	// scale is pgbench -i's scaling factor: 100,000 accounts (about 16 MB)
	// per unit. 10 when unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Scale int32 `json:"scale,omitempty"`
}

// TPCCSpec configures the TPC-C step (the knobs of sysbench-tpcc).
type TPCCSpec struct {
	// warehouses per table set (sysbench-tpcc's --scale).
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Warehouses int32 `json:"warehouses,omitempty"`

	// tables is the number of table sets (sysbench-tpcc's --tables).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// durationSeconds is how long TPC-C runs per thread count.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=172800
	// +optional
	DurationSeconds int32 `json:"durationSeconds,omitempty"`

	// threads are TPC-C's client concurrencies; workload.threads when empty.
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=4096
	// +optional
	Threads []int32 `json:"threads,omitempty"`

	// useForeignKeys creates the schema with foreign keys.
	// +optional
	UseForeignKeys bool `json:"useForeignKeys,omitempty"`

	// isolation is the transaction isolation level: RR (repeatable read),
	// RC (read committed) or SER (serializable).
	// +kubebuilder:default=RR
	// +kubebuilder:validation:Enum=RR;RC;SER
	// +optional
	Isolation string `json:"isolation,omitempty"`
}

// CustomStep is a user-supplied sysbench Lua script.
// +kubebuilder:validation:XValidation:rule="!(self.name in ['tpcc','scan','insert','delete','point-query','write-only'])",message="customSteps[].name: must not shadow a catalog step name"
type CustomStep struct {
	// name is the step's name in steps and reports.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=48
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9_.=]*$`
	Name string `json:"name"`

	// script is the Lua script, from a ConfigMap key in the run's namespace.
	Script corev1.ConfigMapKeySelector `json:"script"`

	// durationSeconds is how long the step runs per thread count;
	// workload.writeSeconds when zero.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	DurationSeconds int32 `json:"durationSeconds,omitempty"`

	// args are extra sysbench options for the script.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Args []string `json:"args,omitempty"`
}

// ClientSpec configures the client pod that runs the dbbench agent.
type ClientSpec struct {
	// image of the dbbench agent; the operator's default when empty.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Image string `json:"image,omitempty"`

	// resources of the client container. With placement.qosClass
	// Guaranteed and no limits, the client gets 1 CPU and 1Gi.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ClientNodePolicy says whether the client shares the database's node.
// +kubebuilder:validation:Enum=SameNode;OtherNode;Any
type ClientNodePolicy string

const (
	// ClientSameNode runs the client on the database's node, as the
	// reference method does (node-wide CPU then includes the client).
	ClientSameNode ClientNodePolicy = "SameNode"
	// ClientOtherNode keeps the client off the database's node.
	ClientOtherNode ClientNodePolicy = "OtherNode"
	// ClientAnyNode lets the scheduler decide.
	ClientAnyNode ClientNodePolicy = "Any"
)

// BlockPolicy says whether a run's cells run in blocks.
// +kubebuilder:validation:Enum=None;Repeats
type BlockPolicy string

const (
	// BlocksNone places every cell on its own, wherever the scheduler puts
	// it.
	BlocksNone BlockPolicy = "None"
	// BlocksRepeats makes each repeat of the matrix a block: its cells run
	// one after another on one node, and different blocks side by side.
	BlocksRepeats BlockPolicy = "Repeats"
)

// QoSClass is the pods' Kubernetes QoS class.
// +kubebuilder:validation:Enum=Guaranteed;Burstable
type QoSClass string

const (
	QoSGuaranteed QoSClass = "Guaranteed"
	QoSBurstable  QoSClass = "Burstable"
)

// PlacementSpec says where pods run. Placement is enforced by the Kubernetes
// scheduler (node selectors, affinities, pod anti-affinity on dbbench labels),
// never by a lock of dbbench's own.
type PlacementSpec struct {
	// database is where database pods may run.
	// +optional
	Database PodPlacement `json:"database,omitempty"`

	// client is where client pods may run.
	// +optional
	Client PodPlacement `json:"client,omitempty"`

	// clientNode says whether the client runs on the database's node
	// (SameNode, the reference method's setup), never on it (OtherNode), or
	// wherever the scheduler puts it (Any).
	// +kubebuilder:default=SameNode
	// +optional
	ClientNode ClientNodePolicy `json:"clientNode,omitempty"`

	// exclusiveNodes keeps every node to at most one cell at a time, across
	// all BenchmarkRuns, so that no benchmark disturbs another: pods carry a
	// required anti-affinity against other cells' pods.
	// +kubebuilder:default=true
	// +optional
	ExclusiveNodes *bool `json:"exclusiveNodes,omitempty"`

	// qosClass Guaranteed gives database and client pods requests equal to
	// limits with whole CPUs (so the static CPU manager can pin them);
	// Burstable uses the resources as given.
	// +kubebuilder:default=Burstable
	// +optional
	QoSClass QoSClass `json:"qosClass,omitempty"`

	// maxParallelCells is how many cells may run at the same time.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxParallelCells int32 `json:"maxParallelCells,omitempty"`

	// blocks Repeats runs each repeat of the matrix as a block: the
	// block's cells (every database, version and config variant of that
	// repeat) run one after another on one node, the node the block's
	// first cell was scheduled on, in matrix order in odd repeats and
	// reversed in even ones; different blocks run side by side, up to
	// maxParallelCells, on the nodes the scheduler gives them (with
	// exclusiveNodes, different nodes). Reports then compare each cell with
	// the base cell of its own block, so a node's speed and the time of day
	// cancel instead of adding to the noise. None (the default) places
	// every cell on its own.
	// +kubebuilder:default=None
	// +optional
	Blocks BlockPolicy `json:"blocks,omitempty"`
}

// Blocked reports whether the run's cells run in blocks.
func (p PlacementSpec) Blocked() bool { return p.Blocks == BlocksRepeats }

// PodPlacement holds the scheduling constraints of one kind of pod.
type PodPlacement struct {
	// nodeSelector must match the node's labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// affinity adds scheduling constraints; dbbench merges its own pod
	// (anti-)affinity terms into it.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// tolerations let the pods run on tainted (for example dedicated) nodes.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// BaselineSpec names the cell that reports compare against, and that
// regression.against Baseline judges the run's other combinations against.
type BaselineSpec struct {
	// database is the name of an entry of spec.databases.
	Database string `json:"database"`

	// version is one of that database's versions; its first when empty.
	// +optional
	Version string `json:"version,omitempty"`

	// config is one of that database's config variants; its first when empty.
	// +optional
	Config string `json:"config,omitempty"`

	// repeat is the repeat number (1-based); 1 when zero.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Repeat int32 `json:"repeat,omitempty"`
}

// RegressionBaseline says what a run is judged against.
// +kubebuilder:validation:Enum=PreviousRun;Run;ChangePoints;Baseline
type RegressionBaseline string

const (
	// RegressAgainstPreviousRun compares with the suite's latest earlier
	// successful run.
	RegressAgainstPreviousRun RegressionBaseline = "PreviousRun"
	// RegressAgainstRun compares with the run named in regression.run.
	RegressAgainstRun RegressionBaseline = "Run"
	// RegressAgainstChangePoints runs change-point detection (E-divisive
	// means with a t-test, as Apache Otava does) over the suite's last
	// runs and reports slowdowns still in effect.
	RegressAgainstChangePoints RegressionBaseline = "ChangePoints"
	// RegressAgainstBaseline compares every other combination of the run
	// with the run's own baseline (spec.baseline), blocked cells paired by
	// block (placement.blocks Repeats): two builds run side by side, each
	// block on one node, judged without a suite's history.
	RegressAgainstBaseline RegressionBaseline = "Baseline"
)

// RegressionSpec configures the regression verdict.
// +kubebuilder:validation:XValidation:rule="self.against != 'Run' || has(self.run)",message="regression.run: must name a run when against is Run"
// +kubebuilder:validation:XValidation:rule="self.against != 'Baseline' || !has(self.bisect)",message="regression.bisect: not with against Baseline, whose two builds ran in this run: bisect between them with a BenchmarkBisection"
type RegressionSpec struct {
	// against is PreviousRun (the suite's latest earlier successful run),
	// Run (the run named in run), ChangePoints (detection over lastRuns)
	// or Baseline (every other combination of this run against its
	// spec.baseline, blocked cells paired by block; no suite needed).
	// +kubebuilder:default=PreviousRun
	// +optional
	Against RegressionBaseline `json:"against,omitempty"`

	// run names the run to compare against when against is Run.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Run string `json:"run,omitempty"`

	// lastRuns is how many of the suite's runs (this one included)
	// change-point detection looks at.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=1000
	// +optional
	LastRuns int32 `json:"lastRuns,omitempty"`

	// minMagnitudePercent: slowdowns smaller than this (per step and thread
	// count) are noise, not regressions.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MinMagnitudePercent int32 `json:"minMagnitudePercent,omitempty"`

	// magnitudeRule is how minMagnitudePercent enters the test against
	// PreviousRun and Run. Tested: the null hypothesis is "slower by at
	// most minMagnitudePercent", so a regressed pair is significantly
	// slower than that; a true slowdown of twice the magnitude is one
	// magnitude from the null and needs many repeats at a few per cent of
	// run-to-run noise. Estimated: the null hypothesis is "not slower"; a
	// pair regressed when it is significantly slower and its measured
	// slowdown (changePercent) is minMagnitudePercent or more, as Apache
	// Otava filters change points: about a third of the repeats for the
	// same power, an A/A pair still regressed at most maxPValue of the
	// time, but a true slowdown just under the magnitude is called
	// regressed up to half the time. See docs/noise.md.
	// +kubebuilder:default=Tested
	// +optional
	MagnitudeRule RegressionMagnitudeRule `json:"magnitudeRule,omitempty"`

	// maxPValue is the significance level, a decimal string in (0, 1).
	// Against PreviousRun and Run a (step, threads) regressed when its
	// one-sided test of "slower (or, for a latency in metrics, higher) by
	// more than minMagnitudePercent" (by magnitudeRule Tested; "slower",
	// with the measured change at least the magnitude, by Estimated),
	// adjusted for the run's many tests (correction), is below it. The test is between runs: Welch's on
	// per-repeat log QPS (or log latency) when both runs have
	// repeats (workload.repeats >= 2), else against the suite's noise floor
	// when it rests on 4 degrees of freedom or more, else (said in the
	// verdict) Welch's on the per-second samples. Against Baseline the same
	// tests compare two combinations of this run, first paired by block
	// when both ran in blocks (PairedBlocks: the t-test of the per-block
	// log ratios). Against ChangePoints it is the change point's t-test. Empty means 0.05 against a run and
	// 0.001 (Apache Otava's default) for change points.
	// +kubebuilder:validation:Pattern=`^0?\.[0-9]*[1-9][0-9]*$`
	// +kubebuilder:validation:MaxLength=12
	// +optional
	MaxPValue string `json:"maxPValue,omitempty"`

	// correction controls the error over the run's (step, threads) tests
	// against PreviousRun and Run: Holm (the default) keeps the chance of
	// any false "regressed" in a run at maxPValue; BenjaminiHochberg keeps
	// the expected share of false findings among the findings at
	// maxPValue, finding more of many real slowdowns.
	// +kubebuilder:default=Holm
	// +optional
	Correction RegressionCorrection `json:"correction,omitempty"`

	// metrics are what the verdict judges at every (cell, step, threads):
	// Throughput (steady QPS; a fall regresses), P95Latency and P99Latency
	// (whole-run response-time percentiles; lower is better, a rise
	// regresses). A latency regressed when it rose by more than
	// minMagnitudePercent, tested like throughput (on the log of the
	// percentile, between repeats, else against the suite's noise floor of
	// that percentile, else on the per-second p95 series, which p99 has
	// not), all metrics in one family for correction. Fixed-rate steps are
	// judged on latency only: their throughput is the rate they were given.
	// +kubebuilder:default={Throughput}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	// +optional
	Metrics []RegressionMetric `json:"metrics,omitempty"`

	// bisect makes a run that ends Regressed=True create a
	// BenchmarkBisection over the given candidates, named
	// <run>-bisect and owned by the run (status.regression.bisection names
	// it): good is the compared run's build of the regressed database,
	// bad this run's, the judged steps and threads those that regressed.
	// See docs/bisect.md.
	// +optional
	Bisect *RegressionBisect `json:"bisect,omitempty"`
}

// RegressionBisect says where a regressed run's bisection finds its
// candidates: a suite run's versions do not name the builds between the
// compared run and this one, so the user lists them, or lists every build
// in order (builds) and the bisection takes those between.
// +kubebuilder:validation:XValidation:rule="has(self.candidates) != has(self.builds)",message="regression.bisect: set exactly one of candidates and builds"
type RegressionBisect struct {
	// good overrides the good point: by default the compared run's build
	// of the regressed database (its image digest when its results
	// recorded one, else its version). Give it when that build cannot be
	// told from this run's (a moving tag whose digest was not recorded).
	// +optional
	Good *BisectionPoint `json:"good,omitempty"`

	// bad overrides the bad point: by default this run's build (its
	// image digest when recorded, else its version).
	// +optional
	Bad *BisectionPoint `json:"bad,omitempty"`

	// candidates are the builds between the compared run's and this
	// run's, in order (oldest first).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=62
	// +listType=atomic
	// +optional
	Candidates []BisectionPoint `json:"candidates,omitempty"`

	// builds are every build of the suite's database in order, oldest
	// first (a CI job appends each new one; a nightly suite's GitOps
	// repository keeps the list): the bisection's candidates are those
	// strictly between good and bad. Good and bad are found in it by
	// version, or for an image given by digest (repo@sha256:…) by the
	// digest the runs recorded; a verdict whose builds are not both in
	// the list creates no bisection and says so. Against ChangePoints,
	// good and bad are the builds of the runs around the change point
	// (status.regression.regressed[].lastBefore and since).
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Builds []BisectionPoint `json:"builds,omitempty"`

	// parallelism is the bisection's spec.parallelism.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	Parallelism int32 `json:"parallelism,omitempty"`

	// repeats is the bisection's spec.repeats.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Repeats int32 `json:"repeats,omitempty"`

	// maxCells is the bisection's spec.maxCells.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxCells int32 `json:"maxCells,omitempty"`

	// confidence is the bisection's spec.confidence.
	// +kubebuilder:validation:Pattern=`^0?\.[0-9]*[1-9][0-9]*$`
	// +kubebuilder:validation:MaxLength=12
	// +optional
	Confidence string `json:"confidence,omitempty"`

	// explain is the bisection's spec.explain.
	// +optional
	Explain BisectionExplainSpec `json:"explain,omitempty"`
}

// RegressionMetric is a figure the regression verdict judges.
// +kubebuilder:validation:Enum=Throughput;P95Latency;P99Latency
type RegressionMetric string

const (
	// MetricThroughput is the steady-state QPS: higher is better.
	MetricThroughput RegressionMetric = "Throughput"
	// MetricP95Latency is the 95th-percentile response time: lower is
	// better.
	MetricP95Latency RegressionMetric = "P95Latency"
	// MetricP99Latency is the 99th-percentile response time: lower is
	// better.
	MetricP99Latency RegressionMetric = "P99Latency"
)

// RegressionMagnitudeRule is how the verdict against a run uses
// minMagnitudePercent.
// +kubebuilder:validation:Enum=Tested;Estimated
type RegressionMagnitudeRule string

const (
	// MagnitudeTested tests "slower by more than the magnitude".
	MagnitudeTested RegressionMagnitudeRule = "Tested"
	// MagnitudeEstimated tests "slower" and asks the measured slowdown to
	// be at least the magnitude.
	MagnitudeEstimated RegressionMagnitudeRule = "Estimated"
)

// RegressionCorrection is a multiple-comparison procedure.
// +kubebuilder:validation:Enum=Holm;BenjaminiHochberg
type RegressionCorrection string

const (
	// CorrectionHolm controls the family-wise error rate.
	CorrectionHolm RegressionCorrection = "Holm"
	// CorrectionBenjaminiHochberg controls the false discovery rate.
	CorrectionBenjaminiHochberg RegressionCorrection = "BenjaminiHochberg"
)

// RegressionMethod is how a (step, threads) was tested against a run.
// +kubebuilder:validation:Enum=PairedBlocks;BetweenRuns;NoiseFloor;PerSecond;MagnitudeOnly
type RegressionMethod string

const (
	// MethodPairedBlocks (against Baseline) is the paired t-test of the
	// per-block log ratios of two blocked combinations.
	MethodPairedBlocks RegressionMethod = "PairedBlocks"
	// MethodBetweenRuns is Welch's test on per-repeat log QPS.
	MethodBetweenRuns RegressionMethod = "BetweenRuns"
	// MethodNoiseFloor tests one run per side against the suite's
	// run-to-run noise floor.
	MethodNoiseFloor RegressionMethod = "NoiseFloor"
	// MethodPerSecond is the fallback on the runs' per-second samples,
	// which over-calls differences between runs.
	MethodPerSecond RegressionMethod = "PerSecond"
	// MethodMagnitudeOnly counts a slowdown of minMagnitudePercent,
	// untested.
	MethodMagnitudeOnly RegressionMethod = "MagnitudeOnly"
)

// OutputSpec says where run results go.
// +kubebuilder:validation:XValidation:rule="!has(self.configMap) || !has(self.configMap.enabled) || self.configMap.enabled || has(self.s3)",message="output: enable configMap or configure s3, or the results would go nowhere"
type OutputSpec struct {
	// configMap collects the run's results in a ConfigMap named
	// <run>-results (a manifest and a per-step summary of every cell; the
	// full per-cell documents stay in the cells' results ConfigMaps).
	// +kubebuilder:default={}
	// +optional
	ConfigMap ConfigMapOutput `json:"configMap"`

	// s3 uploads full results documents, per-second series, provenance and
	// reports to an S3-compatible object store.
	// +optional
	S3 *S3Output `json:"s3,omitempty"`
}

// ConfigMapOutput configures the run-level results ConfigMap.
type ConfigMapOutput struct {
	// enabled writes the run-level results ConfigMap.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// S3Output is an S3-compatible object store target.
type S3Output struct {
	// endpoint is the store's URL, e.g. https://s3.eu-west-1.amazonaws.com
	// or http://minio.storage:9000.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://`
	Endpoint string `json:"endpoint"`

	// bucket receives the objects.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	Bucket string `json:"bucket"`

	// prefix is prepended to every key: <prefix>/<suite>/<run>/<cell>/...
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// region of the bucket, if the store needs one.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// credentialsSecret names a Secret in the run's namespace with the keys
	// accessKeyID and secretAccessKey. Credentials never go in the spec.
	CredentialsSecret corev1.LocalObjectReference `json:"credentialsSecret"`
}

// TimeoutsSpec bounds the phases of a cell attempt.
// +kubebuilder:validation:XValidation:rule="!has(self.databaseReady) || duration(self.databaseReady) >= duration('10s')",message="databaseReady: must be at least 10s"
// +kubebuilder:validation:XValidation:rule="!has(self.cell) || duration(self.cell) >= duration('1m')",message="cell: must be at least 1m"
type TimeoutsSpec struct {
	// databaseReady is how long the database pod may take to become ready
	// (image pull and initialisation included).
	// +kubebuilder:default="10m"
	// +optional
	DatabaseReady *metav1.Duration `json:"databaseReady,omitempty"`

	// cell bounds one attempt of a cell from its start. When empty it is
	// derived from the workload: twice the configured step time plus an
	// hour for loading.
	// +optional
	Cell *metav1.Duration `json:"cell,omitempty"`
}

// RetrySpec is the infrastructure-failure retry budget.
type RetrySpec struct {
	// maxAttemptsPerCell counts the first attempt too.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	MaxAttemptsPerCell int32 `json:"maxAttemptsPerCell,omitempty"`

	// maxRetriesPerRun caps the retries of all cells together.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxRetriesPerRun *int32 `json:"maxRetriesPerRun,omitempty"`
}

// RunPhase is the coarse state of a run.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type RunPhase string

const (
	RunPending   RunPhase = "Pending"
	RunRunning   RunPhase = "Running"
	RunSucceeded RunPhase = "Succeeded"
	RunFailed    RunPhase = "Failed"
)

// CellPhase is the state of a cell.
// +kubebuilder:validation:Enum=Pending;Starting;Running;Succeeded;Failed
type CellPhase string

const (
	// CellPending: not started (waiting for a parallel slot).
	CellPending CellPhase = "Pending"
	// CellStarting: the database pod is being scheduled or initialised.
	CellStarting CellPhase = "Starting"
	// CellRunning: the client is loading data or running steps.
	CellRunning CellPhase = "Running"
	// CellSucceeded: every step ran; results are in the result ConfigMap.
	CellSucceeded CellPhase = "Succeeded"
	// CellFailed: a benchmark error, or the retry budget ran out.
	CellFailed CellPhase = "Failed"
)

// BenchmarkRunStatus is the observed state of a run: a small summary and
// references to where the full results live.
type BenchmarkRunStatus struct {
	// observedGeneration is the generation the status describes: 0 (the
	// default) until the controller has written a status, so that kstatus
	// and Argo CD read a new object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Progressing, Succeeded, Failed, PreflightPassed,
	// Regressed and, with output.s3, ResultsUploaded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase summarises the conditions for printing.
	// +optional
	Phase RunPhase `json:"phase,omitempty"`

	// startTime is when the first cell started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the last cell finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// progress is "finished/total cells".
	// +optional
	Progress string `json:"progress,omitempty"`

	// currentStep is the step of the first running cell, for printing.
	// +optional
	CurrentStep string `json:"currentStep,omitempty"`

	// retriesUsed counts infrastructure retries against retry.maxRetriesPerRun.
	// +optional
	RetriesUsed int32 `json:"retriesUsed,omitempty"`

	// cells has one entry per cell, in the matrix's order.
	// +listType=map
	// +listMapKey=name
	// +optional
	Cells []CellStatus `json:"cells,omitempty"`

	// results points at the run-level results.
	// +optional
	Results *ResultsReference `json:"results,omitempty"`

	// regression is the verdict of spec.regression.
	// +optional
	Regression *RegressionStatus `json:"regression,omitempty"`

	// precision is the progress of workload.precision (adaptive repeats):
	// the rounds run and the precision they reached.
	// +optional
	Precision *PrecisionStatus `json:"precision,omitempty"`

	// preflight is the state of the check before the first cell
	// (spec.preflight).
	// +optional
	Preflight *PreflightStatus `json:"preflight,omitempty"`

	// plan is spec.goal's prediction before the first cell and, once the
	// last cell ended, the precision achieved.
	// +optional
	Plan *PlanStatus `json:"plan,omitempty"`

	// adaptive is the between-run noise workload.adaptive's steps stop
	// against, with betweenRunCVFromSuite: read from the suite's history
	// when the run started.
	// +optional
	Adaptive *AdaptiveStatus `json:"adaptive,omitempty"`

	// upload tracks the upload to spec.output.s3: what the object store has
	// confirmed, and the retries of what it has not. The results stay in
	// the cluster's ConfigMaps either way.
	// +optional
	Upload *UploadStatus `json:"upload,omitempty"`
}

// AdaptiveStatus is the suite noise adaptive steps use.
type AdaptiveStatus struct {
	// runsRead are the suite's runs the noise was read from.
	RunsRead int32 `json:"runsRead"`
	// betweenRunCV has a point per (step, threads) the history measured
	// with 4 df or more; other points use betweenRunCVPercent.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	// +optional
	BetweenRunCV []PointCV `json:"betweenRunCV,omitempty"`
	// message says what the history lacked.
	// +optional
	Message string `json:"message,omitempty"`
}

// PointCV is the between-run noise of one (step, threads).
type PointCV struct {
	Step    string `json:"step"`
	Threads int32  `json:"threads"`
	// cvPercent is the run level's coefficient of variation, percent (a
	// decimal string).
	CVPercent string `json:"cvPercent"`
	// df are its degrees of freedom.
	DF int32 `json:"df"`
}

// PlanSource says where a prediction's noise components came from.
// +kubebuilder:validation:Enum=History;Defaults;Mixed
type PlanSource string

// PlannedDesign is a design (step lengths, repeats) with what it is
// predicted to reach and cost. Figures are decimal strings.
type PlannedDesign struct {
	// readSeconds and writeSeconds are the step lengths.
	ReadSeconds  int32 `json:"readSeconds"`
	WriteSeconds int32 `json:"writeSeconds"`
	// repeats are the cells of every combination.
	Repeats int32 `json:"repeats"`
	// cellHours are all cells' predicted time (pods, load, warm-ups,
	// steps).
	CellHours string `json:"cellHours"`
	// worst is the least favourable point, step@threads.
	// +optional
	Worst string `json:"worst,omitempty"`
	// power is the probability of finding the goal's slowdown at worst
	// (a detection goal).
	// +optional
	Power string `json:"power,omitempty"`
	// mdePercent is the smallest slowdown found at worst with the goal's
	// power (0.8 for a half-width goal).
	// +optional
	MDEPercent string `json:"mdePercent,omitempty"`
	// halfWidthPercent is the expected 95 % interval half-width at worst.
	// +optional
	HalfWidthPercent string `json:"halfWidthPercent,omitempty"`
	// met says the design reaches the goal at every point.
	Met bool `json:"met"`
}

// PlanStatus is the prediction of spec.goal and what the run achieved.
type PlanStatus struct {
	// goal says the goal in words, with the verdict it is for.
	// +optional
	Goal string `json:"goal,omitempty"`
	// source says where the noise came from: the suite's History (runsRead
	// runs), the Defaults (docs/noise.md) or Mixed per point; absent when
	// the goal could not be predicted (message says why).
	// +optional
	Source PlanSource `json:"source,omitempty"`
	// runsRead are the suite's runs the components were read from.
	// +optional
	RunsRead int32 `json:"runsRead,omitempty"`
	// design is the run's own design: its step lengths and repeats (a
	// precision target's maxRepeats).
	Design PlannedDesign `json:"design"`
	// cheapest is the design of the least cell-hours that reaches the goal
	// (steps of 10–600 s, up to 20 repeats); absent when none does
	// (message says why).
	// +optional
	Cheapest *PlannedDesign `json:"cheapest,omitempty"`
	// requiredHalfWidthPercent is the widest ratio interval the goal
	// allows: the goal's half-width, or for a detection goal the cheapest
	// design's predicted half-width.
	// +optional
	RequiredHalfWidthPercent string `json:"requiredHalfWidthPercent,omitempty"`
	// achievedHalfWidthPercent is the widest 95 % ratio interval the run's
	// cells gave, in percent (a run of one combination: its mean's ×√2,
	// the ratio against a like run); achievedAt is where, step@threads.
	// +optional
	AchievedHalfWidthPercent string `json:"achievedHalfWidthPercent,omitempty"`
	// +optional
	AchievedAt string `json:"achievedAt,omitempty"`
	// met is set once the run ended: the achieved half-width is within the
	// required one.
	// +optional
	Met *bool `json:"met,omitempty"`
	// message says what the prediction left out or why the design falls
	// short.
	// +optional
	Message string `json:"message,omitempty"`
}

// PreflightPhase is the state of a run's pre-flight.
// +kubebuilder:validation:Enum=Running;Passed;Failed;Skipped
type PreflightPhase string

const (
	// PreflightRunning: pairs are being started and checked; no cell has
	// started.
	PreflightRunning PreflightPhase = "Running"
	// PreflightPassed: every pair started with its settings in effect; the
	// cells run.
	PreflightPassed PreflightPhase = "Passed"
	// PreflightFailed: a pair did not start or ran with other settings; the
	// run failed without starting a cell.
	PreflightFailed PreflightPhase = "Failed"
	// PreflightSkipped: no pre-flight ran (preflight.skipReason says why).
	PreflightSkipped PreflightPhase = "Skipped"
)

// PreflightSkipReason says why a run made no pre-flight.
// +kubebuilder:validation:Enum=Disabled;SinglePair;AllCellsAtOnce
type PreflightSkipReason string

const (
	// PreflightDisabled: spec.preflight.enabled is false.
	PreflightDisabled PreflightSkipReason = "Disabled"
	// PreflightSinglePair: the run has one (database, version, config)
	// pair, whose first cell checks the same before its load.
	PreflightSinglePair PreflightSkipReason = "SinglePair"
	// PreflightAllCellsAtOnce: placement.maxParallelCells lets every cell
	// start at once, so each pair's first cell checks its settings before
	// its load at the moment a pre-flight would, and a bad pair fails only
	// its own cells instead of the run.
	PreflightAllCellsAtOnce PreflightSkipReason = "AllCellsAtOnce"
)

// PreflightStatus is the state of a run's pre-flight.
type PreflightStatus struct {
	// phase is Running, Passed, Failed or Skipped.
	Phase PreflightPhase `json:"phase"`
	// skipReason says why a Skipped pre-flight did not run.
	// +optional
	SkipReason PreflightSkipReason `json:"skipReason,omitempty"`
	// pairs has one entry per (database, version, config variant) pair, in
	// the matrix's order. Each is run as a cell that loads nothing and runs
	// no step, so it has a cell's fields: phase, attempts (infrastructure
	// failures are retried within spec.retry), node, and the reason and
	// message of a failure (ConfigRejected with the server's error lines,
	// ConfigNotApplied naming the setting, ...). name is
	// <database>-<version>-<config>.
	// +listType=map
	// +listMapKey=name
	// +optional
	Pairs []CellStatus `json:"pairs,omitempty"`
	// startTime and completionTime of the pre-flight.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// UploadStatus is the state of a run's upload to the object store.
type UploadStatus struct {
	// cellsUploaded counts the cells whose document the object store has
	// confirmed (see cells[].uploaded).
	// +optional
	CellsUploaded int32 `json:"cellsUploaded,omitempty"`
	// manifestUploaded is true once the run manifest is confirmed, after
	// every cell's document: the upload is then complete.
	// +optional
	ManifestUploaded bool `json:"manifestUploaded,omitempty"`
	// failures counts the failed upload attempts since the last confirmed
	// upload; the wait before the next attempt doubles with each, up to 5
	// minutes. After a permanent error attempts stop until the run is
	// annotated dbbench.io/retry-upload, which resets this count (see the
	// ResultsUploaded condition).
	// +optional
	Failures int32 `json:"failures,omitempty"`
	// lastFailureTime is when the last failed attempt was made.
	// +optional
	LastFailureTime *metav1.Time `json:"lastFailureTime,omitempty"`
	// retryRequiresAnnotation is true after an upload failed with an error
	// that waiting cannot fix (a missing bucket, an invalid endpoint, a run
	// directory owned by another run, a Secret the manager may not read):
	// no attempt is made until the run is annotated dbbench.io/retry-upload,
	// which clears it. The ResultsUploaded condition says why.
	// +optional
	RetryRequiresAnnotation bool `json:"retryRequiresAnnotation,omitempty"`
}

// PrecisionState is where adaptive repeats stand.
// +kubebuilder:validation:Enum=Measuring;TargetMet;MaxRepeatsReached;Stopped
type PrecisionState string

const (
	// PrecisionMeasuring: rounds are running or the next is being added.
	PrecisionMeasuring PrecisionState = "Measuring"
	// PrecisionTargetMet: every compared ratio reached the target.
	PrecisionTargetMet PrecisionState = "TargetMet"
	// PrecisionMaxRepeatsReached: maxRepeats rounds ran and some ratio is
	// still wider than the target.
	PrecisionMaxRepeatsReached PrecisionState = "MaxRepeatsReached"
	// PrecisionStopped: rounds stopped early because more could not help:
	// a cell failed (the run fails either way) or the cells reported no
	// step to compare.
	PrecisionStopped PrecisionState = "Stopped"
)

// PrecisionStatus is the progress of adaptive repeats. Figures are decimal
// strings, as the Kubernetes API conventions ask of non-integers; "+Inf"
// means a ratio has no finite interval yet (a side with one run, or a
// base too noisy for Fieller's interval).
type PrecisionStatus struct {
	// rounds is how many rounds of every combination the run has:
	// status.cells holds their cells (<combination>-r<round>). It grows by
	// one each time a judged round falls short of the target.
	Rounds int32 `json:"rounds"`
	// roundsJudged is how many rounds the last check looked at.
	// +optional
	RoundsJudged int32 `json:"roundsJudged,omitempty"`
	// state is Measuring, TargetMet, MaxRepeatsReached or Stopped.
	State PrecisionState `json:"state"`
	// halfWidthPercent is the widest interval half-width, in percent of
	// its ratio, over every compared ratio at the last check.
	// +optional
	HalfWidthPercent string `json:"halfWidthPercent,omitempty"`
	// reached says it for printing: "±1.8% after 4/10".
	// +optional
	Reached string `json:"reached,omitempty"`
	// message says why the rounds stopped, when they stopped early.
	// +optional
	Message string `json:"message,omitempty"`
	// points has the precision reached per step and thread count: the
	// widest half-width over the combinations compared there.
	// +listType=atomic
	// +optional
	Points []PrecisionPoint `json:"points,omitempty"`
}

// PrecisionPoint is the precision of one (step, threads).
type PrecisionPoint struct {
	Step    string `json:"step"`
	Threads int32  `json:"threads"`
	// halfWidthPercent is the widest half-width at this point, in percent.
	HalfWidthPercent string `json:"halfWidthPercent"`
	// combination is the compared combination whose interval is widest
	// (the baseline's own for a run of one combination).
	// +optional
	Combination string `json:"combination,omitempty"`
	// met is true when every ratio at this point reached the target.
	Met bool `json:"met"`
}

// RegressionStatus is what the regression verdict compared and found.
type RegressionStatus struct {
	// comparedTo names the runs the verdict used, oldest first (against
	// Baseline: this run, whose baseline cell the message names).
	// +optional
	ComparedTo []string `json:"comparedTo,omitempty"`
	// comparedPairs counts the (cell, step, threads) pairs compared.
	// +optional
	ComparedPairs int32 `json:"comparedPairs,omitempty"`
	// invalidLeftOut counts the step results of the runs compared that the
	// quality gate marked invalid (status.cells[].quality): not values, so
	// left out of every comparison.
	// +optional
	InvalidLeftOut int32 `json:"invalidLeftOut,omitempty"`
	// regressed lists the regressed (cell, step, threads) pairs, the largest
	// move the wrong way first (a slowdown, or a latency rise; at most 50).
	// +optional
	Regressed []RegressedStep `json:"regressed,omitempty"`
	// acknowledged lists the pairs that changed the wrong way but are
	// covered by a BenchmarkAck (at most 50): not reported, still shown.
	// +optional
	Acknowledged []AcknowledgedStep `json:"acknowledged,omitempty"`
	// methods counts the compared pairs per test method (against a run).
	// +optional
	Methods []RegressionMethodCount `json:"methods,omitempty"`
	// correction is the multiple-comparison procedure applied (against a
	// run).
	// +optional
	Correction RegressionCorrection `json:"correction,omitempty"`
	// magnitudeRule is the rule the verdict used (against a run).
	// +optional
	MagnitudeRule RegressionMagnitudeRule `json:"magnitudeRule,omitempty"`
	// detectableChangePercent is the verdict's sensitivity (against a
	// run): the smallest change, in percent (a slowdown, or a rise of a
	// latency), that its least sensitive tested pair (detectableAt) calls
	// regressed four times in five, at the run-to-run noise that pair
	// measured (its repeats' CV, or the noise floor's), its repeats and the
	// level of the correction's first step. A Regressed=False verdict says
	// no more than that: smaller changes may have gone unseen. Empty when
	// no pair was tested between runs or against a noise floor.
	// +optional
	DetectableChangePercent string `json:"detectableChangePercent,omitempty"`
	// detectableAt names that pair: "cell step@threads metric (CV c %)".
	// +optional
	DetectableAt string `json:"detectableAt,omitempty"`
	// bisection names the BenchmarkBisection spec.regression.bisect
	// created for this verdict.
	// +optional
	Bisection string `json:"bisection,omitempty"`
	// bisectionMessage says why spec.regression.bisect created no
	// bisection for a Regressed=True verdict (good and bad could not be
	// told apart, a bisection of that name belongs to another object).
	// +optional
	BisectionMessage string `json:"bisectionMessage,omitempty"`
}

// RegressionMethodCount is how many pairs one method tested.
type RegressionMethodCount struct {
	Method RegressionMethod `json:"method"`
	Pairs  int32            `json:"pairs"`
	// detail says it for people: "between runs (3+3 repeats)".
	// +optional
	Detail string `json:"detail,omitempty"`
}

// RegressedStep is one (cell, step, threads) that regressed, with every
// metric it regressed on. Figures are decimal strings, as the Kubernetes API
// conventions ask of non-integers.
type RegressedStep struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int32  `json:"threads"`
	// metrics are every metric the pair regressed on, in the order of
	// regression.metrics: [Throughput, P99Latency] when its throughput fell
	// and its p99 latency rose. Absent in statuses written before latency
	// verdicts: throughput.
	// +optional
	Metrics []RegressionMetric `json:"metrics,omitempty"`
	// The figures below are of metrics[0]; alsoRegressed has the others.
	MetricChange `json:",inline"`
	// alsoRegressed are the figures of metrics[1:], in order.
	// +optional
	AlsoRegressed []MetricChange `json:"alsoRegressed,omitempty"`
	// since is, against ChangePoints, the first run of the new level (the
	// change point), and lastBefore the last run before it that measured
	// the pair: the runs whose builds bound the change, which
	// regression.bisect bisects between. Both empty against a run.
	// +optional
	Since string `json:"since,omitempty"`
	// +optional
	LastBefore string `json:"lastBefore,omitempty"`
	// coincidesWith lists what changed in the environment across the
	// change (the runs before it against the runs from it on, or the
	// baseline against this run): the image digest behind an unchanged
	// reference, effective server settings, node, kernel, CPU, agent,
	// sysbench and Kubernetes versions.
	// +optional
	// +listType=atomic
	CoincidesWith []EnvironmentChange `json:"coincidesWith,omitempty"`
	// environmentOnly is true when the environment changed and the build
	// did not (the same image reference, version, server version and
	// config on both sides): the change is not the build's regression,
	// and regression.bisect does not bisect it.
	// +optional
	EnvironmentOnly bool `json:"environmentOnly,omitempty"`
}

// EnvironmentChange is one property that changed across a change.
type EnvironmentChange struct {
	// field is what changed: "image digest", "server settings", "setting
	// NAME", "node", "kernel", "CPU model", "CPUs", "memory", "agent
	// version", "sysbench version", "client image digest", "Kubernetes
	// version".
	Field string `json:"field"`
	// before and after are its values on each side.
	Before string `json:"before"`
	After  string `json:"after"`
}

// AcknowledgedStep is a pair the verdict found changed but did not report
// because a BenchmarkAck covers it.
type AcknowledgedStep struct {
	// cell, step and threads name the pair.
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int32  `json:"threads"`
	// metric is the metric that moved (Throughput when empty).
	// +optional
	Metric RegressionMetric `json:"metric,omitempty"`
	// changePercent is 100 × (after/before − 1).
	ChangePercent string `json:"changePercent"`
	// since and lastBefore bound the change as in regressed[].
	// +optional
	Since string `json:"since,omitempty"`
	// +optional
	LastBefore string `json:"lastBefore,omitempty"`
	// ack names the BenchmarkAck, resolution is its resolution.
	Ack        string        `json:"ack"`
	Resolution AckResolution `json:"resolution"`
	// coincidesWith and environmentOnly say what else changed, as in
	// regressed[].
	// +optional
	// +listType=atomic
	CoincidesWith []EnvironmentChange `json:"coincidesWith,omitempty"`
	// +optional
	EnvironmentOnly bool `json:"environmentOnly,omitempty"`
}

// MetricChange is how one metric of a regressed pair moved.
type MetricChange struct {
	// metric is the metric of these figures.
	// +optional
	Metric RegressionMetric `json:"metric,omitempty"`
	// before and after are QPS for Throughput and milliseconds for a
	// latency; changePercent is 100 × (after/before − 1): negative for a
	// throughput regression, positive for a latency one.
	Before        string `json:"before"`
	After         string `json:"after"`
	ChangePercent string `json:"changePercent"`
	// pValue is the regression's one-sided significance, when it was tested.
	// +optional
	PValue string `json:"pValue,omitempty"`
	// adjustedPValue is pValue after the correction over the run's tests.
	// +optional
	AdjustedPValue string `json:"adjustedPValue,omitempty"`
	// method is how the pair was tested (against a run).
	// +optional
	Method RegressionMethod `json:"method,omitempty"`
	// detail says how the pair was tested, for people: "between runs (3+3
	// repeats)", "noise floor CV 4.1 % over 12 df", "per-second fallback".
	// +optional
	Detail string `json:"detail,omitempty"`
}

// CellStatus is the state of one cell.
type CellStatus struct {
	// name is the cell's name: <database>-<version>-<config>[-r<repeat>].
	Name string `json:"name"`
	// database, engine, version, config and repeat identify the cell.
	Database string `json:"database"`
	Engine   Engine `json:"engine"`
	Version  string `json:"version"`
	Config   string `json:"config"`
	Repeat   int32  `json:"repeat"`
	// phase of the cell.
	Phase CellPhase `json:"phase"`
	// currentStep is the step running now.
	// +optional
	CurrentStep string `json:"currentStep,omitempty"`
	// stepsDone and stepsTotal count (step, threads) pairs.
	// +optional
	StepsDone int32 `json:"stepsDone,omitempty"`
	// +optional
	StepsTotal int32 `json:"stepsTotal,omitempty"`
	// node is where the database pod runs.
	// +optional
	Node string `json:"node,omitempty"`
	// imageDigest is the digest ("sha256:…") of the image the database
	// pod runs, as its container runtime resolved it (the pod's
	// status.containerStatuses[].imageID): the binary measured, whatever
	// tag the spec names. The run's results record it per cell.
	// +optional
	ImageDigest string `json:"imageDigest,omitempty"`
	// attempts made so far (1 for a cell that never needed a retry).
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// retryReasons names why each earlier attempt was retried, oldest
	// first: one entry per retry, so a cell on attempt 3 after two
	// ClientStarved attempts lists ClientStarved twice. reason keeps only
	// the last; programs that judge whether a cell ran undisturbed (only
	// infrastructure retries) read this list.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	RetryReasons []FailureReason `json:"retryReasons,omitempty"`
	// startTime and completionTime of the cell.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// attemptStartTime is when the current attempt's database pod was
	// created; the attempt's timeouts count from it.
	// +optional
	AttemptStartTime *metav1.Time `json:"attemptStartTime,omitempty"`
	// reason names the last failure or retry in one CamelCase word, for
	// programs (jsonpath queries, alerts): infrastructure failures such as
	// DatabaseEvicted, DatabaseNotReady or CellTimeout are retried within
	// spec.retry; benchmark failures such as BenchmarkFailed,
	// DatabaseCrashed or ConfigMissing fail the cell (docs/design.md lists
	// them all). Empty while no attempt has ended badly.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason FailureReason `json:"reason,omitempty"`
	// message explains the last failure or retry, for people.
	// +optional
	Message string `json:"message,omitempty"`
	// resultConfigMap holds the cell's results document.
	// +optional
	ResultConfigMap string `json:"resultConfigMap,omitempty"`
	// uploaded is true once the object store (spec.output.s3) has
	// confirmed the cell's document; its ConfigMap is kept regardless.
	// +optional
	Uploaded bool `json:"uploaded,omitempty"`
	// quality is what the quality gate found in the results of the cell's
	// last attempt, when it re-ran or flagged any step result (docs/agent.md,
	// "Quality gates"); absent when every result was valid at once.
	// +optional
	Quality *CellQuality `json:"quality,omitempty"`

	// target is the object created from databases[].template for this
	// cell, and the endpoint read from it once ready.
	// +optional
	Target *CellTarget `json:"target,omitempty"`
}

// CellQuality counts the step results of a cell that the quality gate
// re-ran or marked invalid. An invalid result stays in the results
// document, flagged; reports show it as invalid and verdicts leave it out.
type CellQuality struct {
	// invalid counts the (step, threads) results whose value is invalid.
	// +optional
	Invalid int32 `json:"invalid,omitempty"`
	// rerun counts the results the agent ran a second time because the
	// first run was invalid (valid or not on the second).
	// +optional
	Rerun int32 `json:"rerun,omitempty"`
	// invalidSteps names the first invalid results,
	// "<step>@<threads>: <reason>,<reason>".
	// +kubebuilder:validation:MaxItems=10
	// +optional
	InvalidSteps []string `json:"invalidSteps,omitempty"`
}

// ResultsReference points at run-level results.
type ResultsReference struct {
	// configMap is the run-level results ConfigMap.
	// +optional
	ConfigMap string `json:"configMap,omitempty"`
	// url is the run's location in the object store, when uploaded.
	// +optional
	URL string `json:"url,omitempty"`
	// site is the suite's site (<prefix>/<suite>/index.html), regenerated
	// once the run's manifest was uploaded.
	// +optional
	Site string `json:"site,omitempty"`
}

// BenchmarkRun runs a database benchmark matrix on pinned nodes and collects
// comparable, provenance-carrying results.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=br;bench,categories=dbbench
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name: must be at most 63 characters (it is used in label values)"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.currentStep`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Precision",type=string,JSONPath=`.status.precision.reached`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BenchmarkRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec declares the matrix. It is immutable: to change a run, create a
	// new one (results must describe exactly what ran).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create a new BenchmarkRun instead"
	Spec BenchmarkRunSpec `json:"spec"`

	// status is the observed state.
	// +optional
	// +kubebuilder:default={}
	Status BenchmarkRunStatus `json:"status,omitempty"`
}

// BenchmarkRunList is a list of BenchmarkRuns.
//
// +kubebuilder:object:root=true
type BenchmarkRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkRun `json:"items"`
}

func init() {
	register(&BenchmarkRun{}, &BenchmarkRunList{})
}
