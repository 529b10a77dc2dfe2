//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The user's database of TestExternalMariaDB: the project's MariaDB image
// (loaded by hack/test-e2e.sh), a root password, a table of the user's with
// sentinel rows, and an account for dbbench that may create and drop only
// databases named dbbench_* (and read server status).
const (
	userDBImage    = "mariadb:10.11"
	userDBRootPW   = "root-pw-e2e"
	userDBBenchPW  = "bench-pw-e2e"
	userDBSentinel = 3
)

var userDBInit = "CREATE DATABASE shop;\n" +
	"CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(16));\n" +
	"INSERT INTO shop.orders VALUES (1,'keep'),(2,'keep'),(3,'keep');\n" +
	"CREATE USER 'bench'@'%' IDENTIFIED BY '" + userDBBenchPW + "';\n" +
	"GRANT ALL PRIVILEGES ON `dbbench\\_%`.* TO 'bench'@'%';\n" +
	"GRANT PROCESS ON *.* TO 'bench'@'%';\n"

// startUserDatabase runs "the user's database" in namespace ns: a plain pod
// and a Service named shop-db, nothing of dbbench's.
func startUserDatabase(t *testing.T, ns string) {
	t.Helper()
	labels := map[string]string{"app": "shop-db"}
	init := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-db-init"},
		Data: map[string]string{"init.sql": userDBInit}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-db", Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "mariadb", Image: userDBImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Env:          []corev1.EnvVar{{Name: "MARIADB_ROOT_PASSWORD", Value: userDBRootPW}},
				Ports:        []corev1.ContainerPort{{ContainerPort: 3306}},
				VolumeMounts: []corev1.VolumeMount{{Name: "init", MountPath: "/docker-entrypoint-initdb.d"}},
			}},
			Volumes: []corev1.Volume{{Name: "init", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: init.Name}}}}},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-db"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 3306}}},
	}
	for _, obj := range []client.Object{init, pod, svc} {
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// queryUserDatabase runs SQL as root on the user's database in a Job of its
// own and returns its output (one value per line).
func queryUserDatabase(t *testing.T, ns, host, name, sql string) string {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](3),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "query", Image: userDBImage, ImagePullPolicy: corev1.PullIfNotPresent,
					Command: []string{"mariadb", "-h", host, "-uroot", "-p" + userDBRootPW, "-N", "-B", "-e", sql},
				}},
			}},
		},
	}
	if err := k8sClient.Create(ctx, job); err != nil {
		t.Fatalf("creating query Job: %v", err)
	}
	var out string
	eventually(t, 3*time.Minute, "query Job "+name, func() string {
		pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{"job-name": name})
		for _, p := range pods {
			if p.Status.Phase == corev1.PodSucceeded {
				out = podLogs(p, "query", 100)
				return ""
			}
		}
		return fmt.Sprintf("%d pods", len(pods))
	})
	return out
}

// TestExternalMariaDB benchmarks a MariaDB that dbbench does not start,
// running in another namespace behind its own Service: the run's one cell
// (mariadb-external-default) has a client Job and no database pod, succeeds,
// and its results name the server's version and the caveats; the user's
// table keeps its rows and no dbbench_* database is left on the server.
func TestExternalMariaDB(t *testing.T) {
	t.Parallel()
	dbNS := newNamespace(t, "external-db")
	ns := newNamespace(t, "external")
	startUserDatabase(t, dbNS)
	host := "shop-db." + dbNS
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-db"},
		StringData: map[string]string{"username": "bench", "password": userDBBenchPW}}
	if err := k8sClient.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}

	run := smallRun(ns, "ext")
	run.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{Name: "mariadb", Engine: dbbenchv1alpha1.EngineMariaDB,
		External: &dbbenchv1alpha1.ExternalDatabase{Host: host, CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: secret.Name}}}
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, 10*time.Minute)
	requireSucceeded(t, run)

	if pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{specs.LabelRole: specs.RoleDatabase}); len(pods) != 0 {
		t.Errorf("%d database pods in the run's namespace; an external cell has none", len(pods))
	}
	if len(run.Status.Cells) != 1 || run.Status.Cells[0].Name != "mariadb-"+matrix.ExternalVersion+"-default" {
		t.Fatalf("cells %s, want one mariadb-external-default", runSummary(run))
	}
	doc := resultDocument(t, ns, run.Status.Cells[0])
	pv := doc.Provenance
	if !strings.Contains(pv.ServerVersion, "MariaDB") || !strings.HasPrefix(pv.ServerVersion, "10.11") {
		t.Errorf("provenance.serverVersion %q, want the server's own 10.11 MariaDB version", pv.ServerVersion)
	}
	if doc.Cell.Version != matrix.ExternalVersion {
		t.Errorf("cell version %q, want %q", doc.Cell.Version, matrix.ExternalVersion)
	}
	if pv.External == nil || !pv.External.Dropped || pv.External.Endpoint != host ||
		len(pv.External.NotGuaranteed) != len(results.ExternalCaveats()) {
		t.Fatalf("provenance.external = %+v, want endpoint %s, dropped, with every caveat", pv.External, host)
	}
	if len(doc.Steps) == 0 {
		t.Error("no steps in the results")
	}

	out := queryUserDatabase(t, dbNS, "shop-db", "check",
		"SELECT COUNT(*) FROM shop.orders WHERE note='keep'; "+
			"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'dbbench\\_%'")
	lines := strings.Fields(out)
	if len(lines) != 2 || lines[0] != fmt.Sprint(userDBSentinel) || lines[1] != "0" {
		t.Errorf("user's rows kept / dbbench databases left = %q, want [%d 0]", lines, userDBSentinel)
	}
}
