package gp

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// sqDists returns the n×n row-major matrix of squared Euclidean distances
// between the rows of X.
func sqDists(X [][]float64) []float64 {
	n := len(X)
	d2 := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			s := 0.0
			for k, v := range X[i] {
				dv := v - X[j][k]
				s += dv * dv
			}
			d2[i*n+j] = s
			d2[j*n+i] = s
		}
	}
	return d2
}

// rbfMatrix returns the RBF kernel matrix sf2·exp(-d2/(2 l²)) for the squared
// distances d2 of n points.
func rbfMatrix(d2 []float64, n int, h Hyper) *mat.SymDense {
	k := mat.NewSymDense(n, nil)
	raw := k.RawSymmetric()
	g := -1 / (2 * h.LengthScale * h.LengthScale)
	for i := range n {
		row := raw.Data[i*raw.Stride:]
		row[i] = h.SignalVar
		for j := i + 1; j < n; j++ {
			row[j] = h.SignalVar * math.Exp(g*d2[i*n+j])
		}
	}
	return k
}

// rbfVec writes k(x, X_i) for every training row X_i into dst.
func rbfVec(dst []float64, X [][]float64, x []float64, h Hyper) {
	g := -1 / (2 * h.LengthScale * h.LengthScale)
	for i, xi := range X {
		s := 0.0
		for k, v := range xi {
			dv := v - x[k]
			s += dv * dv
		}
		dst[i] = h.SignalVar * math.Exp(g*s)
	}
}
