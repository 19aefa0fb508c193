package metrics_test

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/metrics"
)

func ExampleQuery() {
	// Four sampled predictions of a two-class model for one input.
	q := metrics.Query([][]float64{{0.8, 0.2}, {0.6, 0.4}, {0.8, 0.2}, {0.6, 0.4}})
	fmt.Printf("mean %.2f pred %d conf %.2f\n", q.Mean, q.Pred, q.Conf)
	fmt.Printf("entropy %.4f bits, expected entropy %.4f, MI %.4f\n", q.Entropy, q.ExpectedEntropy, q.MutualInfo)
	fmt.Printf("std %.2f (mean %.2f)\n", q.Std, q.StdMean)

	// Two certain samples that disagree: all uncertainty is epistemic.
	d := metrics.Query([][]float64{{1, 0}, {0, 1}})
	fmt.Printf("disagreeing: entropy %.0f bit, MI %.0f bit\n", d.Entropy, d.MutualInfo)
	// Output:
	// mean [0.70 0.30] pred 0 conf 0.70
	// entropy 0.8813 bits, expected entropy 0.8464, MI 0.0349
	// std [0.10 0.10] (mean 0.10)
	// disagreeing: entropy 1 bit, MI 1 bit
}

func ExampleEvaluate() {
	samples := [][][]float64{
		{{0.9, 0.1}, {0.9, 0.1}},   // confident, right
		{{0.2, 0.8}, {0.4, 0.6}},   // fairly confident, right
		{{0.6, 0.4}, {0.4, 0.6}},   // undecided, wrong
		{{0.95, 0.05}, {0.5, 0.5}}, // samples disagree, wrong
	}
	labels := []int{0, 1, 1, 1}
	queries := make([]metrics.QueryStats, len(samples))
	for i, s := range samples {
		queries[i] = metrics.Query(s)
	}
	r := metrics.Evaluate(queries, labels, metrics.DefaultBins)
	fmt.Printf("N %d accuracy %.2f ECE %.4f NLL %.4f Brier %.4f\n", r.N, r.Accuracy, r.ECE, r.NLL, r.Brier)
	fmt.Printf("AUROC(entropy) %.2f\n", r.AUROCEntropy)
	fmt.Printf("entropy right %.3f wrong %.3f; MI right %.3f wrong %.3f\n",
		r.EntropyCorrect, r.EntropyIncorrect, r.MICorrect, r.MIIncorrect)
	// Output:
	// N 4 accuracy 0.50 ECE 0.4062 NLL 0.6115 Brier 0.4378
	// AUROC(entropy) 0.75
	// entropy right 0.675 wrong 0.924; MI right 0.017 wrong 0.117
}

func ExampleReliabilityBins() {
	queries := []metrics.QueryStats{
		metrics.Query([][]float64{{0.9, 0.1}}),
		metrics.Query([][]float64{{0.3, 0.7}}),
		metrics.Query([][]float64{{0.65, 0.35}}),
	}
	for _, b := range metrics.ReliabilityBins(queries, []int{0, 1, 1}, 5) {
		if b.Count > 0 {
			fmt.Printf("(%.1f, %.1f]: n=%d acc=%.2f conf=%.3f\n", b.Lo, b.Hi, b.Count, b.Accuracy, b.Confidence)
		}
	}
	// Output:
	// (0.6, 0.8]: n=2 acc=0.50 conf=0.675
	// (0.8, 1.0]: n=1 acc=1.00 conf=0.900
}
