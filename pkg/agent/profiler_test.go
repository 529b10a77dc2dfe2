package agent

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
)

// fakeProfiler records what it was asked and returns a canned profile.
type fakeProfiler struct {
	startHz  int
	startErr error
	prof     results.Profile
	stopErr  error
}

func (f *fakeProfiler) Start(_ context.Context, hz int) error { f.startHz = hz; return f.startErr }
func (f *fakeProfiler) Stop(context.Context) (results.Profile, error) {
	return f.prof, f.stopErr
}

// The collector serves its profiler to the agent's HTTPProfiler: the
// frequency gets there, the profile comes back, and errors on either side
// are the agent's errors.
func TestHTTPProfiler(t *testing.T) {
	canned := results.Profile{Tool: results.ProfileToolPerf, Event: ProfileEvent, FrequencyHz: 49, Seconds: 10, Samples: 3, Folded: "main;f 3\n"}
	tests := []struct {
		name         string
		fake         *fakeProfiler
		wantStartErr string
		wantStopErr  string
	}{
		{name: "ok", fake: &fakeProfiler{prof: canned}},
		{name: "start fails", fake: &fakeProfiler{startErr: errors.New("perf record exited at once: not permitted")}, wantStartErr: "not permitted"},
		{name: "stop fails", fake: &fakeProfiler{prof: canned, stopErr: errors.New("perf took no samples")}, wantStopErr: "perf took no samples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(CollectorProfilerHandler(&fakeCollector{}, tt.fake))
			defer srv.Close()
			p := &HTTPProfiler{URL: srv.URL}
			err := p.Start(context.Background(), 49)
			if tt.wantStartErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantStartErr) {
					t.Fatalf("start: %v, want %q", err, tt.wantStartErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.fake.startHz != 49 {
				t.Errorf("the collector's profiler got %d Hz, want 49", tt.fake.startHz)
			}
			got, err := p.Stop(context.Background())
			if tt.wantStopErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantStopErr) {
					t.Fatalf("stop: %v, want %q", err, tt.wantStopErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(canned, got); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		})
	}
	// Without a profiler the collector has no such endpoint.
	srv := httptest.NewServer(CollectorHandler(&fakeCollector{}))
	defer srv.Close()
	if err := (&HTTPProfiler{URL: srv.URL}).Start(context.Background(), 99); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("start on a collector without a profiler: %v, want a 404", err)
	}
}

// writeProc writes a fake /proc: pid -> parent.
func writeProc(t *testing.T, parents map[int]int) string {
	t.Helper()
	proc := t.TempDir()
	for pid, ppid := range parents {
		dir := filepath.Join(proc, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// A command name with a space and a ')' as the kernel allows.
		stat := strconv.Itoa(pid) + " (post gres: x)) S " + strconv.Itoa(ppid) + " 1 1 0 -1\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proc
}

func TestProcessTree(t *testing.T) {
	// 10 is the postmaster, 11 and 12 its backends, 13 a child of 12;
	// 20 is another server.
	proc := writeProc(t, map[int]int{1: 0, 10: 1, 11: 10, 12: 10, 13: 12, 20: 1})
	tests := []struct {
		pid     int
		want    []int
		wantErr bool
	}{
		{pid: 10, want: []int{10, 11, 12, 13}},
		{pid: 20, want: []int{20}},
		{pid: 99, wantErr: true},
	}
	for _, tt := range tests {
		got, err := ProcessTree(proc, tt.pid)
		if (err != nil) != tt.wantErr {
			t.Fatalf("ProcessTree(%d): %v", tt.pid, err)
		}
		// Children come in /proc's order; compare as sets.
		if !tt.wantErr && !cmp.Equal(sorted(got), tt.want) {
			t.Errorf("ProcessTree(%d) = %v, want %v", tt.pid, got, tt.want)
		}
	}
}

func sorted(xs []int) []int {
	out := append([]int(nil), xs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// PodProcesses leaves out PID 1 (pause), the collector itself and the
// collector's own children (its perf).
func TestPodProcesses(t *testing.T) {
	self := os.Getpid()
	proc := writeProc(t, map[int]int{1: 0, 7: 1, 8: 7, self: 1, self + 1: self})
	got, err := PodProcesses(proc)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{7, 8}; !cmp.Equal(sorted(got), want) {
		t.Errorf("PodProcesses = %v, want %v", got, want)
	}
}

// A PerfProfiler without targets, or whose perf cannot start, says so.
func TestPerfProfilerErrors(t *testing.T) {
	tests := []struct {
		name string
		p    *PerfProfiler
		want string
	}{
		{name: "no targets", p: &PerfProfiler{}, want: "no targets"},
		{name: "no processes", p: &PerfProfiler{Targets: func(context.Context) ([]int, error) { return nil, nil }}, want: "no server process"},
		{name: "no perf", p: &PerfProfiler{Perf: "/nonexistent/perf", Targets: func(context.Context) ([]int, error) { return []int{os.Getpid()}, nil }}, want: "starting /nonexistent/perf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Start(context.Background(), 99); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start: %v, want %q", err, tt.want)
			}
			if _, err := tt.p.Stop(context.Background()); err == nil || !strings.Contains(err.Error(), "not started") {
				t.Errorf("Stop after a failed Start: %v", err)
			}
		})
	}
}
