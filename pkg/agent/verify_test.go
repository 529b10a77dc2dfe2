package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/dbconfig"
	"github.com/dbbench/dbbench/pkg/results"
)

func TestLoadServerConfig(t *testing.T) {
	dir := t.TempDir()
	planPath := filepath.Join(dir, agentapi.TaskFile)
	// An older controller mounts no variant: nothing to verify, no error.
	if got, err := LoadServerConfig(planPath); got != "" || err != nil {
		t.Errorf("without the file: %q, %v", got, err)
	}
	text := "[mysqld]\nmax_connections=77\n"
	if err := os.WriteFile(filepath.Join(dir, agentapi.ServerConfigFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadServerConfig(planPath); got != text || err != nil {
		t.Errorf("beside the plan: %q, %v", got, err)
	}
	o := LocalOptions{ServerConfigFile: filepath.Join(dir, agentapi.ServerConfigFile)}
	if got, err := o.ServerConfig(); got != text || err != nil {
		t.Errorf("--server-config: %q, %v", got, err)
	}
	o.ServerConfigFile = filepath.Join(dir, "missing.cnf")
	if _, err := o.ServerConfig(); err == nil {
		t.Error("--server-config of a missing file: no error")
	}
}

func TestConfigEngine(t *testing.T) {
	tests := []struct {
		engine  agentapi.Engine
		version string
		want    dbconfig.Engine
	}{
		{agentapi.MariaDB, "10.11.19-MariaDB-0+deb12u1", dbconfig.MariaDB},
		{agentapi.MySQL, "10.11.19-MariaDB-0+deb12u1", dbconfig.MariaDB}, // local --engine mysql against MariaDB
		{agentapi.MySQL, "9.7.0", dbconfig.MySQL},
		{agentapi.Postgres, "15.18 (Debian 15.18-0+deb12u1)", dbconfig.Postgres},
	}
	for _, tt := range tests {
		if got := configEngine(tt.engine, tt.version); got != tt.want {
			t.Errorf("configEngine(%s, %q) = %s, want %s", tt.engine, tt.version, got, tt.want)
		}
	}
}

func TestConfigCheckDocument(t *testing.T) {
	rep := dbconfig.Verify(dbconfig.Parse(dbconfig.MariaDB, "max_connections=77\n[mysqld]\ninnodb_buffer_pool_size=256M\nuser=mysql\n"),
		"10.11.1", map[string]dbconfig.Effective{"max_connections": {Value: "151"}, "innodb_buffer_pool_size": {Value: "268435456", Source: "CONFIG"}})
	want := &results.ConfigCheck{
		Verified: []results.ConfigSetting{{Name: "innodb_buffer_pool_size", Line: 3, Requested: "256M", Normalized: "268435456",
			Effective: "268435456", Source: "CONFIG"}},
		NotApplied: []results.ConfigSetting{{Name: "max_connections", Line: 1, Requested: "77", Effective: "151",
			Reason: "set before any [section] header"}},
		Unverified: []results.ConfigSetting{{Name: "user", Line: 4, Requested: "mysql",
			Reason: "the server reports no variable user (a start-up option without a variable)"}},
		Mistakes: []string{`line 1: "max_connections" comes before any [section] header; the server reads only its own sections such as [mysqld]`},
	}
	if diff := cmp.Diff(want, configCheck(rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
