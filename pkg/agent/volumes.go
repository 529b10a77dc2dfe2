package agent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Volume is a database volume whose disk I/O the collector attributes to
// the block device behind it: Name is what the results call it ("data",
// "log"), Path a directory on it as the collector sees it (in the pod, the
// sidecar's read-only mount of the same volume).
type Volume struct {
	Name string
	Path string
}

// ParseVolume reads the collector's --volume flag, name=path.
func ParseVolume(s string) (Volume, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return Volume{}, fmt.Errorf("--volume %q: want name=path", s)
	}
	return Volume{Name: name, Path: path}, nil
}

// VolumeSample is one volume's disk activity over a window: that of the
// whole block device behind it, per second.
type VolumeSample struct {
	Name   string `json:"name"`
	Device string `json:"device,omitempty"`
	// SharedDevice is true when another volume of the same window is on
	// the same device: the figures are then the device's, for both
	// volumes together, not a split.
	SharedDevice bool `json:"sharedDevice,omitempty"`
	// Unresolved says why no device was found (tmpfs, overlay, a network
	// filesystem: nothing in /proc/diskstats); the figures are then absent.
	Unresolved    string  `json:"unresolved,omitempty"`
	ReadsPerSec   float64 `json:"readsPerSec"`
	ReadKBPerSec  float64 `json:"readKBPerSec"`
	WriteKBPerSec float64 `json:"writeKBPerSec"`
	// IOsPerSec is completed reads plus completed writes.
	IOsPerSec float64 `json:"iosPerSec"`
}

// diskStat is one /proc/diskstats line's counters.
type diskStat struct {
	major, minor  uint32
	name          string
	reads, writes uint64
	rsect, wsect  uint64
}

func readDiskstats(proc string) ([]diskStat, error) {
	b, err := os.ReadFile(filepath.Join(proc, "diskstats"))
	if err != nil {
		return nil, err
	}
	var out []diskStat
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		u := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
		// major minor name reads rmerged rsect rms writes wmerged wsect ...
		out = append(out, diskStat{major: uint32(u(0)), minor: uint32(u(1)), name: f[2],
			reads: u(3), rsect: u(5), writes: u(7), wsect: u(9)})
	}
	return out, nil
}

// mountEntry is the part of a /proc/<pid>/mountinfo line device attribution
// needs.
type mountEntry struct {
	majorMinor string // "8:1"
	mountPoint string
	fsType     string
	source     string
}

func readMountinfo(path string) ([]mountEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []mountEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 2 {
			continue
		}
		out = append(out, mountEntry{majorMinor: f[2], mountPoint: unescapeMount(f[4]), fsType: g[0], source: unescapeMount(g[1])})
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline
// and backslash.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// resolveDevice finds the /proc/diskstats device behind path: first by the
// filesystem's device number (st_dev), which is the partition, disk, dm or
// loop device for block filesystems; failing that (btrfs and others report
// an anonymous device number) by the source of the mount that holds path in
// mountinfo, when it is a /dev node.
func resolveDevice(path, mountinfo string, disks []diskStat) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("stat %s: %w", path, err)
	}
	major, minor := unix.Major(st.Dev), unix.Minor(st.Dev)
	for _, d := range disks {
		if d.major == major && d.minor == minor {
			return d.name, nil
		}
	}
	mounts, err := readMountinfo(mountinfo)
	if err != nil {
		return "", fmt.Errorf("device %d:%d of %s is not in diskstats, and %w", major, minor, path, err)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		resolved = path
	}
	// The longest mount point holding path with the same device number is
	// the mount path lives on.
	best := -1
	mm := fmt.Sprintf("%d:%d", major, minor)
	for i, m := range mounts {
		if m.majorMinor != mm || !within(resolved, m.mountPoint) {
			continue
		}
		if best < 0 || len(m.mountPoint) > len(mounts[best].mountPoint) {
			best = i
		}
	}
	if best < 0 {
		return "", fmt.Errorf("device %d:%d of %s is neither in diskstats nor in %s", major, minor, path, mountinfo)
	}
	m := mounts[best]
	if strings.HasPrefix(m.source, "/dev/") {
		dev := m.source
		if r, err := filepath.EvalSymlinks(dev); err == nil {
			dev = r // /dev/mapper/x -> /dev/dm-0
		}
		name := filepath.Base(dev)
		for _, d := range disks {
			if d.name == name {
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("%s is on %s (%s, device %d:%d), which is not a block device in diskstats", path, m.source, m.fsType, major, minor)
}

// within reports whether path is mount or below it.
func within(path, mount string) bool {
	if mount == "/" {
		return true
	}
	return path == mount || strings.HasPrefix(path, strings.TrimSuffix(mount, "/")+"/")
}

// resolvedVolume is a volume and the device found for it at Start.
type resolvedVolume struct {
	Volume
	device     string
	unresolved string
}

// resolveVolumes attributes each volume to a device and marks the volumes
// that share one.
func resolveVolumes(vols []Volume, proc string, disks []diskStat) []resolvedVolume {
	out := make([]resolvedVolume, len(vols))
	for i, v := range vols {
		out[i].Volume = v
		dev, err := resolveDevice(v.Path, filepath.Join(proc, "self", "mountinfo"), disks)
		if err != nil {
			out[i].unresolved = err.Error()
			continue
		}
		out[i].device = dev
	}
	return out
}

// volumeSamples turns two diskstats readings into per-volume averages.
func volumeSamples(vols []resolvedVolume, start, end []diskStat, secs float64) []VolumeSample {
	if len(vols) == 0 {
		return nil
	}
	byName := func(ds []diskStat, name string) (diskStat, bool) {
		for _, d := range ds {
			if d.name == name {
				return d, true
			}
		}
		return diskStat{}, false
	}
	users := map[string]int{}
	for _, v := range vols {
		if v.device != "" {
			users[v.device]++
		}
	}
	out := make([]VolumeSample, 0, len(vols))
	for _, v := range vols {
		s := VolumeSample{Name: v.Name, Device: v.device, Unresolved: v.unresolved, SharedDevice: users[v.device] > 1}
		if v.device != "" {
			a, ok1 := byName(start, v.device)
			b, ok2 := byName(end, v.device)
			if ok1 && ok2 && b.reads >= a.reads && b.writes >= a.writes {
				s.ReadsPerSec = float64(b.reads-a.reads) / secs
				s.IOsPerSec = float64(b.reads-a.reads+b.writes-a.writes) / secs
				s.ReadKBPerSec = float64(b.rsect-a.rsect) / 2 / secs // 512-byte sectors
				s.WriteKBPerSec = float64(b.wsect-a.wsect) / 2 / secs
			} else {
				s.Unresolved = fmt.Sprintf("device %s left /proc/diskstats during the window", v.device)
			}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
