package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/internal/scale"
)

// Multiclass selects how more than two classes are handled.
type Multiclass int

const (
	// Softmax is the multiclass Laplace approximation with one latent GP per
	// class and the softmax likelihood (Rasmussen & Williams Algorithms 3.3,
	// 3.4). All classes share the kernel hyper-parameters. It is the default.
	Softmax Multiclass = iota
	// OneVsRest fits one binary logistic Laplace GP per class, each with its
	// own hyper-parameters, and normalizes the per-class probabilities σ(f_c)
	// to sum to one.
	OneVsRest
)

// String returns the name of the scheme.
func (m Multiclass) String() string {
	switch m {
	case Softmax:
		return "softmax"
	case OneVsRest:
		return "one-vs-rest"
	}
	return fmt.Sprintf("Multiclass(%d)", int(m))
}

// Defaults used for zero Opts fields.
const (
	DefaultMaxNewton   = 50
	DefaultNewtonTol   = 1e-9
	DefaultOptSubset   = 300
	DefaultMaxOptEvals = 40
	DefaultPredSamples = 2000
	// DefaultMaxSignalVar bounds the signal-variance search; see
	// Opts.MaxSignalVar.
	DefaultMaxSignalVar = 10.0
)

// Opts configures a Model. The zero value selects every default.
type Opts struct {
	// LengthScale fixes the RBF length-scale l (in standardized input units)
	// when positive; otherwise l is chosen by maximizing the Laplace
	// approximate log marginal likelihood.
	LengthScale float64
	// SignalVar fixes the RBF signal variance sf2 when positive; otherwise it
	// is chosen together with (or, if LengthScale is fixed, instead of) l.
	SignalVar float64
	// MaxSignalVar is the largest signal variance the search may select
	// (default 10; a negative value means SignalVarCap = 1e4, i.e. plain
	// maximum likelihood). On (nearly) separable data the Laplace evidence
	// keeps rising, by fractions of a nat, towards sf2 of several hundred,
	// where the likelihood saturates, W → 0, the Laplace posterior keeps the
	// prior variance and the averaged predictive probabilities become badly
	// under-confident (p ≈ 0.77 on the training points of a separable 1-D
	// problem at sf2 ≈ 735, against 0.94 at sf2 = 10; on 10 stratified Iris
	// splits ECE 0.17 against 0.11 for accuracy 0.94 against 0.93). The cap
	// keeps the search in the regime where the approximation is sound. It
	// does not limit a fixed SignalVar.
	MaxSignalVar float64
	// Multiclass selects the scheme for more than two classes (default
	// Softmax). Two classes always use a single binary logistic GP.
	Multiclass Multiclass
	// MaxNewton bounds the Newton steps of each Laplace mode search
	// (default 50; each step costs one n×n Cholesky per latent function).
	// The mode found when the bound is hit is used as is.
	MaxNewton int
	// NewtonTol stops the Newton search once a step improves the objective
	// Ψ(f) = log p(y|f) - ½fᵀK⁻¹f by less than this (default 1e-9).
	NewtonTol float64
	// OptSubset is the largest number of training points used while
	// searching hyper-parameters (default 300): larger training sets are
	// searched on a class-stratified random subset, after which the final
	// model is fitted on all points. A negative value always uses all points.
	// The Laplace evidence of a subset favours slightly longer length-scales
	// than that of the full set; the cap keeps the O(n³) search affordable
	// for n = 1000.
	OptSubset int
	// MaxOptEvals bounds the Nelder-Mead evaluations of the refinement that
	// follows the grid search (default 40). A negative value skips the
	// refinement.
	MaxOptEvals int
	// LengthScales and SignalVars override the search grids
	// (DefaultLengthScales, DefaultSignalVars).
	LengthScales, SignalVars []float64
	// PredSamples is the number of latent draws (antithetic pairs of common
	// random numbers fixed at Fit) used by Proba to average the likelihood
	// over the Gaussian latent posterior when there are more than two
	// classes (default 2000).
	PredSamples int
	// Seed seeds every random choice: the search subset, the common random
	// numbers of Proba, and the stream used by Samples.
	Seed uint64
}

// withDefaults returns o with zero fields replaced by defaults.
func (o Opts) withDefaults() Opts {
	if o.MaxNewton <= 0 {
		o.MaxNewton = DefaultMaxNewton
	}
	if o.NewtonTol <= 0 {
		o.NewtonTol = DefaultNewtonTol
	}
	if o.OptSubset == 0 {
		o.OptSubset = DefaultOptSubset
	}
	if o.MaxOptEvals == 0 {
		o.MaxOptEvals = DefaultMaxOptEvals
	}
	if len(o.LengthScales) == 0 {
		o.LengthScales = slices.Clone(DefaultLengthScales)
	}
	if len(o.SignalVars) == 0 {
		o.SignalVars = slices.Clone(DefaultSignalVars)
	}
	switch {
	case o.MaxSignalVar == 0:
		o.MaxSignalVar = DefaultMaxSignalVar
	case o.MaxSignalVar < 0:
		o.MaxSignalVar = SignalVarCap
	}
	if o.PredSamples <= 0 {
		o.PredSamples = DefaultPredSamples
	}
	o.PredSamples += o.PredSamples & 1 // antithetic pairs
	return o
}

// Model is a Gaussian-process classifier with an RBF kernel and the Laplace
// approximation. Inputs are standardized with the training mean and standard
// deviation. Create it with New and train it with Fit.
//
// Proba is a deterministic function of x once fitted and safe for concurrent
// use. Samples draws from a stream seeded by Opts.Seed at Fit; calls are
// serialized, and the same sequence of calls reproduces the same samples.
type Model struct {
	opts     Opts
	nClasses int
	scaler   *scale.Scaler
	x        [][]float64 // standardized training inputs
	hyper    []Hyper     // one per latent model

	bin  []*binaryPosterior // binary: 1; one-vs-rest: nClasses
	soft *softmaxPosterior  // softmax multiclass
	crn  []float64          // PredSamples/2 × nClasses standard normals

	mu  sync.Mutex
	rng *rand.Rand
}

var _ baseline.Classifier = (*Model)(nil)

// New returns an unfitted model with the given options.
func New(opts Opts) *Model {
	return &Model{opts: opts.withDefaults()}
}

// Hyper returns the fitted hyper-parameters: one entry for a binary or
// softmax model, one per class for one-vs-rest. LogML is the Laplace
// approximate log marginal likelihood on the full (standardized) training
// set.
func (m *Model) Hyper() []Hyper { return slices.Clone(m.hyper) }

// Fit standardizes X, selects hyper-parameters and computes the Laplace
// approximation of the posterior over the latent function(s).
func (m *Model) Fit(X [][]float64, y []int, nClasses int) error {
	if _, err := baseline.ValidateFit(X, y, nClasses); err != nil {
		return fmt.Errorf("gp: fit: %w", err)
	}
	m.scaler = scale.Fit(X)
	m.x = m.scaler.TransformAll(X)
	m.nClasses = nClasses
	m.bin, m.soft, m.hyper = nil, nil, nil
	m.rng = rand.New(rand.NewPCG(m.opts.Seed, 2))
	setup := rand.New(rand.NewPCG(m.opts.Seed, 1))

	n := len(m.x)
	sub := searchSubset(y, nClasses, m.opts.OptSubset, setup)
	xs := make([][]float64, len(sub))
	ys := make([]int, len(sub))
	for k, i := range sub {
		xs[k], ys[k] = m.x[i], y[i]
	}
	d2Sub := sqDists(xs)
	d2 := d2Sub
	if len(sub) != n {
		d2 = sqDists(m.x)
	}
	ns := newtonSettings{maxIter: m.opts.MaxNewton, tol: m.opts.NewtonTol}
	fixed := Hyper{LengthScale: m.opts.LengthScale, SignalVar: m.opts.SignalVar}

	fitBin := func(t, tSub []float64) (*binaryPosterior, Hyper, error) {
		var warm []float64
		ev := func(h Hyper) float64 {
			p, err := fitBinary(rbfMatrix(d2Sub, len(sub), h), tSub, warm, ns)
			if err != nil {
				return math.Inf(-1)
			}
			warm = p.a
			return p.logZ
		}
		h := searchHyper(ev, fixed, m.opts.LengthScales, m.opts.SignalVars, m.opts.MaxSignalVar, m.opts.MaxOptEvals)
		p, err := fitBinary(rbfMatrix(d2, n, h), t, nil, ns)
		if err != nil {
			return nil, h, fmt.Errorf("gp: fit (l=%g, sf2=%g): %w", h.LengthScale, h.SignalVar, err)
		}
		h.LogML = p.logZ
		return p, h, nil
	}
	targets := func(ys []int, c int) []float64 {
		t := make([]float64, len(ys))
		for i, v := range ys {
			if v == c {
				t[i] = 1
			}
		}
		return t
	}

	switch {
	case nClasses == 2:
		p, h, err := fitBin(targets(y, 1), targets(ys, 1))
		if err != nil {
			return err
		}
		m.bin, m.hyper = []*binaryPosterior{p}, []Hyper{h}
	case m.opts.Multiclass == OneVsRest:
		for c := range nClasses {
			p, h, err := fitBin(targets(y, c), targets(ys, c))
			if err != nil {
				return fmt.Errorf("class %d: %w", c, err)
			}
			m.bin, m.hyper = append(m.bin, p), append(m.hyper, h)
		}
	case m.opts.Multiclass == Softmax:
		var warm []float64
		ev := func(h Hyper) float64 {
			p, err := fitSoftmax(rbfMatrix(d2Sub, len(sub), h), ys, nClasses, warm, ns)
			if err != nil {
				return math.Inf(-1)
			}
			warm = p.a
			return p.logZ
		}
		h := searchHyper(ev, fixed, m.opts.LengthScales, m.opts.SignalVars, m.opts.MaxSignalVar, m.opts.MaxOptEvals)
		p, err := fitSoftmax(rbfMatrix(d2, n, h), y, nClasses, nil, ns)
		if err != nil {
			return fmt.Errorf("gp: fit (l=%g, sf2=%g): %w", h.LengthScale, h.SignalVar, err)
		}
		h.LogML = p.logZ
		m.soft, m.hyper = p, []Hyper{h}
	default:
		return fmt.Errorf("gp: fit: %w: unknown multiclass scheme %v", baseline.ErrInvalidInput, m.opts.Multiclass)
	}

	m.crn = make([]float64, m.opts.PredSamples/2*nClasses)
	for i := range m.crn {
		m.crn[i] = setup.NormFloat64()
	}
	return nil
}

// searchSubset returns the sorted indices of at most limit training points,
// a class-stratified random subset when there are more (limit < 0: all).
func searchSubset(y []int, nClasses, limit int, rng *rand.Rand) []int {
	n := len(y)
	if limit < 0 || n <= limit {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	byClass := make([][]int, nClasses)
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	var idx []int
	for _, members := range byClass {
		if len(members) == 0 {
			continue
		}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		take := max(1, int(math.Round(float64(limit)*float64(len(members))/float64(n))))
		idx = append(idx, members[:min(take, len(members))]...)
	}
	slices.Sort(idx)
	return idx
}

// latent returns the predictive mean and row-major covariance of the latent
// values at x: for binary and one-vs-rest models the covariance is diagonal
// (independent latent functions).
func (m *Model) latent(x []float64) (mean, cov []float64) {
	if m.scaler == nil {
		panic("gp: model used before Fit")
	}
	if len(x) != len(m.scaler.Mean) {
		panic(fmt.Sprintf("gp: input has %d features, model was fitted on %d", len(x), len(m.scaler.Mean)))
	}
	z := m.scaler.Transform(x)
	ks := make([]float64, len(m.x))
	if m.soft != nil {
		h := m.hyper[0]
		rbfVec(ks, m.x, z, h)
		return m.soft.predict(ks, h.SignalVar)
	}
	k := len(m.bin)
	mean = make([]float64, k)
	cov = make([]float64, k*k)
	for c, p := range m.bin {
		h := m.hyper[c]
		rbfVec(ks, m.x, z, h)
		mean[c], cov[c*k+c] = p.predict(ks, h.SignalVar)
	}
	return mean, cov
}

// link maps one latent draw f to class probabilities in dst: [1-σ(f), σ(f)]
// for binary models, σ(f_c) normalized for one-vs-rest, softmax(f) for the
// softmax model.
func (m *Model) link(dst, f []float64) {
	switch {
	case m.soft != nil:
		softmaxTo(dst, f)
	case m.nClasses == 2:
		p := sigmoid(f[0])
		dst[0], dst[1] = 1-p, p
	default:
		s := 0.0
		for c, v := range f {
			dst[c] = sigmoid(v)
			s += dst[c]
		}
		for c := range dst {
			dst[c] /= s
		}
	}
}

// Proba returns the predictive class probabilities for x. For two classes it
// is the probit approximation of the averaged logistic likelihood,
// σ(μ/√(1+πv/8)) (Rasmussen & Williams eq. 3.25 with MacKay's κ), which is
// exactly 1/2 far from the data where μ → 0. For more classes it averages the
// likelihood over PredSamples latent draws from the Gaussian posterior, built
// from common random numbers fixed at Fit, so Proba is deterministic.
func (m *Model) Proba(x []float64) []float64 {
	mean, cov := m.latent(x)
	out := make([]float64, m.nClasses)
	if m.nClasses == 2 && m.soft == nil {
		p := sigmoid(mean[0] / math.Sqrt(1+math.Pi*cov[0]/8))
		out[0], out[1] = 1-p, p
		return out
	}
	k := len(mean)
	l := smallCholesky(cov, k)
	f := make([]float64, k)
	p := make([]float64, m.nClasses)
	half := len(m.crn) / k
	for s := range half {
		z := m.crn[s*k : (s+1)*k]
		for sign := -1.0; sign <= 1; sign += 2 {
			for i := range k {
				v := mean[i]
				for j := 0; j <= i; j++ {
					v += sign * l[i*k+j] * z[j]
				}
				f[i] = v
			}
			m.link(p, f)
			for c, v := range p {
				out[c] += v
			}
		}
	}
	for c := range out {
		out[c] /= float64(2 * half)
	}
	return out
}

// Samples returns K class-probability vectors, each the likelihood evaluated
// at one draw of the latent values at x from their Gaussian (Laplace)
// posterior predictive distribution: σ for binary models, normalized σ per
// class for one-vs-rest, softmax for the softmax model. Their spread measures
// the epistemic uncertainty. K <= 0 gives an empty result.
func (m *Model) Samples(x []float64, K int) [][]float64 {
	mean, cov := m.latent(x)
	if K <= 0 {
		return [][]float64{}
	}
	k := len(mean)
	l := smallCholesky(cov, k)
	z := make([]float64, k)
	f := make([]float64, k)
	out := make([][]float64, K)
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range out {
		for i := range z {
			z[i] = m.rng.NormFloat64()
		}
		for i := range k {
			v := mean[i]
			for j := 0; j <= i; j++ {
				v += l[i*k+j] * z[j]
			}
			f[i] = v
		}
		out[s] = make([]float64, m.nClasses)
		m.link(out[s], f)
	}
	return out
}
