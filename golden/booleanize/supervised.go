package booleanize

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Cuts names a placement of the thermometer thresholds (docs/uncertainty.md
// section 13). The empty string means Quantile.
type Cuts string

// The placements. Quantile is [Fit]'s unsupervised placement; Supervised and
// MDL use the class labels ([FitSupervised]). A "-boot" suffix (e.g.
// "supervised-boot") keeps the placement for set 0 of a [Sets] and refits it
// on a stratified bootstrap resample of the training rows for every other
// set ([FitSets]).
const (
	Quantile   Cuts = "quantile"
	Supervised Cuts = "supervised"
	MDL        Cuts = "mdl"
)

// bootSuffix marks a placement whose sets 1..M-1 are bootstrap refits.
const bootSuffix = "-boot"

// ParseCuts reads a placement name: quantile, supervised or mdl, each
// optionally followed by -boot; "" is quantile.
func ParseCuts(s string) (Cuts, error) {
	c := Cuts(s)
	if err := c.Validate(); err != nil {
		return "", err
	}
	return c, nil
}

// Validate checks that c names a placement.
func (c Cuts) Validate() error {
	switch strings.TrimSuffix(string(c), bootSuffix) {
	case string(Quantile), string(Supervised), string(MDL):
		return nil
	case "":
		if c == "" {
			return nil
		}
	}
	return fmt.Errorf("booleanize: threshold placement %q, want quantile, supervised or mdl, optionally with -boot", string(c))
}

// Base returns the placement without its -boot suffix ("" becomes
// quantile).
func (c Cuts) Base() Cuts {
	b := Cuts(strings.TrimSuffix(string(c), bootSuffix))
	if b == "" {
		return Quantile
	}
	return b
}

// Boot tells whether the sets other than set 0 are bootstrap refits.
func (c Cuts) Boot() bool { return c.Validate() == nil && strings.HasSuffix(string(c), bootSuffix) }

// FitCuts fits a thermometer with the placement c.Base(): [Fit] for
// quantile, [FitSupervised] otherwise (y and nc are then the labels). The
// -boot suffix has no effect here (it concerns [FitSets]). The result
// records the placement in Thermometer.Cuts unless it is quantile.
func FitCuts(X [][]float64, y []int, nc, perFeature int, c Cuts) (*Thermometer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Base() == Quantile {
		return Fit(X, perFeature)
	}
	return FitSupervised(X, y, nc, perFeature, c.Base() == MDL)
}

// FitSupervised places at most perFeature thresholds per feature where the
// classes separate, using the labels y (classes 0..nc-1) of the training
// rows X. For each feature the distinct training values are sorted; a
// candidate cut lies in every gap between two consecutive distinct values
// (the threshold is the gap's midpoint, as in [Fit]). Cuts are chosen
// best first: among the current intervals (at first the whole range), the
// cut with the largest reduction of the class entropy, weighted by the
// interval's row count (n_S * H(S) - n_1 * H(S1) - n_2 * H(S2), i.e.
// information gain in rows), splits its interval; ties go to the lower
// cut. With mdl set a cut is only eligible if it passes Fayyad and Irani's
// minimum-description-length criterion on its interval (gain >
// (log2(n-1) + log2(3^k-2) - k H(S) + k1 H(S1) + k2 H(S2)) / n, k the
// number of classes present), the stopping rule of their recursive
// discretization; without it any cut with a positive gain is eligible.
// When no eligible cut is left before perFeature cuts, the rest are
// spread: the gap whose rank position (i + 0.5 for the gap after sorted
// value i) is farthest from the chosen cuts and from both ends of the
// sorted values is added, the lower on a tie, which with no supervised cut
// places them near the quantiles. A feature therefore gets min(perFeature,
// its number of gaps) thresholds: the class boundaries first.
//
// The result is deterministic (no randomness) and records the placement
// ("supervised" or "mdl") in Cuts. Errors are those of [Fit], plus a
// label count that differs from the row count, nc < 1 or a label outside
// 0..nc-1.
func FitSupervised(X [][]float64, y []int, nc, perFeature int, mdl bool) (*Thermometer, error) {
	if err := checkRows("FitSupervised", X, perFeature); err != nil {
		return nil, err
	}
	if len(y) != len(X) {
		return nil, fmt.Errorf("booleanize: FitSupervised: %d rows, %d labels", len(X), len(y))
	}
	if nc < 1 {
		return nil, fmt.Errorf("booleanize: FitSupervised: %d classes", nc)
	}
	for i, c := range y {
		if c < 0 || c >= nc {
			return nil, fmt.Errorf("booleanize: FitSupervised: row %d label %d outside 0..%d", i, c, nc-1)
		}
	}
	nf := len(X[0])
	t := &Thermometer{Thresholds: make([][]float64, nf), Cuts: Supervised}
	if mdl {
		t.Cuts = MDL
	}
	idx := make([]int, len(X))
	for f := range nf {
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case X[a][f] < X[b][f]:
				return -1
			case X[a][f] > X[b][f]:
				return 1
			}
			return 0
		})
		t.Thresholds[f] = supervisedColumn(X, y, f, idx, nc, perFeature, mdl)
	}
	if t.NumBits() == 0 {
		return nil, fmt.Errorf("booleanize: FitSupervised: all %d features are constant in the %d training rows: no thresholds", nf, len(X))
	}
	return t, nil
}

// checkRows checks the training rows and perFeature as Fit does.
func checkRows(fn string, X [][]float64, perFeature int) error {
	if perFeature < 1 {
		return fmt.Errorf("booleanize: %s: perFeature %d < 1", fn, perFeature)
	}
	if len(X) == 0 {
		return fmt.Errorf("booleanize: %s: no training rows", fn)
	}
	nf := len(X[0])
	if nf == 0 {
		return errors.New("booleanize: " + fn + ": training rows have no features")
	}
	for i, row := range X {
		if len(row) != nf {
			return fmt.Errorf("booleanize: %s: row %d has %d values, row 0 has %d", fn, i, len(row), nf)
		}
		for f, v := range row {
			if !isFinite(v) {
				return fmt.Errorf("booleanize: %s: row %d feature %d: non-finite value %v", fn, i, f, v)
			}
		}
	}
	return nil
}

// supervisedColumn returns the thresholds of feature f (see FitSupervised);
// idx orders the rows by the feature's value.
func supervisedColumn(X [][]float64, y []int, f int, idx []int, nc, perFeature int, mdl bool) []float64 {
	n := len(idx)
	// Groups of equal values: start row (in idx order) and class counts
	// cumulated over the rows before each group boundary.
	var starts []int // starts[g] = first sorted row of group g; starts[G] = n
	for i := range n {
		if i == 0 || X[idx[i]][f] > X[idx[i-1]][f] {
			starts = append(starts, i)
		}
	}
	G := len(starts)
	starts = append(starts, n)
	cum := make([][]int, G+1) // cum[g][c]: rows of class c in groups < g
	cum[0] = make([]int, nc)
	for g := range G {
		cum[g+1] = slices.Clone(cum[g])
		for i := starts[g]; i < starts[g+1]; i++ {
			cum[g+1][y[idx[i]]]++
		}
	}
	// Gap g (0..G-2) separates group g from group g+1.
	ngaps := G - 1
	want := min(perFeature, ngaps)
	if want <= 0 {
		return []float64{}
	}
	chosen := make([]bool, ngaps)
	cuts := 0
	counts := func(a, b int) []int { // class counts of groups a..b-1
		c := make([]int, nc)
		for k := range c {
			c[k] = cum[b][k] - cum[a][k]
		}
		return c
	}
	// Best-first information-gain splitting of the intervals [a, b) of groups.
	type split struct {
		gain float64 // in rows*bits
		gap  int     // -1: none eligible
	}
	best := func(a, b int) split {
		s := split{gap: -1}
		if b-a < 2 {
			return s
		}
		all := counts(a, b)
		nS := float64(starts[b] - starts[a])
		hS := entropy(all)
		for g := a; g < b-1; g++ {
			left := counts(a, g+1)
			right := make([]int, nc)
			for k := range right {
				right[k] = all[k] - left[k]
			}
			n1, n2 := float64(starts[g+1]-starts[a]), float64(starts[b]-starts[g+1])
			h1, h2 := entropy(left), entropy(right)
			gain := nS*hS - n1*h1 - n2*h2
			if !(gain > 1e-9*nS) {
				continue
			}
			if mdl {
				k, k1, k2 := present(all), present(left), present(right)
				delta := math.Log2(math.Pow(3, float64(k))-2) - (float64(k)*hS - float64(k1)*h1 - float64(k2)*h2)
				if !(gain/nS > (math.Log2(nS-1)+delta)/nS) {
					continue
				}
			}
			if s.gap < 0 || gain > s.gain*(1+1e-12) {
				s = split{gain: gain, gap: g}
			}
		}
		return s
	}
	type interval struct {
		a, b int
		s    split
	}
	ivs := []interval{{0, G, best(0, G)}}
	for cuts < want {
		bi := -1
		for i, iv := range ivs {
			if iv.s.gap < 0 {
				continue
			}
			if bi < 0 || iv.s.gain > ivs[bi].s.gain*(1+1e-12) || (iv.s.gain >= ivs[bi].s.gain*(1-1e-12) && iv.s.gap < ivs[bi].s.gap) {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		iv := ivs[bi]
		g := iv.s.gap
		chosen[g] = true
		cuts++
		l := interval{iv.a, g + 1, best(iv.a, g+1)}
		r := interval{g + 1, iv.b, best(g+1, iv.b)}
		ivs = append(ivs[:bi], append([]interval{l, r}, ivs[bi+1:]...)...)
	}
	// Spread the rest: farthest (in rank) from the chosen cuts and the ends.
	pos := func(g int) float64 { return float64(starts[g+1]) - 0.5 } // rank position of gap g
	for cuts < want {
		bg, bd := -1, -1.0
		for g := range ngaps {
			if chosen[g] {
				continue
			}
			p := pos(g)
			d := math.Min(p+0.5, float64(n)-0.5-p)
			for h := range ngaps {
				if chosen[h] {
					d = math.Min(d, math.Abs(p-pos(h)))
				}
			}
			if d > bd {
				bg, bd = g, d
			}
		}
		chosen[bg] = true
		cuts++
	}
	th := make([]float64, 0, want)
	for g := range ngaps {
		if chosen[g] {
			th = append(th, midpoint(X[idx[starts[g+1]-1]][f], X[idx[starts[g+1]]][f]))
		}
	}
	return th
}

// entropy returns the class entropy in bits of the counts c.
func entropy(c []int) float64 {
	n := 0
	for _, v := range c {
		n += v
	}
	h := 0.0
	for _, v := range c {
		if v > 0 {
			p := float64(v) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
}

// present counts the classes with at least one row.
func present(c []int) int {
	k := 0
	for _, v := range c {
		if v > 0 {
			k++
		}
	}
	return k
}

// bootstrapRows draws a stratified bootstrap resample of the rows: for
// every class as many rows of that class as it has, with replacement, from
// rng. It returns row indices grouped by class.
func bootstrapRows(y []int, nc int, rng *rand.Rand) []int {
	byClass := make([][]int, nc)
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	out := make([]int, 0, len(y))
	for _, rows := range byClass {
		for range rows {
			out = append(out, rows[rng.IntN(len(rows))])
		}
	}
	return out
}
