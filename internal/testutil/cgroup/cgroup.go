// Package cgroup gives a benchmark or test process a CPU cgroup of its own
// with a CFS quota, cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us): the same
// mechanism as a pod's CPU limit, so a quota of 90 % of a base quota is what
// configs[].cpuScalePercent: 90 does in a cluster. The verdict benchmark
// (test/bench/verdicts) and the agent's tail-latency test
// (pkg/agent/realdb_taillatency_test.go) run a local database server in one,
// and so does its fixed-rate latency test (realdb_latency_test.go).
package cgroup

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Period is the CFS period in µs, the kubelet's default.
const Period = 100000

// The group's CPU weight, high: a process in it must get its whole quota
// even when the machine is busy, or the quota does not bind and a slowdown
// is not the nominal one. A pod whose CPU request equals its limit gets the
// same treatment from the kubelet (shares from the request). v1 shares
// 10240 are ten default tasks; v2 weight 1000 is ten default groups.
const (
	v1Shares = 10240
	v2Weight = 1000
)

// ErrUnsupported is returned by New when the machine has neither a cgroup v2
// hierarchy nor a v1 cpu hierarchy at /sys/fs/cgroup.
var ErrUnsupported = errors.New("neither cgroup v2 nor a v1 cpu hierarchy at /sys/fs/cgroup/cpu")

// Group is a CPU cgroup of our own, v2 (cpu.max) or v1 (cpu controller
// hierarchy, cpu.cfs_quota_us), directly under the hierarchy's root.
type Group struct {
	// Dir is the group's directory.
	Dir string
	v2  bool
}

// Kind names the mechanism, for logs.
func (g *Group) Kind() string {
	if g.v2 {
		return "cgroup v2 cpu.max"
	}
	return "cgroup v1 cpu.cfs_quota_us"
}

// New creates the group name with a high CPU weight and no quota. It fails
// when /sys/fs/cgroup is not writable (not root, a read-only container) or
// has no CPU controller (ErrUnsupported).
func New(name string) (*Group, error) {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		// v2: the cpu controller must be enabled for the root's children.
		if err := os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu"), 0); err != nil {
			return nil, fmt.Errorf("enabling the cpu controller: %w", err)
		}
		g := &Group{Dir: filepath.Join("/sys/fs/cgroup", name), v2: true}
		if err := os.Mkdir(g.Dir, 0o755); err != nil {
			return nil, err
		}
		return g, g.write("cpu.weight", strconv.Itoa(v2Weight))
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err != nil {
		return nil, ErrUnsupported
	}
	g := &Group{Dir: filepath.Join("/sys/fs/cgroup/cpu", name)}
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := g.write("cpu.cfs_period_us", strconv.Itoa(Period)); err != nil {
		return g, err
	}
	return g, g.write("cpu.shares", strconv.Itoa(v1Shares))
}

func (g *Group) write(file, value string) error {
	if err := os.WriteFile(filepath.Join(g.Dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, filepath.Join(g.Dir, file), err)
	}
	return nil
}

// The highest CPU weight each version accepts: SetMaxWeight.
const (
	v1MaxShares = 262144
	v2MaxWeight = 10000
)

// SetMaxWeight raises the group's CPU weight to the highest the kernel
// accepts. On a busy machine whose other processes sit in the hierarchy's
// root (cgroup v1 counts each as one 1024-share entity), New's ten tasks'
// worth is outweighed by a parallel build, and then the group waits for a
// CPU behind them: its latency measures the machine, not the quota. At the
// maximum the group is scheduled ahead of hundreds of such tasks, and the
// quota alone limits it.
func (g *Group) SetMaxWeight() error {
	if g.v2 {
		return g.write("cpu.weight", strconv.Itoa(v2MaxWeight))
	}
	return g.write("cpu.shares", strconv.Itoa(v1MaxShares))
}

// SetQuota sets the group's CFS quota to cpus CPUs (quota / period).
func (g *Group) SetQuota(cpus float64) error {
	q := int(math.Round(cpus * Period))
	if g.v2 {
		return g.write("cpu.max", fmt.Sprintf("%d %d", q, Period))
	}
	return g.write("cpu.cfs_quota_us", strconv.Itoa(q))
}

// Add moves the process pid (all its threads) into the group; the children
// it starts afterwards inherit the group.
func (g *Group) Add(pid int) error { return g.write("cgroup.procs", strconv.Itoa(pid)) }

// Enter moves the process pid into the group, as Add does, and returns
// restore, which moves it back to the cgroup of the group's hierarchy it was
// in: for a process that outlives the group's use, such as a test server
// other tests share (Remove alone leaves it at the hierarchy's root).
// restore fails when the process has exited.
func (g *Group) Enter(pid int) (restore func() error, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, err
	}
	from, err := cpuCgroup(string(b), g.v2)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	if err := g.Add(pid); err != nil {
		return nil, err
	}
	procs := filepath.Join(filepath.Dir(g.Dir), from, "cgroup.procs")
	return func() error {
		if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("moving pid %d back to %s: %w", pid, filepath.Dir(procs), err)
		}
		return nil
	}, nil
}

// cpuCgroup is the cgroup, relative to its hierarchy's root, that the
// content of a /proc/<pid>/cgroup file names for the CPU controller: the
// "0::" line on cgroup v2, else the v1 line whose controllers include cpu.
func cpuCgroup(procCgroup string, v2 bool) (string, error) {
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if v2 && f[0] == "0" && f[1] == "" {
			return f[2], nil
		}
		if !v2 && slices.Contains(strings.Split(f[1], ","), "cpu") {
			return f[2], nil
		}
	}
	return "", errors.New("no cpu cgroup in /proc/<pid>/cgroup")
}

// Throttling reads cpu.stat's nr_periods and nr_throttled.
func (g *Group) Throttling() (periods, throttled int64, err error) {
	b, err := os.ReadFile(filepath.Join(g.Dir, "cpu.stat"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "nr_periods":
			periods = v
		case "nr_throttled":
			throttled = v
		}
	}
	return periods, throttled, nil
}

// Remove moves whatever is left in the group to the hierarchy's root (where
// New's callers' processes come from) and removes the group.
func (g *Group) Remove() error {
	if b, err := os.ReadFile(filepath.Join(g.Dir, "cgroup.procs")); err == nil {
		for _, p := range strings.Fields(string(b)) {
			_ = os.WriteFile(filepath.Join(filepath.Dir(g.Dir), "cgroup.procs"), []byte(p), 0) // best effort: the process may have exited
		}
	}
	return os.Remove(g.Dir)
}
