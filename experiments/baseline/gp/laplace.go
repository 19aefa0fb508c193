package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// newtonSettings controls the Newton iterations of the Laplace mode search.
type newtonSettings struct {
	maxIter int     // maximum Newton steps
	tol     float64 // stop when the objective improves by less than this
}

// maxHalvings bounds the step halvings of the line search along a Newton
// direction.
const maxHalvings = 30

// binaryPosterior is the Laplace approximation for binary classification with
// the logistic likelihood p(t=1|f) = σ(f) (Rasmussen & Williams, Algorithms
// 3.1 and 3.2). Targets t are 0 or 1.
type binaryPosterior struct {
	k     blas64.Symmetric // prior covariance K (n×n)
	a     []float64        // K⁻¹ f̂; the predictive mean is k*ᵀ a
	f     []float64        // posterior mode f̂
	sw    []float64        // W^½ at f̂, W = diag(σ(f̂)(1-σ(f̂)))
	chol  mat.Cholesky     // B = I + W^½ K W^½ = UᵀU at f̂
	u     blas64.Triangular
	psi   float64 // Ψ(f̂) = -½ f̂ᵀK⁻¹f̂ + log p(t|f̂)
	logZ  float64 // Laplace approximate log marginal likelihood
	iters int     // Newton steps taken
}

// psiBinary returns -½ aᵀf + Σ log p(t_i|f_i) for the logistic likelihood.
func psiBinary(a, f, t []float64) float64 {
	s := -0.5 * dot(a, f)
	for i, fi := range f {
		s += t[i]*fi - softplus(fi)
	}
	return s
}

// fitBinary finds the Laplace mode for targets t in {0,1} and prior
// covariance k (Algorithm 3.1 with a backtracking line search on a). If warm
// is non-nil and gives a better starting objective than f = 0, the search
// starts from a = warm.
func fitBinary(k *mat.SymDense, t []float64, warm []float64, ns newtonSettings) (*binaryPosterior, error) {
	n := len(t)
	p := &binaryPosterior{k: k.RawSymmetric(), a: make([]float64, n), f: make([]float64, n), sw: make([]float64, n)}
	p.psi = -float64(n) * math.Ln2 // Ψ at f = 0
	if warm != nil {
		fw := make([]float64, n)
		symv(fw, p.k, warm)
		if psi := psiBinary(warm, fw, t); psi > p.psi {
			copy(p.a, warm)
			p.f, p.psi = fw, psi
		}
	}
	b := make([]float64, n)
	v := make([]float64, n)
	da := make([]float64, n)
	aTry := make([]float64, n)
	fTry := make([]float64, n)
	bmat := mat.NewSymDense(n, nil)
	for p.iters = 0; p.iters < ns.maxIter; {
		if err := p.factor(bmat); err != nil {
			return nil, err
		}
		// b = W f + ∇log p(t|f); a_new = b - W^½ U⁻¹ U⁻ᵀ (W^½ K b).
		for i, fi := range p.f {
			pi := sigmoid(fi)
			b[i] = pi*(1-pi)*fi + t[i] - pi
		}
		symv(v, p.k, b)
		for i := range v {
			v[i] *= p.sw[i]
		}
		solveUT(p.u, v)
		solveU(p.u, v)
		for i := range da {
			da[i] = b[i] - p.sw[i]*v[i] - p.a[i]
		}
		p.iters++
		gain, ok := lineSearch(func(dst, x []float64) { symv(dst, p.k, x) }, p.a, da, aTry, fTry, p.psi,
			func(a, f []float64) float64 { return psiBinary(a, f, t) })
		if !ok {
			break
		}
		p.a, aTry = aTry, p.a
		p.f, fTry = fTry, p.f
		p.psi += gain
		if gain < ns.tol {
			break
		}
	}
	if err := p.factor(bmat); err != nil {
		return nil, err
	}
	p.logZ = p.psi - sumLogDiag(p.u)
	return p, nil
}

// factor computes W^½ and the Cholesky factorization of B = I + W^½KW^½ at
// the current f, using bmat as scratch.
func (p *binaryPosterior) factor(bmat *mat.SymDense) error {
	for i, fi := range p.f {
		pi := sigmoid(fi)
		p.sw[i] = math.Sqrt(pi * (1 - pi))
	}
	n := len(p.f)
	raw := bmat.RawSymmetric()
	for i := range n {
		krow := p.k.Data[i*p.k.Stride:]
		brow := raw.Data[i*raw.Stride:]
		brow[i] = 1 + p.sw[i]*p.sw[i]*krow[i]
		for j := i + 1; j < n; j++ {
			brow[j] = p.sw[i] * krow[j] * p.sw[j]
		}
	}
	if _, err := factorize(&p.chol, bmat); err != nil {
		return fmt.Errorf("laplace: %w", err)
	}
	p.u = upper(&p.chol)
	return nil
}

// predict returns the mean and variance of the latent f* given the prior
// covariances ks = k(X, x*) and kss = k(x*, x*) (Algorithm 3.2). ks is used as
// scratch.
func (p *binaryPosterior) predict(ks []float64, kss float64) (mean, variance float64) {
	mean = dot(ks, p.a)
	for i := range ks {
		ks[i] *= p.sw[i]
	}
	solveUT(p.u, ks)
	variance = max(kss-dot(ks, ks), 0)
	return mean, variance
}

// lineSearch tries a + s·da for s = 1, ½, ¼, … and stores the first point
// whose objective does not decrease in aTry and fTry = K aTry, with mulK
// applying the prior covariance. It returns the objective gain and whether an
// acceptable point was found.
func lineSearch(mulK func(dst, x []float64), a, da, aTry, fTry []float64, psi float64, obj func(a, f []float64) float64) (float64, bool) {
	for s, h := 1.0, 0; h < maxHalvings; s, h = s/2, h+1 {
		for i := range a {
			aTry[i] = a[i] + s*da[i]
		}
		mulK(fTry, aTry)
		if v := obj(aTry, fTry); v >= psi && !math.IsNaN(v) {
			return v - psi, true
		}
	}
	return 0, false
}

// softmaxPosterior is the multiclass Laplace approximation with the softmax
// likelihood and C independent latent functions sharing the covariance K
// (Rasmussen & Williams, Algorithms 3.3 and 3.4). Vectors of length C·n are
// stored class-major: element c·n+i belongs to class c and training point i.
type softmaxPosterior struct {
	n, c  int
	k     blas64.Symmetric
	a     []float64       // K⁻¹ f̂ per class; predictive mean of class c is k*ᵀ a_c
	f     []float64       // posterior mode f̂
	e     []*mat.SymDense // E_c = D_c^½ (I + D_c^½ K D_c^½)⁻¹ D_c^½
	m     mat.Cholesky    // Σ_c E_c = UᵀU
	mu    blas64.Triangular
	psi   float64 // Ψ(f̂) = -½ f̂ᵀK⁻¹f̂ + log p(y|f̂)
	logZ  float64 // Laplace approximate log marginal likelihood
	iters int     // Newton steps taken
	z     float64 // Σ_c Σ_i log L_c,ii at f̂
}

// psiSoftmax returns -½ aᵀf + yᵀf - Σ_i log Σ_c exp f_i^c for labels y.
func psiSoftmax(a, f []float64, y []int, c int, buf []float64) float64 {
	n := len(y)
	s := -0.5 * dot(a, f)
	for i, yi := range y {
		for cc := range c {
			buf[cc] = f[cc*n+i]
		}
		fy := buf[yi] // read before softmaxTo overwrites buf
		s += fy - softmaxTo(buf, buf)
	}
	return s
}

// fitSoftmax finds the multiclass Laplace mode for labels y in [0, c) and the
// shared prior covariance k, with the same Newton and warm-start scheme as
// fitBinary.
func fitSoftmax(k *mat.SymDense, y []int, c int, warm []float64, ns newtonSettings) (*softmaxPosterior, error) {
	n := len(y)
	p := &softmaxPosterior{n: n, c: c, k: k.RawSymmetric(), a: make([]float64, c*n), f: make([]float64, c*n)}
	buf := make([]float64, c)
	obj := func(a, f []float64) float64 { return psiSoftmax(a, f, y, c, buf) }
	p.psi = -float64(n) * math.Log(float64(c))
	// The prior is block diagonal: K applies to each class block.
	kBlock := func(dst, x []float64) {
		for cc := range c {
			symv(dst[cc*n:(cc+1)*n], p.k, x[cc*n:(cc+1)*n])
		}
	}
	if warm != nil {
		fw := make([]float64, c*n)
		kBlock(fw, warm)
		if psi := obj(warm, fw); psi > p.psi {
			copy(p.a, warm)
			p.f, p.psi = fw, psi
		}
	}
	pi := make([]float64, c*n)
	b := make([]float64, c*n)
	kb := make([]float64, n)
	cv := make([]float64, c*n)
	r := make([]float64, n)
	da := make([]float64, c*n)
	aTry := make([]float64, c*n)
	fTry := make([]float64, c*n)
	scratch := newSoftmaxScratch(n, c)
	for p.iters = 0; p.iters < ns.maxIter; {
		if err := p.factor(pi, scratch); err != nil {
			return nil, err
		}
		// b = (D - ΠΠᵀ) f + y - π.
		for i := range n {
			s := 0.0
			for cc := range c {
				s += pi[cc*n+i] * p.f[cc*n+i]
			}
			for cc := range c {
				j := cc*n + i
				b[j] = pi[j]*(p.f[j]-s) - pi[j]
				if y[i] == cc {
					b[j]++
				}
			}
		}
		// c = E K b; a_new = b - c + E R (Σ E)⁻¹ Rᵀ c.
		clear(r)
		for cc := range c {
			symv(kb, p.k, b[cc*n:(cc+1)*n])
			symv(cv[cc*n:(cc+1)*n], p.e[cc].RawSymmetric(), kb)
			for i := range r {
				r[i] += cv[cc*n+i]
			}
		}
		solveUT(p.mu, r)
		solveU(p.mu, r)
		for cc := range c {
			symv(kb, p.e[cc].RawSymmetric(), r)
			for i := range n {
				j := cc*n + i
				da[j] = b[j] - cv[j] + kb[i] - p.a[j]
			}
		}
		p.iters++
		gain, ok := lineSearch(kBlock, p.a, da, aTry, fTry, p.psi, obj)
		if !ok {
			break
		}
		p.a, aTry = aTry, p.a
		p.f, fTry = fTry, p.f
		p.psi += gain
		if gain < ns.tol {
			break
		}
	}
	if err := p.factor(pi, scratch); err != nil {
		return nil, err
	}
	p.logZ = p.psi - p.z - sumLogDiag(p.mu)
	return p, nil
}

// softmaxScratch holds the work matrices of softmaxPosterior.factor.
type softmaxScratch struct {
	b   *mat.SymDense
	inv *mat.SymDense
	sum *mat.SymDense
	ch  mat.Cholesky
}

func newSoftmaxScratch(n, c int) *softmaxScratch {
	return &softmaxScratch{b: mat.NewSymDense(n, nil), inv: mat.NewSymDense(n, nil), sum: mat.NewSymDense(n, nil)}
}

// factor computes π at the current f (into pi), the matrices E_c, the log
// determinant terms z = Σ_c log|L_c| and the Cholesky factor of Σ_c E_c.
func (p *softmaxPosterior) factor(pi []float64, s *softmaxScratch) error {
	n, c := p.n, p.c
	buf := make([]float64, c)
	for i := range n {
		for cc := range c {
			buf[cc] = p.f[cc*n+i]
		}
		softmaxTo(buf, buf)
		for cc := range c {
			pi[cc*n+i] = buf[cc]
		}
	}
	if p.e == nil {
		p.e = make([]*mat.SymDense, c)
		for cc := range c {
			p.e[cc] = mat.NewSymDense(n, nil)
		}
	}
	sd := make([]float64, n)
	sum := s.sum.RawSymmetric()
	clear(sum.Data)
	p.z = 0
	for cc := range c {
		for i := range n {
			sd[i] = math.Sqrt(pi[cc*n+i])
		}
		braw := s.b.RawSymmetric()
		for i := range n {
			krow := p.k.Data[i*p.k.Stride:]
			brow := braw.Data[i*braw.Stride:]
			brow[i] = 1 + sd[i]*sd[i]*krow[i]
			for j := i + 1; j < n; j++ {
				brow[j] = sd[i] * krow[j] * sd[j]
			}
		}
		if _, err := factorize(&s.ch, s.b); err != nil {
			return fmt.Errorf("laplace: class %d: %w", cc, err)
		}
		p.z += sumLogDiag(upper(&s.ch))
		if err := s.ch.InverseTo(s.inv); err != nil {
			return fmt.Errorf("laplace: class %d inverse: %w", cc, err)
		}
		inv := s.inv.RawSymmetric()
		e := p.e[cc].RawSymmetric()
		for i := range n {
			for j := i; j < n; j++ {
				v := sd[i] * inv.Data[i*inv.Stride+j] * sd[j]
				e.Data[i*e.Stride+j] = v
				sum.Data[i*sum.Stride+j] += v
			}
		}
	}
	if _, err := factorize(&p.m, s.sum); err != nil {
		return fmt.Errorf("laplace: sum of E_c: %w", err)
	}
	p.mu = upper(&p.m)
	return nil
}

// predict returns the predictive mean (length c) and row-major c×c covariance
// of the latent vector f* given ks = k(X, x*) and kss = k(x*, x*)
// (Algorithm 3.4): cov_cc' = δ_cc'(kss - ksᵀE_c ks) + (E_c ks)ᵀ(Σ E)⁻¹(E_c' ks).
func (p *softmaxPosterior) predict(ks []float64, kss float64) (mean, cov []float64) {
	n, c := p.n, p.c
	mean = make([]float64, c)
	cov = make([]float64, c*c)
	g := make([]float64, c*n)
	for cc := range c {
		mean[cc] = dot(ks, p.a[cc*n:(cc+1)*n])
		gc := g[cc*n : (cc+1)*n]
		symv(gc, p.e[cc].RawSymmetric(), ks)
		cov[cc*c+cc] = kss - dot(ks, gc)
		solveUT(p.mu, gc)
	}
	for i := range c {
		for j := i; j < c; j++ {
			v := dot(g[i*n:(i+1)*n], g[j*n:(j+1)*n])
			cov[i*c+j] += v
			if j != i {
				cov[j*c+i] = cov[i*c+j]
			}
		}
	}
	return mean, cov
}
