package dbconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Which option-file sections a server reads. The server program reads a
// fixed list of groups, some of them tied to its major.minor version, and
// ignores every other group of the file (they belong to clients or other
// versions):
//
//	MySQL   mysqld  server  mysqld-X.Y                      (mysqld --verbose --help)
//	MariaDB mysqld  server  mysqld-X.Y  mariadb  mariadb-X.Y
//	        mariadbd  mariadbd-X.Y  client-server  galera   (mariadbd --help --verbose, 10.11)
//
// [galera] is read by MariaDB builds with wsrep (Debian's and the official
// images). Debian's MySQL 9.7 also reads [mysql_cluster] (NDB-enabled
// builds do; Oracle's images do not): it is left out, so a setting there is
// reported unverified rather than compared on a server that may ignore it.
// Sections are matched case-insensitively, as the servers do.
const groupMysqld = "mysqld" // the server's own group, read by MySQL and MariaDB

var (
	mysqlServerGroups   = []string{groupMysqld, "server"}
	mariadbServerGroups = []string{groupMysqld, "server", "mariadb", "mariadbd", "client-server", "galera"}
	// Version-suffixed groups: "<prefix>-X.Y".
	mysqlVersionPrefixes   = []string{groupMysqld}
	mariadbVersionPrefixes = []string{groupMysqld, "mariadb", "mariadbd"}
)

var (
	versionSection = regexp.MustCompile(`^([a-z]+)-(\d+\.\d+)$`)
	majorMinor     = regexp.MustCompile(`^\s*(\d+)\.(\d+)`)
)

// MajorMinor returns "X.Y" of a server version string ("10.11.19-MariaDB-0+deb12u1"
// → "10.11", "9.7.0" → "9.7"), or "" when there is none.
func MajorMinor(version string) string {
	m := majorMinor.FindStringSubmatch(version)
	if m == nil {
		return ""
	}
	return m[1] + "." + m[2]
}

// sectionRole says what a section is to a server of the engine.
type sectionRole int

const (
	roleOther        sectionRole = iota // a client's or a tool's ([client], [mysqldump])
	roleServer                          // read by every server of the engine
	roleVersion                         // read by servers of one major.minor only
	roleOtherEngines                    // a server group of the other engine ([mariadb] for MySQL)
)

func classifySection(e Engine, section string) (sectionRole, string) {
	groups, prefixes := mysqlServerGroups, mysqlVersionPrefixes
	otherGroups, otherPrefixes := mariadbServerGroups, mariadbVersionPrefixes
	if e == MariaDB {
		groups, prefixes, otherGroups, otherPrefixes = otherGroups, otherPrefixes, groups, prefixes
	}
	if slices.Contains(groups, section) {
		return roleServer, ""
	}
	if m := versionSection.FindStringSubmatch(section); m != nil {
		if slices.Contains(prefixes, m[1]) {
			return roleVersion, m[2]
		}
		if slices.Contains(otherPrefixes, m[1]) {
			return roleOtherEngines, m[2]
		}
	}
	if slices.Contains(otherGroups, section) {
		return roleOtherEngines, ""
	}
	return roleOther, ""
}

// ServerReads reports whether a server of the engine and version (a full
// version string or "X.Y") reads the option-file section.
func ServerReads(e Engine, version, section string) bool {
	role, v := classifySection(e, strings.ToLower(section))
	switch role {
	case roleServer:
		return true
	case roleVersion:
		return v == MajorMinor(version)
	}
	return false
}

// serverGroups lists the groups a server of the engine and version reads,
// for messages.
func serverGroups(e Engine, version string) string {
	groups, prefixes := mysqlServerGroups, mysqlVersionPrefixes
	if e == MariaDB {
		groups, prefixes = mariadbServerGroups, mariadbVersionPrefixes
	}
	var out []string
	for _, g := range groups {
		out = append(out, "["+g+"]")
	}
	if mm := MajorMinor(version); mm != "" {
		for _, p := range prefixes {
			out = append(out, "["+p+"-"+mm+"]")
		}
	}
	return strings.Join(out, ", ")
}

// notReadReason says why a server of the engine and version does not read
// the section.
func notReadReason(e Engine, version, section string) string {
	role, v := classifySection(e, section)
	switch role {
	case roleVersion:
		return fmt.Sprintf("section [%s] is read by %s %s only; this server is %s", section, e, v, version)
	case roleOtherEngines:
		return fmt.Sprintf("section [%s] is read by the other engine, not by %s", section, e)
	}
	return fmt.Sprintf("section [%s] is not read by the server (it reads %s)", section, serverGroups(e, version))
}

// CheckSections names, for a MySQL/MariaDB variant used with the given
// versions of its engine, the server sections with settings that none of
// those versions reads: a [mysqld-5.7] group in a matrix of 8.0 and 8.4, or
// [mariadb] in a MySQL variant. Client sections are not reported: a copied
// my.cnf often has them, and the server ignoring them is their purpose.
func CheckSections(v *Variant, versions []string) []Mistake {
	if !v.Engine.mysqlFamily() {
		return nil
	}
	used := map[string]bool{}
	for _, s := range v.Settings {
		used[s.Section] = true
	}
	var out []Mistake
	for _, sec := range v.Sections {
		if !used[sec.Name] {
			continue
		}
		role, _ := classifySection(v.Engine, sec.Name)
		if role != roleVersion && role != roleOtherEngines {
			continue
		}
		read := false
		for _, ver := range versions {
			read = read || ServerReads(v.Engine, ver, sec.Name)
		}
		if !read {
			out = append(out, Mistake{Line: sec.Line, Kind: MistakeSectionNotRead, Message: fmt.Sprintf(
				"section [%s] is read by none of the versions %s of %s; its settings would be ignored", sec.Name, strings.Join(versions, ", "), v.Engine)})
		}
	}
	return out
}
