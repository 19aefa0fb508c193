package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomProblem returns n random 2-D points, their kernel matrix and labels in
// [0, c) (every class present).
func randomProblem(n, c int, h Hyper, seed uint64) ([][]float64, *mat.SymDense, []int) {
	rng := rand.New(rand.NewPCG(seed, 9))
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		y[i] = i % c
		X[i] = []float64{float64(y[i]) + 0.8*rng.NormFloat64(), 0.8 * rng.NormFloat64()}
	}
	return X, rbfMatrix(sqDists(X), n, h), y
}

// denseLaplace finds the Laplace mode with plain dense Newton steps in f-space,
// f ← K (I + W K)⁻¹ (W f + ∇log p(y|f)), for the block-diagonal prior of c
// latent functions (c = 1: binary logistic with targets y in {0,1}), and
// returns f̂ and the approximate log marginal likelihood
// -½ f̂ᵀK⁻¹f̂ + log p(y|f̂) - ½ log|I + K W|, everything with dense algebra.
func denseLaplace(t *testing.T, k *mat.SymDense, y []int, c int) ([]float64, float64, *mat.Dense, *mat.Dense) {
	t.Helper()
	n := len(y)
	N := n * c
	if c == 1 {
		N = n
	}
	kb := mat.NewDense(N, N, nil)
	blocks := max(c, 1)
	for b := range blocks {
		for i := range n {
			for j := range n {
				kb.Set(b*n+i, b*n+j, k.At(i, j))
			}
		}
	}
	f := mat.NewVecDense(N, nil)
	var w *mat.Dense
	grad := mat.NewVecDense(N, nil)
	logLik := 0.0
	eval := func() {
		w = mat.NewDense(N, N, nil)
		logLik = 0
		if c == 1 {
			for i := range n {
				fi := f.AtVec(i)
				p := 1 / (1 + math.Exp(-fi))
				w.Set(i, i, p*(1-p))
				grad.SetVec(i, float64(y[i])-p)
				logLik += float64(y[i])*fi - math.Log(1+math.Exp(fi))
			}
			return
		}
		for i := range n {
			z := 0.0
			for cc := range c {
				z += math.Exp(f.AtVec(cc*n + i))
			}
			logLik += f.AtVec(y[i]*n+i) - math.Log(z)
			for cc := range c {
				pc := math.Exp(f.AtVec(cc*n+i)) / z
				t := 0.0
				if y[i] == cc {
					t = 1
				}
				grad.SetVec(cc*n+i, t-pc)
				w.Set(cc*n+i, cc*n+i, w.At(cc*n+i, cc*n+i)+pc)
				for c2 := range c {
					p2 := math.Exp(f.AtVec(c2*n+i)) / z
					w.Set(cc*n+i, c2*n+i, w.At(cc*n+i, c2*n+i)-pc*p2)
				}
			}
		}
	}
	var a mat.Dense
	for range 100 {
		eval()
		var iwk, rhs mat.Dense
		iwk.Mul(w, kb)
		for i := range N {
			iwk.Set(i, i, iwk.At(i, i)+1)
		}
		var wf mat.VecDense
		wf.MulVec(w, f)
		wf.AddVec(&wf, grad)
		rhs.Solve(&iwk, &wf)
		f.MulVec(kb, rhs.ColView(0))
	}
	eval()
	a.Solve(kb, f)
	quad := mat.Dot(f, a.ColView(0))
	var ikw mat.Dense
	ikw.Mul(kb, w)
	for i := range N {
		ikw.Set(i, i, ikw.At(i, i)+1)
	}
	logDet, sign := mat.LogDet(&ikw)
	if sign <= 0 {
		t.Fatalf("det(I+KW) sign %v", sign)
	}
	return f.RawVector().Data, -0.5*quad + logLik - 0.5*logDet, kb, w
}

func TestBinaryLaplaceSinglePoint(t *testing.T) {
	// One point with prior variance k and target 1: the mode solves
	// f = k(1 - σ(f)) and log Z = -f²/(2k) + log σ(f) - ½ log(1 + k σ(1-σ)).
	for _, kv := range []float64{0.5, 1, 4, 25} {
		k := mat.NewSymDense(1, []float64{kv})
		p, err := fitBinary(k, []float64{1}, nil, newtonSettings{maxIter: 100, tol: 1e-14})
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := 0.0, kv // root of g(f) = f - k(1-σ(f)) lies in (0, k)
		for range 200 {
			mid := (lo + hi) / 2
			if mid-kv*(1-sigmoid(mid)) > 0 {
				hi = mid
			} else {
				lo = mid
			}
		}
		f := (lo + hi) / 2
		s := sigmoid(f)
		logZ := -f*f/(2*kv) + math.Log(s) - 0.5*math.Log(1+kv*s*(1-s))
		if math.Abs(p.f[0]-f) > 1e-7 || math.Abs(p.logZ-logZ) > 1e-9 {
			t.Errorf("k=%v: mode %.12f logZ %.12f, want %.12f %.12f", kv, p.f[0], p.logZ, f, logZ)
		}
	}
	// k = 1 by hand: f = 1 - σ(f) gives f ≈ 0.40106 (σ ≈ 0.59894).
	k := mat.NewSymDense(1, []float64{1})
	p, _ := fitBinary(k, []float64{1}, nil, newtonSettings{maxIter: 100, tol: 1e-14})
	if math.Abs(p.f[0]-0.40106) > 1e-5 {
		t.Errorf("mode for k=1 is %v, want 0.4013", p.f[0])
	}
}

func TestBinaryLaplaceMatchesDense(t *testing.T) {
	h := Hyper{LengthScale: 0.9, SignalVar: 3}
	_, k, y := randomProblem(12, 2, h, 3)
	tv := make([]float64, len(y))
	for i, v := range y {
		tv[i] = float64(v)
	}
	p, err := fitBinary(k, tv, nil, newtonSettings{maxIter: 100, tol: 1e-14})
	if err != nil {
		t.Fatal(err)
	}
	f, logZ, _, _ := denseLaplace(t, k, y, 1)
	for i := range f {
		if math.Abs(p.f[i]-f[i]) > 1e-7 {
			t.Fatalf("mode[%d] = %v, dense %v", i, p.f[i], f[i])
		}
	}
	if math.Abs(p.logZ-logZ) > 1e-7 {
		t.Fatalf("logZ = %.10f, dense %.10f", p.logZ, logZ)
	}
	// The mode satisfies f̂ = K ∇log p(y|f̂).
	for i := range f {
		s := 0.0
		for j := range f {
			s += k.At(i, j) * (tv[j] - sigmoid(p.f[j]))
		}
		if math.Abs(s-p.f[i]) > 1e-7 {
			t.Fatalf("stationarity violated at %d: %v vs %v", i, s, p.f[i])
		}
	}
}

func TestSoftmaxLaplaceMatchesDense(t *testing.T) {
	const n, c = 9, 3
	h := Hyper{LengthScale: 0.8, SignalVar: 4}
	X, k, y := randomProblem(n, c, h, 5)
	p, err := fitSoftmax(k, y, c, nil, newtonSettings{maxIter: 100, tol: 1e-14})
	if err != nil {
		t.Fatal(err)
	}
	f, logZ, kb, w := denseLaplace(t, k, y, c)
	for i := range f {
		if math.Abs(p.f[i]-f[i]) > 1e-7 {
			t.Fatalf("mode[%d] = %v, dense %v", i, p.f[i], f[i])
		}
	}
	if math.Abs(p.logZ-logZ) > 1e-7 {
		t.Fatalf("logZ = %.10f, dense %.10f", p.logZ, logZ)
	}
	// Predictive covariance at a test point against the dense formula
	// cov = kss·I - Q*ᵀ (I + W K)⁻¹ W Q*, mean = Q*ᵀ K⁻¹ f̂.
	xs := []float64{0.7, -0.4}
	ks := make([]float64, n)
	rbfVec(ks, X, xs, h)
	mean, cov := p.predict(append([]float64(nil), ks...), h.SignalVar)
	q := mat.NewDense(n*c, c, nil)
	for cc := range c {
		for i := range n {
			q.Set(cc*n+i, cc, ks[i])
		}
	}
	var iwk, wq, sol, corr mat.Dense
	iwk.Mul(w, kb)
	for i := range n * c {
		iwk.Set(i, i, iwk.At(i, i)+1)
	}
	wq.Mul(w, q)
	sol.Solve(&iwk, &wq)
	corr.Mul(q.T(), &sol)
	var a mat.VecDense
	a.SolveVec(kb, mat.NewVecDense(n*c, f))
	for i := range c {
		if want := mat.Dot(q.ColView(i), &a); math.Abs(mean[i]-want) > 1e-7 {
			t.Errorf("mean[%d] = %v, dense %v", i, mean[i], want)
		}
		for j := range c {
			want := -corr.At(i, j)
			if i == j {
				want += h.SignalVar
			}
			if math.Abs(cov[i*c+j]-want) > 1e-7 {
				t.Errorf("cov[%d][%d] = %v, dense %v", i, j, cov[i*c+j], want)
			}
		}
	}
}

func TestWarmStartSameMode(t *testing.T) {
	h := Hyper{LengthScale: 1, SignalVar: 2}
	_, k, y := randomProblem(15, 3, h, 8)
	ns := newtonSettings{maxIter: 100, tol: 1e-13}
	cold, err := fitSoftmax(k, y, 3, nil, ns)
	if err != nil {
		t.Fatal(err)
	}
	warm := make([]float64, len(cold.a))
	for i := range warm {
		warm[i] = 0.8 * cold.a[i]
	}
	hot, err := fitSoftmax(k, y, 3, warm, ns)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cold.logZ-hot.logZ) > 1e-8 || hot.iters > cold.iters {
		t.Fatalf("warm start: logZ %v vs %v, iterations %d vs %d", hot.logZ, cold.logZ, hot.iters, cold.iters)
	}
}
