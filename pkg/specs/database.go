package specs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// CollectorPort is where the hardware-metrics collector beside the database
// listens; the agent asks it to start and stop each step's window.
const CollectorPort = 9100

// CollectorContainer is the collector sidecar's name.
const CollectorContainer = "collector"

// runVolume is the emptyDir a database server keeps its socket and pid
// file in (/var/run/postgresql, /run/mysqld).
const runVolume = "run"

// dropAll is the capability a container drops to start from none.
const dropAll corev1.Capability = "ALL"

// labelTrue is the value of a boolean label (LabelExclusive).
const labelTrue = "true"

// collectorResources are small and fixed; requests equal limits so the pod
// stays Guaranteed when asked to be (the sidecar's fraction of a CPU only
// keeps it out of the static CPU manager's pinning, which it does not need).
var collectorResources = corev1.ResourceRequirements{
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
}

// DatabasePod builds attempt `attempt` of a cell's database pod. hasConfig
// says whether the config variant has any text (an empty variant runs the
// server with its defaults, so nothing is mounted or passed). With a
// collectorImage, a sidecar samples the node's /proc (CPU, context switches,
// disk I/O) and the server's own CPU during each step: the pod shares its
// process namespace so the sidecar sees the server's processes.
func DatabasePod(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, attempt int32, hasConfig bool, collectorImage string) *corev1.Pod {
	db := c.Database
	k := contracts[db.Engine]
	p := run.Spec.Placement

	args := []string{}
	var mounts []corev1.VolumeMount
	volumes := []corev1.Volume{dataVolume(c, attempt), {
		Name: runVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	}}
	mounts = append(mounts, corev1.VolumeMount{Name: DataVolume, MountPath: k.dataDir})
	if lv := logVolume(c, attempt); lv != nil {
		volumes = append(volumes, *lv)
		mounts = append(mounts, corev1.VolumeMount{Name: LogVolume, MountPath: k.logMount})
		args = append(args, k.logArgs...)
	}
	if hasConfig {
		volumes = append(volumes, corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(c)}},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: "config", MountPath: k.configPath, SubPath: agentapi.ConfigKeyServer, ReadOnly: true})
		args = append(args, k.configArgs...)
	}
	if db.Engine == dbbenchv1alpha1.EnginePostgres {
		// The official image's entrypoint passes arguments starting with
		// "-" to postgres.
		mounts = append(mounts, corev1.VolumeMount{Name: runVolume, MountPath: "/var/run/postgresql"})
	} else {
		mounts = append(mounts, corev1.VolumeMount{Name: runVolume, MountPath: "/run/mysqld"})
	}
	args = append(args, db.Args...)

	env := k.env(SecretName(c))
	if db.Storage.Log != nil {
		env = append(env, k.logEnv...)
	}
	env = append(env, db.Env...)

	container := corev1.Container{
		Name:            DatabaseContainer,
		Image:           c.Image,
		ImagePullPolicy: db.ImagePullPolicy,
		Args:            args,
		Env:             env,
		Ports:           []corev1.ContainerPort{{Name: k.portName, ContainerPort: k.port, Protocol: corev1.ProtocolTCP}},
		// The official entrypoints initialise the data directory with a
		// temporary server that does not listen on TCP, so an open port
		// means the real server is up. The agent then waits at the SQL
		// level as well.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(k.port)}},
			PeriodSeconds:    2,
			FailureThreshold: 3,
		},
		Resources:                qosResources(p.QoSClass, ScaleCPULimit(db.Resources, c.Config.CPUScalePercent), nil),
		VolumeMounts:             mounts,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{dropAll}},
			// The official images write sockets, pid files and init
			// scratch outside the data directory.
			ReadOnlyRootFilesystem: ptr.To(false),
		},
	}

	containers := []corev1.Container{container}
	if collectorImage != "" {
		collector := corev1.Container{
			Name:            CollectorContainer,
			Image:           collectorImage,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            collectorArgs(db.Storage.Log != nil),
			// The database's volumes, read-only, so the collector finds
			// the block device behind each from its own mount table.
			VolumeMounts: collectorMounts(db.Storage.Log != nil),
			Ports:        []corev1.ContainerPort{{Name: "collector", ContainerPort: CollectorPort, Protocol: corev1.ProtocolTCP}},
			Resources:    *collectorResources.DeepCopy(),
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				ReadOnlyRootFilesystem:   ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{dropAll}},
			},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}
		if run.Spec.Workload.Profile != nil {
			profilingCollector(&collector)
			volumes = append(volumes, corev1.Volume{Name: ProfileScratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}
		containers = append(containers, collector)
	}

	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      DatabasePodName(c, attempt),
			Namespace: run.Namespace,
			Labels:    attemptLabels(run, c, RoleDatabase, attempt),
		},
		Spec: corev1.PodSpec{
			Containers:                    containers,
			ShareProcessNamespace:         ptr.To(collectorImage != ""),
			Volumes:                       volumes,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			NodeSelector:                  p.Database.NodeSelector,
			Tolerations:                   withNodeLossTolerations(p.Database.Tolerations),
			Affinity:                      withCellTerms(p.Database.Affinity, run, c, false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(k.uid),
				RunAsGroup:     ptr.To(k.uid),
				FSGroup:        ptr.To(k.uid),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
}

// ProfileScratchVolume is the collector's writable /tmp when it profiles
// (perf record's data file; its root filesystem stays read-only).
const ProfileScratchVolume = "profile-scratch"

// ProfileCapabilities are what perf needs in the collector to sample the
// server's processes: CAP_PERFMON opens perf events whatever the node's
// kernel.perf_event_paranoid, CAP_SYS_PTRACE lets it open events on, and
// read the binaries (through /proc/PID/root) of, processes of another user.
var ProfileCapabilities = []corev1.Capability{"PERFMON", "SYS_PTRACE"}

// profilingCollector turns the collector into the profiler as well
// (workload.profile): --profile, root with ProfileCapabilities (a
// non-root container gets no effective capabilities from the runtime),
// and a scratch /tmp. The baseline Pod Security Standard refuses these
// capabilities: docs/explain.md.
func profilingCollector(c *corev1.Container) {
	c.Args = append(c.Args, "--profile")
	c.SecurityContext.RunAsUser = ptr.To[int64](0)
	c.SecurityContext.RunAsNonRoot = ptr.To(false)
	c.SecurityContext.Capabilities.Add = append([]corev1.Capability(nil), ProfileCapabilities...)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: ProfileScratchVolume, MountPath: "/tmp"})
	// perf script of a 30-s profile needs more than the sampler's 64Mi.
	mem := resource.MustParse("256Mi")
	c.Resources.Limits[corev1.ResourceMemory] = mem
	c.Resources.Requests[corev1.ResourceMemory] = mem
}

// CollectorVolumeDir is where the collector sidecar mounts the database's
// volumes (one directory per volume name) to attribute disk I/O to them.
const CollectorVolumeDir = "/dbbench/volumes"

func collectorMounts(withLog bool) []corev1.VolumeMount {
	m := []corev1.VolumeMount{{Name: DataVolume, MountPath: CollectorVolumeDir + "/" + DataVolume, ReadOnly: true}}
	if withLog {
		m = append(m, corev1.VolumeMount{Name: LogVolume, MountPath: CollectorVolumeDir + "/" + LogVolume, ReadOnly: true})
	}
	return m
}

func collectorArgs(withLog bool) []string {
	args := []string{"collector", "--listen", fmt.Sprintf(":%d", CollectorPort), "--pod-processes",
		"--volume", DataVolume + "=" + CollectorVolumeDir + "/" + DataVolume}
	if withLog {
		args = append(args, "--volume", LogVolume+"="+CollectorVolumeDir+"/"+LogVolume)
	}
	return args
}

// logVolume is the storage.log volume, or nil when the log stays in the
// data directory.
func logVolume(c matrix.Cell, attempt int32) *corev1.Volume {
	l := c.Database.Storage.Log
	if l == nil {
		return nil
	}
	if l.VolumeClaim != nil {
		return &corev1.Volume{Name: LogVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: LogClaimName(c, attempt)},
		}}
	}
	ed := &corev1.EmptyDirVolumeSource{}
	if l.EmptyDir != nil {
		ed = l.EmptyDir.DeepCopy()
	}
	return &corev1.Volume{Name: LogVolume, VolumeSource: corev1.VolumeSource{EmptyDir: ed}}
}

func dataVolume(c matrix.Cell, attempt int32) corev1.Volume {
	s := c.Database.Storage
	if s.VolumeClaim != nil {
		return corev1.Volume{Name: DataVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: DataClaimName(c, attempt)},
		}}
	}
	ed := &corev1.EmptyDirVolumeSource{}
	if s.EmptyDir != nil {
		ed = s.EmptyDir.DeepCopy()
	}
	return corev1.Volume{Name: DataVolume, VolumeSource: corev1.VolumeSource{EmptyDir: ed}}
}

// Claims builds the per-attempt PersistentVolumeClaims of the database: the
// data claim and the log claim, each only when its storage is a volumeClaim.
func Claims(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, attempt int32) []*corev1.PersistentVolumeClaim {
	var out []*corev1.PersistentVolumeClaim
	st := c.Database.Storage
	if st.VolumeClaim != nil {
		out = append(out, claim(run, c, attempt, DataClaimName(c, attempt), st.VolumeClaim))
	}
	if st.Log != nil && st.Log.VolumeClaim != nil {
		out = append(out, claim(run, c, attempt, LogClaimName(c, attempt), st.Log.VolumeClaim))
	}
	return out
}

func claim(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, attempt int32, name string, vc *dbbenchv1alpha1.VolumeClaimSpec) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: run.Namespace,
			Labels: attemptLabels(run, c, RoleDatabase, attempt),
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: vc.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: vc.Size}},
		},
	}
}

// ScaleCPULimit returns the resources with the CPU limit scaled to percent
// of its value (configs[].cpuScalePercent), rounded down to a millicore and
// at least one: the CFS quota the kubelet derives from the limit is then
// that share of the unscaled one. A CPU request above the scaled limit is
// lowered to it (a request may not exceed its limit). Nil percent, 100 or
// no CPU limit leaves the resources as they are (the API refuses a scale
// without a limit).
func ScaleCPULimit(in corev1.ResourceRequirements, percent *int32) corev1.ResourceRequirements {
	out := *in.DeepCopy()
	limit, ok := out.Limits[corev1.ResourceCPU]
	if percent == nil || *percent >= 100 || !ok {
		return out
	}
	milli := max(limit.MilliValue()*int64(*percent)/100, 1)
	scaled := *resource.NewMilliQuantity(milli, resource.DecimalSI)
	out.Limits[corev1.ResourceCPU] = scaled
	if req, ok := out.Requests[corev1.ResourceCPU]; ok && req.Cmp(scaled) > 0 {
		out.Requests[corev1.ResourceCPU] = scaled.DeepCopy()
	}
	return out
}

// qosResources returns the container resources for the QoS class: with
// Guaranteed, requests equal limits (fallback supplies limits the user left
// out); otherwise the resources as given.
func qosResources(qos dbbenchv1alpha1.QoSClass, in corev1.ResourceRequirements, fallback corev1.ResourceList) corev1.ResourceRequirements {
	out := *in.DeepCopy()
	if qos != dbbenchv1alpha1.QoSGuaranteed {
		return out
	}
	if out.Limits == nil {
		out.Limits = corev1.ResourceList{}
	}
	for name, q := range fallback {
		if _, ok := out.Limits[name]; !ok {
			out.Limits[name] = q
		}
	}
	out.Requests = corev1.ResourceList{}
	for name, q := range out.Limits {
		out.Requests[name] = q.DeepCopy()
	}
	return out
}

// DefaultClientLimits are the client's limits under Guaranteed QoS when the
// spec gives none: one whole CPU, so the client can be pinned too.
var DefaultClientLimits = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("1"),
	corev1.ResourceMemory: resource.MustParse("1Gi"),
}

// Service builds the cell's headless Service: a stable DNS name for people
// debugging a cell. The agent connects by pod IP, so no Service NAT sits in
// the measured path.
func Service(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell) *corev1.Service {
	k := contracts[c.Database.Engine]
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName(c), Namespace: run.Namespace, Labels: CellLabels(run, c, RoleDatabase)},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{dbbenchv1alpha1.LabelCell: c.ObjectBase, dbbenchv1alpha1.LabelRole: RoleDatabase},
			Ports:     []corev1.ServicePort{{Name: k.portName, Port: k.port, TargetPort: intstr.FromInt32(k.port)}},
		},
	}
}
