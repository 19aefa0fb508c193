package scale

import "math"

// Scaler holds per-feature means and standard deviations. A feature with zero
// (or non-finite) spread in the training data keeps scale 1, so it is only
// centred.
type Scaler struct {
	Mean []float64
	Std  []float64
}

// Fit computes the per-feature mean and population standard deviation of the
// rows of X. X must have at least one row and rows of equal length.
func Fit(X [][]float64) *Scaler {
	d := len(X[0])
	s := &Scaler{Mean: make([]float64, d), Std: make([]float64, d)}
	n := float64(len(X))
	for _, row := range X {
		for j, v := range row {
			s.Mean[j] += v
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= n
	}
	for _, row := range X {
		for j, v := range row {
			dv := v - s.Mean[j]
			s.Std[j] += dv * dv
		}
	}
	for j := range s.Std {
		sd := math.Sqrt(s.Std[j] / n)
		if !(sd > 1e-12) || math.IsInf(sd, 0) {
			sd = 1
		}
		s.Std[j] = sd
	}
	return s
}

// TransformTo writes the standardized x into dst (len(dst) == len(x)) and
// returns dst.
func (s *Scaler) TransformTo(dst, x []float64) []float64 {
	for j, v := range x {
		dst[j] = (v - s.Mean[j]) / s.Std[j]
	}
	return dst
}

// Transform returns a standardized copy of x.
func (s *Scaler) Transform(x []float64) []float64 {
	return s.TransformTo(make([]float64, len(x)), x)
}

// TransformAll returns standardized copies of the rows of X.
func (s *Scaler) TransformAll(X [][]float64) [][]float64 {
	out := make([][]float64, len(X))
	for i, x := range X {
		out[i] = s.Transform(x)
	}
	return out
}
