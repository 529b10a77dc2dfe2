//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The user's databases of TestExternal: the project's images (loaded by
// hack/test-e2e.sh), a superuser password, a table of the user's with
// sentinel rows, and an account for dbbench that may create and drop
// databases (MariaDB: only those named dbbench_*) and nothing else of the
// user's.
const (
	userDBRootPW   = "root-pw-e2e"
	userDBBenchPW  = "bench-pw-e2e"
	userDBSentinel = 3
	userDBName     = "shop-db"
)

// userDatabase is one engine's "database somebody else runs": how to start
// it, how to query it as its superuser, and the SQL that counts the user's
// sentinel rows and the dbbench_* databases left on the server (one number
// per line).
type userDatabase struct {
	engine dbbenchv1alpha1.Engine
	image  string
	port   int32
	// env sets the superuser password (and the database of the init
	// script) the image's entrypoint reads on first start.
	env []corev1.EnvVar
	// dataDir is where the server keeps its data (an emptyDir: the
	// StatefulSet is the user's, its storage does not matter here).
	dataDir string
	// init runs once, as the superuser, when the data directory is new.
	init string
	// query is the command that runs sql as the superuser against host.
	query func(host, sql string) []string
	// check counts the sentinel rows, then the dbbench_* databases left.
	check string
	// version tells whether provenance.serverVersion is the server's own.
	version func(v string) bool
}

var userDatabases = []userDatabase{
	{
		engine: dbbenchv1alpha1.EngineMariaDB, image: "mariadb:10.11", port: 3306,
		env:     []corev1.EnvVar{{Name: "MARIADB_ROOT_PASSWORD", Value: userDBRootPW}},
		dataDir: "/var/lib/mysql",
		init: "CREATE DATABASE shop;\n" +
			"CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(16));\n" +
			"INSERT INTO shop.orders VALUES (1,'keep'),(2,'keep'),(3,'keep');\n" +
			"CREATE USER 'bench'@'%' IDENTIFIED BY '" + userDBBenchPW + "';\n" +
			"GRANT ALL PRIVILEGES ON `dbbench\\_%`.* TO 'bench'@'%';\n" +
			"GRANT PROCESS ON *.* TO 'bench'@'%';\n",
		query: func(host, sql string) []string {
			return []string{"mariadb", "-h", host, "-uroot", "-p" + userDBRootPW, "-N", "-B", "-e", sql}
		},
		check: "SELECT COUNT(*) FROM shop.orders WHERE note='keep'; " +
			"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'dbbench\\_%'",
		version: func(v string) bool { return strings.Contains(v, "MariaDB") && strings.HasPrefix(v, "10.11") },
	},
	{
		// The init script runs in POSTGRES_DB (shop). The bench role may
		// create databases (and so owns and may drop the ones it
		// created); it is no superuser and owns nothing of the user's.
		engine: dbbenchv1alpha1.EnginePostgres, image: "postgres:17", port: 5432,
		env: []corev1.EnvVar{{Name: "POSTGRES_PASSWORD", Value: userDBRootPW}, {Name: "POSTGRES_DB", Value: "shop"},
			{Name: "PGDATA", Value: "/var/lib/postgresql/data/pgdata"}},
		dataDir: "/var/lib/postgresql/data",
		init: "CREATE TABLE orders (id INT PRIMARY KEY, note VARCHAR(16));\n" +
			"INSERT INTO orders VALUES (1,'keep'),(2,'keep'),(3,'keep');\n" +
			"CREATE ROLE bench LOGIN CREATEDB PASSWORD '" + userDBBenchPW + "';\n",
		query: func(host, sql string) []string {
			cmd := []string{"env", "PGPASSWORD=" + userDBRootPW, "psql", "-h", host, "-U", "postgres", "-d", "shop", "-tA", "-v", "ON_ERROR_STOP=1"}
			for _, s := range strings.Split(sql, "; ") {
				cmd = append(cmd, "-c", s)
			}
			return cmd
		},
		check: "SELECT COUNT(*) FROM orders WHERE note='keep'; " +
			"SELECT COUNT(*) FROM pg_database WHERE datname LIKE 'dbbench\\_%'",
		version: func(v string) bool { return strings.HasPrefix(v, "17.") },
	},
}

// start runs the user's database in namespace ns as a user would: a plain
// StatefulSet and a Service named shop-db, nothing of dbbench's.
func (u userDatabase) start(t *testing.T, ns string) {
	t.Helper()
	labels := map[string]string{"app": userDBName}
	init := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userDBName + "-init"},
		Data: map[string]string{"init.sql": u.init}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userDBName},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: u.port}}},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userDBName},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: svc.Name,
			Replicas:    ptr.To[int32](1),
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       u.podSpec(init.Name),
			},
		},
	}
	for _, obj := range []client.Object{init, svc, sts} {
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// podSpec is the server's pod: the image's entrypoint with the superuser
// password and the init script.
func (u userDatabase) podSpec(initConfigMap string) corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: string(u.engine), Image: u.image, ImagePullPolicy: corev1.PullIfNotPresent,
			Env:   u.env,
			Ports: []corev1.ContainerPort{{ContainerPort: u.port}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "init", MountPath: "/docker-entrypoint-initdb.d"},
				{Name: "data", MountPath: u.dataDir},
			},
		}},
		Volumes: []corev1.Volume{
			{Name: "init", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: initConfigMap}}}},
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
}

// run runs sql as the superuser on the user's database in a Job of its
// own and returns its output fields (one value per line).
func (u userDatabase) run(t *testing.T, ns, host, name, sql string) []string {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](3),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "query", Image: u.image, ImagePullPolicy: corev1.PullIfNotPresent,
					Command: u.query(host, sql),
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
	return strings.Fields(out)
}

// benchSecret is the Secret of the bench account in the run's namespace.
func benchSecret(t *testing.T, ns, user, password string) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: userDBName},
		StringData: map[string]string{"username": user, "password": password}}
	if err := k8sClient.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return secret
}

// requireExternalResults checks an external (or templated) cell's results:
// the version the server reports, the endpoint, the database dropped, every
// caveat, and steps measured.
func requireExternalResults(t *testing.T, ns string, cs dbbenchv1alpha1.CellStatus, host string, version func(string) bool) {
	t.Helper()
	doc := resultDocument(t, ns, cs)
	pv := doc.Provenance
	if !version(pv.ServerVersion) {
		t.Errorf("provenance.serverVersion %q is not the server's own version", pv.ServerVersion)
	}
	if pv.External == nil || !pv.External.Dropped || pv.External.Endpoint != host ||
		len(pv.External.NotGuaranteed) != len(results.ExternalCaveats()) {
		t.Fatalf("provenance.external = %+v, want endpoint %s, dropped, with every caveat", pv.External, host)
	}
	if doc.Cell.Version != cs.Version {
		t.Errorf("results cell version %q, status says %q", doc.Cell.Version, cs.Version)
	}
	if len(doc.Steps) == 0 {
		t.Error("no steps in the results")
	}
}

// TestExternal benchmarks, per engine, a database that dbbench does not
// start, run by a StatefulSet in another namespace behind its own Service:
// the run's one cell (<db>-external-default) has a client Job and no
// database pod, succeeds, and its results name the server's version and the
// caveats; the user's table keeps its rows and no dbbench_* database is
// left on the server.
func TestExternal(t *testing.T) {
	tier.Core(t)
	for _, u := range userDatabases {
		t.Run(string(u.engine), func(t *testing.T) {
			t.Parallel()
			dbNS := newNamespace(t, "external-db")
			ns := newNamespace(t, "external")
			u.start(t, dbNS)
			host := userDBName + "." + dbNS
			secret := benchSecret(t, ns, "bench", userDBBenchPW)

			run := smallRun(ns, "ext")
			run.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{Name: string(u.engine), Engine: u.engine,
				External: &dbbenchv1alpha1.ExternalDatabase{Host: host, CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: secret.Name}}}
			createRun(t, run)
			run = waitForRunFinished(t, ns, run.Name, 10*time.Minute)
			requireSucceeded(t, run)

			if pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRole: specs.RoleDatabase}); len(pods) != 0 {
				t.Errorf("%d database pods in the run's namespace; an external cell has none", len(pods))
			}
			want := string(u.engine) + "-" + matrix.ExternalVersion + "-default"
			if len(run.Status.Cells) != 1 || run.Status.Cells[0].Name != want {
				t.Fatalf("cells %s, want one %s", runSummary(run), want)
			}
			if v := run.Status.Cells[0].Version; v != matrix.ExternalVersion {
				t.Errorf("cell version %q, want %q", v, matrix.ExternalVersion)
			}
			requireExternalResults(t, ns, run.Status.Cells[0], host, u.version)

			got := u.run(t, dbNS, userDBName, "check", u.check)
			if len(got) != 2 || got[0] != fmt.Sprint(userDBSentinel) || got[1] != "0" {
				t.Errorf("user's rows kept / dbbench databases left = %q, want [%d 0]", got, userDBSentinel)
			}
		})
	}
}

// TestTemplateDeployment runs the whole databases[].template path on the
// cluster with a kind every cluster has (no operator can be built and run
// here: docs/design.md, "Operator-managed targets"): per cell, a Deployment
// of mariadb:{version} (the user's MariaDB of TestExternal, with its init
// script) ready when Available is True, reached through a Service the test
// creates, with the bench account's Secret. The cell runs as an external
// one at that endpoint, its results name the server's version, and the
// Deployment is deleted when the cell ends. The chart grants the manager
// apps/deployments through rbac.templateKinds (hack/test-e2e.sh).
func TestTemplateDeployment(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	u := userDatabases[0]
	ns := newNamespace(t, "template")
	secret := benchSecret(t, ns, "bench", userDBBenchPW)
	labels := map[string]string{"app": "templated-db"}
	init := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "templated-db-init"},
		Data: map[string]string{"init.sql": u.init}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "templated-db"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: u.port}}},
	}
	for _, obj := range []client.Object{init, svc} {
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	pod := u.podSpec(init.Name)
	pod.Containers[0].Image = "mariadb:" + specs.PlaceholderVersion
	// Available then means the server accepts connections.
	pod.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 2,
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(u.port)}}}
	dep := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
	raw, err := json.Marshal(dep)
	if err != nil {
		t.Fatal(err)
	}

	run := smallRun(ns, "tpl", "10.11")
	run.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{Name: "mariadb", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11"},
		Template: &dbbenchv1alpha1.DatabaseTemplate{
			Object:         runtime.RawExtension{Raw: raw},
			ReadyCondition: string(appsv1.DeploymentAvailable),
			ReadyTimeout:   &metav1.Duration{Duration: 5 * time.Minute},
			Endpoint: dbbenchv1alpha1.TemplateEndpoint{Host: svc.Name,
				CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: secret.Name}},
		}}
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, 10*time.Minute)
	requireSucceeded(t, run)

	if len(run.Status.Cells) != 1 || run.Status.Cells[0].Name != "mariadb-10.11-default" {
		t.Fatalf("cells %s, want one mariadb-10.11-default", runSummary(run))
	}
	cs := run.Status.Cells[0]
	if tg := cs.Target; tg == nil || tg.Kind != "Deployment" || tg.ReadyTime == nil || tg.Host != svc.Name || !tg.Deleted {
		t.Errorf("status target %+v, want a Deployment, ready, at %s, deleted", tg, svc.Name)
	}
	if pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRole: specs.RoleDatabase}); len(pods) != 0 {
		t.Errorf("%d database pods of dbbench's; the templated object runs the server", len(pods))
	}
	requireExternalResults(t, ns, cs, svc.Name, u.version)
	eventually(t, 2*time.Minute, "the templated Deployment deleted", func() string {
		var list appsv1.DeploymentList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		if len(list.Items) > 0 {
			return fmt.Sprintf("%d Deployments", len(list.Items))
		}
		return ""
	})
}
