package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
)

// The log is JSON lines, one record each, the type first: the config, then
// per bisection its start, its rounds and cells as they run, and its
// result. A cell's QPS are kept at full precision, so that -replay re-runs
// the decisions exactly.
const (
	recConfig    = "config"
	recBisection = "bisection"
	recRound     = "round"
	recCell      = "cell"
	recResult    = "result"
)

type configRec struct {
	Type    string `json:"type"`
	Started string `json:"started"`
	Config  config `json:"config"`
}

// bisectionRec starts a bisection: its case (the slowdown in percent, 0
// for a null bisection) and culprit (0 for none).
type bisectionRec struct {
	Type      string `json:"type"`
	Bisection int    `json:"bisection"`
	Slowdown  int    `json:"slowdown"`
	Culprit   int    `json:"culprit"`
}

// roundRec is a round as Decide asked for it, and whether the busy loop
// ran during it.
type roundRec struct {
	Type      string `json:"type"`
	Bisection int    `json:"bisection"`
	Round     int    `json:"round"`
	Kind      string `json:"kind"`
	Points    []int  `json:"points"`
	Refs      []int  `json:"refs,omitempty"`
	Busy      bool   `json:"busy"`
}

// cellRec is one cell: the point, its quota (percent of the base), its
// QPS per "step@threads" (or the error of a cell that failed), its wall
// time, the server's throttled share of CFS periods, and the machine's
// 1-minute load average when it ended.
type cellRec struct {
	Type      string             `json:"type"`
	Bisection int                `json:"bisection"`
	Round     int                `json:"round"`
	Point     int                `json:"point"`
	Repeat    int                `json:"repeat"`
	Scale     int                `json:"scale"`
	QPS       map[string]float64 `json:"qps,omitempty"`
	Error     string             `json:"error,omitempty"`
	Wall      float64            `json:"wall"`
	Throttled *float64           `json:"throttled,omitempty"`
	Load1     *float64           `json:"load1,omitempty"`
}

// resultRec is how a bisection ended (outcome, the build the posterior
// names and its probability, cells and rounds spent, wall seconds).
type resultRec struct {
	Type       string   `json:"type"`
	Bisection  int      `json:"bisection"`
	Outcome    string   `json:"outcome"`
	Named      int      `json:"named"`
	Confidence *float64 `json:"confidence,omitempty"`
	Likely     []int    `json:"likely,omitempty"`
	Cells      int      `json:"cells"`
	Rounds     int      `json:"rounds"`
	Epochs     int      `json:"epochs"`
	Seconds    float64  `json:"seconds"`
}

// finite is x, or nil for a NaN (JSON has none).
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orNaN(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// keyString is a throughput key as the log writes it: "step@threads".
func keyString(k bisect.Key) string { return fmt.Sprintf("%s@%d", k.Step, k.Threads) }

func parseKey(s string) (bisect.Key, error) {
	i := strings.LastIndex(s, "@")
	if i <= 0 {
		return bisect.Key{}, fmt.Errorf("key %q: not step@threads", s)
	}
	th, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return bisect.Key{}, fmt.Errorf("key %q: %w", s, err)
	}
	return bisect.Key{Step: s[:i], Threads: th, Metric: analysis.MetricThroughput}, nil
}

// logWriter appends records to the log, one line each, synced as it goes
// (a run stopped midway leaves a log that replays up to there).
type logWriter struct{ f *os.File }

func (l *logWriter) write(rec any) error {
	if l == nil || l.f == nil {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = l.f.Write(append(b, '\n'))
	return err
}

// round logs round ri of b as Decide asked for it.
func (l *logWriter) round(b *bisection, ri int, r bisect.Round) error {
	return l.write(roundRec{Type: recRound, Bisection: b.index, Round: ri, Kind: string(r.Kind), Points: r.Points, Refs: r.Refs, Busy: b.busyIn(ri)})
}

// cell logs a cell: its values, or why it failed.
func (l *logWriter) cell(b *bisection, ri int, ref cellRef, values map[bisect.Key]float64, failed string, wall, throttled float64) (cellRec, error) {
	rec := cellRec{Type: recCell, Bisection: b.index, Round: ri, Point: ref.point, Repeat: ref.repeat, Scale: b.scale(ref.point),
		Wall: math.Round(10*wall) / 10, Throttled: finite(math.Round(1000*throttled) / 1000), Load1: finite(load1())}
	if failed != "" {
		rec.Error = failed
		if len(rec.Error) > 400 {
			rec.Error = rec.Error[:400]
		}
	} else {
		rec.QPS = map[string]float64{}
		for k, v := range values {
			rec.QPS[keyString(k)] = v
		}
	}
	return rec, l.write(rec)
}

// runLog is a log read back.
type runLog struct {
	config     config
	started    string
	bisections []*bisectionRec
	// rounds and cells per bisection, in order.
	rounds  map[int][]roundRec
	cells   map[int][]cellRec
	results map[int]resultRec
}

func readLog(path string) (*runLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := &runLog{rounds: map[int][]roundRec{}, cells: map[int][]cellRec{}, results: map[int]resultRec{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	haveConfig := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		var err error
		switch head.Type {
		case recConfig:
			var r configRec
			err = json.Unmarshal(line, &r)
			l.config, l.started, haveConfig = r.Config, r.Started, true
		case recBisection:
			var r bisectionRec
			err = json.Unmarshal(line, &r)
			l.bisections = append(l.bisections, &r)
		case recRound:
			var r roundRec
			err = json.Unmarshal(line, &r)
			l.rounds[r.Bisection] = append(l.rounds[r.Bisection], r)
		case recCell:
			var r cellRec
			err = json.Unmarshal(line, &r)
			if err == nil && r.Error == "" && len(r.QPS) == 0 {
				err = fmt.Errorf("a cell with neither QPS nor an error")
			}
			l.cells[r.Bisection] = append(l.cells[r.Bisection], r)
		case recResult:
			var r resultRec
			err = json.Unmarshal(line, &r)
			l.results[r.Bisection] = r
		default:
			err = fmt.Errorf("unknown record type %q", head.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !haveConfig {
		return nil, fmt.Errorf("%s: no config record", path)
	}
	return l, nil
}

// values are a logged cell's QPS by key.
func (c cellRec) values() (map[bisect.Key]float64, error) {
	out := map[bisect.Key]float64{}
	for s, v := range c.QPS {
		k, err := parseKey(s)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}
