package experiments

import "math"

// Region is where a 2-D test point lies relative to the square training
// region of the synthetic data, by its Chebyshev radius max(|x1|, |x2|).
type Region int

// The regions of a point with radius r, given the inner and outer radii of
// Regions: Inside for r <= inner, Near for inner < r <= outer, Far for
// r > outer.
const (
	Inside Region = iota
	Near
	Far
)

// String returns "inside", "near" or "far".
func (g Region) String() string {
	switch g {
	case Inside:
		return "inside"
	case Near:
		return "near"
	case Far:
		return "far"
	}
	return "unknown"
}

// Radius is the Chebyshev radius max_i |p_i| of a point: the half-width of
// the smallest origin-centred square holding it.
func Radius(p []float64) float64 {
	r := 0.0
	for _, v := range p {
		r = max(r, math.Abs(v))
	}
	return r
}

// RegionOf classifies p: Inside if Radius(p) <= inner, Far if
// Radius(p) > outer, Near otherwise.
func RegionOf(p []float64, inner, outer float64) Region {
	switch r := Radius(p); {
	case r <= inner:
		return Inside
	case r > outer:
		return Far
	}
	return Near
}

// RegionMean is the mean of a per-point value over one region.
type RegionMean struct {
	N    int     // points in the region
	Mean float64 // mean value over them; NaN if N == 0
}

// Regions averages values[i] (for example the predictive entropy at
// points[i]) separately over the Inside, Near and Far points (see
// RegionOf); the result is indexed by Region. It panics if the slices
// differ in length.
func Regions(points [][]float64, values []float64, inner, outer float64) [3]RegionMean {
	if len(points) != len(values) {
		panic("experiments.Regions: points and values differ in length")
	}
	var sum [3]float64
	var out [3]RegionMean
	for i, p := range points {
		g := RegionOf(p, inner, outer)
		sum[g] += values[i]
		out[g].N++
	}
	for g := range out {
		out[g].Mean = math.NaN()
		if out[g].N > 0 {
			out[g].Mean = sum[g] / float64(out[g].N)
		}
	}
	return out
}
