package baseline

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/metrics"
)

// Query draws K sampled class-probability vectors for x from c and
// summarises them with golden/metrics (predictive mean, entropy and mutual
// information in bits, per-class standard deviation), exactly as the PTM's
// samples are summarised. K must be at least 1.
func Query(c Classifier, x []float64, K int) (metrics.QueryStats, error) {
	if K < 1 {
		return metrics.QueryStats{}, fmt.Errorf("baseline: K = %d samples, want >= 1", K)
	}
	return metrics.Query(c.Samples(x, K)), nil
}

// Evaluate queries c on every row of X with K samples each (see Query) and
// scores the queries against the labels y with metrics.Evaluate, using bins
// equal-width ECE bins (metrics.DefaultBins if bins <= 0). It returns the
// report and the per-row statistics. Labels must be valid class indices.
func Evaluate(c Classifier, X [][]float64, y []int, K, bins int) (metrics.Report, []metrics.QueryStats, error) {
	if len(X) != len(y) {
		return metrics.Report{}, nil, fmt.Errorf("baseline: %d rows but %d labels", len(X), len(y))
	}
	qs := make([]metrics.QueryStats, len(X))
	for i, x := range X {
		q, err := Query(c, x, K)
		if err != nil {
			return metrics.Report{}, nil, err
		}
		if y[i] < 0 || y[i] >= len(q.Mean) {
			return metrics.Report{}, nil, fmt.Errorf("baseline: label %d of row %d outside [0, %d)", y[i], i, len(q.Mean))
		}
		qs[i] = q
	}
	return metrics.Evaluate(qs, y, bins), qs, nil
}
