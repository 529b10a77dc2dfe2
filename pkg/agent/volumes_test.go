package agent

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeProc writes a /proc with stat, diskstats and self/mountinfo.
func fakeProc(t *testing.T, dir, diskstats, mountinfo string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"stat":           "cpu  100 0 100 800 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0\nctxt 1000\n",
		"diskstats":      diskstats,
		"self/mountinfo": mountinfo,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// devOf is the major:minor of the filesystem holding path.
func devOf(t *testing.T, path string) (uint32, uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return unix.Major(st.Dev), unix.Minor(st.Dev)
}

// diskLine is a /proc/diskstats line: reads, sectors read, writes, sectors
// written.
func diskLine(major, minor uint32, name string, reads, rsect, writes, wsect uint64) string {
	return fmt.Sprintf("%4d %7d %s %d 0 %d 0 %d 0 %d 0 0 0 0\n", major, minor, name, reads, rsect, writes, wsect)
}

func TestResolveDevice(t *testing.T) {
	dir := t.TempDir()
	major, minor := devOf(t, dir)
	mm := fmt.Sprintf("%d:%d", major, minor)
	tests := []struct {
		name      string
		diskstats string
		mountinfo string
		want      string
		wantErr   string
	}{
		{"by device number", diskLine(major, minor, "vdz1", 0, 0, 0, 0), "", "vdz1", ""},
		{"by mount source when the number is anonymous",
			diskLine(major+1000, minor, "otherdisk", 0, 0, 0, 0) + diskLine(7, 99, "fakevd", 0, 0, 0, 0),
			"30 1 " + mm + " / / rw - btrfs /dev/fakevd rw\n", "fakevd", ""},
		{"longest mount point wins",
			diskLine(7, 98, "outer", 0, 0, 0, 0) + diskLine(7, 99, "inner", 0, 0, 0, 0),
			"30 1 " + mm + " / / rw - btrfs /dev/outer rw\n31 30 " + mm + " / " + strings.ReplaceAll(dir, " ", `\040`) + " rw - btrfs /dev/inner rw\n", "inner", ""},
		{"tmpfs is not a block device", diskLine(7, 99, "fakevd", 0, 0, 0, 0),
			"30 1 " + mm + " / / rw - tmpfs tmpfs rw\n", "", "not a block device"},
		{"not mounted anywhere known", diskLine(7, 99, "fakevd", 0, 0, 0, 0), "", "", "neither in diskstats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := t.TempDir()
			fakeProc(t, proc, tt.diskstats, tt.mountinfo)
			disks, err := readDiskstats(proc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := resolveDevice(dir, filepath.Join(proc, "self", "mountinfo"), disks)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// The collector reports each volume's device apart, and flags volumes on
// one device instead of inventing a split.
func TestCollectorVolumes(t *testing.T) {
	data, log := t.TempDir(), t.TempDir()
	major, minor := devOf(t, data)
	pmaj, pmin := devOf(t, "/proc")
	tests := []struct {
		name      string
		mountinfo string // log's mount
		// diskstats before and after: data device, then log device
		before, after string
		want          []VolumeSample // per second over the window, scaled below
	}{
		{"separate devices",
			fmt.Sprintf("40 1 %d:%d / /proc rw - proc /dev/logdev rw\n", pmaj, pmin),
			diskLine(major, minor, "datadev", 10, 80, 5, 40) + diskLine(99, 1, "logdev", 0, 0, 0, 0),
			diskLine(major, minor, "datadev", 30, 240, 5, 40) + diskLine(99, 1, "logdev", 0, 0, 50, 800),
			[]VolumeSample{{Name: "data", Device: "datadev", ReadsPerSec: 20, ReadKBPerSec: 80, IOsPerSec: 20},
				{Name: "log", Device: "logdev", WriteKBPerSec: 400, IOsPerSec: 50}}},
		{"one device for both",
			"",
			diskLine(major, minor, "datadev", 0, 0, 0, 0),
			diskLine(major, minor, "datadev", 4, 8, 6, 16),
			[]VolumeSample{{Name: "data", Device: "datadev", SharedDevice: true, ReadsPerSec: 4, ReadKBPerSec: 4, WriteKBPerSec: 8, IOsPerSec: 10},
				{Name: "log", Device: "datadev", SharedDevice: true, ReadsPerSec: 4, ReadKBPerSec: 4, WriteKBPerSec: 8, IOsPerSec: 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := t.TempDir()
			fakeProc(t, proc, tt.before, tt.mountinfo)
			logPath := log
			if tt.mountinfo != "" {
				// /proc has an anonymous device number of its own, which
				// the fake mountinfo says is logdev.
				logPath = "/proc"
			}
			c := &ProcCollector{Proc: proc, Devices: []string{"datadev"},
				Volumes: []Volume{{Name: "log", Path: logPath}, {Name: "data", Path: data}}}
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(proc, "diskstats"), []byte(tt.after), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := c.Stop(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Volumes) != len(tt.want) {
				t.Fatalf("volumes %+v", s.Volumes)
			}
			for i, w := range tt.want {
				g := s.Volumes[i]
				if g.Name != w.Name || g.Device != w.Device || g.SharedDevice != w.SharedDevice || g.Unresolved != "" {
					t.Errorf("volume %d = %+v, want %+v", i, g, w)
				}
				// The window is not 1 s: compare the totals (rate × seconds).
				for _, f := range []struct {
					what      string
					got, want float64
				}{{"reads", g.ReadsPerSec, w.ReadsPerSec}, {"rKB", g.ReadKBPerSec, w.ReadKBPerSec},
					{"wKB", g.WriteKBPerSec, w.WriteKBPerSec}, {"ios", g.IOsPerSec, w.IOsPerSec}} {
					if got := f.got * s.Seconds; math.Abs(got-f.want) > 1e-6*math.Max(1, f.want) {
						t.Errorf("%s %s over the window = %v, want %v", w.Name, f.what, got, f.want)
					}
				}
			}
		})
	}
}
