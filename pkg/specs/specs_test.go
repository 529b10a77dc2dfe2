package specs

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
)

func testRun(engine dbbenchv1alpha1.Engine, mutate ...func(*dbbenchv1alpha1.BenchmarkRun)) (*dbbenchv1alpha1.BenchmarkRun, matrix.Cell) {
	r := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: "ns", UID: "uid"},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "db", Engine: engine, Versions: []string{"1"}, ImagePullPolicy: corev1.PullIfNotPresent}},
			Workload:  dbbenchv1alpha1.WorkloadSpec{Tables: 2, TableSize: 1000, ReadSeconds: 30, WriteSeconds: 60, Threads: []int32{1, 8}, Repeats: 1},
		},
	}
	for _, m := range mutate {
		m(r)
	}
	return r, matrix.Expand(r)[0]
}

func TestDatabasePodFollowsTheOfficialImageContract(t *testing.T) {
	tests := []struct {
		engine    dbbenchv1alpha1.Engine
		hasConfig bool
		wantEnv   []string
		wantMount string
		wantArgs  []string
		wantPort  int32
	}{
		{"mariadb", true, []string{"MARIADB_ROOT_PASSWORD", "MARIADB_USER", "MARIADB_PASSWORD", "MARIADB_DATABASE"}, "/etc/mysql/conf.d/zz-dbbench.cnf", []string{}, 3306},
		{"mysql", true, []string{"MYSQL_ROOT_PASSWORD", "MYSQL_USER", "MYSQL_PASSWORD", "MYSQL_DATABASE"}, "/etc/mysql/conf.d/zz-dbbench.cnf", []string{}, 3306},
		{"postgres", true, []string{"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB", "PGDATA"}, "/etc/dbbench/config/postgresql.conf",
			[]string{"-c", "listen_addresses=*", "-c", "config_file=/etc/dbbench/config/postgresql.conf"}, 5432},
		{"postgres", false, []string{"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB", "PGDATA"}, "", []string{}, 5432},
	}
	for _, tt := range tests {
		t.Run(string(tt.engine), func(t *testing.T) {
			run, cell := testRun(tt.engine)
			pod := DatabasePod(run, cell, 2, tt.hasConfig, "")
			c := pod.Spec.Containers[0]
			var env []string
			for _, e := range c.Env {
				env = append(env, e.Name)
				if strings.Contains(e.Name, "PASSWORD") && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != SecretName(cell)) {
					t.Errorf("%s does not come from the cell Secret", e.Name)
				}
			}
			if diff := cmp.Diff(tt.wantEnv, env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantArgs, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			mounted := ""
			for _, m := range c.VolumeMounts {
				if m.Name == "config" {
					mounted = m.MountPath
				}
			}
			if mounted != tt.wantMount {
				t.Errorf("config mounted at %q, want %q", mounted, tt.wantMount)
			}
			if c.Ports[0].ContainerPort != tt.wantPort || c.ReadinessProbe.TCPSocket.Port.IntVal != tt.wantPort {
				t.Errorf("port %d / readiness %v", c.Ports[0].ContainerPort, c.ReadinessProbe.TCPSocket.Port)
			}
			if pod.Name != cell.ObjectBase+"-db-a2" || pod.Labels[dbbenchv1alpha1.LabelAttempt] != "2" || pod.Labels[dbbenchv1alpha1.LabelExclusive] != "true" {
				t.Errorf("name %s labels %v", pod.Name, pod.Labels)
			}
			sc := pod.Spec.SecurityContext
			if !*sc.RunAsNonRoot || *sc.RunAsUser != 999 || *sc.FSGroup != 999 || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod security context %+v", sc)
			}
			if *c.SecurityContext.AllowPrivilegeEscalation || len(c.SecurityContext.Capabilities.Drop) != 1 {
				t.Errorf("container security context %+v", c.SecurityContext)
			}
			if *pod.Spec.AutomountServiceAccountToken {
				t.Error("the database pod needs no API token")
			}
		})
	}
}

func TestCollectorSidecarSharesTheProcessNamespace(t *testing.T) {
	run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) { r.Spec.Placement.QoSClass = dbbenchv1alpha1.QoSGuaranteed })
	pod := DatabasePod(run, cell, 1, false, "agent:1")
	if len(pod.Spec.Containers) != 2 || pod.Spec.Containers[1].Name != CollectorContainer || !*pod.Spec.ShareProcessNamespace {
		t.Fatalf("containers %d shareProcessNamespace %v", len(pod.Spec.Containers), pod.Spec.ShareProcessNamespace)
	}
	side := pod.Spec.Containers[1]
	if diff := cmp.Diff(side.Resources.Limits, side.Resources.Requests); diff != "" {
		t.Errorf("sidecar would break Guaranteed QoS:\n%s", diff)
	}
	job := ClientJob(run, cell, 1, "agent:1", "10.0.0.7", true)
	if got := envOf(job.Spec.Template.Spec.Containers[0].Env, agentapi.EnvCollectorURL); got != "http://10.0.0.7:9100" {
		t.Errorf("collector URL %q", got)
	}
	if got := envOf(ClientJob(run, cell, 1, "agent:1", "10.0.0.7", false).Spec.Template.Spec.Containers[0].Env, agentapi.EnvCollectorURL); got != "" {
		t.Errorf("collector URL without collector: %q", got)
	}
}

func envOf(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func TestQoSResources(t *testing.T) {
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	in := corev1.ResourceRequirements{Limits: limits, Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	got := qosResources(dbbenchv1alpha1.QoSGuaranteed, in, nil)
	if diff := cmp.Diff(limits, got.Requests); diff != "" {
		t.Errorf("Guaranteed requests (-want +got):\n%s", diff)
	}
	if got := qosResources(dbbenchv1alpha1.QoSBurstable, in, nil); got.Requests.Cpu().String() != "1" {
		t.Errorf("Burstable changed requests: %v", got.Requests)
	}
	got = qosResources(dbbenchv1alpha1.QoSGuaranteed, corev1.ResourceRequirements{}, DefaultClientLimits)
	if got.Requests.Cpu().String() != "1" || got.Limits.Memory().String() != "1Gi" {
		t.Errorf("fallback limits: %+v", got)
	}
}

// TestCPUScaleOfAConfigVariant: configs[].cpuScalePercent lowers the
// database container's CPU limit (its CFS quota) and only that; a request
// above the scaled limit follows it down, and Guaranteed QoS still sets
// requests equal to the scaled limits.
func TestCPUScaleOfAConfigVariant(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name              string
		qos               dbbenchv1alpha1.QoSClass
		limits, requests  corev1.ResourceList
		percent           *int32
		wantLimit, wantRq string
	}{
		{"unset", "", corev1.ResourceList{corev1.ResourceCPU: q("2")}, nil, nil, "2", ""},
		{"100 %", "", corev1.ResourceList{corev1.ResourceCPU: q("2")}, nil, ptr.To[int32](100), "2", ""},
		{"90 % of 2 CPUs", "", corev1.ResourceList{corev1.ResourceCPU: q("2")}, nil, ptr.To[int32](90), "1800m", ""},
		{"85 % of 1500m rounds down", "", corev1.ResourceList{corev1.ResourceCPU: q("1500m")}, nil, ptr.To[int32](85), "1275m", ""},
		{"87 % of 333m rounds down to a millicore", "", corev1.ResourceList{corev1.ResourceCPU: q("333m")}, nil, ptr.To[int32](87), "289m", ""},
		{"a request above the scaled limit follows it", "", corev1.ResourceList{corev1.ResourceCPU: q("2")},
			corev1.ResourceList{corev1.ResourceCPU: q("2")}, ptr.To[int32](90), "1800m", "1800m"},
		{"a request below stays", "", corev1.ResourceList{corev1.ResourceCPU: q("2")},
			corev1.ResourceList{corev1.ResourceCPU: q("500m")}, ptr.To[int32](90), "1800m", "500m"},
		{"Guaranteed: requests equal the scaled limit", dbbenchv1alpha1.QoSGuaranteed,
			corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")}, nil, ptr.To[int32](90), "1800m", "1800m"},
		{"no CPU limit: nothing to scale", "", corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}, nil, ptr.To[int32](90), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) {
				r.Spec.Placement.QoSClass = tt.qos
				r.Spec.Databases[0].Resources = corev1.ResourceRequirements{Limits: tt.limits, Requests: tt.requests}
				r.Spec.Databases[0].Configs = []dbbenchv1alpha1.ConfigVariant{{Name: "slow", CPUScalePercent: tt.percent}}
			})
			res := DatabasePod(run, cell, 1, false, "").Spec.Containers[0].Resources
			got, gotRq := "", ""
			if l, ok := res.Limits[corev1.ResourceCPU]; ok {
				got = l.String()
			}
			if r, ok := res.Requests[corev1.ResourceCPU]; ok {
				gotRq = r.String()
			}
			if got != tt.wantLimit || gotRq != tt.wantRq {
				t.Errorf("cpu limit %q request %q, want %q and %q", got, gotRq, tt.wantLimit, tt.wantRq)
			}
			if !res.Limits.Memory().Equal(tt.limits[corev1.ResourceMemory]) {
				t.Errorf("memory limit changed to %v", res.Limits.Memory())
			}
			if run.Spec.Databases[0].Resources.Limits.Cpu().Cmp(tt.limits[corev1.ResourceCPU]) != 0 {
				t.Errorf("the spec's limit was modified: %v", run.Spec.Databases[0].Resources.Limits)
			}
		})
	}
}

func TestClientPlacement(t *testing.T) {
	tests := []struct {
		policy    dbbenchv1alpha1.ClientNodePolicy
		exclusive bool
		wantAff   int // required pod affinity terms
		wantAnti  int // required pod anti-affinity terms
	}{
		{dbbenchv1alpha1.ClientSameNode, true, 1, 1},
		{dbbenchv1alpha1.ClientOtherNode, true, 0, 2},
		{dbbenchv1alpha1.ClientAnyNode, true, 0, 1},
		{dbbenchv1alpha1.ClientAnyNode, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) {
				r.Spec.Placement.ClientNode = tt.policy
				r.Spec.Placement.ExclusiveNodes = ptr.To(tt.exclusive)
				r.Spec.Placement.Client.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
			})
			aff := ClientJob(run, cell, 1, "agent", "10.0.0.1", false).Spec.Template.Spec.Affinity
			if aff == nil || aff.NodeAffinity == nil {
				t.Fatalf("the user's node affinity was dropped: %+v", aff)
			}
			n, a := 0, 0
			if aff.PodAffinity != nil {
				n = len(aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			}
			if aff.PodAntiAffinity != nil {
				a = len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			}
			if n != tt.wantAff || a != tt.wantAnti {
				t.Errorf("affinity terms %d, anti-affinity terms %d; want %d, %d", n, a, tt.wantAff, tt.wantAnti)
			}
			if run.Spec.Placement.Client.Affinity.PodAffinity != nil || run.Spec.Placement.Client.Affinity.PodAntiAffinity != nil {
				t.Error("the builder modified the spec")
			}
		})
	}
}

func TestPinToNode(t *testing.T) {
	pin := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-b"}}
	ssd := corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	tests := []struct {
		name string
		user *corev1.Affinity
		want []corev1.NodeSelectorTerm
	}{
		{"no affinity of the user's: one term", nil, []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{pin}}}},
		{"each of the user's ORed terms gets the pin",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{ssd}}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}},
			[]corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{ssd}, MatchFields: []corev1.NodeSelectorRequirement{pin}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{pin}},
			}},
		{"a preferred-only node affinity gains a required term",
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{ssd}}}}}},
			[]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{pin}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) {
				r.Spec.Placement.ExclusiveNodes = ptr.To(false)
				r.Spec.Placement.Database.Affinity = tt.user
			})
			var before *corev1.Affinity
			if tt.user != nil {
				before = tt.user.DeepCopy()
			}
			pod := DatabasePod(run, cell, 1, false, "")
			PinToNode(pod, "node-b")
			got := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("required node selector terms (-want +got):\n%s", d)
			}
			if got := PinnedNode(pod); got != "node-b" {
				t.Errorf("PinnedNode = %q, want node-b", got)
			}
			if d := cmp.Diff(before, run.Spec.Placement.Database.Affinity); d != "" {
				t.Errorf("PinToNode changed the run's spec (-before +after):\n%s", d)
			}
		})
	}
}

func TestNodeLossTolerations(t *testing.T) {
	short := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(NodeLossTolerationSeconds)}
	}
	gpu := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	ownUnreachable := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](600)}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	tests := []struct {
		name string
		user []corev1.Toleration
		want []corev1.Toleration
	}{
		{"none of the user's", nil, []corev1.Toleration{short(corev1.TaintNodeUnreachable), short(corev1.TaintNodeNotReady)}},
		{"the user's other tolerations are kept", []corev1.Toleration{gpu}, []corev1.Toleration{gpu, short(corev1.TaintNodeUnreachable), short(corev1.TaintNodeNotReady)}},
		{"the user's own unreachable toleration wins", []corev1.Toleration{ownUnreachable}, []corev1.Toleration{ownUnreachable, short(corev1.TaintNodeNotReady)}},
		{"a toleration of every taint covers both", []corev1.Toleration{everything}, []corev1.Toleration{everything}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) {
				r.Spec.Placement.Database.Tolerations = tt.user
				r.Spec.Placement.Client.Tolerations = tt.user
			})
			db := DatabasePod(run, cell, 1, false, "")
			client := ClientJob(run, cell, 1, "agent", "10.0.0.1", false).Spec.Template.Spec
			for who, got := range map[string][]corev1.Toleration{"database": db.Spec.Tolerations, "client": client.Tolerations} {
				if d := cmp.Diff(tt.want, got); d != "" {
					t.Errorf("%s pod tolerations (-want +got):\n%s", who, d)
				}
			}
			if len(run.Spec.Placement.Database.Tolerations) != len(tt.user) {
				t.Error("the builder modified the spec")
			}
		})
	}
}

func TestPlanAndRBAC(t *testing.T) {
	run, cell := testRun("postgres", func(r *dbbenchv1alpha1.BenchmarkRun) {
		r.Spec.Workload.TPCC = &dbbenchv1alpha1.TPCCSpec{Warehouses: 2, Tables: 1, DurationSeconds: 10, Isolation: "RC"}
		r.Spec.Workload.CustomSteps = []dbbenchv1alpha1.CustomStep{{Name: "mine"}}
	})
	p := Plan(run, cell, 3, []string{"point-query", "tpcc", "mine"})
	if err := p.Validate(); err != nil {
		t.Fatalf("plan invalid: %v", err)
	}
	if p.Server.Port != 5432 || p.Cell.Attempt != 3 || p.Workload.WarmupSeconds != 10 || !p.Workload.PreparedStatements {
		t.Errorf("plan %+v", p)
	}
	if diff := cmp.Diff([]int{1, 8}, p.Workload.TPCC.Threads); diff != "" {
		t.Errorf("TPC-C threads default to the workload's:\n%s", diff)
	}
	if c := p.Workload.Custom[0]; c.Script != "/etc/dbbench/plan/custom/mine.lua" || c.DurationSeconds != 60 {
		t.Errorf("custom step %+v", c)
	}
	job := ClientJob(run, cell, 3, "agent", "10.0.0.1", false)
	// The plan is written once per cell; the Job tells the agent its attempt.
	if got := envOf(job.Spec.Template.Spec.Containers[0].Env, agentapi.EnvAttempt); got != "3" {
		t.Errorf("%s = %q, want 3", agentapi.EnvAttempt, got)
	}
	// The outbox (full document and log in the final write) only when the
	// controller will upload and then drain it.
	if got := envOf(job.Spec.Template.Spec.Containers[0].Env, agentapi.EnvOutbox); got != "" {
		t.Errorf("%s = %q without output.s3", agentapi.EnvOutbox, got)
	}
	withS3 := run.DeepCopy()
	withS3.Spec.Output.S3 = &dbbenchv1alpha1.S3Output{Endpoint: "http://s3", Bucket: "b"}
	if got := envOf(ClientJob(withS3, cell, 3, "agent", "10.0.0.1", false).Spec.Template.Spec.Containers[0].Env, agentapi.EnvOutbox); got != "true" {
		t.Errorf("%s = %q with output.s3, want true", agentapi.EnvOutbox, got)
	}
	var paths []string
	for _, it := range job.Spec.Template.Spec.Volumes[0].ConfigMap.Items {
		paths = append(paths, agentapi.TaskDir+"/"+it.Path)
	}
	// The variant's text beside the plan, where agent.LoadServerConfig reads it.
	if diff := cmp.Diff([]string{"/etc/dbbench/plan/plan.json", "/etc/dbbench/plan/server.cnf", "/etc/dbbench/plan/custom/mine.lua"}, paths); diff != "" {
		t.Errorf("the plan, variant and script land where the plan says (-want +got):\n%s", diff)
	}

	cells := matrix.Expand(run)
	_, role, rb := AgentRBAC(run, cells)
	rule := role.Rules[0]
	if diff := cmp.Diff([]string{"get", "update", "patch"}, rule.Verbs); diff != "" {
		t.Errorf("agent verbs: %s", diff)
	}
	if len(rule.ResourceNames) != len(cells) || rule.ResourceNames[0] != ResultConfigMapName(cells[0]) {
		t.Errorf("agent may touch %v", rule.ResourceNames)
	}
	if rb.Subjects[0].Name != job.Spec.Template.Spec.ServiceAccountName {
		t.Errorf("binding subject %s, job service account %s", rb.Subjects[0].Name, job.Spec.Template.Spec.ServiceAccountName)
	}
}

// WorkloadPlan carries every knob of the API's workload to the plan: a plan
// field that it leaves zero for a fully set spec fails here (the reflection
// check), and so does a wrong mapping (the diff).
// Profiling makes the collector the profiler, with the privileges perf
// needs; without it the collector keeps none.
func TestProfilingCollector(t *testing.T) {
	tests := []struct {
		name        string
		profile     *dbbenchv1alpha1.ProfileSpec
		wantArg     bool
		wantCaps    []corev1.Capability
		wantRoot    bool
		wantScratch bool
	}{
		{name: "off"},
		{name: "on", profile: &dbbenchv1alpha1.ProfileSpec{Steps: []string{"point-query"}}, wantArg: true,
			wantCaps: []corev1.Capability{"PERFMON", "SYS_PTRACE"}, wantRoot: true, wantScratch: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cell := testRun("postgres", func(r *dbbenchv1alpha1.BenchmarkRun) {
				r.Spec.Workload.Profile = tt.profile
				r.Spec.Placement.QoSClass = dbbenchv1alpha1.QoSGuaranteed
			})
			pod := DatabasePod(run, cell, 1, false, "agent:1")
			side := pod.Spec.Containers[1]
			if got := slices.Contains(side.Args, "--profile"); got != tt.wantArg {
				t.Errorf("--profile in %q: %v, want %v", side.Args, got, tt.wantArg)
			}
			sc := side.SecurityContext
			if diff := cmp.Diff(tt.wantCaps, sc.Capabilities.Add); diff != "" {
				t.Errorf("capabilities added (-want +got):\n%s", diff)
			}
			if got := sc.RunAsUser != nil && *sc.RunAsUser == 0; got != tt.wantRoot {
				t.Errorf("runs as root: %v, want %v", got, tt.wantRoot)
			}
			if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("security context %+v: want ALL dropped, no escalation, a read-only root", sc)
			}
			// The database container never gets them.
			if db := pod.Spec.Containers[0].SecurityContext; len(db.Capabilities.Add) != 0 || db.RunAsUser != nil {
				t.Errorf("database container security context %+v", db)
			}
			hasScratch := slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == ProfileScratchVolume })
			if hasScratch != tt.wantScratch {
				t.Errorf("scratch volume: %v, want %v", hasScratch, tt.wantScratch)
			}
			if diff := cmp.Diff(side.Resources.Limits, side.Resources.Requests); diff != "" {
				t.Errorf("the sidecar would break Guaranteed QoS:\n%s", diff)
			}
		})
	}
}

func TestWorkloadPlanMapsEveryKnob(t *testing.T) {
	w := &dbbenchv1alpha1.WorkloadSpec{
		Tables: 2, TableSize: 1000, ReadSeconds: 30, WriteSeconds: 60, WarmupSeconds: ptr.To[int32](5),
		Threads: []int32{1, 8}, PreparedStatements: ptr.To(true), FlushWaitSeconds: 90,
		TPCC:        &dbbenchv1alpha1.TPCCSpec{Warehouses: 3, Tables: 2, DurationSeconds: 40, Threads: []int32{4}, UseForeignKeys: true, Isolation: "RC"},
		Pgbench:     &dbbenchv1alpha1.PgbenchSpec{Scale: 7},
		CustomSteps: []dbbenchv1alpha1.CustomStep{{Name: "mine", DurationSeconds: 7, Args: []string{"--x=1"}}},
		FixedRate:   &dbbenchv1alpha1.FixedRateSpec{FractionsOfPeak: []string{"0.5"}, Rates: []int32{100}, Steps: []string{"point-query"}},
		Counters:    &dbbenchv1alpha1.CountersSpec{Extra: []string{"Innodb_pages_written"}},
		Profile:     &dbbenchv1alpha1.ProfileSpec{Steps: []string{"point-query"}, Threads: 8, Seconds: 20, FrequencyHz: 49},
		Adaptive: &dbbenchv1alpha1.AdaptiveSpec{MinSeconds: 15, BetweenRunCVPercent: ptr.To(intstr.FromString("1.5")),
			TargetHalfWidthPercent: ptr.To(intstr.FromInt32(1))},
	}
	got := WorkloadPlan(w, []string{"point-query", "tpcc", "mine"})
	want := agentapi.Workload{
		Steps: []string{"point-query", "tpcc", "mine"}, Tables: 2, TableSize: 1000, ReadSeconds: 30, WriteSeconds: 60, WarmupSeconds: 5,
		Threads: []int{1, 8}, PreparedStatements: true, FlushWaitSeconds: 90,
		TPCC:          &agentapi.TPCC{Warehouses: 3, Tables: 2, DurationSeconds: 40, Threads: []int{4}, UseForeignKeys: true, Isolation: "RC"},
		Pgbench:       &agentapi.Pgbench{Scale: 7},
		Custom:        []agentapi.CustomStep{{Name: "mine", Script: "/etc/dbbench/plan/custom/mine.lua", DurationSeconds: 7, Args: []string{"--x=1"}}},
		FixedRate:     &agentapi.FixedRate{FractionsOfPeak: []string{"0.5"}, Rates: []int{100}, Steps: []string{"point-query"}},
		ExtraCounters: []string{"Innodb_pages_written"},
		Profile:       &agentapi.Profile{Steps: []string{"point-query"}, Threads: 8, Seconds: 20, FrequencyHz: 49},
		Adaptive:      &agentapi.Adaptive{MinSeconds: 15, BetweenRunCVPercent: 1.5, TargetHalfWidthPercent: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("WorkloadPlan (-want +got):\n%s", d)
	}
	// Filled elsewhere, from the run's status rather than its workload.
	fromStatus := map[string]string{
		"Workload.Adaptive.BetweenRunCVPercentAt": "Plan, from status.adaptive (TestPlanTakesTheSuiteNoise)",
	}
	for _, field := range zeroFields(reflect.ValueOf(got), "Workload.") {
		if _, ok := fromStatus[field]; !ok {
			t.Errorf("%s is not filled from the API: map it in WorkloadPlan", field)
		}
	}
	// The defaults of an empty spec: one thread, prepared statements, 10 s
	// of warm-up; TPC-C threads follow the workload's.
	empty := WorkloadPlan(&dbbenchv1alpha1.WorkloadSpec{TPCC: &dbbenchv1alpha1.TPCCSpec{}}, nil)
	if !empty.PreparedStatements || empty.WarmupSeconds != 10 || !cmp.Equal(empty.Threads, []int{1}) || !cmp.Equal(empty.TPCC.Threads, []int{1}) {
		t.Errorf("defaults: %+v, TPC-C %+v", empty, empty.TPCC)
	}
}

// zeroFields lists the zero leaf fields of a struct, descending into
// non-nil pointers to structs.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := 0; i < v.NumField(); i++ {
		f, fv := v.Type().Field(i), v.Field(i)
		switch {
		case !f.IsExported():
		case fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() == reflect.Struct:
			out = append(out, zeroFields(fv.Elem(), prefix+f.Name+".")...)
		case fv.IsZero():
			out = append(out, prefix+f.Name)
		}
	}
	return out
}

// storage.log mounts a second volume where each engine writes its redo log
// or WAL, hands it to the collector for device attribution, and claims it
// per attempt when it is a volumeClaim.
func TestLogVolume(t *testing.T) {
	size := resource.MustParse("5Gi")
	tests := []struct {
		name      string
		engine    dbbenchv1alpha1.Engine
		log       *dbbenchv1alpha1.LogVolumeSpec
		wantMount string // "" = no log volume
		wantArg   string
		wantEnv   string // NAME=value
		wantClaim string
	}{
		{"mariadb emptyDir", "mariadb", &dbbenchv1alpha1.LogVolumeSpec{}, "/var/lib/dbbench-log", "--innodb-log-group-home-dir=/var/lib/dbbench-log", "", ""},
		{"mysql claim", "mysql", &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: &dbbenchv1alpha1.VolumeClaimSpec{Size: size}},
			"/var/lib/dbbench-log", "--innodb-log-group-home-dir=/var/lib/dbbench-log", "", "-log-a3"},
		{"postgres emptyDir", "postgres", &dbbenchv1alpha1.LogVolumeSpec{EmptyDir: &corev1.EmptyDirVolumeSource{}},
			"/var/lib/postgresql/wal", "", "POSTGRES_INITDB_WALDIR=/var/lib/postgresql/wal/pg_wal", ""},
		{"mariadb no log volume", "mariadb", nil, "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cell := testRun(tt.engine, func(r *dbbenchv1alpha1.BenchmarkRun) { r.Spec.Databases[0].Storage.Log = tt.log })
			pod := DatabasePod(run, cell, 3, false, "agent:1")
			db, side := pod.Spec.Containers[0], pod.Spec.Containers[1]
			mount := ""
			for _, m := range db.VolumeMounts {
				if m.Name == LogVolume {
					mount = m.MountPath
				}
			}
			if mount != tt.wantMount {
				t.Errorf("log mounted at %q, want %q", mount, tt.wantMount)
			}
			hasArg := false
			for _, a := range db.Args {
				hasArg = hasArg || a == tt.wantArg
			}
			if tt.wantArg != "" && !hasArg {
				t.Errorf("args %v lack %q", db.Args, tt.wantArg)
			}
			if tt.wantMount == "" && len(db.Args) != 0 {
				t.Errorf("args %v without a log volume", db.Args)
			}
			if name, val, ok := strings.Cut(tt.wantEnv, "="); ok && envOf(db.Env, name) != val {
				t.Errorf("%s = %q, want %q", name, envOf(db.Env, name), val)
			}
			if tt.wantMount == "" && envOf(db.Env, "POSTGRES_INITDB_WALDIR") != "" {
				t.Error("WAL dir set without a log volume")
			}
			var sideMounts []string
			for _, m := range side.VolumeMounts {
				if !m.ReadOnly {
					t.Errorf("collector mounts %s writable", m.Name)
				}
				sideMounts = append(sideMounts, m.Name+"="+m.MountPath)
			}
			want := []string{"data=/dbbench/volumes/data"}
			if tt.wantMount != "" {
				want = append(want, "log=/dbbench/volumes/log")
			}
			if diff := cmp.Diff(want, sideMounts); diff != "" {
				t.Errorf("collector mounts (-want +got):\n%s", diff)
			}
			if !strings.Contains(strings.Join(side.Args, " "), "--volume "+want[len(want)-1]) {
				t.Errorf("collector args %v do not name %s", side.Args, want[len(want)-1])
			}
			claims := Claims(run, cell, 3)
			var names []string
			for _, c := range claims {
				names = append(names, strings.TrimPrefix(c.Name, cell.ObjectBase))
			}
			var wantClaims []string
			if tt.wantClaim != "" {
				wantClaims = []string{tt.wantClaim}
				var vol *corev1.Volume
				for i := range pod.Spec.Volumes {
					if pod.Spec.Volumes[i].Name == LogVolume {
						vol = &pod.Spec.Volumes[i]
					}
				}
				if vol == nil || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != claims[0].Name {
					t.Errorf("log volume %+v does not use claim %s", vol, claims[0].Name)
				}
				if got := claims[0].Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(size) != 0 {
					t.Errorf("log claim size %v", got)
				}
			}
			if diff := cmp.Diff(wantClaims, names); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanTakesTheSuiteNoise: the suite's per-point noise the controller
// recorded in status.adaptive reaches the agent's plan; a figure out of
// range does not.
func TestPlanTakesTheSuiteNoise(t *testing.T) {
	run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) {
		r.Spec.Suite = "nightly"
		r.Spec.Workload.Adaptive = &dbbenchv1alpha1.AdaptiveSpec{MinSeconds: 10, BetweenRunCVPercent: ptr.To(intstr.FromInt32(5)), BetweenRunCVFromSuite: true}
		r.Status.Adaptive = &dbbenchv1alpha1.AdaptiveStatus{RunsRead: 4, BetweenRunCV: []dbbenchv1alpha1.PointCV{
			{Step: "point-query", Threads: 1, CVPercent: "2.50", DF: 6},
			{Step: "point-query", Threads: 8, CVPercent: "+Inf", DF: 6},
		}}
	})
	p := Plan(run, cell, 1, []string{"point-query"})
	if err := p.Validate(); err != nil {
		t.Fatalf("plan invalid: %v", err)
	}
	ad := p.Workload.Adaptive
	if diff := cmp.Diff(map[string]float64{"point-query@1": 2.5}, ad.BetweenRunCVPercentAt); diff != "" || ad.BetweenRunCVPercent != 5 {
		t.Errorf("adaptive %+v:\n%s", ad, diff)
	}
}
