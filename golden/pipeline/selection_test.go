package pipeline

import (
	"math"
	"testing"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
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

// TestScoreGridCV: inner cross-validation scores every training row once
// (never a test row), the chosen candidate's out-of-fold samples give the
// same calibrated mapping and test figures as Calibrate's own folds, and
// RepeatedSplits with CV chooses by the pooled out-of-fold scores.
func TestScoreGridCV(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	enc := DefaultEncoding
	grid := []Candidate{
		{Params: ptm.Params{Clauses: 10, T: 5, S: 2, N: 100, Epochs: 5, Feedback: ptm.ConsistentFeedback}, Thresholds: 4, Encoding: &enc},
		{Params: ptm.Params{Clauses: 20, T: 10, S: 2, N: 100, Epochs: 5, Feedback: ptm.ConsistentFeedback}, Thresholds: 4, Encoding: &enc},
	}
	cfg := ProtocolConfig{Splits: 1, First: 3, K: 100, Grid: grid, Calibrate: true, CV: true}
	val, oof, err := ScoreGridCV(d, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := d.Split(0.2, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{}
	for _, r := range train {
		want[d.Y[r]]++
	}
	for c := range grid {
		if oof[c].Len() != len(train) || val[c].Report.N != len(train) {
			t.Fatalf("candidate %d: %d out-of-fold rows, %d scored, want the %d training rows (test rows %d)", c, oof[c].Len(), val[c].Report.N, len(train), len(test))
		}
		got := map[int]int{}
		for _, y := range oof[c].Labels() {
			got[y]++
		}
		for y, n := range want {
			if got[y] != n {
				t.Errorf("candidate %d: class %d has %d out-of-fold rows, want %d", c, y, got[y], n)
			}
		}
	}
	best := SelectAccuracy.Choose(val)
	a, err := FinishSplit(d, cfg, 3, grid[best])
	if err != nil {
		t.Fatal(err)
	}
	b, err := FinishSplitOOF(d, cfg, 3, grid[best], oof[best])
	if err != nil {
		t.Fatal(err)
	}
	if a.Mapping != b.Mapping || a.Report != b.Report {
		t.Errorf("calibrated by Calibrate: %+v %+v; from ScoreGridCV's samples: %+v %+v", a.Mapping, a.Report, b.Mapping, b.Report)
	}
	rs, err := RepeatedSplits(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Chosen.Params != grid[best].Params || rs[0].Mapping != a.Mapping || rs[0].Report != a.Report || len(rs[0].Val) != len(grid) || rs[0].Val[best].Report != val[best].Report {
		t.Errorf("RepeatedSplits with CV: chose %+v mapping %+v, want %+v %+v", rs[0].Chosen.Params, rs[0].Mapping, grid[best].Params, a.Mapping)
	}
}
