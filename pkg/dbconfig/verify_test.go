package dbconfig

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mysqlVars(kv ...string) map[string]Effective {
	m := map[string]Effective{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = Effective{Value: kv[i+1]}
	}
	return m
}

func TestVerifyMySQLFamily(t *testing.T) {
	vars := mysqlVars("innodb_buffer_pool_size", "268435456", "max_connections", "200", "skip_name_resolve", "ON",
		"log_bin", "OFF", "innodb_flush_method", "O_DIRECT", "performance_schema", "OFF", "time_zone", "+00:00",
		"innodb_file_per_table", "ON")
	tests := []struct {
		name    string
		engine  Engine
		version string
		text    string
		want    []Check
	}{
		{
			name: "applied: sizes, bare options, skip- prefix, enum case, alias", engine: MariaDB, version: "10.11.19-MariaDB",
			text: "[mariadbd]\ninnodb-buffer-pool-size=256M\nskip-name-resolve\nskip-log-bin\ninnodb_flush_method=o_direct\ndefault-time-zone='+00:00'\ninnodb_file_per_table\n",
			want: []Check{
				{Name: "innodb_buffer_pool_size", Line: 2, Requested: "256M", Normalized: "268435456", Effective: "268435456", Outcome: Verified},
				{Name: "skip_name_resolve", Line: 3, Requested: "(no value)", Normalized: "ON", Effective: "ON", Outcome: Verified},
				{Name: "log_bin", Line: 4, Requested: "(no value)", Normalized: "OFF", Effective: "OFF", Outcome: Verified},
				{Name: "innodb_flush_method", Line: 5, Requested: "o_direct", Effective: "O_DIRECT", Outcome: Verified},
				{Name: "time_zone", Line: 6, Requested: "+00:00", Effective: "+00:00", Outcome: Verified},
				{Name: "innodb_file_per_table", Line: 7, Requested: "(no value)", Normalized: "ON", Effective: "ON", Outcome: Verified},
			},
		},
		{
			name: "not applied, last assignment wins", engine: MySQL, version: "9.7.0",
			text: "[mysqld]\nmax_connections=50\n[server]\nmax_connections=77\n",
			want: []Check{
				{Name: "max_connections", Line: 4, Requested: "77", Effective: "200", Outcome: NotApplied},
			},
		},
		{
			name: "unverifiable: loose unknown, option without variable, plugin-load, include, other version's section", engine: MySQL, version: "9.7.0",
			text: "[mysqld]\nloose-innodb_bufer_pool_size=64M\nuser=mysql\nplugin-load-add=auth_socket.so\n!includedir /etc/mysql/conf.d/\n[mysqld-5.0]\nmax_connections=55\n[client]\nport=3306\n",
			want: []Check{
				{Name: "innodb_bufer_pool_size", Line: 2, Requested: "64M", Outcome: Unverified,
					Reason: "loose- option for a variable the server does not have (innodb_bufer_pool_size): it ignored the option; check the spelling or the plugin"},
				{Name: "user", Line: 3, Requested: "mysql", Outcome: Unverified, Reason: "the server reports no variable user (a start-up option without a variable)"},
				{Name: "plugin_load_add", Line: 4, Requested: "auth_socket.so", Outcome: Unverified,
					Reason: "plugin-load options name libraries; the plugins' own variables are what the server reports"},
				{Name: "!includedir", Line: 5, Requested: "/etc/mysql/conf.d/", Outcome: Unverified,
					Reason: "the server reads another file whose settings are not in the variant's text"},
				{Name: "max_connections", Line: 7, Requested: "55", Outcome: Unverified, Reason: "section [mysqld-5.0] is read by mysql 5.0 only; this server is 9.7.0"},
				{Name: "port", Line: 9, Requested: "3306", Outcome: Unverified, Reason: "section [client] is not read by the server (it reads [mysqld], [server], [mysqld-9.7])"},
			},
		},
		{
			name: "settings without a section are compared", engine: MariaDB, version: "10.11.19-MariaDB",
			text: "innodb_buffer_pool_size=512M\n",
			want: []Check{
				{Name: "innodb_buffer_pool_size", Line: 1, Requested: "512M", Normalized: "536870912", Effective: "268435456", Outcome: NotApplied,
					Reason: "set before any [section] header"},
			},
		},
		{
			name: "this version's section is read", engine: MariaDB, version: "10.11.19-MariaDB",
			text: "[mariadb-10.11]\nperformance_schema=ON\n",
			want: []Check{
				{Name: "performance_schema", Line: 2, Requested: "ON", Effective: "OFF", Outcome: NotApplied},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Verify(Parse(tt.engine, tt.text), tt.version, vars)
			if diff := cmp.Diff(tt.want, rep.Checks); diff != "" {
				t.Errorf("checks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyPostgres(t *testing.T) {
	pg := func(name, setting, unit, vartype, source string, pending bool) Effective {
		return Effective{PG: &PGSetting{Name: name, Setting: setting, Unit: unit, Vartype: vartype, Source: source,
			SourceFile: "/etc/pg/postgresql.conf", SourceLine: 3, PendingRestart: pending}}
	}
	eff := map[string]Effective{
		"shared_buffers":     pg("shared_buffers", "32768", "8kB", "integer", "configuration file", true),
		"work_mem":           pg("work_mem", "65536", "kB", "integer", "configuration file", false),
		"synchronous_commit": pg("synchronous_commit", "off", "", "enum", "configuration file", false),
		"listen_addresses":   pg("listen_addresses", "*", "", "string", "command line", false),
		"max_connections":    pg("max_connections", "200", "", "integer", "configuration file", false),
	}
	text := "shared_buffers = 128MB\nwork_mem = 64MB\nsynchronous_commit = false\nlisten_addresses = 'localhost'\n" +
		"max_connections = 77\nmax_connections = 200\nauto_explain.log_min_duration = 10ms\ninclude_if_exists 'local.conf'\n"
	rep := Verify(Parse(Postgres, text), "15.18", eff)
	src := "configuration file /etc/pg/postgresql.conf:3"
	want := []Check{
		{Name: "shared_buffers", Line: 1, Requested: "128MB", Normalized: "16384×8kB", Effective: "32768×8kB", Source: src, Outcome: NotApplied,
			Reason: "pending restart: the server read a new value but applies it only when restarted"},
		{Name: "work_mem", Line: 2, Requested: "64MB", Normalized: "65536×kB", Effective: "65536×kB", Source: src, Outcome: Verified},
		{Name: "synchronous_commit", Line: 3, Requested: "false", Normalized: "off", Effective: "off", Source: src, Outcome: Verified},
		{Name: "listen_addresses", Line: 4, Requested: "localhost", Effective: "*", Source: "command line /etc/pg/postgresql.conf:3", Outcome: Unverified,
			Reason: "dbbench sets it on the server's command line"},
		{Name: "max_connections", Line: 6, Requested: "200", Effective: "200", Source: src, Outcome: Verified},
		{Name: "auto_explain.log_min_duration", Line: 7, Requested: "10ms", Outcome: Unverified,
			Reason: "the server reports no setting auto_explain.log_min_duration (a module's setting: is the module loaded?)"},
		{Name: "include_if_exists", Line: 8, Requested: "local.conf", Outcome: Unverified, Reason: "the server reads another file whose settings are not in the variant's text"},
	}
	if diff := cmp.Diff(want, rep.Checks); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if rep.Count(Verified) != 3 || rep.Count(NotApplied) != 1 || rep.Count(Unverified) != 3 {
		t.Errorf("counts: %d verified, %d not applied, %d unverified", rep.Count(Verified), rep.Count(NotApplied), rep.Count(Unverified))
	}
}

func TestReportErr(t *testing.T) {
	vars := mysqlVars("max_connections", "151")
	ok := Verify(Parse(MariaDB, "[mysqld]\nmax_connections=151\n"), "10.11.1", vars)
	if err := ok.Err(); err != nil {
		t.Errorf("applied variant: %v", err)
	}
	bad := Verify(Parse(MariaDB, "max_connections=77\n[mysqld]\n"), "10.11.1", map[string]Effective{"max_connections": {Value: "151", Source: "COMPILE-TIME"}})
	err := bad.Err()
	var nae *NotAppliedError
	if !errors.As(err, &nae) || len(nae.Settings) != 1 || nae.Settings[0].Name != "max_connections" {
		t.Fatalf("Err() = %v", err)
	}
	want := `config variant not in effect: 1 setting(s) differ: max_connections: requested 77 on line 1, effective 151 from COMPILE-TIME ` +
		`(set before any [section] header); the variant has mistakes: line 1: "max_connections" comes before any [section] header; ` +
		`the server reads only its own sections such as [mysqld]`
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
}
