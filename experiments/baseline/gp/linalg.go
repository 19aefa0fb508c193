package gp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// errNotPD reports a matrix that stayed non positive definite after the
// largest jitter was added.
var errNotPD = errors.New("matrix not positive definite")

// factorize computes the Cholesky factorization of the symmetric matrix a
// into ch. If a is not numerically positive definite, it retries with
// jitter·mean(diag(a)) added to the diagonal for jitter = 1e-10, 1e-9, ...,
// 1e-4, restoring a afterwards. It returns the jitter used (0 when none).
func factorize(ch *mat.Cholesky, a *mat.SymDense) (float64, error) {
	if ch.Factorize(a) {
		return 0, nil
	}
	n := a.SymmetricDim()
	raw := a.RawSymmetric()
	mean := 0.0
	for i := range n {
		mean += raw.Data[i*raw.Stride+i]
	}
	mean = math.Abs(mean / float64(n))
	if mean == 0 || math.IsNaN(mean) || math.IsInf(mean, 0) {
		mean = 1
	}
	added := 0.0
	defer func() {
		for i := range n {
			raw.Data[i*raw.Stride+i] -= added
		}
	}()
	for jitter := 1e-10; jitter <= 1.0001e-4; jitter *= 10 {
		add := jitter*mean - added
		for i := range n {
			raw.Data[i*raw.Stride+i] += add
		}
		added += add
		if ch.Factorize(a) {
			return jitter, nil
		}
	}
	return 0, fmt.Errorf("cholesky of %dx%d matrix: %w", n, n, errNotPD)
}

// upper returns the upper-triangular factor U (A = UᵀU) held by a successful
// factorization, without copying.
func upper(ch *mat.Cholesky) blas64.Triangular {
	return ch.RawU().(*mat.TriDense).RawTriangular()
}

// sumLogDiag returns sum_i log U_ii, that is half the log determinant of A.
func sumLogDiag(u blas64.Triangular) float64 {
	s := 0.0
	for i := range u.N {
		s += math.Log(u.Data[i*u.Stride+i])
	}
	return s
}

// solveUT overwrites x with U⁻ᵀx (a solve with L = Uᵀ).
func solveUT(u blas64.Triangular, x []float64) {
	blas64.Trsv(blas.Trans, u, blas64.Vector{N: len(x), Data: x, Inc: 1})
}

// solveU overwrites x with U⁻¹x (a solve with Lᵀ = U).
func solveU(u blas64.Triangular, x []float64) {
	blas64.Trsv(blas.NoTrans, u, blas64.Vector{N: len(x), Data: x, Inc: 1})
}

// symv sets dst = A x for a symmetric A.
func symv(dst []float64, a blas64.Symmetric, x []float64) {
	blas64.Symv(1, a, blas64.Vector{N: len(x), Data: x, Inc: 1}, 0, blas64.Vector{N: len(dst), Data: dst, Inc: 1})
}

// dot returns xᵀy.
func dot(x, y []float64) float64 {
	return blas64.Dot(blas64.Vector{N: len(x), Data: x, Inc: 1}, blas64.Vector{N: len(y), Data: y, Inc: 1})
}

// smallCholesky returns the lower Cholesky factor of the c×c row-major
// covariance s (c small: the number of classes), adding diagonal jitter
// relative to the mean variance if needed. Entries that cannot be factorized
// even with jitter are treated as zero variance, so the result is always
// usable for sampling.
func smallCholesky(s []float64, c int) []float64 {
	mean := 0.0
	for i := range c {
		mean += s[i*c+i]
	}
	mean = math.Abs(mean) / float64(c)
	l := make([]float64, c*c)
	for jitter := 0.0; ; {
		ok := true
		clear(l)
		for j := range c {
			d := s[j*c+j] + jitter
			for k := range j {
				d -= l[j*c+k] * l[j*c+k]
			}
			if !(d > 0) {
				ok = false
				break
			}
			l[j*c+j] = math.Sqrt(d)
			for i := j + 1; i < c; i++ {
				v := s[i*c+j]
				for k := range j {
					v -= l[i*c+k] * l[j*c+k]
				}
				l[i*c+j] = v / l[j*c+j]
			}
		}
		if ok {
			return l
		}
		switch {
		case jitter == 0:
			jitter = 1e-10 * max(mean, 1e-300)
		case jitter < 1e-2*mean:
			jitter *= 10
		default:
			// Degenerate covariance: fall back to the clamped diagonal.
			clear(l)
			for i := range c {
				l[i*c+i] = math.Sqrt(max(s[i*c+i], 0))
			}
			return l
		}
	}
}

// sigmoid is the numerically stable logistic function.
func sigmoid(f float64) float64 {
	if f >= 0 {
		return 1 / (1 + math.Exp(-f))
	}
	e := math.Exp(f)
	return e / (1 + e)
}

// softplus returns log(1 + e^f) without overflow.
func softplus(f float64) float64 {
	if f > 0 {
		return f + math.Log1p(math.Exp(-f))
	}
	return math.Log1p(math.Exp(f))
}

// softmaxTo writes softmax(f) into dst and returns log sum exp(f).
func softmaxTo(dst, f []float64) float64 {
	m := math.Inf(-1)
	for _, v := range f {
		m = max(m, v)
	}
	s := 0.0
	for i, v := range f {
		dst[i] = math.Exp(v - m)
		s += dst[i]
	}
	for i := range dst {
		dst[i] /= s
	}
	return m + math.Log(s)
}
