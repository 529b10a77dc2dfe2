package specs

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
)

const (
	// DefaultExternalPostgresDatabase is the database a PostgreSQL client
	// connects to when external.database is unset: every cluster has it.
	DefaultExternalPostgresDatabase = "postgres"
)

// OwnDatabaseName is the database a cell's agent creates, uses and drops on
// an external target: dbbench_<first 8 hex digits of the run UID>_<cell>,
// an identifier of lower-case letters, digits and underscores matching
// agentapi.OwnDatabasePattern (the agent refuses to drop anything else). The run
// UID keeps two runs with the same cell names apart on one server.
func OwnDatabaseName(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell) string {
	uid := strings.ReplaceAll(string(run.UID), "-", "")
	if len(uid) > 8 {
		uid = uid[:8]
	}
	ident := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				return r
			case r >= 'A' && r <= 'Z':
				return r - 'A' + 'a'
			}
			return '_'
		}, s)
	}
	name := "dbbench_" + ident(uid) + "_" + ident(c.Name)
	// PostgreSQL truncates identifiers at 63 bytes; the cell name's end
	// (repeat, config) is the part that differs, so keep it.
	if over := len(name) - 63; over > 0 {
		name = "dbbench_" + ident(uid) + "_" + ident(c.Name)[over:]
	}
	return name
}

// externalPlanServer is the plan's server section for an external target.
func externalPlanServer(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, s *agentapi.Server) {
	ext := c.Database.External
	if ext.Port > 0 {
		s.Port = int(ext.Port)
	}
	s.Database = OwnDatabaseName(run, c)
	connect := ext.Database
	if connect == "" && c.Database.Engine == dbbenchv1alpha1.EnginePostgres {
		connect = DefaultExternalPostgresDatabase
	}
	s.External = &agentapi.ExternalServer{Endpoint: ext.Host, ConnectDatabase: connect}
}

// externalCredentialEnv takes the agent's account from the user's Secret:
// the plan never holds it, and dbbench makes no copy.
func externalCredentialEnv(ext *dbbenchv1alpha1.ExternalDatabase) []corev1.EnvVar {
	ref := ext.CredentialsSecret
	userKey, passwordKey := ref.UserKeyOrDefault(), ref.PasswordKeyOrDefault()
	return []corev1.EnvVar{
		secretEnv(agentapi.EnvUser, ref.Name, userKey),
		secretEnv(agentapi.EnvPassword, ref.Name, passwordKey),
	}
}
