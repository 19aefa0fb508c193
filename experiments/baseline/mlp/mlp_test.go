package mlp

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

func TestXOR(t *testing.T) {
	X, y := datasets.XOR(25, 0.15, 1)
	m := New(Opts{Seed: 1, Epochs: 200})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if acc := baseline.Accuracy(m, X, y); acc != 1 {
		t.Errorf("training accuracy %v, want 1", acc)
	}
	Xt, yt := datasets.XOR(50, 0.15, 99)
	if acc := baseline.Accuracy(m, Xt, yt); acc < 0.98 {
		t.Errorf("test accuracy %v, want >= 0.98", acc)
	}
	for _, c := range []struct {
		x    []float64
		want int
	}{{[]float64{0.7, 0.7}, 0}, {[]float64{-0.7, -0.7}, 0}, {[]float64{0.7, -0.7}, 1}, {[]float64{-0.7, 0.7}, 1}} {
		if p := m.Proba(c.x); p[c.want] < 0.9 {
			t.Errorf("Proba(%v) = %v, want class %d above 0.9", c.x, p, c.want)
		}
	}
}

func TestBlobs(t *testing.T) {
	centres := [][]float64{{-2, 0}, {2, 0}}
	X, y := datasets.Blobs(centres, 100, 1, 2)
	m := New(Opts{Seed: 2})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	// The Bayes classifier splits at x = 0 with error Φ(-2) ≈ 0.023.
	Xt, yt := datasets.Blobs(centres, 500, 1, 3)
	if acc := baseline.Accuracy(m, Xt, yt); acc < 0.96 {
		t.Errorf("test accuracy %v, want >= 0.96 (Bayes 0.977)", acc)
	}
	for c, x := range centres {
		if p := m.Proba(x); p[c] < 0.95 {
			t.Errorf("Proba(centre %d) = %v, want > 0.95", c, p)
		}
	}
	// On the boundary the prediction is uncertain and the dropout samples
	// disagree more than at a centre.
	pb := m.Proba([]float64{0, 0})
	if pb[0] < 0.2 || pb[0] > 0.8 {
		t.Errorf("Proba on the boundary = %v, want within [0.2, 0.8]", pb)
	}
	miB := metrics.Query(m.Samples([]float64{0, 0}, 200)).MutualInfo
	miC := metrics.Query(m.Samples(centres[0], 200)).MutualInfo
	if !(miB > miC) {
		t.Errorf("mutual information boundary %v, centre %v: want boundary larger", miB, miC)
	}
}

func TestDropoutSamples(t *testing.T) {
	X, y := datasets.Blobs([][]float64{{-1, 0}, {1, 0}}, 30, 0.7, 4)
	x := []float64{0.1, 0.3}

	mc := New(Opts{Seed: 3, Epochs: 50})
	if err := mc.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	s := mc.Samples(x, 30)
	if len(s) != 30 || len(s[0]) != 2 {
		t.Fatalf("Samples shape %dx%d, want 30x2", len(s), len(s[0]))
	}
	distinct := map[float64]bool{}
	for _, p := range s {
		if math.Abs(p[0]+p[1]-1) > 1e-12 {
			t.Fatalf("sample %v does not sum to 1", p)
		}
		distinct[p[0]] = true
	}
	if len(distinct) < 25 {
		t.Errorf("only %d distinct of 30 MC-dropout samples", len(distinct))
	}
	// Proba is deterministic: the mean over the masks fixed at Fit.
	if !slices.Equal(mc.Proba(x), mc.Proba(x)) {
		t.Error("Proba not deterministic")
	}

	plain := New(Opts{Seed: 3, Epochs: 50, Dropout: NoDropout})
	if err := plain.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	s = plain.Samples(x, 10)
	p := plain.Proba(x)
	for _, q := range s {
		if !slices.Equal(q, p) {
			t.Fatalf("without dropout sample %v differs from Proba %v", q, p)
		}
	}
	if mi := metrics.Query(s).MutualInfo; mi > 1e-12 {
		t.Errorf("mutual information without dropout = %v, want 0", mi)
	}
	if len(plain.Samples(x, 0)) != 0 || len(plain.Samples(x, -3)) != 0 {
		t.Error("Samples with K <= 0 not empty")
	}
}

func TestDeterminism(t *testing.T) {
	X, y := datasets.Blobs([][]float64{{0, 2}, {-2, -1}, {2, -1}}, 20, 0.8, 5)
	fit := func(seed uint64) *Model {
		m := New(Opts{Seed: seed, Epochs: 30})
		if err := m.Fit(X, y, 3); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := fit(7), fit(7), fit(8)
	x := []float64{0.3, 0.1}
	if !slices.Equal(a.Proba(x), b.Proba(x)) {
		t.Fatal("same seed, different Proba")
	}
	sa, sb, sc := a.Samples(x, 20), b.Samples(x, 20), c.Samples(x, 20)
	for k := range sa {
		if !slices.Equal(sa[k], sb[k]) {
			t.Fatal("same seed, different Samples")
		}
	}
	if slices.Equal(sa[0], sc[0]) {
		t.Fatal("different seeds, identical samples")
	}
	// Refitting restarts every stream.
	if err := a.Fit(X, y, 3); err != nil {
		t.Fatal(err)
	}
	if s := a.Samples(x, 1); !slices.Equal(s[0], sb[0]) {
		t.Fatal("refit did not reproduce the first sample")
	}
}

// TestGradient compares backward with central finite differences of the
// cross-entropy under a fixed dropout mask.
func TestGradient(t *testing.T) {
	m := New(Opts{Hidden: []int{5, 4}, Dropout: 0.3, Seed: 1, Epochs: 1})
	X, y := datasets.Blobs([][]float64{{0, 1, 0}, {1, 0, 0}, {0, 0, 1}}, 3, 0.5, 6)
	if err := m.Fit(X, y, 3); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	mask := make([]float64, m.nHidden)
	m.drawMask(mask, rng)
	mask[0] = 0 // make sure a dropped unit is exercised
	x := []float64{0.3, -0.8, 0.5}
	label := 2
	buf := m.newBuffers()
	loss := func() float64 {
		copy(buf.a[0], x)
		m.forward(buf, mask, 0)
		return -math.Log(buf.a[len(m.layers)][label])
	}
	nl := len(m.layers)
	gw, gb, delta := make([][]float64, nl), make([][]float64, nl), make([][]float64, nl)
	for l, ly := range m.layers {
		gw[l], gb[l], delta[l] = make([]float64, len(ly.w)), make([]float64, ly.out), make([]float64, ly.out)
	}
	loss()
	m.backward(buf, mask, label, 1, delta, gw, gb)
	const h = 1e-6
	check := func(name string, p []float64, g []float64) {
		for i := range p {
			old := p[i]
			p[i] = old + h
			up := loss()
			p[i] = old - h
			down := loss()
			p[i] = old
			num := (up - down) / (2 * h)
			if math.Abs(num-g[i]) > 1e-6*max(1, math.Abs(num)) {
				t.Errorf("%s[%d]: backward %v, numeric %v", name, i, g[i], num)
			}
		}
	}
	for l := range m.layers {
		check("w"+string(rune('0'+l)), m.layers[l].w, gw[l])
		check("b"+string(rune('0'+l)), m.layers[l].b, gb[l])
	}
}

func TestFitErrors(t *testing.T) {
	X := [][]float64{{0}, {1}}
	y := []int{0, 1}
	if err := New(Opts{}).Fit(X, []int{0, 5}, 2); !errors.Is(err, baseline.ErrInvalidInput) {
		t.Errorf("bad label: %v", err)
	}
	if err := New(Opts{Dropout: 1}).Fit(X, y, 2); !errors.Is(err, baseline.ErrInvalidInput) {
		t.Errorf("dropout 1: %v", err)
	}
	if err := New(Opts{Hidden: []int{4, 0}}).Fit(X, y, 2); !errors.Is(err, baseline.ErrInvalidInput) {
		t.Errorf("zero width: %v", err)
	}
	o := New(Opts{Dropout: NoDropout, WeightDecay: NoWeightDecay}).Options()
	if o.Dropout != 0 || o.WeightDecay != 0 || !slices.Equal(o.Hidden, DefaultHidden) || o.Epochs != DefaultEpochs {
		t.Errorf("Options = %+v", o)
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
	m := New(Opts{Seed: 1})
	if err := m.Fit(X, y, 3); err != nil {
		t.Fatal(err)
	}
	acc := baseline.Accuracy(m, Xt, yt)
	t.Logf("test accuracy %.3f", acc)
	if acc < 0.9 {
		t.Errorf("test accuracy %.3f, want >= 0.9", acc)
	}
}
