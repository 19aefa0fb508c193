package gp

import (
	"math"
	"slices"
)

// Hyper holds RBF kernel hyper-parameters in standardized input units and
// the Laplace approximate log marginal likelihood they attain.
type Hyper struct {
	LengthScale float64 // l in k(x,x') = sf2·exp(-|x-x'|²/(2l²))
	SignalVar   float64 // sf2
	LogML       float64 // approximate log p(y|X, l, sf2) on the full training set
}

// Search-space bounds (standardized inputs) and the default grids.
const (
	// MinLengthScale and MaxLengthScale bound the length-scale search.
	MinLengthScale = 0.02
	MaxLengthScale = 100
	// MinSignalVar bounds the signal-variance search from below.
	MinSignalVar = 1e-2
	// SignalVarCap is the upper signal-variance bound used when
	// Opts.MaxSignalVar is negative (plain maximum likelihood).
	SignalVarCap = 1e4
)

var (
	// DefaultLengthScales is the grid of length-scales tried before the
	// Nelder-Mead refinement.
	DefaultLengthScales = []float64{0.25, 0.5, 1, 2, 4, 8}
	// DefaultSignalVars is the grid of signal variances tried before the
	// Nelder-Mead refinement.
	DefaultSignalVars = []float64{0.5, 2, 10}
)

// evidence evaluates the approximate log marginal likelihood at given
// hyper-parameters; it returns -Inf when the Laplace fit fails.
type evidence func(h Hyper) float64

// searchHyper maximizes ev over the free hyper-parameters: a grid search over
// lengths × sfs (a fixed parameter contributes its single value; grid values
// above maxSf are dropped), followed by a Nelder-Mead refinement in log space
// limited to maxEvals evaluations and kept inside
// [MinLengthScale, MaxLengthScale] × [MinSignalVar, maxSf] by a quadratic
// penalty.
func searchHyper(ev evidence, fixed Hyper, lengths, sfs []float64, maxSf float64, maxEvals int) Hyper {
	logLBounds := [2]float64{math.Log(MinLengthScale), math.Log(MaxLengthScale)}
	logSfBounds := [2]float64{math.Log(MinSignalVar), math.Log(maxSf)}
	sfs = slices.DeleteFunc(slices.Clone(sfs), func(v float64) bool { return v > maxSf })
	if len(sfs) == 0 {
		sfs = []float64{maxSf}
	}
	freeL, freeS := fixed.LengthScale <= 0, fixed.SignalVar <= 0
	if !freeL {
		lengths = []float64{fixed.LengthScale}
	}
	if !freeS {
		sfs = []float64{fixed.SignalVar}
	}
	best := Hyper{LogML: math.Inf(-1)}
	for _, l := range lengths {
		for _, s := range sfs {
			h := Hyper{LengthScale: l, SignalVar: s}
			h.LogML = ev(h)
			if best.LengthScale == 0 || h.LogML > best.LogML {
				best = h
			}
		}
	}
	if (!freeL && !freeS) || maxEvals <= 0 {
		return best
	}
	// Map the free parameters to an unconstrained log-space vector.
	toHyper := func(x []float64) (Hyper, float64) {
		h, pen, k := fixed, 0.0, 0
		clamp := func(v float64, b [2]float64) float64 {
			c := min(max(v, b[0]), b[1])
			pen += 100 * (v - c) * (v - c)
			return c
		}
		if freeL {
			h.LengthScale = min(max(math.Exp(clamp(x[k], logLBounds)), MinLengthScale), MaxLengthScale)
			k++
		}
		if freeS {
			h.SignalVar = min(max(math.Exp(clamp(x[k], logSfBounds)), MinSignalVar), maxSf)
		}
		return h, pen
	}
	var x0 []float64
	if freeL {
		x0 = append(x0, math.Log(best.LengthScale))
	}
	if freeS {
		x0 = append(x0, math.Log(best.SignalVar))
	}
	obj := func(x []float64) float64 {
		h, pen := toHyper(x)
		v := ev(h)
		if math.IsInf(v, -1) || math.IsNaN(v) {
			return math.MaxFloat64
		}
		return -v + pen
	}
	x, _ := nelderMead(obj, x0, 0.5, maxEvals, 1e-4)
	// The penalized optimum may sit just outside the bounds: evaluate the
	// clamped point and keep it only if it beats the grid.
	h, _ := toHyper(x)
	if h.LogML = ev(h); h.LogML > best.LogML {
		return h
	}
	return best
}

// nelderMead minimizes obj from x0 with the standard Nelder-Mead simplex
// method (reflection 1, expansion 2, contraction ½, shrink ½), starting from
// an axis-aligned simplex of the given size. It stops after maxEvals
// evaluations or when the objective values across the simplex differ by less
// than tol, and returns the best vertex and its value. (gonum/optimize is
// not used because it pulls in a dependency missing from go.sum.)
func nelderMead(obj func([]float64) float64, x0 []float64, size float64, maxEvals int, tol float64) ([]float64, float64) {
	dim := len(x0)
	verts := make([][]float64, dim+1)
	vals := make([]float64, dim+1)
	evals := 0
	eval := func(x []float64) float64 { evals++; return obj(x) }
	for i := range verts {
		verts[i] = slices.Clone(x0)
		if i > 0 {
			verts[i][i-1] += size
		}
		vals[i] = eval(verts[i])
	}
	point := func(from, to []float64, t float64) []float64 {
		// from + t·(to - from)
		p := make([]float64, dim)
		for j := range p {
			p[j] = from[j] + t*(to[j]-from[j])
		}
		return p
	}
	order := make([]int, dim+1)
	for evals < maxEvals {
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case vals[a] < vals[b]:
				return -1
			case vals[a] > vals[b]:
				return 1
			}
			return 0
		})
		sv, sx := make([]float64, dim+1), make([][]float64, dim+1)
		for i, o := range order {
			sv[i], sx[i] = vals[o], verts[o]
		}
		vals, verts = sv, sx
		if vals[dim]-vals[0] < tol {
			break
		}
		centroid := make([]float64, dim)
		for _, v := range verts[:dim] {
			for j := range centroid {
				centroid[j] += v[j] / float64(dim)
			}
		}
		worst := verts[dim]
		xr := point(centroid, worst, -1)
		fr := eval(xr)
		switch {
		case fr < vals[0]:
			xe := point(centroid, worst, -2)
			if fe := eval(xe); fe < fr {
				verts[dim], vals[dim] = xe, fe
			} else {
				verts[dim], vals[dim] = xr, fr
			}
		case fr < vals[dim-1]:
			verts[dim], vals[dim] = xr, fr
		default:
			var xc []float64
			if fr < vals[dim] {
				xc = point(centroid, xr, 0.5) // outside contraction
			} else {
				xc = point(centroid, worst, 0.5) // inside contraction
			}
			if fc := eval(xc); fc < min(fr, vals[dim]) {
				verts[dim], vals[dim] = xc, fc
			} else {
				for i := 1; i <= dim; i++ {
					verts[i] = point(verts[0], verts[i], 0.5)
					vals[i] = eval(verts[i])
				}
			}
		}
	}
	best := 0
	for i := range vals {
		if vals[i] < vals[best] {
			best = i
		}
	}
	return verts[best], vals[best]
}
