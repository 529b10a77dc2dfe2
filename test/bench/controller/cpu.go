package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// cpuSampler records, every interval, the CPU time (user + system) of the
// processes the bench measures: the API server and etcd it started, the
// manager and the bench itself (the simulator and the reference run in it).
// The figures are CPU seconds over a window, by process: on two shared
// cores they say whose work a wall time waited on.
type cpuSampler struct {
	mu      sync.Mutex
	procs   map[string]int
	samples []cpuSample
	stop    chan struct{}
}

type cpuSample struct {
	at  time.Time
	cpu map[string]float64 // seconds, by process name
}

// processOrder is the order the figures are printed in.
var processOrder = []string{"kube-apiserver", "etcd", "manager", "bench"}

func newCPUSampler() *cpuSampler {
	s := &cpuSampler{procs: map[string]int{"bench": os.Getpid()}, stop: make(chan struct{})}
	// envtest starts kube-apiserver and etcd as children of this process.
	procs, _ := procfs.AllProcs()
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.PPID != os.Getpid() {
			continue
		}
		if st.Comm == "kube-apiserver" || st.Comm == "etcd" {
			s.procs[st.Comm] = p.PID
		}
	}
	return s
}

// addProcess measures pid as name from the next sample on.
func (s *cpuSampler) addProcess(name string, pid int) {
	s.mu.Lock()
	s.procs[name] = pid
	s.mu.Unlock()
}

func (s *cpuSampler) start(interval time.Duration) {
	s.sample()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
}

func (s *cpuSampler) close() { close(s.stop) }

func (s *cpuSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := cpuSample{at: time.Now(), cpu: map[string]float64{}}
	for name, pid := range s.procs {
		p, err := procfs.NewProc(pid)
		if err != nil {
			continue
		}
		if st, err := p.Stat(); err == nil {
			cur.cpu[name] = st.CPUTime()
		}
	}
	s.samples = append(s.samples, cur)
}

// between is each process's CPU seconds from the last sample at or before
// from to the first at or after to.
func (s *cpuSampler) between(from, to time.Time) map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var a, b *cpuSample
	for i := range s.samples {
		smp := &s.samples[i]
		if !smp.at.After(from) {
			a = smp
		}
		if b == nil && !smp.at.Before(to) {
			b = smp
		}
	}
	if b == nil && len(s.samples) > 0 {
		b = &s.samples[len(s.samples)-1]
	}
	out := map[string]float64{}
	if a == nil || b == nil {
		return out
	}
	for name, v := range b.cpu {
		out[name] = v - a.cpu[name]
	}
	return out
}

// settle waits until the API server and etcd have used less than idle CPU
// seconds over the last second (at most limit), and returns how long it
// waited: what the API server does after its start (its CRDs' OpenAPI, its
// own controllers) or after a burst is not the next window's work.
func (s *cpuSampler) settle(idle float64, limit time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		time.Sleep(250 * time.Millisecond)
		now := time.Now()
		if now.Sub(start) < time.Second {
			continue
		}
		cpu := s.between(now.Add(-time.Second), now)
		if cpu["kube-apiserver"]+cpu["etcd"] < idle {
			break
		}
	}
	return time.Since(start)
}

// formatCPU prints a window's CPU seconds by process and their sum.
func formatCPU(cpu map[string]float64) string {
	parts := make([]string, 0, len(processOrder)+1)
	total := 0.0
	for _, name := range processOrder {
		v, ok := cpu[name]
		if !ok {
			continue
		}
		total += v
		parts = append(parts, fmt.Sprintf("%s %.1f", name, v))
	}
	return fmt.Sprintf("%s; total %.1f CPU-s", strings.Join(parts, ", "), total)
}

// apiRequests is the API server's request count (apiserver_request_total)
// by "VERB resource[/subresource]", from every client.
type apiRequests map[string]float64

// scrapeAPIServer reads the API server's request counters through hc, the
// admin user's client.
func scrapeAPIServer(hc *http.Client, host string) (apiRequests, error) {
	resp, err := hc.Get(strings.TrimSuffix(host, "/") + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := apiRequests{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		verb := ""
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			// Watchers the API server closed because they did not
			// read their events fast enough: each costs its client
			// a new watch, or a new list.
			if rest, ok = strings.CutPrefix(line, "apiserver_terminated_watchers_total{"); !ok {
				continue
			}
			verb = "TERMINATED-WATCH"
		}
		closing := strings.LastIndexByte(rest, '}')
		if closing < 0 {
			continue
		}
		lbl := metricLabels(rest[:closing])
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[closing+1:]), 64)
		if err != nil || lbl["resource"] == "" {
			continue
		}
		if verb == "" {
			verb = lbl["verb"]
		}
		key := verb + " " + lbl["resource"]
		if sub := lbl["subresource"]; sub != "" {
			key += "/" + sub
		}
		out[key] += v
	}
	return out, sc.Err()
}

// metricLabels parses a Prometheus label list (name="value",...); values
// here hold no escaped quotes.
func metricLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		end := strings.IndexByte(s[eq+2:], '"')
		if end < 0 {
			break
		}
		out[s[:eq]] = s[eq+2 : eq+2+end]
		s = strings.TrimPrefix(s[eq+2+end+1:], ",")
	}
	return out
}

// minus is the requests of r not in earlier.
func (r apiRequests) minus(earlier apiRequests) apiRequests {
	out := apiRequests{}
	for k, v := range r {
		if d := v - earlier[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// format prints the counts, largest first, those of at least min.
func (r apiRequests) format(minCount float64) string {
	keys := make([]string, 0, len(r))
	total := 0.0
	for k, v := range r {
		total += v
		if v >= minCount {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return r[keys[i]] > r[keys[j]] })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, r[k]))
	}
	return fmt.Sprintf("%.0f in all: %s", total, strings.Join(parts, ", "))
}
