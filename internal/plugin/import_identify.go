package plugin

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/dbbench/dbbench/pkg/sysbench"
)

// fileKind says what a file the importer read is, when it is not a
// sysbench run: published results folders keep other tools' files (vmstat,
// iostat, the server's config) beside sysbench's, often under names that
// look alike.
type fileKind string

const (
	kindVmstat  fileKind = "vmstat output"
	kindIostat  fileKind = "iostat output"
	kindMpstat  fileKind = "mpstat output"
	kindMyCnf   fileKind = "MySQL/MariaDB option file"
	kindPgConf  fileKind = "PostgreSQL configuration"
	kindEmpty   fileKind = "empty file"
	kindBinary  fileKind = "binary file"
	kindPrepare fileKind = "sysbench prepare output"
	kindUnknown fileKind = "not benchmark output"
)

// identifyLines bounds how many non-empty lines identify reads: every
// tool's header is within its first few lines.
const identifyLines = 20

var (
	// A my.cnf section header: [mysqld], [mariadb-11.4], [client-server] ...
	myCnfSection = regexp.MustCompile(`^\[(mysqld|mysqld_safe|mariadb|mariadbd|server|client|mysql|galera|embedded)[^\]]*\]$`)
	// Settings only postgresql.conf writes as "name = value".
	pgSetting = regexp.MustCompile(`^(shared_buffers|wal_level|max_wal_size|effective_cache_size|checkpoint_timeout)\s*=`)
)

// identify names what a file that holds no sysbench run looks like, from
// its first lines; kindUnknown when it looks like nothing known.
func identify(data []byte) fileKind {
	if len(bytes.TrimSpace(data)) == 0 {
		return kindEmpty
	}
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return kindBinary
	}
	n := 0
	for _, line := range strings.Split(string(head), "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if n++; n > identifyLines {
			break
		}
		switch {
		case strings.HasPrefix(t, "procs ") && strings.Contains(t, "memory"),
			strings.HasPrefix(t, "r  b ") && strings.Contains(t, "swpd"):
			return kindVmstat
		case strings.HasPrefix(t, "avg-cpu:"),
			strings.HasPrefix(t, "Device") && strings.Contains(t, "/s"):
			return kindIostat
		case strings.Contains(t, "%usr") && strings.Contains(t, "%idle"):
			return kindMpstat
		case myCnfSection.MatchString(t):
			return kindMyCnf
		case pgSetting.MatchString(t):
			return kindPgConf
		}
	}
	return kindUnknown
}

// isSysbench reports whether Parse found anything of sysbench's in a
// file: its banner, run header, interval lines, a final report or prepare
// lines. Without any, a file is not sysbench output, whatever error the
// parser met on the way.
func isSysbench(out *sysbench.Output) bool {
	return out != nil && (out.Command != nil || out.Version != nil || out.Threads > 0 || out.ReportIntervalSeconds > 0 ||
		len(out.Intervals) > 0 || out.Final != nil || len(out.Prepared) > 0)
}
