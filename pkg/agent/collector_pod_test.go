package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A fake /proc with the collector's own process, PID 1 and two server
// processes (one with a space in its name) checks which CPU times count.
func TestPodProcessesCPUCountsOtherProcessesWithReapedChildren(t *testing.T) {
	proc := t.TempDir()
	write := func(pid, stat string) {
		dir := filepath.Join(proc, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Fields after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
	write("1", "1 (pause) S 0 1 1 0 -1 0 0 0 0 0 900 900 900 900 20 0 1 0")
	write("7", "7 (mariadbd) S 1 7 7 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0")
	write("8", "8 (postgres: sbtest) S 1 8 8 0 -1 0 0 0 0 0 10 5 30 20 20 0 1 0")
	write("self-is-skipped", "x")
	write(strconv.Itoa(os.Getpid()), "0 (collector) S 1 0 0 0 -1 0 0 0 0 0 777 777 777 777 20 0 1 0")
	c := &ProcCollector{Proc: proc, PodProcesses: true}
	got := c.podProcessesCPU()
	want := uint64(100+50+10+5+30+20) * 10_000_000 // ticks × 10 ms
	if got != want {
		t.Fatalf("pod processes CPU = %d ns, want %d (pause and the collector excluded, reaped children included)", got, want)
	}
}

func TestCgroupCPUNs(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       uint64
	}{
		{"cgroup v2 cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n", 1_500_000},
		{"cgroup v2, usage not first", "nr_periods 0\nusage_usec 7\n", 7000},
		{"cgroup v1 cpuacct.usage", "123456789\n", 123456789},
		{"neither", "garbage", 0},
	} {
		if got := cgroupCPUNs(tc.text); got != tc.want {
			t.Errorf("%s: %d ns, want %d", tc.name, got, tc.want)
		}
	}
}
