package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/santhosh-tekuri/jsonschema/v6"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	dblua "github.com/dbbench/dbbench/lua"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
	"github.com/dbbench/dbbench/pkg/workload"
)

func testPlan(steps ...string) agentapi.Task {
	return agentapi.Task{
		APIVersion: agentapi.APIVersion,
		Run:        agentapi.RunRef{Name: "unit"},
		Cell:       agentapi.Cell{Name: "c0", Engine: agentapi.MariaDB, Version: "10.11", Attempt: 1},
		Server:     agentapi.Server{Engine: agentapi.MariaDB, Port: 1, Database: "sbtest", ReadyTimeoutSeconds: 1},
		Workload: agentapi.Workload{Steps: steps, Tables: 1, TableSize: 100, ReadSeconds: 1, WriteSeconds: 1,
			Threads: []int{1, 2}},
		Results: agentapi.Results{Dir: "unused"},
	}
}

func TestResolveSteps(t *testing.T) {
	p := testPlan("update-zipf", "tpcc", "mine", "points-covered-si.pre")
	p.Workload.WriteSeconds = 7
	p.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: "/x.lua", DurationSeconds: 3}}
	p.Workload.TPCC = &agentapi.TPCC{Warehouses: 2, Threads: []int{4}, Isolation: "RC"}
	got, err := ResolveSteps(&p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d steps", len(got))
	}
	if got[0].Script != "dbbench/update" || got[0].Seconds != 7 || strings.Join(got[0].Args, " ") != "--update-kind=zipf --zipf-exp=0.8" {
		t.Errorf("update-zipf resolved to %+v", got[0])
	}
	if got[1].Kind != KindTPCC || got[1].Seconds != 7 || len(got[1].Threads) != 1 || got[1].Threads[0] != 4 ||
		!strings.Contains(strings.Join(got[1].Args, " "), "--scale=2 --tables=1 --use_fk=0 --trx_level=RC") {
		t.Errorf("tpcc resolved to %+v", got[1])
	}
	if got[2].Kind != KindCustom || got[2].Seconds != 3 || got[2].Script != "/x.lua" {
		t.Errorf("custom resolved to %+v", got[2])
	}
	if got[3].Catalog.Phase != workload.PhasePreWrite {
		t.Errorf(".pre step resolved to %+v", got[3])
	}

	p = testPlan("point-query", "point-qurey")
	_, err = ResolveSteps(&p)
	if err == nil || !strings.Contains(err.Error(), `workload.steps[1]: "point-qurey" is not in the step catalog`) {
		t.Errorf("unknown step: got %v", err)
	}
}

// Every catalog script that is ours must be embedded.
func TestCatalogScriptsAreEmbedded(t *testing.T) {
	for _, s := range workload.Extended() {
		name, ours := strings.CutPrefix(s.Script, OursPrefix)
		if !ours {
			continue
		}
		if _, err := fs.Stat(dblua.Scripts, "dbbench/"+name+".lua"); err != nil {
			t.Errorf("step %s: script %s is not embedded: %v", s.Name, s.Script, err)
		}
	}
	dir := t.TempDir()
	if err := ExtractScripts(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dbbench_common.lua", "tpcc.lua", "tpcc_common.lua", "update.lua", "points.lua", "range.lua", "read_only.lua", "scan.lua"} {
		if _, err := os.Stat(filepath.Join(dir, "dbbench", f)); err != nil {
			t.Errorf("extracted scripts lack %s", f)
		}
	}
}

func TestConnArgsAndTLS(t *testing.T) {
	s := &Sysbench{Engine: agentapi.MariaDB, Host: "h", Port: 3306, User: "u", Password: "p", Database: "d",
		Version: sysbench.Version{Major: 1, Minor: 0, Patch: 20}}
	for _, tc := range []struct {
		name    string
		engine  agentapi.Engine
		version sysbench.Version
		want    string
	}{
		{"1.0.20", agentapi.MariaDB, sysbench.Version{Major: 1, Minor: 0, Patch: 20},
			"--db-driver=mysql --mysql-host=h --mysql-port=3306 --mysql-user=u --mysql-password=p --mysql-db=d --mysql-ssl=off"},
		{"1.1", agentapi.MySQL, sysbench.Version{Major: 1, Minor: 1},
			"--db-driver=mysql --mysql-host=h --mysql-port=3306 --mysql-user=u --mysql-password=p --mysql-db=d --mysql-ssl=disabled"},
		{"pgsql", agentapi.Postgres, sysbench.Version{Major: 1, Minor: 1},
			"--db-driver=pgsql --pgsql-host=h --pgsql-port=3306 --pgsql-user=u --pgsql-password=p --pgsql-db=d"},
	} {
		s.Engine, s.Version = tc.engine, tc.version
		if got := strings.Join(s.ConnArgs(), " "); got != tc.want {
			t.Errorf("%s: ConnArgs\n %s\nwant\n %s", tc.name, got, tc.want)
		}
	}
	if got := s.ScriptPath("dbbench/points"); got != filepath.Join(s.ScriptsDir, "dbbench", "points.lua") {
		t.Errorf("ScriptPath: %s", got)
	}
	if got := s.ScriptPath("oltp_point_select"); got != "oltp_point_select" {
		t.Errorf("ScriptPath(stock): %s", got)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want ConnectErrorKind
	}{
		{&mysql.MySQLError{Number: 1045, Message: "Access denied"}, ConnBadCredentials},
		{&mysql.MySQLError{Number: 1049, Message: "Unknown database"}, ConnUnknownDatabase},
		{&pgconn.PgError{Code: "28P01"}, ConnBadCredentials},
		{&pgconn.PgError{Code: "3D000"}, ConnUnknownDatabase},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), ConnRefused},
		{context.DeadlineExceeded, ConnTimeout},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

type memSink struct {
	writes []agentapi.Progress
	docs   int
	full   [][]byte
	last   []byte
}

func (m *memSink) Write(_ context.Context, p agentapi.Progress, doc []byte) error {
	m.writes = append(m.writes, p)
	if doc != nil {
		m.docs++
		m.last = doc
	}
	return nil
}

func (m *memSink) WriteFull(_ context.Context, full []byte) error {
	m.full = append(m.full, full)
	return nil
}

func TestReporterRateLimit(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sink := &memSink{}
	r := &Reporter{Sink: sink, MinInterval: 5 * time.Second, Now: func() time.Time { return now }}
	ctx := context.Background()
	_ = r.Report(ctx, agentapi.Progress{Phase: agentapi.PhaseRunning}, nil, false) // first: sent
	now = now.Add(time.Second)
	_ = r.Report(ctx, agentapi.Progress{Phase: agentapi.PhaseRunning}, nil, false) // held back
	now = now.Add(time.Second)
	_ = r.Report(ctx, agentapi.Progress{Phase: agentapi.PhaseRunning, StepsDone: 1}, []byte(`{}`), true) // forced
	now = now.Add(5 * time.Second)
	_ = r.Report(ctx, agentapi.Progress{Phase: agentapi.PhaseRunning}, nil, false) // due again
	if len(sink.writes) != 3 || sink.docs != 1 {
		t.Fatalf("writes=%d docs=%d, want 3 and 1", len(sink.writes), sink.docs)
	}
	if sink.writes[1].StepsDone != 1 || sink.writes[1].UpdatedAt == "" {
		t.Errorf("forced write: %+v", sink.writes[1])
	}
}

func TestConfigMapSink(t *testing.T) {
	cs := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cell-results", Namespace: "bench"}})
	s := &ConfigMapSink{Client: cs, Namespace: "bench", Name: "cell-results"}
	ctx := context.Background()
	if err := s.Write(ctx, agentapi.Progress{Phase: agentapi.PhaseRunning, StepsDone: 3}, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, agentapi.Progress{Phase: agentapi.PhaseDone, StepsDone: 4}, nil); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "cell-results", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var p agentapi.Progress
	if err := json.Unmarshal([]byte(cm.Data[agentapi.ResultKeyProgress]), &p); err != nil || p.Phase != agentapi.PhaseDone || p.StepsDone != 4 {
		t.Errorf("progress = %q (%v)", cm.Data[agentapi.ResultKeyProgress], err)
	}
	if cm.Data[agentapi.ResultKeyDocument] != `{"x":1}` {
		t.Errorf("document = %q: a progress-only write must keep it", cm.Data[agentapi.ResultKeyDocument])
	}
	// Only get and update, of that one ConfigMap.
	for _, a := range cs.Actions() {
		if v := a.GetVerb(); v != "get" && v != "update" {
			t.Errorf("unexpected %s %s", v, a.GetResource().Resource)
		}
	}
	missing := &ConfigMapSink{Client: cs, Namespace: "bench", Name: "nope"}
	if err := missing.Write(ctx, agentapi.Progress{}, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing ConfigMap: %v", err)
	}
}

func TestProcCollector(t *testing.T) {
	dir := t.TempDir()
	write := func(stat, disk, cg string) {
		_ = os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "diskstats"), []byte(disk), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte(cg), 0o644)
	}
	write("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1\ncpu1 1\nctxt 1000\n",
		" 253 0 vda 10 0 80 0 5 0 40 0 0 0 0\n", "usage_usec 1000000\n")
	c := &ProcCollector{Proc: dir, Devices: []string{"vda"}, CgroupCPU: filepath.Join(dir, "cpu.stat")}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// +100 busy (us+sy) of +200 total jiffies, +2000 context switches,
	// +10 reads of 20 sectors (10 KB), +40 written sectors (20 KB), +0.2 s CPU.
	write("cpu  160 0 90 850 100 0 0 0 0 0\ncpu0 1\ncpu1 1\nctxt 3000\n",
		" 253 0 vda 20 0 100 0 9 0 80 0 0 0 0\n", "usage_usec 1200000\n")
	s, err := c.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUs != 2 || s.CPUUserSysPct != 50 {
		t.Errorf("cpus=%d cpu%%=%v", s.CPUs, s.CPUUserSysPct)
	}
	approx := func(name string, got, wantTotal float64) {
		if d := got*s.Seconds - wantTotal; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: %v/s over %v s, want total %v", name, got, s.Seconds, wantTotal)
		}
	}
	approx("cs", s.CtxSwitches, 2000)
	approx("reads", s.ReadsPerSec, 10)
	approx("rKB", s.ReadKBPerSec, 10)
	approx("wKB", s.WriteKBPerSec, 20)
	approx("server cpu", s.ServerCPUPerSec, 0.2)

	// Over HTTP, as the agent uses it on another node.
	srv := httptest.NewServer(CollectorHandler(c))
	defer srv.Close()
	hc := &HTTPCollector{URL: srv.URL}
	if _, err := hc.Stop(context.Background()); err == nil {
		t.Error("stop without start must fail")
	}
	if err := hc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := hc.Stop(context.Background()); err != nil || got.CPUs != 2 {
		t.Errorf("http stop: %+v %v", got, err)
	}

	h := toHardware(s, 1000, "steadyQps", true, c)
	if h.CPUPerOp == nil || *h.CPUPerOp != 0.05 || h.ServerCPUMicrosPerOp == nil {
		t.Errorf("hardware per op: %+v", h)
	}
}

func TestIncreasing(t *testing.T) {
	in := []sysbench.Interval{{Second: 1}, {Second: 2}, {Second: 2}, {Second: 3}}
	if got := increasing(in); len(got) != 3 || got[2].Second != 3 {
		t.Errorf("increasing = %+v", got)
	}
}

func TestLocalOptions(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	_ = os.WriteFile(pw, []byte("s3cret\n"), 0o600)
	o := LocalOptions{Engine: "postgres", Steps: "extended", PasswordFile: pw, Out: "/tmp/x", Custom: []string{"mine=rel/my.lua:5"}}
	if err := o.Workload.Parse("--threads=1,4", "--table-size=500", "--tpcc-warehouses=3"); err != nil {
		t.Fatal(err)
	}
	p, pass, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	if pass != "s3cret" || p.Server.Port != 5432 || len(p.Workload.Steps) != 42 || p.Workload.TableSize != 500 ||
		len(p.Workload.Threads) != 2 || p.Workload.Custom[0].DurationSeconds != 5 || !filepath.IsAbs(p.Workload.Custom[0].Script) ||
		p.Workload.TPCC.Warehouses != 3 {
		t.Errorf("plan: %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("built plan invalid: %v", err)
	}
}

// The agent fails fast and clearly on bad input that needs no server.
func TestRunFailsWithoutServer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(a *Agent)
		exit     int
		contains string
	}{
		{"unknown step", func(a *Agent) { a.Plan.Workload.Steps = []string{"point-query", "no-such-step"} }, agentapi.ExitBenchmarkFailed, `"no-such-step" is not in the step catalog`},
		{"invalid plan", func(a *Agent) { a.Plan.Workload.Tables = 0 }, agentapi.ExitInvalidTask, "workload.tables"},
		{"missing sysbench", func(a *Agent) { a.SysbenchBinary = "/nonexistent/sysbench" }, agentapi.ExitBenchmarkFailed, "sysbench binary not found"},
		{"missing custom script", func(a *Agent) {
			a.Plan.Workload.Steps = []string{"mine"}
			a.Plan.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: "/nonexistent.lua"}}
		}, agentapi.ExitBenchmarkFailed, "custom step mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			a := &Agent{Plan: testPlan("point-query"), Host: "127.0.0.1", User: "u", Sink: sink}
			tc.mutate(a)
			res := a.Run(context.Background())
			if res.ExitCode != tc.exit || res.Err == nil || !strings.Contains(res.Err.Error(), tc.contains) {
				t.Fatalf("exit %d, err %v; want %d and %q", res.ExitCode, res.Err, tc.exit, tc.contains)
			}
			last := sink.writes[len(sink.writes)-1]
			if last.Phase != agentapi.PhaseFailed || !strings.Contains(last.Error, tc.contains) {
				t.Errorf("last progress: %+v", last)
			}
			doc := validateDocument(t, sink.last)
			if doc.Status.Outcome != results.OutcomeFailed || !strings.Contains(doc.Status.Error, tc.contains) {
				t.Errorf("document status: %+v", doc.Status)
			}
		})
	}
}

// A local run (no version in the plan: it is the server's) that fails
// before the server answered writes progress only, and does not complain of
// an invalid document.
func TestLocalRunBeforeTheServerAnswered(t *testing.T) {
	sink := &memSink{}
	var log bytes.Buffer
	a := &Agent{Plan: testPlan("point-query"), Host: "127.0.0.1", User: "u", Sink: sink, Log: &log, SysbenchBinary: "/nonexistent/sysbench"}
	a.Plan.Cell.Version = ""
	res := a.Run(context.Background())
	if res.ExitCode != agentapi.ExitBenchmarkFailed {
		t.Fatalf("exit %d (%v), want %d", res.ExitCode, res.Err, agentapi.ExitBenchmarkFailed)
	}
	if strings.Contains(log.String(), "results document invalid") {
		t.Errorf("the agent complained of an invalid document:\n%s", log.String())
	}
	if sink.last != nil {
		t.Errorf("a document was written without a version: %s", sink.last)
	}
	if len(sink.writes) == 0 || sink.writes[len(sink.writes)-1].Phase != agentapi.PhaseFailed {
		t.Errorf("progress writes %+v, want the last one Failed", sink.writes)
	}
}

var schemaCompiled *jsonschema.Schema

// validateDocument checks b with pkg/results and against its JSON Schema.
func validateDocument(t *testing.T, b []byte) *results.Document {
	t.Helper()
	if b == nil {
		t.Fatal("no document was written")
	}
	doc, err := results.Unmarshal(b)
	if err != nil {
		t.Fatalf("results.Unmarshal: %v", err)
	}
	if schemaCompiled == nil {
		sch, err := jsonschema.UnmarshalJSON(bytes.NewReader(results.SchemaJSON()))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("v1.json", sch); err != nil {
			t.Fatal(err)
		}
		if schemaCompiled, err = c.Compile("v1.json"); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemaCompiled.Validate(inst); err != nil {
		t.Fatalf("document does not match the JSON Schema: %v", err)
	}
	return doc
}
