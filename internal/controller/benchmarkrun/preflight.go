package benchmarkrun

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The pre-flight (spec.preflight): before the first cell, each (database,
// version, config variant) pair is run once as a cell whose agent stops
// after its config check (matrix.PreflightCells, agentapi.Task.Preflight). The
// pairs go through the cells' own machinery (serverPodTarget's start and
// progress, attemptFailed, the failure policy), so a pair fails for the
// reasons and with the messages a cell would (ConfigRejected with the
// server's error lines, ConfigNotApplied naming the setting), and
// infrastructure failures are retried within spec.retry. Their state is
// status.preflight.pairs, so a restarted manager adopts the pairs' pods like
// it adopts cells'.

// preflightMessageLimit bounds one pair's part of the condition message
// (a condition message may hold 32 KiB; a run has at most 8×100 pairs, but
// failing pairs are usually few, and the server's first error lines come
// first).
const preflightMessageLimit = 1500

// preflightSkipReason says why a run of pairs and cells (its first round's)
// makes no pre-flight, or "" when it makes one. A pre-flight buys one thing:
// a bad pair is found before any cell's load is spent. Its first cell finds
// it as soon when there is one pair, or when every cell starts at once (the
// cells check their pair's settings before their load, in the first wave,
// where the pre-flight would); there the pre-flight would only double the
// server starts (in `make bench-controller`, 16.9 API writes per cell
// against 9.3) and delay every cell by one server start.
//
// firstWave is how many cells start at once: up to maxParallelCells, and in
// a blocked run one per block.
func preflightSkipReason(enabled bool, pairs, cells, firstWave int) dbbenchv1alpha1.PreflightSkipReason {
	switch {
	case !enabled:
		return dbbenchv1alpha1.PreflightDisabled
	case pairs < 2:
		return dbbenchv1alpha1.PreflightSinglePair
	case cells <= firstWave:
		return dbbenchv1alpha1.PreflightAllCellsAtOnce
	}
	return ""
}

// firstWave is how many of cells start at once (preflightSkipReason).
func firstWave(cells []matrix.Cell, maxParallelCells int32) int {
	n := len(cells)
	blocks := map[int32]bool{}
	for _, c := range cells {
		if c.Block > 0 {
			blocks[c.Block] = true
		}
	}
	if len(blocks) > 0 {
		n = len(blocks)
	}
	return min(n, int(maxParallelCells))
}

// decidePreflight records, on the run's first pass, whether it makes a
// pre-flight (preflightSkipReason).
func (p *runPass) decidePreflight(pairs, cells []matrix.Cell) {
	st := &p.run.Status
	wave := firstWave(cells, p.run.Spec.Placement.ParallelCells())
	if why := preflightSkipReason(p.run.Spec.Preflight.IsEnabled(), len(pairs), len(cells), wave); why != "" {
		st.Preflight = &dbbenchv1alpha1.PreflightStatus{Phase: dbbenchv1alpha1.PreflightSkipped, SkipReason: why}
		return
	}
	st.Preflight = &dbbenchv1alpha1.PreflightStatus{Phase: dbbenchv1alpha1.PreflightRunning, StartTime: &metav1.Time{Time: p.now}}
	p.syncPairEntries(pairs)
	p.setCondition(dbbenchv1alpha1.ConditionPreflightPassed, metav1.ConditionUnknown, dbbenchv1alpha1.ReasonPreflightRunning,
		fmt.Sprintf("Checking that %d (database, version, config) pairs start with their settings", len(pairs)))
}

// preflightRunning reports a pre-flight that has not ended: no cell may
// start.
func preflightRunning(st *dbbenchv1alpha1.BenchmarkRunStatus) bool {
	return st.Preflight != nil && st.Preflight.Phase == dbbenchv1alpha1.PreflightRunning
}

// syncPairEntries makes status.preflight.pairs hold one entry per pair, in
// matrix order, keeping the state of entries that exist.
func (p *runPass) syncPairEntries(pairs []matrix.Cell) {
	pf := p.run.Status.Preflight
	pf.Pairs = cellEntries(pf.Pairs, pairs, 0)
}

// progressPreflight moves the pairs forward like the cells (at most
// placement.maxParallelCells at a time) and ends the pre-flight once every
// pair has ended: Passed, or Failed with the run. The pairs' pods go on the
// passes after (removePreflight), once a status write has recorded the end:
// deleted in this pass, a refused write would leave the next pass with a
// Starting pair and no pod, and it would start the pair again.
func (p *runPass) progressPreflight(ctx context.Context, pairs []matrix.Cell) error {
	st := &p.run.Status
	pf := st.Preflight
	p.syncPairEntries(pairs)
	targets := p.targetsFor(pairs, pf.Pairs)
	for i, t := range targets {
		p.adoptAttempts(t, &pf.Pairs[i])
	}
	if name, err := p.stepCells(ctx, targets, pf.Pairs, nil); err != nil {
		return fmt.Errorf("pre-flight of %s: %w", name, err)
	}

	var failed []string
	for i, cs := range pf.Pairs {
		switch cs.Phase {
		case dbbenchv1alpha1.CellSucceeded:
		case dbbenchv1alpha1.CellFailed:
			failed = append(failed, pairFailure(pairs[i], cs))
		default:
			return nil
		}
	}
	pf.CompletionTime = &metav1.Time{Time: p.now}
	if len(failed) == 0 {
		pf.Phase = dbbenchv1alpha1.PreflightPassed
		msg := fmt.Sprintf("All %d (database, version, config) pairs started with their settings in effect", len(pairs))
		p.setCondition(dbbenchv1alpha1.ConditionPreflightPassed, metav1.ConditionTrue, dbbenchv1alpha1.ReasonPairsReady, msg)
		p.Event(false, dbbenchv1alpha1.ReasonPairsReady, "Preflight", msg)
		return nil
	}
	pf.Phase = dbbenchv1alpha1.PreflightFailed
	msg := fmt.Sprintf("Pre-flight failed for %d of %d (database, version, config) pairs; no cell started: %s",
		len(failed), len(pairs), strings.Join(failed, "; "))
	p.setCondition(dbbenchv1alpha1.ConditionPreflightPassed, metav1.ConditionFalse, dbbenchv1alpha1.ReasonPreflightFailed, msg)
	p.finishFailed(dbbenchv1alpha1.ReasonPreflightFailed, msg)
	return nil
}

// pairFailure names a failed pair, its image and why it failed (the cell's
// message: reason and the server's own lines).
func pairFailure(c matrix.Cell, cs dbbenchv1alpha1.CellStatus) string {
	msg := cs.Message
	if len(msg) > preflightMessageLimit {
		msg = msg[:preflightMessageLimit] + "…"
	}
	return fmt.Sprintf("%s (image %s, config %s): %s", c.Name, c.Image, c.Config.Name, msg)
}

// removePreflight deletes the pairs' pods, Jobs and claims once the
// pre-flight has ended, so the cells get the nodes: every one listed with a
// pair's cell label, whatever its attempt (see serverPodTarget.release).
// Later passes call it again while any is listed (deletions are
// idempotent). The pairs' Secrets and ConfigMaps, small and idle, go with
// the run like the cells'.
func (p *runPass) removePreflight(ctx context.Context, pairs []matrix.Cell) error {
	byBase := make(map[string]matrix.Cell, len(pairs))
	for _, c := range pairs {
		byBase[c.ObjectBase] = c
	}
	for _, pod := range p.kids.pods {
		c, ok := byBase[pod.Labels[dbbenchv1alpha1.LabelCell]]
		if !ok || pod.Labels[dbbenchv1alpha1.LabelRole] != specs.RoleDatabase {
			continue
		}
		if err := p.remove(ctx, pod); err != nil {
			return fmt.Errorf("removing the pre-flight of %s: %w", c.Name, err)
		}
		if a, err := strconv.Atoi(pod.Labels[dbbenchv1alpha1.LabelAttempt]); err == nil {
			for _, pvc := range specs.Claims(p.run, c, int32(a)) {
				if err := p.remove(ctx, pvc); err != nil {
					return fmt.Errorf("removing the pre-flight of %s: %w", c.Name, err)
				}
			}
		}
	}
	for _, job := range p.kids.jobs {
		if c, ok := byBase[job.Labels[dbbenchv1alpha1.LabelCell]]; ok {
			if err := p.remove(ctx, job); err != nil {
				return fmt.Errorf("removing the pre-flight of %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

// preflightPairs returns the run's pairs when it made or makes a pre-flight.
func (p *runPass) preflightPairs() []matrix.Cell {
	pf := p.run.Status.Preflight
	if pf == nil || pf.Phase == dbbenchv1alpha1.PreflightSkipped {
		return nil
	}
	return matrix.PreflightCells(p.run)
}

// preflightSummary says, for the Progressing condition, how far the
// pre-flight is.
func preflightSummary(pf *dbbenchv1alpha1.PreflightStatus) string {
	done, running, pending, _ := countCellPhases(pf.Pairs)
	return fmt.Sprintf("Pre-flight: %d pairs starting, %d pending, %d checked; no cell has started", running, pending, done)
}

// hasPreflightChildren reports whether the pass listed a pod or Job of a
// pre-flight pair that is not already going (which removePreflight deletes).
func (p *runPass) hasPreflightChildren(pairs []matrix.Cell) bool {
	bases := make(map[string]bool, len(pairs))
	for _, c := range pairs {
		bases[c.ObjectBase] = true
	}
	for _, pod := range p.kids.pods {
		if bases[pod.Labels[dbbenchv1alpha1.LabelCell]] && pod.Labels[dbbenchv1alpha1.LabelRole] == specs.RoleDatabase && pod.DeletionTimestamp.IsZero() {
			return true
		}
	}
	for _, job := range p.kids.jobs {
		if bases[job.Labels[dbbenchv1alpha1.LabelCell]] && job.DeletionTimestamp.IsZero() {
			return true
		}
	}
	return false
}
