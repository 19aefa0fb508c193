package booleanize

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Thermometer is a fitted thermometer encoder. Thresholds[f] lists the
// thresholds of feature f, strictly ascending and finite; a feature may
// have none (it then contributes no bits). The JSON form is
// {"thresholds": [[...], ...]}; Go's JSON encoding of float64 round-trips
// exactly, so a model file reproduces the encoder bit for bit.
//
// Cuts records, for provenance only, how the thresholds were placed
// ("" for [Fit]'s quantiles, "supervised" or "mdl" for [FitSupervised]);
// encoding never reads it, and [Thermometer.Validate] checks only that it
// names a placement.
type Thermometer struct {
	Thresholds [][]float64 `json:"thresholds"`
	Cuts       Cuts        `json:"cuts,omitempty"`
}

// Fit learns thresholds for every column of X, using at most perFeature
// thresholds per feature. X is the training data only (rows are samples);
// fitting on test data would leak it into the encoding.
//
// For feature f, let v[0] <= ... <= v[n-1] be its n sorted training values.
// A gap is a position i with v[i] < v[i+1]; it sits at rank position i+0.5
// and its threshold is the midpoint (v[i]+v[i+1])/2, nudged by at most two
// float64 steps (ulps) to the nearby value with the shortest decimal form,
// so that the midpoint of 2.8 and 2.9 is 2.85 rather than
// 2.8499999999999996 (the nudge only removes floating-point noise and never
// leaves the gap). Only when no float64 lies strictly between the two values
// (they are adjacent floats) is the threshold v[i+1] itself. Either way
// v[i] < threshold <= v[i+1]: every training value is unambiguously on one
// side of every threshold. For q = 1..perFeature the
// target quantile q/(perFeature+1) has rank position h = q/(perFeature+1) *
// (n-1) (the position used by the usual linear-interpolation quantile), and
// the threshold chosen for it is that of the gap nearest to h, the lower one
// on a tie. Duplicates are dropped, so a feature with few distinct values
// gets fewer thresholds (a binary feature gets one) and a constant feature
// gets none.
//
// Fit returns an error if X has no rows or no columns, if rows differ in
// length, if a value is NaN or infinite, if perFeature < 1, or if every
// feature is constant (no thresholds at all). A Thermometer returned by Fit
// always passes [Thermometer.Validate].
func Fit(X [][]float64, perFeature int) (*Thermometer, error) {
	if perFeature < 1 {
		return nil, fmt.Errorf("booleanize: Fit: perFeature %d < 1", perFeature)
	}
	if len(X) == 0 {
		return nil, errors.New("booleanize: Fit: no training rows")
	}
	nf := len(X[0])
	if nf == 0 {
		return nil, errors.New("booleanize: Fit: training rows have no features")
	}
	for i, row := range X {
		if len(row) != nf {
			return nil, fmt.Errorf("booleanize: Fit: row %d has %d values, row 0 has %d", i, len(row), nf)
		}
		for f, v := range row {
			if !isFinite(v) {
				return nil, fmt.Errorf("booleanize: Fit: row %d feature %d: non-finite value %v", i, f, v)
			}
		}
	}
	t := &Thermometer{Thresholds: make([][]float64, nf)}
	col := make([]float64, len(X))
	for f := range nf {
		for i, row := range X {
			col[i] = row[f]
		}
		slices.Sort(col)
		t.Thresholds[f] = fitColumn(col, perFeature)
	}
	if t.NumBits() == 0 {
		return nil, fmt.Errorf("booleanize: Fit: all %d features are constant in the %d training rows: no thresholds", nf, len(X))
	}
	return t, nil
}

// fitColumn returns the thresholds for one sorted column (see Fit).
func fitColumn(v []float64, perFeature int) []float64 {
	var gaps []int // i such that v[i] < v[i+1], ascending
	for i := 0; i+1 < len(v); i++ {
		if v[i] < v[i+1] {
			gaps = append(gaps, i)
		}
	}
	th := make([]float64, 0, min(perFeature, len(gaps)))
	if len(gaps) == 0 {
		return th
	}
	last := -1
	g := 0 // index into gaps of the current choice; targets increase with q
	for q := 1; q <= perFeature; q++ {
		h := float64(q) / float64(perFeature+1) * float64(len(v)-1)
		// Move right while the next gap is strictly nearer to h (ties stay
		// on the lower gap).
		for g+1 < len(gaps) && math.Abs(float64(gaps[g+1])+0.5-h) < math.Abs(float64(gaps[g])+0.5-h) {
			g++
		}
		if g != last {
			th = append(th, midpoint(v[gaps[g]], v[gaps[g]+1]))
			last = g
		}
	}
	return th
}

// midpoint returns a threshold t with a < t <= b for finite a < b: the
// float64 midpoint m of a and b, or, among m and the floats up to two ulps
// either side of it that lie strictly inside (a, b), the one with the
// shortest shortest-round-trip decimal form (the nearest to m on a tie, the
// lower one on an equal distance). It returns b when no float64 lies
// strictly inside (a, b).
func midpoint(a, b float64) float64 {
	m := (a + b) / 2
	if math.IsInf(m, 0) {
		m = a/2 + b/2
	}
	down1 := math.Nextafter(m, math.Inf(-1))
	up1 := math.Nextafter(m, math.Inf(1))
	best, bestLen := b, math.MaxInt
	for _, v := range [...]float64{m, down1, up1, math.Nextafter(down1, math.Inf(-1)), math.Nextafter(up1, math.Inf(1))} {
		if !(a < v && v < b) {
			continue
		}
		if n := len(strconv.FormatFloat(v, 'g', -1, 64)); n < bestLen {
			best, bestLen = v, n
		}
	}
	return best
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// NumFeatures returns the number of raw features the encoder expects.
func (t *Thermometer) NumFeatures() int { return len(t.Thresholds) }

// NumBits returns the length of an encoded vector: the total number of
// thresholds.
func (t *Thermometer) NumBits() int {
	n := 0
	for _, th := range t.Thresholds {
		n += len(th)
	}
	return n
}

// Encode encodes one sample x (one value per feature) into NumBits bits:
// for each feature f in order and each threshold k in ascending order, the
// bit x[f] >= Thresholds[f][k]. The bits are written to dst's storage when
// cap(dst) >= NumBits (so a buffer can be reused), otherwise to a new
// slice; the returned slice has length NumBits. Encode returns an error,
// leaving dst's contents unspecified, if len(x) != NumFeatures or a value
// is NaN or infinite.
func (t *Thermometer) Encode(x []float64, dst []bool) ([]bool, error) {
	out, err := t.encode(x, dst)
	if err != nil {
		return nil, fmt.Errorf("booleanize: Encode: %w", err)
	}
	return out, nil
}

func (t *Thermometer) encode(x []float64, dst []bool) ([]bool, error) {
	if len(x) != len(t.Thresholds) {
		return nil, fmt.Errorf("got %d features, want %d", len(x), len(t.Thresholds))
	}
	n := t.NumBits()
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		dst = make([]bool, n)
	}
	b := 0
	for f, th := range t.Thresholds {
		v := x[f]
		if !isFinite(v) {
			return nil, fmt.Errorf("feature %d: non-finite value %v", f, v)
		}
		for _, c := range th {
			dst[b] = v >= c
			b++
		}
	}
	return dst, nil
}

// EncodeAll encodes every row of X (see [Thermometer.Encode]). The rows of
// the result share one backing array. An error names the first bad row.
func (t *Thermometer) EncodeAll(X [][]float64) ([][]bool, error) {
	n := t.NumBits()
	backing := make([]bool, len(X)*n)
	out := make([][]bool, len(X))
	for i, x := range X {
		row, err := t.encode(x, backing[i*n:(i+1)*n:(i+1)*n])
		if err != nil {
			return nil, fmt.Errorf("booleanize: EncodeAll: row %d: %w", i, err)
		}
		out[i] = row
	}
	return out, nil
}

// BitNames returns a name for every encoded bit, in bit order, of the form
// "<feature>>=<threshold>", e.g. "petal_length>=2.45". Thresholds are
// printed in the shortest form that reads back as the same float64.
// features names the raw features in column order; a feature with no name
// there (features too short, or an empty string) is called "x<f>".
func (t *Thermometer) BitNames(features []string) []string {
	names := make([]string, 0, t.NumBits())
	for f, th := range t.Thresholds {
		name := ""
		if f < len(features) {
			name = features[f]
		}
		if name == "" {
			name = "x" + strconv.Itoa(f)
		}
		for _, c := range th {
			names = append(names, name+">="+strconv.FormatFloat(c, 'g', -1, 64))
		}
	}
	return names
}

// Validate checks a Thermometer read from a model file: it must have at
// least one feature and at least one threshold in total, and every
// feature's thresholds must be finite and strictly ascending.
func (t *Thermometer) Validate() error {
	if len(t.Thresholds) == 0 {
		return errors.New("booleanize: thermometer has no features")
	}
	if err := t.Cuts.Validate(); err != nil {
		return err
	}
	for f, th := range t.Thresholds {
		for k, c := range th {
			if !isFinite(c) {
				return fmt.Errorf("booleanize: feature %d threshold %d: non-finite value %v", f, k, c)
			}
			if k > 0 && !(c > th[k-1]) {
				return fmt.Errorf("booleanize: feature %d thresholds not strictly ascending: [%d]=%v after [%d]=%v", f, k, c, k-1, th[k-1])
			}
		}
	}
	if t.NumBits() == 0 {
		return errors.New("booleanize: thermometer has no thresholds (every feature is constant)")
	}
	return nil
}
