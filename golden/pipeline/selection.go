package pipeline

import (
	"fmt"
	"math"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Selection is the rule RepeatedSplits uses to choose a grid candidate
// from its scores on the validation rows (rows carved from the training
// rows; the test rows play no part in any choice).
type Selection string

const (
	// SelectAccuracy: the highest validation accuracy, ties broken by the
	// lower validation NLL (the protocol's original rule).
	SelectAccuracy Selection = "accuracy"
	// SelectNLL: the lowest validation NLL under the protocol's mapping
	// (softmax at temperature 1 by default), ties broken by accuracy.
	SelectNLL Selection = "nll"
	// SelectFittedNLL: the lowest validation NLL after the mapping's
	// parameter (the softmax temperature) is fitted on the validation rows
	// themselves, so that candidates are compared at their best
	// temperature, as the chosen one will be after Calibrate.
	SelectFittedNLL Selection = "nll-fit"
	// SelectAUROC: among the candidates whose validation accuracy is within
	// AccuracyFloor of the best, the highest validation AUROC of the
	// predictive entropy as a detector of wrong predictions (undefined
	// AUROCs, when a candidate makes no or only wrong predictions, rank
	// last); ties broken by the lower NLL.
	SelectAUROC Selection = "auroc"
)

// AccuracyFloor is how far below the best validation accuracy a candidate
// may be and still be chosen by SelectAUROC.
const AccuracyFloor = 0.01

// Selections lists every rule, the default first.
var Selections = []Selection{SelectAccuracy, SelectNLL, SelectFittedNLL, SelectAUROC}

// DefaultSelection is the rule RepeatedSplits uses when ProtocolConfig's
// Select is empty.
var DefaultSelection = SelectAccuracy

// ParseSelection checks a rule name ("" = DefaultSelection).
func ParseSelection(s string) (Selection, error) {
	if s == "" {
		return DefaultSelection, nil
	}
	for _, r := range Selections {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("pipeline: unknown selection rule %q (want accuracy, nll, nll-fit or auroc)", s)
}

// ValScore is one candidate's score on the validation rows: the report
// under the protocol's mapping and the report under the mapping whose
// parameter is fitted on the same rows (Fitted, with FittedReport).
type ValScore struct {
	Report       metrics.Report
	Fitted       ptm.Mapping
	FittedReport metrics.Report
}

// Choose returns the index of the candidate the rule picks from the
// validation scores (the first on exact ties; -1 for no scores).
func (s Selection) Choose(v []ValScore) int {
	if len(v) == 0 {
		return -1
	}
	bestAcc := math.Inf(-1)
	for _, x := range v {
		bestAcc = math.Max(bestAcc, x.Report.Accuracy)
	}
	// better reports whether a beats b under the rule.
	better := func(a, b ValScore) bool {
		switch s {
		case SelectNLL:
			if a.Report.NLL != b.Report.NLL {
				return a.Report.NLL < b.Report.NLL
			}
			return a.Report.Accuracy > b.Report.Accuracy
		case SelectFittedNLL:
			if a.FittedReport.NLL != b.FittedReport.NLL {
				return a.FittedReport.NLL < b.FittedReport.NLL
			}
			return a.Report.Accuracy > b.Report.Accuracy
		case SelectAUROC:
			okA, okB := a.Report.Accuracy >= bestAcc-AccuracyFloor-1e-12, b.Report.Accuracy >= bestAcc-AccuracyFloor-1e-12
			if okA != okB {
				return okA
			}
			ua, ub := finiteOr(a.Report.AUROCEntropy, -1), finiteOr(b.Report.AUROCEntropy, -1)
			if ua != ub {
				return ua > ub
			}
			return a.Report.NLL < b.Report.NLL
		default: // SelectAccuracy
			if a.Report.Accuracy != b.Report.Accuracy {
				return a.Report.Accuracy > b.Report.Accuracy
			}
			return a.Report.NLL < b.Report.NLL
		}
	}
	best := 0
	for i := 1; i < len(v); i++ {
		if better(v[i], v[best]) {
			best = i
		}
	}
	return best
}

func finiteOr(v, def float64) float64 {
	if math.IsNaN(v) {
		return def
	}
	return v
}

// Validate scores f on the validation rows: K samples per row (sampler seed
// seed), summarised under mp and under mp's kind with its parameter fitted
// by NLL on the same samples (for kinds FitMapping supports; otherwise
// Fitted = mp).
func Validate(f *modelfile.File, d *Data, rows []int, K int, seed uint64, mp ptm.Mapping, bins int) (ValScore, error) {
	if err := mp.Validate(); err != nil {
		return ValScore{}, err
	}
	var p pooled
	if err := p.add(f, d, rows, K, seed); err != nil {
		return ValScore{}, err
	}
	return scorePooled(&p, mp, bins)
}

// scorePooled scores pooled samples as Validate does.
func scorePooled(p *pooled, mp ptm.Mapping, bins int) (ValScore, error) {
	return scorePooledProgress(p, mp, bins, nil)
}

// scorePooledProgress is scorePooled calling progress (if set) as its
// passes over the rows go (the report under mp, one pass per candidate
// parameter of mp's kind, the report under the fitted one): rows done of
// passes x rows, every passStep rows.
func scorePooledProgress(p *pooled, mp ptm.Mapping, bins int, progress func(done, total int)) (ValScore, error) {
	passes, pass := 2, 0
	if mp.Kind == ptm.Softmax || mp.Kind == ptm.Vote {
		cands, err := mappingCandidates(mp.Kind, 0)
		if err != nil {
			return ValScore{}, err
		}
		passes += len(cands)
	}
	if progress != nil {
		n := len(p.sums)
		p.rowsDone = func(row int) {
			progress(pass*n+row, passes*n)
			if row == n {
				pass++
			}
		}
		defer func() { p.rowsDone = nil }()
	}
	report := func(mp ptm.Mapping) metrics.Report {
		qs := make([]metrics.QueryStats, len(p.sums))
		for i, sums := range p.sums {
			qs[i] = metrics.Query(p.models[i].SumsToProbs(sums, p.K, mp))
			p.tick(i)
		}
		return metrics.Evaluate(qs, p.labels, bins)
	}
	v := ValScore{Report: report(mp), Fitted: mp}
	if mp.Kind == ptm.Softmax || mp.Kind == ptm.Vote {
		fm, err := p.fit(mp.Kind)
		if err != nil {
			return ValScore{}, err
		}
		v.Fitted = fm
	}
	v.FittedReport = report(v.Fitted)
	return v, nil
}
