package baseline_test

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/gp"
	"github.com/ptmhw/ptm/experiments/baseline/internal/datasets"
	"github.com/ptmhw/ptm/experiments/baseline/mlp"
	"github.com/ptmhw/ptm/experiments/baseline/rf"
	"github.com/ptmhw/ptm/golden/metrics"
)

var irisSplits = flag.Int("iris.splits", 10, "number of stratified Iris splits in TestIrisSplits (5 with -short)")

// models returns a fresh instance of every baseline with the given seed.
func models(seed uint64) []struct {
	name string
	c    baseline.Classifier
} {
	return []struct {
		name string
		c    baseline.Classifier
	}{
		{"GP softmax Laplace", gp.New(gp.Opts{Seed: seed})},
		{"GP one-vs-rest Laplace", gp.New(gp.Opts{Multiclass: gp.OneVsRest, Seed: seed})},
		{"MLP MC dropout", mlp.New(mlp.Opts{Seed: seed})},
		{"RF 100 trees", rf.New(rf.Opts{Seed: seed})},
	}
}

// TestConformance checks the Classifier contract on every model: probability
// vectors of the right length that sum to one, K samples, and bit-for-bit
// reproducibility from the seed.
func TestConformance(t *testing.T) {
	X, y := datasets.Blobs([][]float64{{0, 2}, {-2, -1}, {2, -1}}, 15, 0.9, 11)
	x := []float64{0.2, 0.4}
	first, second := models(3), models(3)
	for i, m := range first {
		t.Run(m.name, func(t *testing.T) {
			if err := m.c.Fit(X, y, 3); err != nil {
				t.Fatal(err)
			}
			if err := second[i].c.Fit(X, y, 3); err != nil {
				t.Fatal(err)
			}
			p := m.c.Proba(x)
			if len(p) != 3 || math.Abs(p[0]+p[1]+p[2]-1) > 1e-12 {
				t.Fatalf("Proba = %v", p)
			}
			if !slices.Equal(p, second[i].c.Proba(x)) {
				t.Fatal("Proba not reproducible from the seed")
			}
			s, s2 := m.c.Samples(x, 7), second[i].c.Samples(x, 7)
			if len(s) != 7 {
				t.Fatalf("%d samples, want 7", len(s))
			}
			for k := range s {
				if len(s[k]) != 3 || math.Abs(s[k][0]+s[k][1]+s[k][2]-1) > 1e-12 {
					t.Fatalf("sample %v", s[k])
				}
				if !slices.Equal(s[k], s2[k]) {
					t.Fatal("Samples not reproducible from the seed")
				}
			}
			if acc := baseline.Accuracy(m.c, X, y); acc < 0.95 {
				t.Errorf("training accuracy %v", acc)
			}
		})
	}
}

// TestIrisSplits fits every model on several stratified 80/20 Iris splits
// (-iris.splits, default 10, or 5 with -short) and logs mean, spread and range of the test
// accuracy and of the top-label ECE (10 bins); run with -v to see the table.
// It asserts a mean accuracy of at least 0.9 per model.
func TestIrisSplits(t *testing.T) {
	d, err := datasets.LoadCSV("testdata/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	nSplits := max(*irisSplits, 2)
	if testing.Short() {
		nSplits = 5
	}
	names := []string{}
	acc := map[string][]float64{}
	ece := map[string][]float64{}
	for split := uint64(1); split <= uint64(nSplits); split++ {
		train, test := datasets.StratifiedSplit(d.Y, 0.2, split)
		X, y := d.Subset(train)
		Xt, yt := d.Subset(test)
		for _, m := range models(split) {
			if split == 1 {
				names = append(names, m.name)
			}
			if err := m.c.Fit(X, y, 3); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			// The ECE of Proba, with golden/metrics' bins.
			qs := make([]metrics.QueryStats, len(Xt))
			for i, x := range Xt {
				qs[i] = metrics.Query([][]float64{m.c.Proba(x)})
			}
			acc[m.name] = append(acc[m.name], baseline.Accuracy(m.c, Xt, yt))
			ece[m.name] = append(ece[m.name], metrics.Evaluate(qs, yt, 10).ECE)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Iris, %d stratified 80/20 splits (seeds 1..%d):\n", nSplits, nSplits)
	fmt.Fprintf(&b, "%-24s %-28s %s\n", "model", "accuracy mean±sd [min,max]", "ECE mean±sd [min,max]")
	for _, n := range names {
		fmt.Fprintf(&b, "%-24s %-28s %s\n", n, summary(acc[n]), summary(ece[n]))
		if m, _ := meanSD(acc[n]); m < 0.9 {
			t.Errorf("%s: mean test accuracy %.3f, want >= 0.9", n, m)
		}
	}
	t.Log("\n" + b.String())
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

func summary(v []float64) string {
	m, s := meanSD(v)
	return fmt.Sprintf("%.3f±%.3f [%.3f,%.3f]", m, s, slices.Min(v), slices.Max(v))
}
