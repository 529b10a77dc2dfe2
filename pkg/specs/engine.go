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
	// logMount is where storage.log is mounted; logEnv and logArgs put
	// the engine's redo log or WAL there.
	logMount string
	logEnv   []corev1.EnvVar
	logArgs  []string
}

// LogVolume is the name of the separate redo log / WAL volume (and, in the
// results, of its I/O figures); DataVolume that of the data directory.
const (
	LogVolume  = "log"
	DataVolume = "data"
)

// mysqlLogMount is the MariaDB/MySQL redo log directory on the log volume.
// innodb_log_group_home_dir also takes MySQL's #innodb_redo directory.
const mysqlLogMount = "/var/lib/dbbench-log"

// postgresWALMount is where the log volume is mounted for PostgreSQL;
// initdb creates the WAL directory one level down, since it insists on
// owning it and the mount point itself belongs to root.
const postgresWALMount = "/var/lib/postgresql/wal"

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
		logMount: mysqlLogMount,
		logArgs:  []string{"--innodb-log-group-home-dir=" + mysqlLogMount},
	},
	dbbenchv1alpha1.EngineMySQL: {
		port: 3306, portName: "mysql", dataDir: "/var/lib/mysql",
		configPath: "/etc/mysql/conf.d/zz-dbbench.cnf",
		env:        mysqlFamily("MYSQL"), uid: 999,
		logMount: mysqlLogMount,
		logArgs:  []string{"--innodb-log-group-home-dir=" + mysqlLogMount},
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
		logMount:   postgresWALMount,
		// The official image and images/postgres pass this to initdb
		// --waldir; PostgreSQL then finds the WAL through the pg_wal
		// symbolic link in the data directory.
		logEnv: []corev1.EnvVar{{Name: "POSTGRES_INITDB_WALDIR", Value: postgresWALMount + "/pg_wal"}},
	},
}

// Port returns the engine's port.
func Port(e dbbenchv1alpha1.Engine) int32 { return contracts[e].port }
