package pipeline

import (
	"math"
	"testing"

	"github.com/ptmhw/ptm/golden/metrics"
)

// TestSelectionChoose: each rule picks the candidate it promises from
// hand-made validation scores.
func TestSelectionChoose(t *testing.T) {
	sc := func(acc, nll, auroc, fittedNLL float64) ValScore {
		return ValScore{Report: metrics.Report{Accuracy: acc, NLL: nll, AUROCEntropy: auroc}, FittedReport: metrics.Report{NLL: fittedNLL}}
	}
	v := []ValScore{
		sc(0.95, 0.20, 0.80, 0.15),  // 0: most accurate, worst NLL
		sc(0.95, 0.18, 0.85, 0.16),  // 1: as accurate, lower NLL
		sc(0.945, 0.10, 0.95, 0.12), // 2: within the floor, best NLL and AUROC
		sc(0.90, 0.12, 0.99, 0.09),  // 3: below the floor, best AUROC, best fitted NLL
	}
	for _, c := range []struct {
		rule Selection
		want int
	}{{SelectAccuracy, 1}, {SelectNLL, 2}, {SelectFittedNLL, 3}, {SelectAUROC, 2}, {"", 1}} {
		if got := c.rule.Choose(v); got != c.want {
			t.Errorf("%q chose %d, want %d", c.rule, got, c.want)
		}
	}
	// An undefined AUROC (no wrong prediction) ranks last under auroc.
	v[2].Report.AUROCEntropy = math.NaN()
	if got := SelectAUROC.Choose(v); got != 1 {
		t.Errorf("auroc with NaN chose %d, want 1", got)
	}
	if got := SelectAccuracy.Choose(nil); got != -1 {
		t.Errorf("no scores: %d, want -1", got)
	}
	for _, name := range []string{"", "accuracy", "nll", "nll-fit", "auroc"} {
		if _, err := ParseSelection(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseSelection("test"); err == nil {
		t.Error("unknown rule accepted")
	}
}
