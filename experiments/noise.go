package experiments

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/ptmhw/ptm/golden/metrics"
)

// RankNoise describes how much a pooled AUROC(entropy) for wrong-vs-right
// rests on a few rows (docs/uncertainty.md section 11): the standard
// deviation and 95% interval of the AUROC over bootstrap resamples of the
// rows (B resamples, a seeded PCG), and, per wrong row, the share of
// right rows whose entropy is lower (ties count half), sorted: the
// AUROC is the mean of these shares, so one wrong row moving from share
// a to b moves it by (b-a)/wrong.
func RankNoise(qs []metrics.QueryStats, labels []int, B int) string {
	var right, wrong []float64
	for i, q := range qs {
		if q.Pred == labels[i] {
			right = append(right, q.Entropy)
		} else {
			wrong = append(wrong, q.Entropy)
		}
	}
	if len(right) == 0 || len(wrong) == 0 {
		return "no wrong or no right rows: AUROC undefined"
	}
	sort.Float64s(right)
	shares := make([]string, len(wrong))
	sh := make([]float64, len(wrong))
	for i, h := range wrong {
		lo := sort.SearchFloat64s(right, h)
		hi := sort.Search(len(right), func(j int) bool { return right[j] > h })
		sh[i] = (float64(lo) + 0.5*float64(hi-lo)) / float64(len(right))
	}
	sort.Float64s(sh)
	for i, v := range sh {
		shares[i] = fmt.Sprintf("%.3f", v)
	}
	rng := rand.New(rand.NewPCG(1, 0x6e6f_6973_6521_2121)) // "noise!!!"
	var vals []float64
	bq := make([]metrics.QueryStats, len(qs))
	bl := make([]int, len(qs))
	for range B {
		for i := range bq {
			j := rng.IntN(len(qs))
			bq[i], bl[i] = qs[j], labels[j]
		}
		if a := metrics.Evaluate(bq, bl, 10).AUROCEntropy; !math.IsNaN(a) {
			vals = append(vals, a)
		}
	}
	sort.Float64s(vals)
	st := Describe(vals)
	a := metrics.Evaluate(qs, labels, 10).AUROCEntropy
	return fmt.Sprintf("AUROC(entropy) %.4f from %d wrong and %d right rows; bootstrap over rows (%d resamples): sd %.4f, 95%% interval %.3f..%.3f; Hanley-McNeil SE %.3f. "+
		"Per wrong row, the share of right rows ranked below it (the AUROC is their mean): %s",
		a, len(wrong), len(right), len(vals), st.Std, vals[len(vals)*25/1000], vals[(len(vals)*975)/1000], AUROCStdErr(a, len(wrong), len(right)), strings.Join(shares, " "))
}
