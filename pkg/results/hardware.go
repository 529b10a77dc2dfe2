package results

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// Derive fills the per-operation fields of h from its per-second averages and
// OpsPerSecond, as methodology §4 defines them (cpu/o = avg(us+sy) / q, and
// so on). A per-op field stays absent when its average is absent or q is 0:
// "not measured" and "no throughput" must not read as zero cost.
func (h *Hardware) Derive() {
	per := func(avg *float64) *float64 {
		if avg == nil || !(h.OpsPerSecond > 0) {
			return nil
		}
		v := *avg / h.OpsPerSecond
		return &v
	}
	h.CPUPerOp = per(h.CPUPercent)
	h.ContextSwitchesPerOp = per(h.ContextSwitchesPerSecond)
	h.ReadsPerOp = per(h.ReadsPerSecond)
	h.ReadKBPerOp = per(h.ReadKBPerSecond)
	h.WriteKBPerOp = per(h.WriteKBPerSecond)
	for i := range h.Volumes {
		v := &h.Volumes[i]
		v.ReadsPerOp, v.ReadKBPerOp = per(v.ReadsPerSecond), per(v.ReadKBPerSecond)
		v.WriteKBPerOp, v.IOsPerOp = per(v.WriteKBPerSecond), per(v.IOsPerSecond)
	}
	h.ServerCPUMicrosPerOp = nil
	if v := per(h.ServerCPUSecondsPerSecond); v != nil {
		us := *v * 1e6
		h.ServerCPUMicrosPerOp = &us
	}
}

// CPUSecondsPerOp converts cpu/o (percent of all CPUs per op) into CPU-seconds
// per op: cpu/o × nCPU / 100. ok is false when either input is missing.
func (h *Hardware) CPUSecondsPerOp() (v float64, ok bool) {
	if h.CPUPerOp == nil || h.CPUs <= 0 {
		return 0, false
	}
	return *h.CPUPerOp * float64(h.CPUs) / 100, true
}

// instanceSettings are the variables that name one server instance, not
// its configuration: every fresh server of the same build and config has
// other values (the pod's hostname, a generated UID).
var instanceSettings = map[string]bool{"hostname": true, "server_uid": true, "server_uuid": true}

// hostDerivedSettings are MySQL's and MariaDB's variables whose defaults
// are built from the hostname (the general and slow query logs, the pid
// file, binary and relay log names, Galera's node name).
var hostDerivedSettings = map[string]bool{
	"general_log_file": true, "slow_query_log_file": true, "log_slow_query_file": true, "pid_file": true,
	"log_error": true, "log_bin_basename": true, "log_bin_index": true, "relay_log": true,
	"relay_log_basename": true, "relay_log_index": true, "report_host": true, "wsrep_node_name": true,
}

// ComparableSettings returns settings without the variables that identify
// the instance: the instanceSettings, and the hostDerivedSettings whose
// value holds the server's hostname (a value the config set explicitly
// stays). What remains is equal for two servers of one build and config,
// so two cells' settings compare. It returns settings itself when nothing
// is dropped.
func ComparableSettings(settings map[string]string) map[string]string {
	host := settings["hostname"]
	drop := func(k, v string) bool {
		return instanceSettings[k] || hostDerivedSettings[k] && host != "" && strings.Contains(v, host)
	}
	n := 0
	for k, v := range settings {
		if drop(k, v) {
			n++
		}
	}
	if n == 0 {
		return settings
	}
	out := make(map[string]string, len(settings)-n)
	for k, v := range settings {
		if !drop(k, v) {
			out[k] = v
		}
	}
	return out
}

// SettingsDigest is the SHA-256 of the ComparableSettings of settings in a
// canonical form that any language can reproduce: for each name in
// ascending byte order, the name, a NUL byte, the value, a NUL byte;
// hex-encoded with a "sha256:" prefix. Two cells with the same digest ran
// with the same effective settings.
func SettingsDigest(settings map[string]string) string {
	return digestAll(ComparableSettings(settings))
}

// legacySettingsDigest is the digest documents written before
// ComparableSettings carry: over every variable, the instance's included.
// Such a digest still validates; it differs for every server.
func legacySettingsDigest(settings map[string]string) string { return digestAll(settings) }

func digestAll(settings map[string]string) string {
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(settings[k]))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Redacted replaces a secret value in a recorded command line.
const Redacted = "REDACTED"

// RedactCommand returns a copy of argv with the values of password options
// ("--mysql-password=x", "--pgsql-password x", "PGPASSWORD=x") replaced by
// Redacted, so command lines can be stored in ConfigMaps and buckets.
func RedactCommand(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := strings.Cut(out[i], "=")
		if !isSecretName(name) {
			continue
		}
		if hasValue {
			out[i] = name + "=" + Redacted
		} else if strings.HasPrefix(name, "-") && i+1 < len(out) {
			out[i+1] = Redacted
			i++
		}
	}
	return out
}

func isSecretName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	return strings.Contains(n, "password") || strings.Contains(n, "passwd")
}

// unredacted reports the index of a password value left in argv, or -1.
func unredacted(argv []string) int {
	for i := 0; i < len(argv); i++ {
		name, val, hasValue := strings.Cut(argv[i], "=")
		if !isSecretName(name) {
			continue
		}
		if hasValue && val != Redacted && val != "" {
			return i
		}
		if !hasValue && strings.HasPrefix(name, "-") && i+1 < len(argv) {
			if argv[i+1] != Redacted {
				return i + 1
			}
			i++
		}
	}
	return -1
}
