package specs

import (
	corev1 "k8s.io/api/core/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// engineContract is what the official image of an engine expects: the
// environment variables for credentials, where config drop-ins and data go,
// and the port. Images built by hack/images.sh honour the same contract, so
// one code path serves registry images and local builds.
type engineContract struct {
	port       int32
	portName   string
	dataDir    string
	configPath string // where the config variant's text is mounted
	env        func(secret string) []corev1.EnvVar
	// configArgs are server arguments needed to load the variant, if any.
	configArgs []string
	// uid is the server user of the official images.
	uid int64
}

// SecretKeys of the generated credentials Secret.
const (
	SecretKeyUser         = "username"
	SecretKeyPassword     = "password"
	SecretKeyRootPassword = "root-password"
	// DatabaseName is the schema sysbench uses.
	DatabaseName = "sbtest"
	// BenchmarkUser is the account the agent connects as.
	BenchmarkUser = "sbtest"
)

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key},
	}}
}

func mysqlFamily(prefix string) func(string) []corev1.EnvVar {
	return func(secret string) []corev1.EnvVar {
		return []corev1.EnvVar{
			secretEnv(prefix+"_ROOT_PASSWORD", secret, SecretKeyRootPassword),
			secretEnv(prefix+"_USER", secret, SecretKeyUser),
			secretEnv(prefix+"_PASSWORD", secret, SecretKeyPassword),
			{Name: prefix + "_DATABASE", Value: DatabaseName},
		}
	}
}

var contracts = map[dbbenchv1alpha1.Engine]engineContract{
	dbbenchv1alpha1.EngineMariaDB: {
		port: 3306, portName: "mysql", dataDir: "/var/lib/mysql",
		configPath: "/etc/mysql/conf.d/zz-dbbench.cnf",
		env:        mysqlFamily("MARIADB"), uid: 999,
	},
	dbbenchv1alpha1.EngineMySQL: {
		port: 3306, portName: "mysql", dataDir: "/var/lib/mysql",
		configPath: "/etc/mysql/conf.d/zz-dbbench.cnf",
		env:        mysqlFamily("MYSQL"), uid: 999,
	},
	dbbenchv1alpha1.EnginePostgres: {
		port: 5432, portName: "postgresql", dataDir: "/var/lib/postgresql/data",
		configPath: "/etc/dbbench/config/postgresql.conf",
		env: func(secret string) []corev1.EnvVar {
			return []corev1.EnvVar{
				secretEnv("POSTGRES_USER", secret, SecretKeyUser),
				secretEnv("POSTGRES_PASSWORD", secret, SecretKeyPassword),
				{Name: "POSTGRES_DB", Value: DatabaseName},
				// initdb writes the data dir here; the mount point itself
				// may hold lost+found on real volumes.
				{Name: "PGDATA", Value: "/var/lib/postgresql/data/pgdata"},
			}
		},
		// The variant replaces postgresql.conf entirely, so the server
		// would listen on localhost only; the command line wins over it.
		configArgs: []string{"-c", "listen_addresses=*", "-c", "config_file=/etc/dbbench/config/postgresql.conf"},
		uid:        999,
	},
}

// Port returns the engine's port.
func Port(e dbbenchv1alpha1.Engine) int32 { return contracts[e].port }
