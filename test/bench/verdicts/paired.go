package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

// The paired verdict (regression.against Baseline, regression.JudgeBaseline)
// on the bench's rounds: a round runs A, the slowed cells and A2 one after
// the other on one server, as a block of a blocked run runs its cells on
// one node. n distinct rounds are drawn (subsampleN times); A's runs of
// them are the baseline combination, cell's the other, each run carrying
// its round as its block. Paired, the verdict tests the per-round log
// ratios; the same runs without blocks are tested between repeats
// (Welch). What the rounds share — the machine's slow drift, which
// docs/noise.md's variance components measure as the round effect —
// cancels in the first and widens the second.

// blockedManifest is one run: A's runs of rounds as combination "base"
// (its first cell the baseline) and cell's as "cur", each with its round
// as its block when blocked.
func blockedManifest(cells map[string][]runResult, cell string, rounds []int, blocked bool) *results.Manifest {
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: "paired"}, WorkloadSHA256: "bench-verdicts"}
	for _, side := range []struct{ cell, version string }{{baseCell, "base"}, {cell, "cur"}} {
		for i, r := range rounds {
			mc := results.NewManifestCell(cells[side.cell][r].doc, results.ManifestPhaseSucceeded, "", "")
			mc.Database, mc.Engine, mc.Version, mc.Config, mc.Repeat = "mariadb", "mariadb", side.version, "bench", i+1
			mc.Name = fmt.Sprintf("mariadb-%s-bench-r%d", side.version, i+1)
			mc.Block = 0
			if blocked {
				mc.Block = r + 1
			}
			m.Cells = append(m.Cells, mc)
		}
	}
	m.Baseline = m.Cells[0].Name
	return m
}

// pairedRate is the rate of regressed verdicts against the baseline over
// subsampleN draws of n distinct rounds, paired by round or not, and the
// methods the verdicts used.
func pairedRate(c config, cells map[string][]runResult, cell string, n int, r rule, blocked bool) (float64, []string, error) {
	rng := rand.New(rand.NewPCG(uint64(n), 23))
	regressed := 0
	methods := map[string]bool{}
	for range subsampleN {
		rounds := rng.Perm(c.rounds)[:n]
		slices.Sort(rounds)
		v, err := regression.JudgeBaseline(blockedManifest(cells, cell, rounds, blocked), r.options())
		if err != nil {
			return 0, nil, err
		}
		for _, mc := range v.Methods() {
			methods[string(mc.Method)] = true
		}
		if len(v.Regressed) > 0 {
			regressed++
		}
	}
	return float64(regressed) / subsampleN, sortedKeys(methods), nil
}

// pairedSection prints the paired and unpaired rates side by side for the
// A/A cell and each slowed cell, at 3 and 5 rounds, by each rule.
func pairedSection(w *os.File, c config, cells map[string][]runResult) {
	all := make([]string, 0, 1+len(c.scales))
	all = append(all, aaCell)
	for _, s := range c.scales {
		all = append(all, slowCell(s))
	}
	fmt.Fprintf(w, "\nagainst the run's baseline (regression.against Baseline): rounds as blocks, %d draws of n distinct rounds\n", subsampleN)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "verdict\tA/A (A2 vs A)")
	for _, s := range c.scales {
		fmt.Fprintf(tw, "\t%s (nominal −%d %%)", slowCell(s), 100-s)
	}
	fmt.Fprintln(tw)
	for _, r := range rules[:2] {
		for _, n := range []int{3, 5} {
			if n > c.rounds {
				continue
			}
			for _, blocked := range []bool{true, false} {
				how := "paired by round"
				if !blocked {
					how = "between repeats"
				}
				fmt.Fprintf(tw, "%d+%d, %s, %s", n, n, how, r)
				for _, cell := range all {
					rate, methods, err := pairedRate(c, cells, cell, n, r, blocked)
					if err != nil {
						fmt.Fprintf(tw, "\terror: %v", err)
						continue
					}
					fmt.Fprintf(tw, "\t%.3f %v", rate, methods)
				}
				fmt.Fprintln(tw)
			}
		}
	}
	_ = tw.Flush()
}
