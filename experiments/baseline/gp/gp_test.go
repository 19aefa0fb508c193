package gp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/internal/datasets"
	"github.com/ptmhw/ptm/golden/metrics"
)

// toy1D returns 20 points on [-3,-1] (class 0) and 20 on [1,3] (class 1).
func toy1D() ([][]float64, []int) {
	var X [][]float64
	var y []int
	for i := range 20 {
		v := 1 + 2*float64(i)/19
		X = append(X, []float64{-v}, []float64{v})
		y = append(y, 0, 1)
	}
	return X, y
}

func sampleStats(s [][]float64, class int) (mean, sd float64) {
	for _, p := range s {
		mean += p[class]
	}
	mean /= float64(len(s))
	for _, p := range s {
		sd += (p[class] - mean) * (p[class] - mean)
	}
	return mean, math.Sqrt(sd / float64(len(s)))
}

func TestBinary1D(t *testing.T) {
	X, y := toy1D()
	m := New(Opts{Seed: 1})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	h := m.Hyper()
	t.Logf("hyper %+v", h)
	if len(h) != 1 || h[0].LengthScale <= 0 || h[0].SignalVar <= 0 {
		t.Fatalf("hyper = %+v", h)
	}
	for _, c := range []struct {
		x    float64
		want int
	}{{-2.5, 0}, {-1.5, 0}, {1.5, 1}, {2.5, 1}} {
		p := m.Proba([]float64{c.x})
		if p[c.want] <= 0.9 || math.Abs(p[0]+p[1]-1) > 1e-12 {
			t.Errorf("Proba(%v) = %v, want class %d above 0.9", c.x, p, c.want)
		}
	}
	// Far from the data the latent mean returns to the zero prior mean, so
	// the probit-approximated predictive probability is 1/2 and the entropy is
	// maximal; the latent variance returns to sf2, so samples spread widely.
	far := []float64{1e3}
	p := m.Proba(far)
	if math.Abs(p[1]-0.5) > 1e-12 {
		t.Errorf("Proba far from data = %v, want 0.5", p)
	}
	if h := metrics.Entropy(p); math.Abs(h-1) > 1e-12 {
		t.Errorf("entropy far from data = %v bits, want 1", h)
	}
	mean, sdFar := sampleStats(m.Samples(far, 4000), 1)
	if math.Abs(mean-0.5) > 0.03 {
		t.Errorf("sample mean far from data = %v, want 0.5", mean)
	}
	_, sdNear := sampleStats(m.Samples([]float64{2}, 4000), 1)
	if !(sdFar > 0.3 && sdNear < 0.1) {
		t.Errorf("sample sd far %v near %v: want far > 0.3, near < 0.1", sdFar, sdNear)
	}
	far2 := m.Samples(far, 2000)
	// Thresholds of 0.2 and 0.05 nats, in bits.
	if mi := metrics.Query(far2).MutualInfo; mi < 0.2/math.Ln2 {
		t.Errorf("mutual information far from data = %v bits, want > %v", mi, 0.2/math.Ln2)
	}
	if mi := metrics.Query(m.Samples([]float64{2}, 2000)).MutualInfo; mi > 0.05/math.Ln2 {
		t.Errorf("mutual information inside the data = %v bits, want < %v", mi, 0.05/math.Ln2)
	}
	// The probit approximation agrees with the Monte Carlo average of the
	// samples near the decision boundary.
	x0 := []float64{0.3}
	if mc, _ := sampleStats(m.Samples(x0, 20000), 1); math.Abs(mc-m.Proba(x0)[1]) > 0.02 {
		t.Errorf("probit approximation %v vs Monte Carlo %v", m.Proba(x0)[1], mc)
	}
}

func blobs3() ([][]float64, []int) {
	return datasets.Blobs([][]float64{{0, 3}, {-3, -2}, {3, -2}}, 20, 0.6, 4)
}

func TestMulticlassBlobs(t *testing.T) {
	X, y := blobs3()
	for _, mc := range []Multiclass{Softmax, OneVsRest} {
		t.Run(mc.String(), func(t *testing.T) {
			m := New(Opts{Multiclass: mc, Seed: 2})
			if err := m.Fit(X, y, 3); err != nil {
				t.Fatal(err)
			}
			t.Logf("hyper %+v", m.Hyper())
			for c, x := range [][]float64{{0, 3}, {-3, -2}, {3, -2}} {
				p := m.Proba(x)
				if p[c] < 0.9 {
					t.Errorf("Proba(%v) = %v, want class %d above 0.9", x, p, c)
				}
			}
			p := m.Proba([]float64{300, 400})
			for c, v := range p {
				if math.Abs(v-1.0/3) > 0.03 {
					t.Errorf("Proba far away = %v, class %d want 1/3", p, c)
				}
			}
			if h := metrics.Entropy(p); h < 0.99*math.Log2(3) {
				t.Errorf("entropy far away = %v bits, want about log2 3", h)
			}
			if acc := baseline.Accuracy(m, X, y); acc != 1 {
				t.Errorf("training accuracy %v, want 1", acc)
			}
		})
	}
}

func TestFixedHyperAndMaximum(t *testing.T) {
	X, y := toy1D()
	m := New(Opts{LengthScale: 1.5, SignalVar: 7, Seed: 1})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if h := m.Hyper()[0]; h.LengthScale != 1.5 || h.SignalVar != 7 {
		t.Fatalf("fixed hyper-parameters changed: %+v", h)
	}
	// The selected hyper-parameters beat every feasible grid point and some
	// off-grid points on the (full, n < OptSubset) training evidence, both
	// with the default signal-variance cap and without it.
	for _, maxSf := range []float64{0, -1} {
		opt := New(Opts{Seed: 1, MaxSignalVar: maxSf})
		if err := opt.Fit(X, y, 2); err != nil {
			t.Fatal(err)
		}
		best := opt.Hyper()[0]
		limit := float64(DefaultMaxSignalVar)
		if maxSf < 0 {
			limit = SignalVarCap
		}
		if best.SignalVar > limit*(1+1e-12) {
			t.Errorf("selected sf2 %v above the bound %v", best.SignalVar, limit)
		}
		for _, l := range []float64{0.3, 0.7, 1.5, 3, 6} {
			for _, s := range []float64{0.5, 3, 9.9, 30, 300} {
				if s > limit {
					continue
				}
				f := New(Opts{LengthScale: l, SignalVar: s})
				if err := f.Fit(X, y, 2); err != nil {
					t.Fatal(err)
				}
				if v := f.Hyper()[0].LogML; v > best.LogML+1e-6 {
					t.Errorf("bound %v: l=%v sf2=%v has log ML %v above the selected %+v", limit, l, s, v, best)
				}
			}
		}
	}
	// Fixing only the length-scale optimizes the signal variance alone.
	half := New(Opts{LengthScale: 2})
	if err := half.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if h := half.Hyper()[0]; h.LengthScale != 2 || h.SignalVar == DefaultSignalVars[0] {
		t.Errorf("half-fixed search gave %+v", h)
	}
}

// TestUncappedSignalVarUnderconfident pins down why Opts.MaxSignalVar
// defaults to 10: with plain maximum likelihood the evidence of separable data
// drifts to a large signal variance, where the Laplace posterior keeps the
// prior variance and the averaged prediction at the training points drops.
func TestUncappedSignalVarUnderconfident(t *testing.T) {
	X, y := toy1D()
	m := New(Opts{MaxSignalVar: -1, Seed: 1})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	h := m.Hyper()[0]
	p := m.Proba([]float64{2.5})[1]
	t.Logf("uncapped: %+v, p(2.5) = %.3f", h, p)
	if h.SignalVar < 100 || p > 0.85 {
		t.Errorf("uncapped search gave sf2 %v and p(2.5) %v; expected sf2 > 100, p < 0.85", h.SignalVar, p)
	}
}

func TestNelderMead(t *testing.T) {
	obj := func(x []float64) float64 {
		a, b := x[0]-1, x[1]+2
		return a*a + 10*b*b + a*b
	}
	x, f := nelderMead(obj, []float64{3, 3}, 0.5, 500, 1e-14)
	// Minimum of a² + 10b² + ab is at a = b = 0.
	if math.Abs(x[0]-1) > 1e-4 || math.Abs(x[1]+2) > 1e-4 || f > 1e-8 {
		t.Fatalf("minimum at %v (f=%v), want (1,-2)", x, f)
	}
	x1, _ := nelderMead(func(x []float64) float64 { return (x[0] - 0.3) * (x[0] - 0.3) }, []float64{5}, 1, 200, 1e-14)
	if math.Abs(x1[0]-0.3) > 1e-5 {
		t.Fatalf("1-D minimum at %v, want 0.3", x1)
	}
}

func TestSearchHyperRecoversOptimum(t *testing.T) {
	ev := func(h Hyper) float64 {
		a, b := math.Log(h.LengthScale/1.7), math.Log(h.SignalVar/20)
		return -a*a - b*b - 0.5*a*b
	}
	h := searchHyper(ev, Hyper{}, DefaultLengthScales, DefaultSignalVars, SignalVarCap, 100)
	if math.Abs(h.LengthScale/1.7-1) > 0.01 || math.Abs(h.SignalVar/20-1) > 0.01 {
		t.Fatalf("search found %+v, want l=1.7 sf2=20", h)
	}
	// An optimum outside the bounds is clamped to the best feasible point.
	ev2 := func(h Hyper) float64 { return -math.Abs(math.Log(h.SignalVar) - 20) }
	h2 := searchHyper(ev2, Hyper{LengthScale: 1}, nil, DefaultSignalVars, SignalVarCap, 100)
	if h2.LengthScale != 1 || h2.SignalVar > 1.0001e4 || h2.SignalVar < 5e3 {
		t.Fatalf("bounded search found %+v", h2)
	}
}

func TestDeterminism(t *testing.T) {
	X, y := blobs3()
	fit := func(seed uint64) *Model {
		m := New(Opts{Seed: seed, OptSubset: 40})
		if err := m.Fit(X, y, 3); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := fit(5), fit(5), fit(6)
	x := []float64{0.5, 0.5}
	if !slices.Equal(a.Proba(x), b.Proba(x)) {
		t.Fatal("same seed, different Proba")
	}
	sa, sb, sc := a.Samples(x, 50), b.Samples(x, 50), c.Samples(x, 50)
	for k := range sa {
		if !slices.Equal(sa[k], sb[k]) {
			t.Fatal("same seed, different Samples")
		}
	}
	if slices.Equal(sa[0], sc[0]) {
		t.Fatal("different seeds gave identical samples")
	}
	if slices.Equal(sa[0], sa[1]) {
		t.Fatal("consecutive samples identical")
	}
	if s := a.Samples(x, 0); len(s) != 0 {
		t.Fatalf("Samples(K=0) has %d rows", len(s))
	}
	for _, p := range a.Samples(x, 20) {
		if len(p) != 3 || math.Abs(p[0]+p[1]+p[2]-1) > 1e-12 {
			t.Fatalf("bad sample %v", p)
		}
	}
}

func TestSubsetSearch(t *testing.T) {
	X, y := datasets.Blobs([][]float64{{-1, 0}, {1, 0}}, 150, 0.7, 3)
	m := New(Opts{OptSubset: 60, Seed: 3})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if acc := baseline.Accuracy(m, X, y); acc < 0.9 {
		t.Fatalf("accuracy with subset search %v", acc)
	}
	idx := searchSubset(y, 2, 60, rand.New(rand.NewPCG(1, 2)))
	count := [2]int{}
	for k, i := range idx {
		count[y[i]]++
		if k > 0 && i <= idx[k-1] {
			t.Fatal("subset not sorted and unique")
		}
	}
	if count != [2]int{30, 30} {
		t.Fatalf("subset class counts %v, want [30 30]", count)
	}
	if all := searchSubset(y, 2, -1, nil); len(all) != len(y) {
		t.Fatalf("negative limit kept %d of %d", len(all), len(y))
	}
}

func TestFitErrors(t *testing.T) {
	m := New(Opts{})
	cases := []struct {
		X [][]float64
		y []int
		c int
	}{
		{nil, nil, 2},
		{[][]float64{{1}, {2}}, []int{0}, 2},
		{[][]float64{{1}, {2}}, []int{0, 2}, 2},
		{[][]float64{{1}, {2, 3}}, []int{0, 1}, 2},
		{[][]float64{{1}, {math.NaN()}}, []int{0, 1}, 2},
		{[][]float64{{1}, {2}}, []int{0, 0}, 1},
	}
	for i, c := range cases {
		if err := m.Fit(c.X, c.y, c.c); !errors.Is(err, baseline.ErrInvalidInput) {
			t.Errorf("case %d: err = %v, want ErrInvalidInput", i, err)
		}
	}
	if err := New(Opts{Multiclass: 7}).Fit([][]float64{{0}, {1}, {2}}, []int{0, 1, 2}, 3); !errors.Is(err, baseline.ErrInvalidInput) {
		t.Errorf("unknown scheme: err = %v", err)
	}
}

func TestIris(t *testing.T) {
	d, err := datasets.LoadCSV("../testdata/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	train, test := datasets.StratifiedSplit(d.Y, 0.2, 1)
	X, y := d.Subset(train)
	Xt, yt := d.Subset(test)
	for _, mc := range []Multiclass{Softmax, OneVsRest} {
		m := New(Opts{Multiclass: mc, Seed: 1})
		if err := m.Fit(X, y, 3); err != nil {
			t.Fatal(err)
		}
		acc := baseline.Accuracy(m, Xt, yt)
		t.Logf("%v: test accuracy %.3f, hyper %+v", mc, acc, m.Hyper())
		if acc < 0.9 {
			t.Errorf("%v: test accuracy %.3f, want >= 0.9", mc, acc)
		}
	}
}
