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

// SettingsDigest is the SHA-256 of server settings in a canonical form that
// any language can reproduce: for each name in ascending byte order, the
// name, a NUL byte, the value, a NUL byte; hex-encoded with a "sha256:"
// prefix. Two cells with the same digest ran with the same effective
// settings.
func SettingsDigest(settings map[string]string) string {
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
