package rf

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/internal/datasets"
	"github.com/ptmhw/ptm/golden/metrics"
)

func TestSingleTreeByHand(t *testing.T) {
	// x = 0..9, label 1 from x = 5: one split at the midpoint 4.5.
	var X [][]float64
	var y []int
	for i := range 10 {
		X = append(X, []float64{float64(i)})
		y = append(y, i/5)
	}
	m := New(Opts{NTrees: 1, NoBootstrap: true})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	tr := m.trees[0]
	if len(tr.nodes) != 3 || tr.nodes[0].feature != 0 || tr.nodes[0].threshold != 4.5 {
		t.Fatalf("tree %+v, want one split at 4.5", tr.nodes)
	}
	for _, c := range []struct {
		x    float64
		want []float64
	}{{4.5, []float64{1, 0}}, {4.51, []float64{0, 1}}, {-100, []float64{1, 0}}, {100, []float64{0, 1}}} {
		if p := m.Proba([]float64{c.x}); !slices.Equal(p, c.want) {
			t.Errorf("Proba(%v) = %v, want %v", c.x, p, c.want)
		}
	}
	if m.Depth() != 1 {
		t.Errorf("depth %d, want 1", m.Depth())
	}
}

func TestGiniPicksInformativeFeature(t *testing.T) {
	// Feature 1 separates the classes; feature 0 is a weak, noisy one.
	X := [][]float64{{0, 0}, {1, 1}, {0, 2}, {1, 3}, {1, 10}, {0, 11}, {1, 12}, {1, 13}}
	y := []int{0, 0, 0, 0, 1, 1, 1, 1}
	m := New(Opts{NTrees: 1, NoBootstrap: true, MaxFeatures: AllFeatures})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if r := m.trees[0].nodes[0]; r.feature != 1 || r.threshold != 6.5 {
		t.Fatalf("root splits feature %d at %v, want feature 1 at 6.5", r.feature, r.threshold)
	}
}

func TestLeafDistribution(t *testing.T) {
	// Identical inputs with mixed labels cannot be split: the single leaf
	// holds the class frequencies.
	X := [][]float64{{1}, {1}, {1}, {1}}
	y := []int{0, 1, 1, 2}
	m := New(Opts{NTrees: 1, NoBootstrap: true})
	if err := m.Fit(X, y, 3); err != nil {
		t.Fatal(err)
	}
	if p := m.Proba([]float64{1}); !slices.Equal(p, []float64{0.25, 0.5, 0.25}) {
		t.Fatalf("Proba = %v, want [0.25 0.5 0.25]", p)
	}
}

func TestSeparable(t *testing.T) {
	centres := [][]float64{{0, 4}, {-4, -3}, {4, -3}}
	X, y := datasets.Blobs(centres, 40, 0.8, 1)
	m := New(Opts{Seed: 1})
	if err := m.Fit(X, y, 3); err != nil {
		t.Fatal(err)
	}
	if acc := baseline.Accuracy(m, X, y); acc != 1 {
		t.Errorf("training accuracy %v, want 1", acc)
	}
	Xt, yt := datasets.Blobs(centres, 100, 0.8, 2)
	// With one random feature per split a tree may isolate a class on one
	// coordinate only, so an occasional tree (and test point in the gaps)
	// can disagree: the forest is perfect on the training set and nearly so
	// on fresh data.
	if acc := baseline.Accuracy(m, Xt, yt); acc < 0.99 {
		t.Errorf("test accuracy %v, want >= 0.99", acc)
	}
	for c, x := range centres {
		if p := m.Proba(x); p[c] < 0.95 {
			t.Errorf("Proba(centre %d) = %v, want > 0.95", c, p)
		}
	}
	X2, y2 := datasets.XOR(30, 0.1, 3)
	m2 := New(Opts{Seed: 2})
	if err := m2.Fit(X2, y2, 2); err != nil {
		t.Fatal(err)
	}
	Xt2, yt2 := datasets.XOR(50, 0.1, 4)
	if acc := baseline.Accuracy(m2, Xt2, yt2); acc < 0.98 {
		t.Errorf("XOR test accuracy %v, want >= 0.98", acc)
	}
}

func TestSeparable1D(t *testing.T) {
	// Classes on [-3,-1] and [1,3]: every tree's threshold falls in the gap,
	// so the forest is unanimous and exact on both sides of it.
	var X [][]float64
	var y []int
	for i := range 30 {
		v := 1 + 2*float64(i)/29
		X = append(X, []float64{-v}, []float64{v})
		y = append(y, 0, 1)
	}
	m := New(Opts{Seed: 4})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{1, 1.3, 2.2, 3, 50} {
		if p := m.Proba([]float64{-v}); !slices.Equal(p, []float64{1, 0}) {
			t.Errorf("Proba(%v) = %v, want [1 0]", -v, p)
		}
		if p := m.Proba([]float64{v}); !slices.Equal(p, []float64{0, 1}) {
			t.Errorf("Proba(%v) = %v, want [0 1]", v, p)
		}
	}
	if mi := metrics.Query(m.Samples([]float64{2}, 100)).MutualInfo; mi != 0 {
		t.Errorf("mutual information inside a class = %v, want 0", mi)
	}
}

func TestSamples(t *testing.T) {
	X, y := datasets.Blobs([][]float64{{-1, 0}, {1, 0}}, 30, 1, 5)
	m := New(Opts{NTrees: 20, Seed: 3})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.1, 0.2}
	all := m.Samples(x, 20)
	if len(all) != 20 || len(all[0]) != 2 {
		t.Fatalf("shape %dx%d, want 20x2", len(all), len(all[0]))
	}
	for k, s := range all {
		if want := m.leafProbs(&m.trees[k], x); !slices.Equal(s, want) {
			t.Fatalf("sample %d = %v, tree %d gives %v", k, s, k, want)
		}
	}
	mean := metrics.Query(all).Mean
	p := m.Proba(x)
	for c := range p {
		if math.Abs(mean[c]-p[c]) > 1e-15 {
			t.Fatalf("mean of all trees %v != Proba %v", mean, p)
		}
	}
	first := m.Samples(x, 5)
	for k := range first {
		if !slices.Equal(first[k], all[k]) {
			t.Fatal("K < NTrees does not give the first K trees")
		}
	}
	cyc := m.Samples(x, 45)
	for k := range cyc {
		if !slices.Equal(cyc[k], all[k%20]) {
			t.Fatalf("K > NTrees: sample %d is not tree %d", k, k%20)
		}
	}
	cyc[0][0] = -1
	if m.Samples(x, 1)[0][0] == -1 {
		t.Fatal("Samples returned a view of the model")
	}
	if len(m.Samples(x, 0)) != 0 {
		t.Fatal("K = 0 not empty")
	}
	if metrics.Query(all).MutualInfo <= 0 {
		t.Error("trees agree completely near the boundary")
	}
}

func TestLimits(t *testing.T) {
	X, y := datasets.Blobs([][]float64{{-1, 0}, {1, 0}}, 60, 1.2, 6)
	m := New(Opts{MaxDepth: 3, Seed: 1})
	if err := m.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if d := m.Depth(); d > 3 || d < 2 {
		t.Errorf("depth %d with MaxDepth 3", d)
	}
	ml := New(Opts{MinLeaf: 7, NTrees: 5, NoBootstrap: true, Seed: 1})
	if err := ml.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	for ti := range ml.trees {
		count := map[int32]int{}
		for _, x := range X {
			tr := &ml.trees[ti]
			i := int32(0)
			for tr.nodes[i].feature >= 0 {
				if x[tr.nodes[i].feature] <= tr.nodes[i].threshold {
					i = tr.nodes[i].left
				} else {
					i = tr.nodes[i].right
				}
			}
			count[i]++
		}
		for leaf, c := range count {
			if c < 7 {
				t.Fatalf("tree %d leaf %d has %d rows, MinLeaf 7", ti, leaf, c)
			}
		}
	}
	full := New(Opts{Seed: 1})
	if err := full.Fit(X, y, 2); err != nil {
		t.Fatal(err)
	}
	if full.Depth() <= 3 {
		t.Errorf("unlimited depth only %d on overlapping blobs", full.Depth())
	}
}

func TestDeterminism(t *testing.T) {
	d, err := datasets.LoadCSV("../testdata/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	fit := func(seed uint64, workers int) *Model {
		m := New(Opts{Seed: seed, Workers: workers})
		if err := m.Fit(d.X, d.Y, 3); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := fit(1, 1), fit(1, 4), fit(2, 2)
	same := true
	for i := range a.trees {
		if !slices.Equal(a.trees[i].nodes, b.trees[i].nodes) || !slices.Equal(a.trees[i].probs, b.trees[i].probs) {
			t.Fatalf("tree %d differs between 1 and 4 workers", i)
		}
		same = same && slices.Equal(a.trees[i].nodes, c.trees[i].nodes)
	}
	if same {
		t.Fatal("different seeds grew identical forests")
	}
}

func TestFitErrors(t *testing.T) {
	if err := New(Opts{}).Fit([][]float64{{1}, {2}}, []int{0, 3}, 2); !errors.Is(err, baseline.ErrInvalidInput) {
		t.Errorf("bad label: %v", err)
	}
	if err := New(Opts{}).Fit(nil, nil, 2); !errors.Is(err, baseline.ErrInvalidInput) {
		t.Errorf("no rows: %v", err)
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
