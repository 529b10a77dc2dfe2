package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
)

// defaultProc is where the host's (or the pod's) proc filesystem is mounted.
const defaultProc = "/proc"

// Collector measures hardware activity between Start and Stop (methodology
// §4): CPU user+system and context switches from /proc/stat, device reads
// and KB read/written from /proc/diskstats, and optionally the database
// server's own CPU from its cgroup.
type Collector interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) (HWSample, error)
}

// HWSample is the averages over one Start..Stop window. Averages of counter
// deltas over the window equal the mean of the 1-s samples vmstat/iostat
// would print over it.
type HWSample struct {
	Seconds       float64 `json:"seconds"`
	CPUs          int     `json:"cpus"`
	CPUUserSysPct float64 `json:"cpuUserSysPct"` // % of all CPUs
	CtxSwitches   float64 `json:"csPerSec"`
	ReadsPerSec   float64 `json:"readsPerSec"`
	ReadKBPerSec  float64 `json:"readKBPerSec"`
	WriteKBPerSec float64 `json:"writeKBPerSec"`
	// ServerCPUPerSec is CPU-seconds per second used by the server's cgroup
	// (0 when no cgroup was configured).
	ServerCPUPerSec float64  `json:"serverCpuPerSec,omitempty"`
	Devices         []string `json:"devices,omitempty"`
	// Volumes are the database volumes' own devices' figures (absent from
	// collectors that were given no volumes, and from older collectors).
	Volumes []VolumeSample `json:"volumes,omitempty"`
}

// ProcCollector reads /proc of the machine it runs on.
type ProcCollector struct {
	// Proc is the /proc mount (default "/proc", defaultProc).
	Proc string
	// Devices are the block devices to count (default: every whole disk in
	// /sys/block except loop, ram and zram devices).
	Devices []string
	// CgroupCPU is the server cgroup's cpu.stat (v2, usage_usec) or
	// cpuacct.usage (v1, nanoseconds); empty for none.
	CgroupCPU string
	// PodProcesses measures the server's CPU as the CPU time of every other
	// process the collector can see, when it runs as a sidecar in the
	// database pod with a shared process namespace. Unlike a cgroup path, this
	// works on cgroup v1 nodes, where a container cannot see its sibling's
	// cgroup. Processes that exit (PostgreSQL backends) are counted through
	// their parent's reaped-children time.
	PodProcesses bool
	// Volumes are the database's volumes whose devices' I/O is reported
	// apart (data, log), resolved to devices at each Start.
	Volumes []Volume

	mu       sync.Mutex
	start    *procSnap
	resolved []resolvedVolume
}

type procSnap struct {
	at                  time.Time
	busy, total         uint64 // jiffies
	ctxt                uint64
	reads, rsect, wsect uint64
	cgroupNs            uint64
	cpus                int
	disks               []diskStat
}

func (p *ProcCollector) proc() string {
	if p.Proc == "" {
		return defaultProc
	}
	return p.Proc
}

func (p *ProcCollector) devices() []string {
	if len(p.Devices) > 0 {
		return p.Devices
	}
	ents, _ := os.ReadDir("/sys/block")
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") {
			continue
		}
		out = append(out, n)
	}
	return out
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture dbbench runs on).
const userHZ = 100

// podProcessesCPU sums utime, stime, cutime and cstime, in nanoseconds, of
// every process in the collector's PID namespace except itself and PID 1 (the
// pod's pause process).
func (p *ProcCollector) podProcessesCPU() uint64 {
	entries, err := os.ReadDir(p.proc())
	if err != nil {
		return 0
	}
	self := os.Getpid()
	var ticks uint64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == 1 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(p.proc(), e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// The command name may hold spaces; fields resume after its ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		// After ')': state(0) ... utime(11) stime(12) cutime(13) cstime(14).
		if len(f) < 15 {
			continue
		}
		for _, k := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseUint(f[k], 10, 64)
			ticks += v
		}
	}
	return ticks * (1e9 / userHZ)
}

func (p *ProcCollector) snap() (*procSnap, error) {
	s := &procSnap{at: time.Now()}
	b, err := os.ReadFile(filepath.Join(p.proc(), "stat"))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "cpu":
			// user nice system idle iowait irq softirq steal ...
			for i, v := range f[1:] {
				if i >= 8 {
					break
				}
				n, _ := strconv.ParseUint(v, 10, 64)
				s.total += n
				if i == 0 || i == 1 || i == 2 || i == 5 || i == 6 { // us (incl. nice) + sy (incl. irq)
					s.busy += n
				}
			}
		case strings.HasPrefix(f[0], "cpu"):
			s.cpus++
		case f[0] == "ctxt" && len(f) > 1:
			s.ctxt, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	want := map[string]bool{}
	for _, d := range p.devices() {
		want[d] = true
	}
	if disks, err := readDiskstats(p.proc()); err == nil {
		s.disks = disks
		for _, d := range disks {
			if !want[d.name] {
				continue
			}
			s.reads += d.reads
			s.rsect += d.rsect
			s.wsect += d.wsect
		}
	}
	if p.PodProcesses {
		s.cgroupNs = p.podProcessesCPU()
	} else if p.CgroupCPU != "" {
		if b, err := os.ReadFile(p.CgroupCPU); err == nil {
			s.cgroupNs = cgroupCPUNs(string(b))
		}
	}
	return s, nil
}

// cgroupCPUNs reads a cgroup's CPU time in nanoseconds from cgroup v2's
// cpu.stat (usage_usec) or cgroup v1's cpuacct.usage (nanoseconds); 0
// when the text has neither.
func cgroupCPUNs(text string) uint64 {
	txt := strings.TrimSpace(text)
	if !strings.HasPrefix(txt, "usage_usec") && !strings.Contains(txt, "\nusage_usec") {
		ns, _ := strconv.ParseUint(txt, 10, 64)
		return ns
	}
	var ns uint64
	for _, l := range strings.Split(txt, "\n") {
		if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
			us, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			ns = us * 1000
		}
	}
	return ns
}

// Start begins a window.
func (p *ProcCollector) Start(context.Context) error {
	s, err := p.snap()
	if err != nil {
		return fmt.Errorf("reading %s: %w", p.proc(), err)
	}
	// Resolved per window: a claim's device is only known once mounted,
	// and stays put for the pod's life, so this costs a stat per volume.
	resolved := resolveVolumes(p.Volumes, p.proc(), s.disks)
	p.mu.Lock()
	p.start, p.resolved = s, resolved
	p.mu.Unlock()
	return nil
}

// Stop ends the window and returns its averages.
func (p *ProcCollector) Stop(context.Context) (HWSample, error) {
	p.mu.Lock()
	start, resolved := p.start, p.resolved
	p.start = nil
	p.mu.Unlock()
	if start == nil {
		return HWSample{}, errors.New("collector: Stop without Start")
	}
	end, err := p.snap()
	if err != nil {
		return HWSample{}, err
	}
	secs := end.at.Sub(start.at).Seconds()
	if secs <= 0 {
		return HWSample{}, errors.New("collector: empty window")
	}
	out := HWSample{Seconds: secs, CPUs: end.cpus, Devices: p.devices()}
	if dt := float64(end.total - start.total); dt > 0 {
		out.CPUUserSysPct = 100 * float64(end.busy-start.busy) / dt
	}
	out.CtxSwitches = float64(end.ctxt-start.ctxt) / secs
	out.ReadsPerSec = float64(end.reads-start.reads) / secs
	out.ReadKBPerSec = float64(end.rsect-start.rsect) / 2 / secs // 512-byte sectors
	out.WriteKBPerSec = float64(end.wsect-start.wsect) / 2 / secs
	out.Volumes = volumeSamples(resolved, start.disks, end.disks, secs)
	if (p.CgroupCPU != "" || p.PodProcesses) && end.cgroupNs >= start.cgroupNs {
		out.ServerCPUPerSec = float64(end.cgroupNs-start.cgroupNs) / 1e9 / secs
	}
	return out, nil
}

// CollectorHandler serves a Collector over HTTP for the agent on another
// node: POST /start, POST /stop (returns the HWSample as JSON), GET /healthz.
func CollectorHandler(c Collector) http.Handler { return CollectorProfilerHandler(c, nil) }

// CollectorProfilerHandler is CollectorHandler that also serves a Profiler
// (nil: none; the sidecar runs one only when the run asks for profiles):
// POST /profile/start?frequencyHz=N, POST /profile/stop (returns the
// results.Profile as JSON).
func CollectorProfilerHandler(c Collector, p Profiler) http.Handler {
	mux := http.NewServeMux()
	if p != nil {
		mux.HandleFunc("POST /profile/start", func(w http.ResponseWriter, r *http.Request) {
			hz, err := strconv.Atoi(r.URL.Query().Get(profileFrequencyParam))
			if err != nil || hz < 1 {
				http.Error(w, fmt.Sprintf("%s: %q is not a positive integer", profileFrequencyParam, r.URL.Query().Get(profileFrequencyParam)), http.StatusBadRequest)
				return
			}
			// Not the request's context: sampling outlives the request.
			if err := p.Start(context.WithoutCancel(r.Context()), hz); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		mux.HandleFunc("POST /profile/stop", func(w http.ResponseWriter, r *http.Request) {
			prof, err := p.Stop(r.Context())
			if err != nil {
				// The profile says what it can; the error is in it.
				prof.Error = err.Error()
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(prof)
		})
	}
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		if err := c.Start(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		s, err := c.Stop(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}

// HTTPCollector is the agent's client of a remote collector.
type HTTPCollector struct {
	URL    string
	Client *http.Client
}

func (h *HTTPCollector) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return &http.Client{Timeout: 10 * time.Second}
}

func (h *HTTPCollector) post(ctx context.Context, path string) ([]byte, error) {
	return h.postLimit(ctx, path, 1<<20)
}

func (h *HTTPCollector) postLimit(ctx context.Context, path string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.URL, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("collector %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

func (h *HTTPCollector) Start(ctx context.Context) error {
	_, err := h.post(ctx, "/start")
	return err
}

func (h *HTTPCollector) Stop(ctx context.Context) (HWSample, error) {
	b, err := h.post(ctx, "/stop")
	if err != nil {
		return HWSample{}, err
	}
	var s HWSample
	return s, json.Unmarshal(b, &s)
}

// profileFrequencyParam is the query parameter of POST /profile/start.
const profileFrequencyParam = "frequencyHz"

// HTTPProfiler is the agent's client of the collector's profiler.
type HTTPProfiler struct {
	URL    string
	Client *http.Client
}

func (h *HTTPProfiler) collector() *HTTPCollector {
	c := h.Client
	if c == nil {
		// perf script of a long profile takes a while.
		c = &http.Client{Timeout: 2 * time.Minute}
	}
	return &HTTPCollector{URL: h.URL, Client: c}
}

func (h *HTTPProfiler) Start(ctx context.Context, frequencyHz int) error {
	_, err := h.collector().post(ctx, "/profile/start?"+profileFrequencyParam+"="+strconv.Itoa(frequencyHz))
	return err
}

func (h *HTTPProfiler) Stop(ctx context.Context) (results.Profile, error) {
	b, err := h.collector().postLimit(ctx, "/profile/stop", 16<<20)
	if err != nil {
		return results.Profile{}, err
	}
	var p results.Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("collector /profile/stop: %w", err)
	}
	if p.Error != "" {
		return p, errors.New(p.Error)
	}
	return p, nil
}
