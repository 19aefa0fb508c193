package modelfile

import (
	"fmt"
	"math"

	"github.com/ptmhw/ptm/golden/ptm"
)

// Tuning records how `ptm train` chose the model's hyper-parameters when
// the user left them to it (the optional "tuning" header field; absent in
// files trained with explicit flags, with --no-tune, or written before it
// existed): the grid, the candidates scored by inner cross-validation on
// the training rows, the chosen candidate, its validation score, the
// selection rule and the budget.
type Tuning struct {
	// Candidates is the number of grid candidates considered (after the
	// user's fixed flags were applied and duplicates dropped).
	Candidates int `json:"candidates"`
	// Scored is the number of candidates scored within the budget (0: the
	// budget admitted fewer than two, and the first candidate was trained
	// unscored).
	Scored int `json:"scored"`
	// Chosen is the chosen candidate; it equals the model's parameters.
	Chosen TunedChoice `json:"chosen"`
	// Score is the chosen candidate's validation score (nil when Scored is
	// 0).
	Score *TuneScore `json:"score,omitempty"`
	// Rule names the selection rule and the validation scheme, e.g.
	// "accuracy (ties: NLL), inner 4-fold CV on the training rows".
	Rule string `json:"rule"`
	// Budget describes the budget, e.g. "10m0s (nominal)".
	Budget string `json:"budget"`
	// Work is the estimated work of the candidates scored, in TA visits
	// (pipeline's cost model); BudgetWork the budget in the same unit.
	Work       float64 `json:"work"`
	BudgetWork float64 `json:"budget_work"`
	// Fixed lists the hyper-parameters the user fixed by flags (kept, not
	// tuned), e.g. ["clauses", "T"].
	Fixed []string `json:"fixed,omitempty"`
}

// TunedChoice is the tuned part of a candidate.
type TunedChoice struct {
	Clauses    int     `json:"clauses"`
	T          int     `json:"T"`
	S          float64 `json:"s"`
	Epochs     int     `json:"epochs"`
	Thresholds int     `json:"thresholds"`
	// Bandwidth is the input encoding's threshold jitter (feature standard
	// deviations); Sets the number of threshold sets (1: plain).
	Bandwidth float64 `json:"bandwidth"`
	Sets      int     `json:"sets"`
}

// TuneScore is a validation score: pooled over the out-of-fold rows.
type TuneScore struct {
	Accuracy float64 `json:"accuracy"`
	NLL      float64 `json:"nll"`
	// Rows is the number of validation rows (every training row once).
	Rows int `json:"rows"`
}

// maxTuneText bounds the free-text fields of Tuning.
const maxTuneText = 1024

// checkTuning checks a tuning record against the model it describes.
func checkTuning(t *Tuning, p ptm.Params, sets int) error {
	if t == nil {
		return nil
	}
	switch {
	case t.Candidates < 1 || t.Candidates > 1<<20:
		return fmt.Errorf("tuning.candidates %d, want 1..%d", t.Candidates, 1<<20)
	case t.Scored < 0 || t.Scored > t.Candidates || t.Scored == 1:
		return fmt.Errorf("tuning.scored %d, want 0 or 2..candidates (%d)", t.Scored, t.Candidates)
	case (t.Score == nil) != (t.Scored == 0):
		return fmt.Errorf("tuning.score must be present exactly when candidates were scored (scored %d)", t.Scored)
	case t.Rule == "" || len(t.Rule) > maxTuneText || len(t.Budget) > maxTuneText:
		return fmt.Errorf("tuning.rule (%d bytes) and tuning.budget (%d bytes) want 1..%d and 0..%d bytes", len(t.Rule), len(t.Budget), maxTuneText, maxTuneText)
	case !(t.Work >= 0) || !(t.BudgetWork >= 0) || math.IsInf(t.Work, 0) || math.IsInf(t.BudgetWork, 0):
		return fmt.Errorf("tuning.work %v and budget_work %v, want finite values >= 0", t.Work, t.BudgetWork)
	case len(t.Fixed) > 64:
		return fmt.Errorf("tuning.fixed has %d names, want at most 64", len(t.Fixed))
	}
	for i, f := range t.Fixed {
		if f == "" || len(f) > 64 {
			return fmt.Errorf("tuning.fixed[%d]: %q, want 1..64 bytes", i, f)
		}
	}
	c := t.Chosen
	if c.Clauses != p.Clauses || c.T != p.T || c.S != p.S || c.Epochs != p.Epochs {
		return fmt.Errorf("tuning.chosen (clauses %d, T %d, s %g, epochs %d) differs from the model's params (clauses %d, T %d, s %g, epochs %d)",
			c.Clauses, c.T, c.S, c.Epochs, p.Clauses, p.T, p.S, p.Epochs)
	}
	if c.Thresholds < 1 || c.Sets != sets || !(c.Bandwidth >= 0 && c.Bandwidth <= 10) {
		return fmt.Errorf("tuning.chosen: thresholds %d, sets %d (the model has %d), bandwidth %v: want thresholds >= 1, the model's sets, bandwidth 0..10",
			c.Thresholds, c.Sets, sets, c.Bandwidth)
	}
	if s := t.Score; s != nil {
		if !(s.Accuracy >= 0 && s.Accuracy <= 1) || !(s.NLL >= 0) || math.IsInf(s.NLL, 0) || s.Rows < 1 {
			return fmt.Errorf("tuning.score: accuracy %v, nll %v, rows %d: want accuracy 0..1, a finite nll >= 0, rows >= 1", s.Accuracy, s.NLL, s.Rows)
		}
	}
	return nil
}
