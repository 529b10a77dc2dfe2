package inference

import (
	"fmt"
	"math"
	"sort"
)

// Correction is a multiple-comparison procedure over the many (step,
// threads) tests of one run.
type Correction string

const (
	// CorrectionHolm is Holm's step-down procedure: it controls the
	// family-wise error rate (the probability of at least one false
	// "regressed") at α for any dependence between the tests. An A/A run
	// of 32 steps is declared regressed with probability at most α. The
	// default.
	CorrectionHolm Correction = "holm"
	// CorrectionBH is Benjamini–Hochberg's step-up procedure: it controls
	// the false discovery rate (the expected share of false findings among
	// the findings) at α for independent or positively dependent tests. It
	// finds more real slowdowns in a run with many of them, but an A/A run
	// is declared regressed with probability up to α only when every null
	// is true (then FDR = FWER); use it for exploring, not for a verdict.
	CorrectionBH Correction = "bh"
	// CorrectionNone leaves the p-values as they are: each test at α, so an
	// A/A run of m independent tests has about m·α false findings.
	CorrectionNone Correction = "none"
)

// DefaultCorrection is what verdicts use when nothing is asked.
const DefaultCorrection = CorrectionHolm

// Validate checks the name; "" means the default.
func (c Correction) Validate() error {
	switch c {
	case "", CorrectionHolm, CorrectionBH, CorrectionNone:
		return nil
	}
	return fmt.Errorf("correction %q: must be %q, %q or %q: %w", c, CorrectionHolm, CorrectionBH, CorrectionNone, ErrInvalid)
}

// Adjust returns the adjusted p-values of p under c ("" is Holm), in p's
// order: a test is significant at level α after the correction when its
// adjusted p-value is below α. NaN entries are tests that were not made:
// they stay NaN and do not count in the number of tests.
func Adjust(c Correction, p []float64) ([]float64, error) {
	switch c {
	case "", CorrectionHolm:
		return Holm(p), nil
	case CorrectionBH:
		return BenjaminiHochberg(p), nil
	case CorrectionNone:
		return append([]float64(nil), p...), nil
	}
	return nil, c.Validate()
}

// ranked returns the indexes of the non-NaN p-values, ascending by p.
func ranked(p []float64) []int {
	var idx []int
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return p[idx[x]] < p[idx[y]] })
	return idx
}

func nanLike(p []float64) []float64 {
	out := make([]float64, len(p))
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// Holm returns Holm-adjusted p-values: with the m tested p-values sorted
// ascending, p̃(i) = max over j <= i of min(1, (m − j + 1)·p(j)). It assumes
// nothing about the dependence between the tests.
func Holm(p []float64) []float64 {
	out := nanLike(p)
	idx := ranked(p)
	m := len(idx)
	run := 0.0
	for j, i := range idx {
		v := math.Min(1, float64(m-j)*p[i])
		run = math.Max(run, v)
		out[i] = run
	}
	return out
}

// BenjaminiHochberg returns BH-adjusted p-values (q-values): with the m
// tested p-values sorted ascending, p̃(i) = min over j >= i of
// min(1, m/j·p(j)). FDR control holds for independent or positively
// dependent (PRDS) tests, which steps measured on one server are likely to
// be.
func BenjaminiHochberg(p []float64) []float64 {
	out := nanLike(p)
	idx := ranked(p)
	m := len(idx)
	run := 1.0
	for j := m - 1; j >= 0; j-- {
		i := idx[j]
		v := math.Min(1, float64(m)/float64(j+1)*p[i])
		run = math.Min(run, v)
		out[i] = run
	}
	return out
}
