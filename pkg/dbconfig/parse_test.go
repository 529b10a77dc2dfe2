package dbconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseCase is a configuration text and what Parse must find in it.
type parseCase struct {
	name     string
	text     string
	settings []Setting
	includes []Include
	mistakes []MistakeKind
}

// runParseCases parses each case's text as engine e's file and compares
// the settings, includes and kinds of mistakes.
func runParseCases(t *testing.T, e Engine, tests []parseCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Parse(e, tt.text)
			if diff := cmp.Diff(tt.settings, v.Settings); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.includes, v.Includes); diff != "" {
				t.Errorf("includes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.mistakes, kinds(v.Mistakes)); diff != "" {
				t.Errorf("mistakes (-want +got):\n%s\n%v", diff, v.Mistakes)
			}
		})
	}
}

func TestParseOptionFile(t *testing.T) {
	tests := []parseCase{
		{
			name: "sections, values, bare options, comments",
			text: "# tuning\n[mysqld]\ninnodb_buffer_pool_size = 256M\n; a comment\nskip-name-resolve\n\n[Server]\nmax_connections=77 # inline\n",
			settings: []Setting{
				{Name: "innodb_buffer_pool_size", Raw: "innodb_buffer_pool_size", Value: "256M", HasValue: true, Section: "mysqld", Line: 3},
				{Name: "skip_name_resolve", Raw: "skip-name-resolve", Section: "mysqld", Line: 5},
				{Name: "max_connections", Raw: "max_connections", Value: "77", HasValue: true, Section: "server", Line: 8},
			},
		},
		{
			name: "loose prefix, dashes, quotes and escapes",
			text: "[mariadb]\nloose-Innodb-Flush-Method=O_DIRECT\nsql_mode=\"STRICT_TRANS_TABLES,NO_ZERO_DATE\"\nx='a#b' # c\ny=\"tab\\there\"\n",
			settings: []Setting{
				{Name: "innodb_flush_method", Raw: "loose-Innodb-Flush-Method", Value: "O_DIRECT", HasValue: true, Section: "mariadb", Loose: true, Line: 2},
				{Name: "sql_mode", Raw: "sql_mode", Value: "STRICT_TRANS_TABLES,NO_ZERO_DATE", HasValue: true, Section: "mariadb", Line: 3},
				{Name: "x", Raw: "x", Value: "a#b", HasValue: true, Section: "mariadb", Line: 4},
				{Name: "y", Raw: "y", Value: "tab\there", HasValue: true, Section: "mariadb", Line: 5},
			},
		},
		{
			name:     "includes are noted",
			text:     "[mysqld]\n!include /etc/extra.cnf\n!includedir /etc/mysql/conf.d/\n",
			includes: []Include{{Directive: "!include", Path: "/etc/extra.cnf", Section: "mysqld", Line: 2}, {Directive: "!includedir", Path: "/etc/mysql/conf.d/", Section: "mysqld", Line: 3}},
		},
		{
			name: "settings before any header: one mistake, settings kept",
			text: "innodb_buffer_pool_size=256M\nmax_connections=77\n[mysqld]\nport=3306\n",
			settings: []Setting{
				{Name: "innodb_buffer_pool_size", Raw: "innodb_buffer_pool_size", Value: "256M", HasValue: true, Line: 1},
				{Name: "max_connections", Raw: "max_connections", Value: "77", HasValue: true, Line: 2},
				{Name: "port", Raw: "port", Value: "3306", HasValue: true, Section: "mysqld", Line: 4},
			},
			mistakes: []MistakeKind{MistakeNoSection},
		},
		{
			name:     "malformed lines",
			text:     "[mysqld\n[mysqld]\n=5\ninnodb_buffer_pool_size 256M\n!source x\n",
			mistakes: []MistakeKind{MistakeBadSection, MistakeSyntax, MistakeSyntax, MistakeUnknownDirective},
		},
		{
			name: "CRLF line ends",
			text: "[mysqld]\r\nmax_connections=77\r\n",
			settings: []Setting{
				{Name: "max_connections", Raw: "max_connections", Value: "77", HasValue: true, Section: "mysqld", Line: 2},
			},
		},
	}
	runParseCases(t, MariaDB, tests)
}

func kinds(ms []Mistake) []MistakeKind {
	var out []MistakeKind
	for _, m := range ms {
		out = append(out, m.Kind)
	}
	return out
}

func TestMistakeNamesLine(t *testing.T) {
	v := Parse(MySQL, "\n# comment\nmax_connections=77\n[mysqld]\n")
	if len(v.Mistakes) != 1 || v.Mistakes[0].Line != 3 || v.Mistakes[0].String() !=
		`line 3: "max_connections" comes before any [section] header; the server reads only its own sections such as [mysqld]` {
		t.Errorf("mistakes: %v", v.Mistakes)
	}
	v = Parse(Postgres, "shared_buffers = 1GB\n[mysqld]\n")
	if len(v.Mistakes) != 1 || v.Mistakes[0].Line != 2 || v.Mistakes[0].Kind != MistakeSectionInPostgres {
		t.Errorf("mistakes: %v", v.Mistakes)
	}
}

func TestParsePostgres(t *testing.T) {
	tests := []parseCase{
		{
			name: "forms of assignment, case, comments, units",
			text: "# memory\nShared_Buffers = 8GB   # a quarter\nwork_mem=64MB\nrandom_page_cost 1.1\nsynchronous_commit = off\n",
			settings: []Setting{
				{Name: "shared_buffers", Raw: "Shared_Buffers", Value: "8GB", HasValue: true, Line: 2},
				{Name: "work_mem", Raw: "work_mem", Value: "64MB", HasValue: true, Line: 3},
				{Name: "random_page_cost", Raw: "random_page_cost", Value: "1.1", HasValue: true, Line: 4},
				{Name: "synchronous_commit", Raw: "synchronous_commit", Value: "off", HasValue: true, Line: 5},
			},
		},
		{
			name: "quoted values with escapes and #",
			text: "log_line_prefix = '%m [%p] # '\nsearch_path = '\"$user\", public'\napplication_name = 'it''s'\nx.y = 'a\\'b'\n",
			settings: []Setting{
				{Name: "log_line_prefix", Raw: "log_line_prefix", Value: "%m [%p] # ", HasValue: true, Line: 1},
				{Name: "search_path", Raw: "search_path", Value: `"$user", public`, HasValue: true, Line: 2},
				{Name: "application_name", Raw: "application_name", Value: "it's", HasValue: true, Line: 3},
				{Name: "x.y", Raw: "x.y", Value: "a'b", HasValue: true, Line: 4},
			},
		},
		{
			name: "include directives",
			text: "include 'extra.conf'\ninclude_if_exists = 'maybe.conf'\ninclude_dir 'conf.d'\n",
			includes: []Include{
				{Directive: "include", Path: "extra.conf", Line: 1},
				{Directive: "include_if_exists", Path: "maybe.conf", Line: 2},
				{Directive: "include_dir", Path: "conf.d", Line: 3},
			},
		},
		{
			name:     "mistakes",
			text:     "[postgres]\nshared_buffers\nwork_mem = 4 MB\nlog_line_prefix = 'open\n= 5\n",
			mistakes: []MistakeKind{MistakeSectionInPostgres, MistakeSyntax, MistakeSyntax, MistakeSyntax, MistakeSyntax},
		},
	}
	runParseCases(t, Postgres, tests)
}

func TestServerReads(t *testing.T) {
	tests := []struct {
		engine   Engine
		version  string
		section  string
		wantRead bool
	}{
		{MariaDB, "10.11.19-MariaDB-0+deb12u1", "mysqld", true},
		{MariaDB, "10.11.19-MariaDB", "server", true},
		{MariaDB, "10.11.19-MariaDB", "mariadb", true},
		{MariaDB, "10.11.19-MariaDB", "mariadbd", true},
		{MariaDB, "10.11.19-MariaDB", "client-server", true},
		{MariaDB, "10.11.19-MariaDB", "galera", true},
		{MariaDB, "10.11.19-MariaDB", "mariadb-10.11", true},
		{MariaDB, "10.11.19-MariaDB", "mariadbd-10.11", true},
		{MariaDB, "10.11.19-MariaDB", "MYSQLD-10.11", true},
		{MariaDB, "10.11.19-MariaDB", "mysqld-5.0", false},
		{MariaDB, "10.11.19-MariaDB", "mariadb-10.1", false},
		{MariaDB, "10.11.19-MariaDB", "client", false},
		{MariaDB, "10.11.19-MariaDB", "mysqld_safe", false},
		{MySQL, "9.7.0", "mysqld", true},
		{MySQL, "9.7.0", "server", true},
		{MySQL, "9.7.0", "mysqld-9.7", true},
		{MySQL, "8.0.36", "mysqld-9.7", false},
		{MySQL, "9.7.0", "mariadb", false},
		{MySQL, "9.7.0", "client-server", false},
		{MySQL, "9.7.0", "mysql", false},
	}
	for _, tt := range tests {
		if got := ServerReads(tt.engine, tt.version, tt.section); got != tt.wantRead {
			t.Errorf("ServerReads(%s, %s, [%s]) = %v, want %v", tt.engine, tt.version, tt.section, got, tt.wantRead)
		}
	}
}

func TestMajorMinor(t *testing.T) {
	for in, want := range map[string]string{
		"10.11.19-MariaDB-0+deb12u1": "10.11", "9.7.0": "9.7", "15.18 (Debian 15.18-0+deb12u1)": "15.18", "debian": "", "": "",
	} {
		if got := MajorMinor(in); got != want {
			t.Errorf("MajorMinor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckSections(t *testing.T) {
	v := Parse(MySQL, "[mysqld]\nmax_connections=1\n[mysqld-8.0]\na=1\n[mysqld-5.7]\nb=1\n[mariadb]\nc=1\n[client]\nd=1\n[mysqld-5.6]\n")
	got := CheckSections(v, []string{"8.0", "8.4"})
	want := []Mistake{
		{Line: 5, Kind: MistakeSectionNotRead, Message: "section [mysqld-5.7] is read by none of the versions 8.0, 8.4 of mysql; its settings would be ignored"},
		{Line: 7, Kind: MistakeSectionNotRead, Message: "section [mariadb] is read by none of the versions 8.0, 8.4 of mysql; its settings would be ignored"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := CheckSections(Parse(Postgres, "a = 1\n"), []string{"15"}); got != nil {
		t.Errorf("postgres: %v", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("[mysqld]\ninnodb_buffer_pool_size=256M\nloose-x='a#b'\n!include f\n")
	f.Add("shared_buffers = '8GB' # c\ninclude 'x'\nwork_mem 4MB\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range []Engine{MariaDB, Postgres} {
			v := Parse(e, text)
			for _, s := range v.Settings {
				if s.Name == "" || s.Line < 1 {
					t.Fatalf("%s: setting without name or line: %+v", e, s)
				}
			}
			for _, m := range v.Mistakes {
				if m.Line < 1 || m.Message == "" {
					t.Fatalf("%s: mistake without line or message: %+v", e, m)
				}
			}
			_ = Verify(v, "10.11.1", map[string]Effective{})
		}
	})
}
