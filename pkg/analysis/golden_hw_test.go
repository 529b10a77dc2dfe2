package analysis

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// seedHWBlock is one "sb.met.<step>...dop<threads>" block of seed 000.
type seedHWBlock struct {
	step     string
	threads  int
	absolute [][]string // fields per row: 6 figures then the dbms name
	relative [][]string
}

var seedTitle = regexp.MustCompile(`^sb\.met\.([a-z-]+)\..*\.dop([0-9]+)$`)

// readSeedHW parses testdata/seed000_hw.txt. Fields are split on any Unicode
// space (the post uses non-breaking spaces).
func readSeedHW(t *testing.T) []seedHWBlock {
	t.Helper()
	data, err := os.ReadFile("testdata/seed000_hw.txt")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []seedHWBlock
	var cur *seedHWBlock
	var into *[][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case seedTitle.MatchString(line):
			m := seedTitle.FindStringSubmatch(line)
			th, _ := strconv.Atoi(m[2])
			blocks = append(blocks, seedHWBlock{step: m[1], threads: th})
			cur = &blocks[len(blocks)-1]
		case line == "--- absolute":
			into = &cur.absolute
		case line == "--- relative to first result":
			into = &cur.relative
		case strings.HasPrefix(line, "cpu/o"):
		default:
			f := strings.Fields(line)
			if len(f) != 7 {
				t.Fatalf("seed line %q: %d fields", line, len(f))
			}
			*into = append(*into, f)
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("parsed %d seed blocks, want 2", len(blocks))
	}
	return blocks
}

// datasetFromSeedHW builds observations from the absolute block only.
func datasetFromSeedHW(t *testing.T, b seedHWBlock) *Dataset {
	t.Helper()
	ds := NewDataset("seed000")
	for _, row := range b.absolute {
		v := make([]float64, 6)
		for k := range v {
			x, err := strconv.ParseFloat(row[k], 64)
			if err != nil {
				t.Fatal(err)
			}
			v[k] = x
		}
		o := Observation{Cell: row[6], Step: b.step, Threads: b.threads, QPS: v[5],
			HW: &Hardware{CPUPerOp: &v[0], CSPerOp: &v[1], ReadsPerOp: &v[2], ReadKBPerOp: &v[3], WriteKBPerOp: &v[4], OpsPerSecond: v[5]}}
		if err := ds.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return ds
}

// TestGoldenSeed000HW: the "relative to first result" blocks that seed 000
// prints must come out of its "absolute" blocks, token for token (2
// decimals, "1" for 0/0, "inf" for x/0), and the absolute block must read
// back the same numbers.
func TestGoldenSeed000HW(t *testing.T) {
	for _, b := range readSeedHW(t) {
		t.Run(b.step, func(t *testing.T) {
			ds := datasetFromSeedHW(t, b)
			hw, err := HWEfficiency(ds, HWOptions{Step: b.step})
			if err != nil {
				t.Fatal(err)
			}
			tables := hw.Tables()
			// Relative block: exact text, compared field by field.
			var buf bytes.Buffer
			if err := tables[1].WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			var got [][]string
			for _, l := range lines[2:] { // title, header
				if strings.HasPrefix(l, "note:") {
					continue
				}
				got = append(got, strings.Fields(l))
			}
			if len(got) != len(b.relative) {
				t.Fatalf("relative block has %d rows, seed %d:\n%s", len(got), len(b.relative), buf.String())
			}
			for i := range got {
				if strings.Join(got[i], " ") != strings.Join(b.relative[i], " ") {
					t.Errorf("row %d:\n got  %s\n seed %s", i, strings.Join(got[i], " "), strings.Join(b.relative[i], " "))
				}
			}
			// Header matches the seed's column names (dbms is "cell" here).
			if h := strings.Fields(lines[1]); strings.Join(h[:6], " ") != "cpu/o cs/o r/o rKB/o wKB/o o/s" {
				t.Errorf("header %q", lines[1])
			}
			// Absolute block: the printed figures parse back to the seed's.
			for i, row := range tables[0].Rows {
				for k := 0; k < 6; k++ {
					g, _ := strconv.ParseFloat(row[k], 64)
					s, _ := strconv.ParseFloat(b.absolute[i][k], 64)
					if g != s {
						t.Errorf("absolute row %d col %s: %s, seed %s", i, HWColumns[k], row[k], b.absolute[i][k])
					}
				}
			}
		})
	}
}

// TestGoldenSeed000HWSpecialCases pins the cases the golden blocks rely on,
// so a change of rule cannot hide behind the fixture.
func TestGoldenSeed000HWSpecialCases(t *testing.T) {
	b := readSeedHW(t)[0]
	ds := datasetFromSeedHW(t, b)
	hw, err := HWEfficiency(ds, HWOptions{Step: b.step})
	if err != nil {
		t.Fatal(err)
	}
	// ma101107: r/o 0.077 against 0 → inf; ma100339: 0 against 0 → 1.
	if r := hw.Relative[4].Ratios[2]; r.State != RatioInf || r.String() != "inf" {
		t.Errorf("x/0 gave %+v %q", r, r.String())
	}
	if r := hw.Relative[0].Ratios[2]; r.State != RatioZeroOverZero || r.String() != "1" {
		t.Errorf("0/0 gave %+v %q", r, r.String())
	}
}
