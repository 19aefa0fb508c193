package experiments

import (
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/metrics"
)

// CalibratedECE is the noise floor of the top-label ECE on a handful of
// rows: the mean ECE (bins bins) that a perfectly calibrated model with
// exactly these confidences would score. Each draw makes every query
// right with probability equal to its confidence (a wrong query gets a
// label other than its prediction) and scores the ECE; the mean over
// draws is returned. Queries need at least two classes.
func CalibratedECE(qs []metrics.QueryStats, bins, draws int, seed uint64) float64 {
	if len(qs) == 0 || draws < 1 {
		return 0
	}
	rng := rand.New(rand.NewPCG(seed, 0x45434531))
	labels := make([]int, len(qs))
	sum := 0.0
	for range draws {
		for i, q := range qs {
			labels[i] = q.Pred
			if rng.Float64() >= q.Conf {
				labels[i] = (q.Pred + 1 + rng.IntN(len(q.Mean)-1)) % len(q.Mean)
			}
		}
		sum += metrics.Evaluate(qs, labels, bins).ECE
	}
	return sum / float64(draws)
}
