package metrics

import (
	"fmt"
	"math"
	"slices"
)

// DefaultBins is the number of ECE bins used when Evaluate or
// ReliabilityBins is given bins <= 0.
const DefaultBins = 10

// MaxBins bounds the ECE bins a caller may ask for (2^20: about 56 MiB of
// bins); more than the queries is already meaningless. Commands check it
// with CheckBins before anything is computed.
const MaxBins = 1 << 20

// CheckBins refuses a bin count outside 1..MaxBins.
func CheckBins(bins int) error {
	if bins < 1 || bins > MaxBins {
		return fmt.Errorf("metrics: %d ECE bins, want 1..%d", bins, MaxBins)
	}
	return nil
}

// IdenticalTol is the per-class standard deviation below which a query's
// samples count as identical in Report.Identical (it absorbs the rounding
// of the mean of K equal values).
const IdenticalTol = 1e-12

// NLLFloor is the smallest probability NLL uses: -ln(max(p, NLLFloor)).
const NLLFloor = 1e-12

// QueryStats summarises the K sampled predictions of one query.
type QueryStats struct {
	Mean            []float64 // predictive mean per class
	Entropy         float64   // H(Mean) in bits
	ExpectedEntropy float64   // mean over samples of H(p_j), bits
	MutualInfo      float64   // Entropy - ExpectedEntropy, clamped at 0
	Std             []float64 // population standard deviation over samples, per class
	StdMean         float64   // mean of Std over classes
	Pred            int       // argmax of Mean, lowest index on ties
	Conf            float64   // Mean[Pred]
}

// Entropy returns the Shannon entropy of p in bits, -sum p_i log2 p_i,
// treating entries p_i <= 0 as contributing 0 (0 log 0 = 0). p is used as
// given; it is not renormalised.
func Entropy(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log2(v)
		}
	}
	return h
}

// Query computes the paper's per-query metrics from K sampled probability
// vectors, samples[j][c] being sample j's probability of class c. Values
// are used as given (they are expected to be probability vectors).
//
// MutualInfo is Entropy - ExpectedEntropy, which is never negative for
// probability vectors (entropy is concave); the tiny negative values that
// floating-point rounding can produce, e.g. when all samples are identical,
// are clamped to 0.
//
// Query panics if there are no samples, no classes, or samples of different
// lengths.
func Query(samples [][]float64) QueryStats {
	k := len(samples)
	if k == 0 {
		panic("metrics.Query: no samples")
	}
	nc := len(samples[0])
	if nc == 0 {
		panic("metrics.Query: samples have no classes")
	}
	s := QueryStats{Mean: make([]float64, nc), Std: make([]float64, nc)}
	for j, p := range samples {
		if len(p) != nc {
			panic(fmt.Sprintf("metrics.Query: sample %d has %d classes, sample 0 has %d", j, len(p), nc))
		}
		for c, v := range p {
			s.Mean[c] += v
		}
		s.ExpectedEntropy += Entropy(p)
	}
	fk := float64(k)
	for c := range s.Mean {
		s.Mean[c] /= fk
	}
	s.ExpectedEntropy /= fk
	for _, p := range samples {
		for c, v := range p {
			d := v - s.Mean[c]
			s.Std[c] += d * d
		}
	}
	for c := range s.Std {
		s.Std[c] = math.Sqrt(s.Std[c] / fk)
		s.StdMean += s.Std[c]
	}
	s.StdMean /= float64(nc)
	s.Entropy = Entropy(s.Mean)
	s.MutualInfo = max(0, s.Entropy-s.ExpectedEntropy)
	s.Pred, s.Conf = 0, s.Mean[0]
	for c, v := range s.Mean {
		if v > s.Conf {
			s.Pred, s.Conf = c, v
		}
	}
	return s
}

// Report aggregates QueryStats over a labelled test set.
type Report struct {
	N                int     // number of queries
	Accuracy         float64 // fraction with Pred == label
	ECE              float64 // top-label expected calibration error (see package doc for bins)
	NLL              float64 // mean -ln max(Mean[label], NLLFloor), nats
	Brier            float64 // mean over queries of sum_c (Mean[c] - onehot(label)[c])^2, in [0, 2]
	AUROCEntropy     float64 // AUROC of Entropy as a score for "prediction is wrong"; NaN if all right or all wrong
	AUROCMI          float64 // AUROC of MutualInfo as a score for "prediction is wrong"; NaN if all right or all wrong
	Identical        float64 // fraction of queries whose K samples were all identical (StdMean < IdenticalTol)
	EntropyCorrect   float64 // mean Entropy of correct predictions; NaN if none
	EntropyIncorrect float64 // mean Entropy of incorrect predictions; NaN if none
	MICorrect        float64 // mean MutualInfo of correct predictions; NaN if none
	MIIncorrect      float64 // mean MutualInfo of incorrect predictions; NaN if none
}

// Evaluate scores queries against their true labels, using bins
// equal-width ECE bins (DefaultBins if bins <= 0). With no queries it
// returns N = 0 and NaN for every other field. It panics if len(labels) !=
// len(queries) or a label is not a valid index into its query's Mean.
func Evaluate(queries []QueryStats, labels []int, bins int) Report {
	checkLabels("Evaluate", queries, labels)
	nan := math.NaN()
	r := Report{N: len(queries)}
	if r.N == 0 {
		r.Accuracy, r.ECE, r.NLL, r.Brier, r.AUROCEntropy, r.AUROCMI, r.Identical = nan, nan, nan, nan, nan, nan, nan
		r.EntropyCorrect, r.EntropyIncorrect, r.MICorrect, r.MIIncorrect = nan, nan, nan, nan
		return r
	}
	wrong := make([]bool, r.N)
	entropy := make([]float64, r.N)
	mi := make([]float64, r.N)
	identical := 0
	var nRight, nWrong int
	var hRight, hWrong, miRight, miWrong float64
	for i, q := range queries {
		y := labels[i]
		entropy[i] = q.Entropy
		mi[i] = q.MutualInfo
		if q.StdMean < IdenticalTol {
			identical++
		}
		if q.Pred == y {
			nRight++
			hRight += q.Entropy
			miRight += q.MutualInfo
		} else {
			wrong[i] = true
			nWrong++
			hWrong += q.Entropy
			miWrong += q.MutualInfo
		}
		r.NLL -= math.Log(max(q.Mean[y], NLLFloor))
		for c, p := range q.Mean {
			if c == y {
				p -= 1
			}
			r.Brier += p * p
		}
	}
	n := float64(r.N)
	r.Accuracy = float64(nRight) / n
	r.NLL /= n
	r.Brier /= n
	r.AUROCEntropy = AUROC(entropy, wrong)
	r.AUROCMI = AUROC(mi, wrong)
	r.Identical = float64(identical) / n
	r.EntropyCorrect, r.MICorrect = meanOrNaN(hRight, nRight), meanOrNaN(miRight, nRight)
	r.EntropyIncorrect, r.MIIncorrect = meanOrNaN(hWrong, nWrong), meanOrNaN(miWrong, nWrong)
	for _, b := range ReliabilityBins(queries, labels, bins) {
		if b.Count > 0 {
			r.ECE += float64(b.Count) / n * math.Abs(b.Accuracy-b.Confidence)
		}
	}
	return r
}

func meanOrNaN(sum float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func checkLabels(fn string, queries []QueryStats, labels []int) {
	if len(labels) != len(queries) {
		panic(fmt.Sprintf("metrics.%s: %d queries but %d labels", fn, len(queries), len(labels)))
	}
	for i, y := range labels {
		if y < 0 || y >= len(queries[i].Mean) {
			panic(fmt.Sprintf("metrics.%s: label %d of query %d outside [0,%d)", fn, y, i, len(queries[i].Mean)))
		}
	}
}

// Bin is one bin of a reliability diagram.
type Bin struct {
	Lo, Hi     float64 // confidence range (Lo, Hi]; bin 0 also holds Lo = 0
	Count      int     // number of queries whose Conf falls in the bin
	Accuracy   float64 // fraction of them predicted correctly; NaN if Count == 0
	Confidence float64 // their mean Conf; NaN if Count == 0
}

// ReliabilityBins sorts the queries into bins equal-width confidence bins
// over [0, 1] (DefaultBins if bins <= 0) by their top-label confidence Conf,
// with the bin edges described in the package documentation, and returns
// each bin's count, accuracy and mean confidence, for reliability diagrams.
// It panics under the same conditions as Evaluate.
func ReliabilityBins(queries []QueryStats, labels []int, bins int) []Bin {
	checkLabels("ReliabilityBins", queries, labels)
	if bins <= 0 {
		bins = DefaultBins
	}
	out := make([]Bin, bins)
	right := make([]int, bins)
	conf := make([]float64, bins)
	for i, q := range queries {
		b := binIndex(q.Conf, bins)
		out[b].Count++
		conf[b] += q.Conf
		if q.Pred == labels[i] {
			right[b]++
		}
	}
	for b := range out {
		out[b].Lo, out[b].Hi = binEdge(b, bins), binEdge(b+1, bins)
		out[b].Accuracy = meanOrNaN(float64(right[b]), out[b].Count)
		out[b].Confidence = meanOrNaN(conf[b], out[b].Count)
	}
	return out
}

// binEdge returns the lower edge of bin b of m: float64(b)/float64(m).
func binEdge(b, m int) float64 { return float64(b) / float64(m) }

// binIndex returns the bin of confidence c among m bins: the b with
// binEdge(b) < c <= binEdge(b+1); 0 for c <= 0 (or NaN) and m-1 for c >= 1.
func binIndex(c float64, m int) int {
	if !(c > 0) {
		return 0
	}
	if c >= 1 {
		return m - 1
	}
	b := min(max(int(math.Ceil(c*float64(m)))-1, 0), m-1)
	// c*m may round across an edge; settle against the exact edges.
	for b > 0 && c <= binEdge(b, m) {
		b--
	}
	for b < m-1 && c > binEdge(b+1, m) {
		b++
	}
	return b
}

// AUROC returns the area under the ROC curve of scores as a detector of
// positive[i]: the probability that a random positive scores higher than a
// random negative, with ties counted as 1/2 (the Mann-Whitney statistic
// divided by nPos*nNeg). Ties are exact float64 equality. It returns NaN
// when there are no positives or no negatives, or when a score is NaN. It
// panics if the slices differ in length.
func AUROC(scores []float64, positive []bool) float64 {
	if len(scores) != len(positive) {
		panic(fmt.Sprintf("metrics.AUROC: %d scores but %d labels", len(scores), len(positive)))
	}
	idx := make([]int, len(scores))
	var nPos, nNeg int
	for i, s := range scores {
		if math.IsNaN(s) {
			return math.NaN()
		}
		idx[i] = i
		if positive[i] {
			nPos++
		} else {
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return math.NaN()
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	// Twice the number of (positive, negative) pairs won by the positive,
	// counting a tie as one half: exact in integers.
	var twice int64
	negBelow := 0
	for i := 0; i < len(idx); {
		j := i
		pos, neg := 0, 0
		for ; j < len(idx) && scores[idx[j]] == scores[idx[i]]; j++ {
			if positive[idx[j]] {
				pos++
			} else {
				neg++
			}
		}
		twice += int64(pos) * int64(2*negBelow+neg)
		negBelow += neg
		i = j
	}
	return float64(twice) / (2 * float64(nPos) * float64(nNeg))
}
