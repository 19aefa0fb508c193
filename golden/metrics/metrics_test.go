package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

const tol = 1e-12

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

func nearSlice(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestEntropy(t *testing.T) {
	tests := []struct {
		p    []float64
		want float64
	}{
		{[]float64{1, 0}, 0},
		{[]float64{0, 0, 1}, 0},
		{[]float64{0.5, 0.5}, 1},
		{[]float64{0.25, 0.25, 0.25, 0.25}, 2},
		{[]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 1.584962500721156}, // log2 3
		{[]float64{0.9, 0.1}, 0.4689955935892812},
		{[]float64{0.7, 0.3}, 0.8812908992306927},
		{nil, 0},
	}
	for _, tc := range tests {
		if got := Entropy(tc.p); !near(got, tc.want) {
			t.Errorf("Entropy(%v) = %.17g, want %.17g", tc.p, got, tc.want)
		}
	}
}

func TestQuery(t *testing.T) {
	tests := []struct {
		name    string
		samples [][]float64
		want    QueryStats
	}{
		{
			// Two confident samples that disagree: 1 bit of entropy, all of
			// it epistemic.
			name:    "disagreeing one-hot samples",
			samples: [][]float64{{1, 0}, {0, 1}},
			want: QueryStats{Mean: []float64{0.5, 0.5}, Entropy: 1, ExpectedEntropy: 0, MutualInfo: 1,
				Std: []float64{0.5, 0.5}, StdMean: 0.5, Pred: 0, Conf: 0.5},
		},
		{
			// Identical samples: no epistemic uncertainty at all.
			name:    "identical samples",
			samples: [][]float64{{0.7, 0.2, 0.1}, {0.7, 0.2, 0.1}, {0.7, 0.2, 0.1}},
			want: QueryStats{Mean: []float64{0.7, 0.2, 0.1}, Entropy: 1.1567796494470395, ExpectedEntropy: 1.1567796494470395,
				MutualInfo: 0, Std: []float64{0, 0, 0}, StdMean: 0, Pred: 0, Conf: 0.7},
		},
		{
			// Mean (0.7, 0.3); H = H(0.7) = 0.88129...; E[H] = (H(0.8) +
			// H(0.6)) / 2 = 0.84643...; sigma = 0.1 for both classes.
			name:    "two-level samples",
			samples: [][]float64{{0.8, 0.2}, {0.6, 0.4}, {0.8, 0.2}, {0.6, 0.4}},
			want: QueryStats{Mean: []float64{0.7, 0.3}, Entropy: 0.8812908992306927, ExpectedEntropy: 0.8464393446710154,
				MutualInfo: 0.034851554559677256, Std: []float64{0.1, 0.1}, StdMean: 0.1, Pred: 0, Conf: 0.7},
		},
		{
			// Confident in class 2 on average; std differs per class.
			name:    "three classes, K=2",
			samples: [][]float64{{0, 0, 1}, {0, 0.5, 0.5}},
			want: QueryStats{Mean: []float64{0, 0.25, 0.75}, Entropy: 0.8112781244591328, ExpectedEntropy: 0.5,
				MutualInfo: 0.3112781244591328, Std: []float64{0, 0.25, 0.25}, StdMean: 1.0 / 6, Pred: 2, Conf: 0.75},
		},
		{
			name:    "tie between later classes picks the lower index",
			samples: [][]float64{{0.2, 0.4, 0.4}},
			want: QueryStats{Mean: []float64{0.2, 0.4, 0.4}, Entropy: 1.5219280948873621, ExpectedEntropy: 1.5219280948873621,
				MutualInfo: 0, Std: []float64{0, 0, 0}, StdMean: 0, Pred: 1, Conf: 0.4},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Query(tc.samples)
			w := tc.want
			if !nearSlice(got.Mean, w.Mean) || !nearSlice(got.Std, w.Std) ||
				!near(got.Entropy, w.Entropy) || !near(got.ExpectedEntropy, w.ExpectedEntropy) ||
				!near(got.MutualInfo, w.MutualInfo) || !near(got.StdMean, w.StdMean) ||
				got.Pred != w.Pred || !near(got.Conf, w.Conf) {
				t.Errorf("Query =\n%+v\nwant\n%+v", got, w)
			}
			if got.MutualInfo < 0 {
				t.Errorf("MutualInfo %v < 0", got.MutualInfo)
			}
		})
	}
}

// TestQueryClampsMI uses samples whose MI is mathematically 0 but can round
// to a tiny negative number.
func TestQueryClampsMI(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		p := make([]float64, 2+r.IntN(5))
		s := 0.0
		for c := range p {
			p[c] = r.Float64()
			s += p[c]
		}
		for c := range p {
			p[c] /= s
		}
		samples := make([][]float64, 1+r.IntN(30))
		for j := range samples {
			samples[j] = p
		}
		q := Query(samples)
		if q.MutualInfo < 0 || q.MutualInfo > 1e-12 {
			t.Fatalf("identical samples %v: MutualInfo = %g", p, q.MutualInfo)
		}
	}
}

func TestQueryPanics(t *testing.T) {
	tests := []struct {
		name    string
		samples [][]float64
	}{
		{"no samples", nil},
		{"no classes", [][]float64{{}}},
		{"ragged", [][]float64{{0.5, 0.5}, {1}}},
	}
	for _, tc := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			Query(tc.samples)
		}()
	}
}

// single returns the QueryStats of one sample p (K = 1).
func single(p ...float64) QueryStats { return Query([][]float64{p}) }

func TestEvaluate(t *testing.T) {
	// Five binary queries, worked by hand (10 bins):
	//   p            label  pred  right  conf  bin  H(bits)
	//   (0.90,0.10)  0      0     yes    0.90  8    0.46900
	//   (0.95,0.05)  1      0     no     0.95  9    0.28640
	//   (0.30,0.70)  1      1     yes    0.70  6    0.88129
	//   (0.65,0.35)  1      0     no     0.65  6    0.93407
	//   (0.50,0.50)  0      0     yes    0.50  4    1
	// ECE = (1*|1-0.5| + 2*|0.5-0.675| + 1*|1-0.9| + 1*|0-0.95|)/5 = 0.38.
	// NLL = -(ln 0.9 + ln 0.05 + ln 0.7 + ln 0.35 + ln 0.5)/5.
	// Brier = (0.02 + 1.805 + 0.18 + 0.845 + 0.5)/5 = 0.67.
	// AUROC: wrong entropies {0.286, 0.934} vs right {0.469, 0.881, 1}:
	// the pairs won by the wrong side are (0.934 > 0.469, 0.934 > 0.881),
	// 2 of 6.
	queries := []QueryStats{single(0.9, 0.1), single(0.95, 0.05), single(0.3, 0.7), single(0.65, 0.35), single(0.5, 0.5)}
	labels := []int{0, 1, 1, 1, 0}
	got := Evaluate(queries, labels, 10)
	want := Report{
		N: 5, Accuracy: 0.6, ECE: 0.38, NLL: 1.0401474076418347, Brier: 0.67, AUROCEntropy: 1.0 / 3,
		EntropyCorrect: 0.7834288309399913, EntropyIncorrect: 0.6102325062457237, MICorrect: 0, MIIncorrect: 0,
	}
	if !reportNear(got, want) {
		t.Errorf("Evaluate =\n%+v\nwant\n%+v", got, want)
	}
	// bins <= 0 means DefaultBins.
	if got0 := Evaluate(queries, labels, 0); !reportNear(got0, got) {
		t.Errorf("Evaluate(bins=0) = %+v, want %+v", got0, got)
	}
	// One bin: ECE = |accuracy - mean confidence| = |0.6 - 0.74|.
	if got1 := Evaluate(queries, labels, 1); !near(got1.ECE, 0.14) {
		t.Errorf("ECE with 1 bin = %.17g, want 0.14", got1.ECE)
	}
}

func reportNear(a, b Report) bool {
	return a.N == b.N && near(a.Accuracy, b.Accuracy) && near(a.ECE, b.ECE) && near(a.NLL, b.NLL) &&
		near(a.Brier, b.Brier) && near(a.AUROCEntropy, b.AUROCEntropy) &&
		near(a.EntropyCorrect, b.EntropyCorrect) && near(a.EntropyIncorrect, b.EntropyIncorrect) &&
		near(a.MICorrect, b.MICorrect) && near(a.MIIncorrect, b.MIIncorrect)
}

func TestEvaluateEdgeCases(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		queries []QueryStats
		labels  []int
		want    Report
	}{
		{"empty", nil, nil, Report{N: 0, Accuracy: nan, ECE: nan, NLL: nan, Brier: nan, AUROCEntropy: nan,
			EntropyCorrect: nan, EntropyIncorrect: nan, MICorrect: nan, MIIncorrect: nan}},
		{
			// All right: no AUROC, no incorrect group. Confidence 1 and
			// accuracy 1: perfectly calibrated.
			"all right, certain", []QueryStats{single(1, 0, 0), single(0, 0, 1)}, []int{0, 2},
			Report{N: 2, Accuracy: 1, ECE: 0, NLL: 0, Brier: 0, AUROCEntropy: nan,
				EntropyCorrect: 0, EntropyIncorrect: nan, MICorrect: 0, MIIncorrect: nan},
		},
		{
			// A certain miss: p(true) = 0 is clamped to 1e-12 in the NLL.
			"all wrong, certain", []QueryStats{single(1, 0)}, []int{1},
			Report{N: 1, Accuracy: 0, ECE: 1, NLL: 27.631021115928547, Brier: 2, AUROCEntropy: nan,
				EntropyCorrect: nan, EntropyIncorrect: 0, MICorrect: nan, MIIncorrect: 0},
		},
		{
			// MI group means: disagreeing samples (MI 1) answered wrongly,
			// agreeing samples (MI 0) answered rightly. Entropies 1 and 0.
			"MI groups", []QueryStats{Query([][]float64{{1, 0}, {0, 1}}), Query([][]float64{{0, 1}, {0, 1}})}, []int{1, 1},
			Report{N: 2, Accuracy: 0.5, ECE: 0.25, NLL: (math.Ln2 + 0) / 2, Brier: 0.25, AUROCEntropy: 1,
				EntropyCorrect: 0, EntropyIncorrect: 1, MICorrect: 0, MIIncorrect: 1},
		},
	}
	for _, tc := range tests {
		if got := Evaluate(tc.queries, tc.labels, 10); !reportNear(got, tc.want) {
			t.Errorf("%s: Evaluate =\n%+v\nwant\n%+v", tc.name, got, tc.want)
		}
	}
}

func TestEvaluatePanics(t *testing.T) {
	q := []QueryStats{single(0.5, 0.5)}
	tests := []struct {
		name   string
		labels []int
	}{
		{"too few labels", nil},
		{"too many labels", []int{0, 1}},
		{"label too large", []int{2}},
		{"negative label", []int{-1}},
	}
	for _, tc := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			Evaluate(q, tc.labels, 10)
		}()
	}
}

func TestBinIndex(t *testing.T) {
	tests := []struct {
		conf float64
		m    int
		want int
	}{
		{0, 10, 0},
		{-0.5, 10, 0},
		{math.NaN(), 10, 0},
		{1e-300, 10, 0},
		{0.1, 10, 0}, // upper edge belongs to the lower bin
		{math.Nextafter(0.1, 1), 10, 1},
		{0.3, 10, 2},
		{0.7, 10, 6},
		{math.Nextafter(0.7, 1), 10, 7},
		{0.95, 10, 9},
		{1, 10, 9},
		{1.5, 10, 9},
		{1.0 / 3, 3, 0},
		{2.0 / 3, 3, 1},
		{math.Nextafter(2.0/3, 1), 3, 2},
		{0.5, 1, 0},
		{1, 1, 0},
	}
	for _, tc := range tests {
		if got := binIndex(tc.conf, tc.m); got != tc.want {
			t.Errorf("binIndex(%v, %d) = %d, want %d", tc.conf, tc.m, got, tc.want)
		}
	}
	// Exhaustive consistency with the documented edges.
	r := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		m := 1 + r.IntN(20)
		c := r.Float64()
		if r.IntN(4) == 0 { // hit edges exactly
			c = float64(r.IntN(m+1)) / float64(m)
		}
		b := binIndex(c, m)
		lo, hi := float64(b)/float64(m), float64(b+1)/float64(m)
		if !(c <= hi && (c > lo || b == 0)) {
			t.Fatalf("binIndex(%v, %d) = %d, bin is (%v, %v]", c, m, b, lo, hi)
		}
	}
}

func TestReliabilityBins(t *testing.T) {
	queries := []QueryStats{single(0.9, 0.1), single(0.95, 0.05), single(0.3, 0.7), single(0.65, 0.35), single(0.5, 0.5)}
	labels := []int{0, 1, 1, 1, 0}
	bins := ReliabilityBins(queries, labels, 5)
	nan := math.NaN()
	want := []Bin{
		{Lo: 0, Hi: 0.2, Count: 0, Accuracy: nan, Confidence: nan},
		{Lo: 0.2, Hi: 0.4, Count: 0, Accuracy: nan, Confidence: nan},
		{Lo: 0.4, Hi: 0.6, Count: 1, Accuracy: 1, Confidence: 0.5},
		{Lo: 0.6, Hi: 0.8, Count: 2, Accuracy: 0.5, Confidence: 0.675},
		{Lo: 0.8, Hi: 1, Count: 2, Accuracy: 0.5, Confidence: 0.925},
	}
	if len(bins) != len(want) {
		t.Fatalf("got %d bins, want %d", len(bins), len(want))
	}
	for b := range want {
		g, w := bins[b], want[b]
		if g.Lo != w.Lo || g.Hi != w.Hi || g.Count != w.Count || !near(g.Accuracy, w.Accuracy) || !near(g.Confidence, w.Confidence) {
			t.Errorf("bin %d = %+v, want %+v", b, g, w)
		}
	}
	if got := ReliabilityBins(nil, nil, 0); len(got) != DefaultBins {
		t.Errorf("ReliabilityBins(bins=0) has %d bins, want %d", len(got), DefaultBins)
	}
}

// bruteAUROC counts every (positive, negative) pair.
func bruteAUROC(scores []float64, positive []bool) float64 {
	var won float64
	var pairs int
	for i := range scores {
		if !positive[i] {
			continue
		}
		for j := range scores {
			if positive[j] {
				continue
			}
			pairs++
			switch {
			case scores[i] > scores[j]:
				won++
			case scores[i] == scores[j]:
				won += 0.5
			}
		}
	}
	if pairs == 0 {
		return math.NaN()
	}
	return won / float64(pairs)
}

func TestAUROC(t *testing.T) {
	tests := []struct {
		scores   []float64
		positive []bool
		want     float64
	}{
		{[]float64{0.1, 0.9}, []bool{false, true}, 1},
		{[]float64{0.1, 0.9}, []bool{true, false}, 0},
		{[]float64{0.5, 0.5}, []bool{true, false}, 0.5},
		{[]float64{1, 2, 3, 4}, []bool{false, true, false, true}, 0.75},
		{[]float64{1, 1, 2, 2}, []bool{false, true, true, false}, 0.5},
		{[]float64{1, 2}, []bool{true, true}, math.NaN()},
		{[]float64{1, 2}, []bool{false, false}, math.NaN()},
		{nil, nil, math.NaN()},
		{[]float64{1, math.NaN()}, []bool{true, false}, math.NaN()},
	}
	for _, tc := range tests {
		if got := AUROC(tc.scores, tc.positive); !near(got, tc.want) {
			t.Errorf("AUROC(%v, %v) = %v, want %v", tc.scores, tc.positive, got, tc.want)
		}
	}
	// Random data with many ties against the brute-force pair count.
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + r.IntN(80)
		scores := make([]float64, n)
		positive := make([]bool, n)
		levels := 1 + r.IntN(12)
		for i := range scores {
			scores[i] = float64(r.IntN(levels)) / 4
			positive[i] = r.IntN(3) == 0
		}
		got, want := AUROC(scores, positive), bruteAUROC(scores, positive)
		if !near(got, want) {
			t.Fatalf("trial %d: AUROC = %v, brute force %v (scores %v positive %v)", trial, got, want, scores, positive)
		}
	}
}

func TestAUROCPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on length mismatch")
		}
	}()
	AUROC([]float64{1}, nil)
}

func TestQueryDoesNotAlias(t *testing.T) {
	samples := [][]float64{{0.2, 0.8}}
	q := Query(samples)
	q.Mean[0] = 9
	if !reflect.DeepEqual(samples, [][]float64{{0.2, 0.8}}) {
		t.Errorf("Query result aliases its input")
	}
}

func BenchmarkQuery(b *testing.B) {
	const k, nc = 100, 3
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([][]float64, k)
	for j := range samples {
		p := make([]float64, nc)
		s := 0.0
		for c := range p {
			p[c] = r.Float64()
			s += p[c]
		}
		for c := range p {
			p[c] /= s
		}
		samples[j] = p
	}
	b.ReportAllocs()
	for b.Loop() {
		Query(samples)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1000
	queries := make([]QueryStats, n)
	labels := make([]int, n)
	for i := range queries {
		a := r.Float64()
		queries[i] = Query([][]float64{{a, (1 - a) / 2, (1 - a) / 2}})
		labels[i] = r.IntN(3)
	}
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(queries, labels, 10)
	}
}
