package specs

import (
	"fmt"
	"net"
	"path"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// AgentUID is the unprivileged user the agent image runs as.
const AgentUID int64 = 65532

// ClientJob builds attempt `attempt` of a cell's client Job. It is created
// once the database pod is ready, so the agent gets the pod's IP directly
// (no Service NAT in the measured path) and the scheduler can place the
// client relative to a pod that exists. For an external target dbPodIP is
// the target's host and collector must be false (there is no collector
// beside a server dbbench did not start).
func ClientJob(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, attempt int32, image, dbPodIP string, collector bool) *batchv1.Job {
	p := run.Spec.Placement
	fallback := corev1.ResourceList(nil)
	if p.QoSClass == dbbenchv1alpha1.QoSGuaranteed {
		fallback = DefaultClientLimits
	}
	field := func(name, fieldPath string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}}
	}
	labels := attemptLabels(run, c, RoleClient, attempt)

	// The variant's text goes beside the plan: the agent verifies that the
	// server runs with it (the config ConfigMap always has the key).
	items := make([]corev1.KeyToPath, 0, 2+len(run.Spec.Workload.CustomSteps))
	items = append(items, corev1.KeyToPath{Key: agentapi.ConfigKeyTask, Path: agentapi.TaskFile},
		corev1.KeyToPath{Key: agentapi.ConfigKeyServer, Path: agentapi.ServerConfigFile})
	for _, cs := range run.Spec.Workload.CustomSteps {
		items = append(items, corev1.KeyToPath{Key: CustomScriptKey(cs.Name), Path: path.Join("custom", cs.Name+".lua")})
	}

	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: ClientJobName(c, attempt), Namespace: run.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			// Retries are the controller's decision: it tells benchmark
			// failures from infrastructure failures and keeps the budget.
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: AgentServiceAccountName(run),
					EnableServiceLinks: ptr.To(false),
					NodeSelector:       p.Client.NodeSelector,
					Tolerations:        withNodeLossTolerations(p.Client.Tolerations),
					Affinity:           withCellTerms(p.Client.Affinity, run, c, true),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(AgentUID),
						RunAsGroup:     ptr.To(AgentUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  AgentContainer,
						Image: image,
						// Images are pinned per run; a tag that moves
						// mid-run would mix agent versions.
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            []string{"run"},
						Env: append([]corev1.EnvVar{
							{Name: agentapi.EnvTaskPath, Value: path.Join(agentapi.TaskDir, agentapi.TaskFile)},
							{Name: agentapi.EnvHost, Value: dbPodIP},
							field(agentapi.EnvNodeName, "spec.nodeName"),
							field(agentapi.EnvPodName, "metadata.name"),
							{Name: agentapi.EnvCollectorURL, Value: collectorURL(collector, dbPodIP)},
							{Name: agentapi.EnvAttempt, Value: fmt.Sprint(attempt)},
						}, append(outboxEnv(run), credentialEnv(c)...)...),
						Resources: qosResources(p.QoSClass, run.Spec.Client.Resources, fallback),
						VolumeMounts: []corev1.VolumeMount{
							{Name: "plan", MountPath: agentapi.TaskDir, ReadOnly: true},
							{Name: "tmp", MountPath: "/tmp"},
						},
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{dropAll}},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "plan", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(c)}, Items: items,
						}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}

// CustomScriptKey is the config ConfigMap key holding a custom step's script.
func CustomScriptKey(step string) string { return fmt.Sprintf("custom-%s.lua", step) }

// AgentImage returns the run's client image: spec.client.image, or the
// operator's default.
func AgentImage(run *dbbenchv1alpha1.BenchmarkRun, defaultImage string) string {
	if run.Spec.Client.Image != "" {
		return run.Spec.Client.Image
	}
	return defaultImage
}

func collectorURL(collector bool, dbPodIP string) string {
	if !collector || dbPodIP == "" {
		return ""
	}
	return fmt.Sprintf("http://%s", net.JoinHostPort(dbPodIP, fmt.Sprint(CollectorPort)))
}

// credentialEnv is the agent's account: the cell Secret's (and its root
// account, adminEnv), or for an external target the user's Secret.
func credentialEnv(c matrix.Cell) []corev1.EnvVar {
	if c.External() {
		return externalCredentialEnv(c.Database.External)
	}
	return append([]corev1.EnvVar{
		secretEnv(agentapi.EnvUser, SecretName(c), SecretKeyUser),
		secretEnv(agentapi.EnvPassword, SecretName(c), SecretKeyPassword),
	}, adminEnv(c)...)
}

// adminEnv gives the agent the cell's root account on MySQL and MariaDB, for
// the post-load flush (SET GLOBAL needs privileges the benchmark user lacks).
// It is the cell's own throw-away server; on PostgreSQL the benchmark user is
// already the image's superuser.
func adminEnv(c matrix.Cell) []corev1.EnvVar {
	if c.Database.Engine == dbbenchv1alpha1.EnginePostgres {
		return nil
	}
	return []corev1.EnvVar{
		{Name: agentapi.EnvAdminUser, Value: "root"},
		secretEnv(agentapi.EnvAdminPassword, SecretName(c), SecretKeyRootPassword),
	}
}

// outboxEnv asks the agent for the outbox (the full document and its log in
// its final write) when the controller will upload and then drain it.
func outboxEnv(run *dbbenchv1alpha1.BenchmarkRun) []corev1.EnvVar {
	if run.Spec.Output.S3 == nil {
		return nil
	}
	return []corev1.EnvVar{{Name: agentapi.EnvOutbox, Value: "true"}}
}
