package convtrain

import (
	"fmt"
	"math"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
)

// SoftmaxGridSteps is the steps per octave of SoftmaxGrid: 16, so that
// neighbouring temperatures differ by 4.4%. At 4 steps (19%; the grid
// before) one step moved the Fashion-MNIST model's ECE on its carved rows
// from 0.0093 to 0.0235 (docs/calibration.md).
const SoftmaxGridSteps = 16

// SoftmaxGrid returns the candidate softmax temperatures FitSoftmax
// chooses among for a model with vote margin T: T * 2^(e/16) for e =
// -128..16 (T/256 to 2T), so that the grid scales with the clipped class
// sums.
func SoftmaxGrid(T int) []float64 {
	g := make([]float64, 0, 9*SoftmaxGridSteps+1)
	for e := -8 * SoftmaxGridSteps; e <= SoftmaxGridSteps; e++ {
		g = append(g, float64(T)*math.Pow(2, float64(e)/SoftmaxGridSteps))
	}
	return g
}

// FitSoftmax returns the softmax mapping (ptm.Softmax) whose temperature,
// among SoftmaxGrid(h.T), minimizes the negative log-likelihood of the
// K-sample predictive mean on held-out rows: sums[r] holds row r's K
// samples of raw class sums (K*Classes, sample-major, as Sampler.RunSets
// and Core.RunSets return them) and labels[r] its class. The rows must
// not be training rows of the model (the caller holds them out).
func FitSoftmax(h *conv.Head, sums [][]int32, K int, labels []int) (ptm.Mapping, error) {
	switch {
	case len(sums) == 0:
		return ptm.Mapping{}, fmt.Errorf("convtrain: no held-out rows to fit the softmax temperature on")
	case len(sums) != len(labels):
		return ptm.Mapping{}, fmt.Errorf("convtrain: %d rows of sums but %d labels", len(sums), len(labels))
	case K < 1:
		return ptm.Mapping{}, fmt.Errorf("convtrain: K = %d, want >= 1", K)
	}
	for r, s := range sums {
		if len(s) < K*h.Classes {
			return ptm.Mapping{}, fmt.Errorf("convtrain: row %d has %d class sums, want K x classes = %d", r, len(s), K*h.Classes)
		}
		if labels[r] < 0 || labels[r] >= h.Classes {
			return ptm.Mapping{}, fmt.Errorf("convtrain: row %d label %d outside 0..%d", r, labels[r], h.Classes-1)
		}
	}
	best, bestNLL := ptm.Mapping{}, math.Inf(1)
	for _, t := range SoftmaxGrid(h.T) {
		mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: t}
		if nll := NLL(h, sums, K, labels, mp); nll < bestNLL {
			best, bestNLL = mp, nll
		}
	}
	return best, nil
}

// NLL is the mean negative log-likelihood of the K-sample predictive mean
// under mapping mp (probabilities floored at metrics.NLLFloor).
func NLL(h *conv.Head, sums [][]int32, K int, labels []int, mp ptm.Mapping) float64 {
	var tot float64
	for r, s := range sums {
		var p float64
		for _, q := range h.Probs(s, K, mp) {
			p += q[labels[r]]
		}
		tot -= math.Log(max(p/float64(K), metrics.NLLFloor))
	}
	return tot / float64(len(sums))
}
