package pipeline

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Tuning: `ptm train` without hyper-parameter flags chooses clauses, T, s,
// epochs and the input encoding's parameters by the inner cross-validation
// `ptm experiments` uses (scoreCV, ScoreGridCV's step: CalibrationFolds
// stratified folds of the training rows, every training row a validation
// row once, K = 100 samples per row, the rule DefaultSelection), within a
// budget of work.
//
// The budget is deterministic: a duration is converted to work (TA visits,
// TuneCost) at the fixed NominalRate, never measured, and candidates are
// admitted in grid order while the estimated work of those admitted stays
// within it. So for a given input, flags and budget the candidates scored
// and the choice are the same on every machine and at every load; only the
// wall time varies (about the budget or less on this project's 2-core
// machine when it is idle, more when it is loaded or slower).

// NominalRate converts a duration budget into work: TA visits per second
// (TuneCost's unit). It is a constant, measured once on the project's
// 2-core machine with the float trainer (the default grids of Iris, wine,
// breast cancer and xor-classic, and the general grid on wine: their
// estimated work over 60e6 is within a factor of two of the CPU time of
// `ptm train`, 0.6x to 1.9x; docs/tuning.md), not at run
// time, so that the budget never makes a choice depend on the machine's
// speed or load.
const NominalRate = 60e6

// DefaultTuneBudget is `ptm train`'s tuning budget unless --tune says
// otherwise.
const DefaultTuneBudget = 10 * time.Minute

// sampleWeight is the cost of one sampled TA literal evaluation relative
// to one trained TA visit in TuneCost.
const sampleWeight = 0.25

// TuneFixed names the hyper-parameters the user fixed by flags: Tune keeps
// the base configuration's value for them and tunes the rest.
type TuneFixed struct {
	Clauses, T, S, Epochs, Thresholds, Bandwidth bool
}

// Names lists the fixed hyper-parameters by flag name.
func (f TuneFixed) Names() []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Clauses, "clauses"}, {f.T, "T"}, {f.S, "s"}, {f.Epochs, "epochs"}, {f.Thresholds, "thresholds"}, {f.Bandwidth, "bandwidth"}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

// All reports whether every tuned hyper-parameter is fixed (nothing left
// to tune).
func (f TuneFixed) All() bool {
	return f.Clauses && f.T && f.S && f.Epochs && f.Thresholds && f.Bandwidth
}

// TuneConfig configures Tune.
type TuneConfig struct {
	// Base is the training configuration the flags describe (split, seeds,
	// states, feedback, encoding, mapping, trainer); Tune replaces its
	// tuned fields (clauses, T, s, epochs, thresholds, encoding
	// bandwidth) by each candidate's, except those in Fixed. Base's
	// Progress, RowProgress and NewRowTrainer are not used while scoring
	// (candidates train on the golden trainer Base selects).
	Base  TrainConfig
	Fixed TuneFixed
	// Budget bounds the tuning work: Budget.Seconds() * NominalRate TA
	// visits (TuneCost). 0 means DefaultTuneBudget.
	Budget time.Duration
	// Grid, if set, replaces TuneGrid's first stage (tests, studies); the
	// second stage (encoding variants of the first stage's winner) runs
	// only with Refine.
	Grid   []Candidate
	Refine bool
	// Progress, if set, is called after every fold trained and every
	// candidate scored; RowProgress within every epoch of every fold.
	Progress    func(TuneEvent)
	RowProgress func(row, rows int)
	// Parallel is the number of candidates scored at once (0: GOMAXPROCS,
	// fewer when the memory limit asks for it); the candidates scored and
	// the choice do not depend on it. Progress and RowProgress calls are
	// serialized.
	Parallel int
}

// TuneEvent reports tuning progress: Candidate (0-based) of Admitted
// candidates (so far: the second stage admits more), Fold folds done of
// CalibrationFolds (Fold = CalibrationFolds and Score set when the
// candidate is scored), while fold Fold+1's held-out rows are sampled
// Sampled of Rows (Rows 0 otherwise), Work done and budgeted.
type TuneEvent struct {
	Candidate, Admitted int
	Fold                int
	Sampled, Rows       int
	// Scored of Passes rows are done in the passes over the candidate's
	// out-of-fold samples (its score and its mapping parameter's fit: 35
	// passes over every row for the softmax); 0 of 0 outside that step.
	Scored, Passes   int
	Label            string
	Score            *ValScore
	Work, BudgetWork float64
}

// TuneCandidate is one candidate of a tuning run: its full training
// configuration, estimated cost and (once scored) validation score.
type TuneCandidate struct {
	Config TrainConfig
	Label  string
	Cost   float64
	Score  *ValScore
	mem    float64 // estimated bytes while it is scored
}

// TuneResult is the outcome of Tune.
type TuneResult struct {
	// Chosen is the chosen candidate's training configuration (Base with
	// the candidate's hyper-parameters).
	Chosen TrainConfig
	// Score is its validation score (nil when nothing was scored).
	Score *ValScore
	// OOF are the chosen candidate's out-of-fold samples: Calibrate's,
	// so TrainTuned fits the mapping on them instead of training the folds
	// again (nil when nothing was scored).
	OOF *Samples
	// Candidates lists every candidate considered, in order; Scored
	// counts those scored (Score set).
	Candidates []TuneCandidate
	Scored     int
	// Work is the estimated work of the scored candidates; BudgetWork the
	// budget, both in TA visits.
	Work, BudgetWork float64
	// Rule names the selection rule and validation scheme.
	Rule string
	// ValRows is the number of validation rows (the training rows).
	ValRows int
}

// TuneLabel names a candidate's tuned hyper-parameters.
func TuneLabel(c TrainConfig) string {
	p := c.Params
	s := fmt.Sprintf("clauses %d, T %d, s %g, epochs %d, thresholds %d", p.Clauses, p.T, p.S, p.Epochs, c.Thresholds)
	if e := c.Encoding; e != nil && e.Sets > 1 {
		s += fmt.Sprintf(", jitter %g sd", e.Bandwidth)
	}
	return s
}

// Record returns the model file's tuning record for r.
func (r *TuneResult) Record(budget time.Duration, fixed TuneFixed) *modelfile.Tuning {
	c := r.Chosen
	sets := 1
	bw := 0.0
	if e := c.Encoding; e != nil {
		if e.Sets > 1 || e.Margin > 0 {
			sets = e.Sets
		}
		bw = e.Bandwidth
	}
	t := &modelfile.Tuning{
		Candidates: len(r.Candidates), Scored: r.Scored,
		Chosen: modelfile.TunedChoice{Clauses: c.Params.Clauses, T: c.Params.T, S: c.Params.S, Epochs: c.Params.Epochs,
			Thresholds: c.Thresholds, Bandwidth: bw, Sets: sets},
		Rule:   r.Rule,
		Budget: fmt.Sprintf("%v (nominal: %.3g TA visits at %.3g per second)", budget, r.BudgetWork, float64(NominalRate)),
		Work:   r.Work, BudgetWork: r.BudgetWork, Fixed: fixed.Names(),
	}
	if r.Score != nil {
		t.Score = &modelfile.TuneScore{Accuracy: r.Score.Report.Accuracy, NLL: r.Score.Report.NLL, Rows: r.ValRows}
	}
	return t
}

// KnownGrid returns the grid `ptm experiments` uses for a built-in data
// set in its full run (iris, wine, breast-cancer; nil for the others):
// Tune scores exactly these candidates for them, so that `ptm train
// --data iris --seed S` is the model of the experiments' split S-1.
func KnownGrid(name string) []Candidate {
	c := func(clauses, T int, s float64, epochs, thresholds int) Candidate {
		return Candidate{Params: ptm.Params{Clauses: clauses, T: T, S: s, N: 100, Epochs: epochs, Feedback: ptm.ConsistentFeedback}, Thresholds: thresholds}
	}
	switch name {
	case Iris:
		// The lead engineer's grid (10 splits, vote mapping): 60/30/2,
		// 20/10/2, 150/30/3 and 60/10/5; N = 100, 6 thresholds, 100 epochs.
		return []Candidate{c(60, 30, 2, 100, 6), c(20, 10, 2, 100, 6), c(150, 30, 3, 100, 6), c(60, 10, 5, 100, 6)}
	case Wine:
		return []Candidate{c(20, 10, 2, 60, 6), c(40, 15, 2, 60, 6), c(60, 20, 2, 60, 6)}
	case BreastCancer:
		return []Candidate{c(20, 10, 2, 50, 6), c(40, 15, 2, 50, 6), c(60, 20, 2, 50, 6)}
	}
	return nil
}

// GeneralGrid is the first stage of the grid for data the project has no
// grid for (a user's CSV, the XOR sets): rows training rows, boolFeatures
// Boolean features at 6 thresholds per feature. Clauses per class m0 =
// 10 * ceil(sqrt(boolFeatures / 12)) (10 for 12 Boolean features, 20 for
// Iris's 24, 40 for breast cancer's 180, 280 for 784 pixels x 12) and
// twice that; T = m/2 and 3m/2 (the classic TM's 10 clauses with T 15 is
// the upper one); s = s0 and 2 s0 with s0 = max(2, log2(boolFeatures)/2.5)
// rounded to a tenth; epochs = 40 * sqrt(1000 / rows), clamped to 20..100
// (100 for Iris-sized data, 20 from 4,000 rows). Each TM is one class's
// (one TM for two classes), so the clauses per TM do not grow with the
// number of classes; the memory planner and the budget bound the rest.
// Candidates are ordered by cost, cheapest first (ties keep m, T, s
// ascending), so that a tight budget keeps the cheapest.
func GeneralGrid(rows, boolFeatures int) []Candidate {
	m0 := 10 * int(math.Ceil(math.Sqrt(float64(max(boolFeatures, 1))/12)))
	m0 = min(m0, 2000)
	s0 := math.Max(2, math.Round(10*math.Log2(float64(max(boolFeatures, 2)))/2.5)/10)
	epochs := int(math.Round(40 * math.Sqrt(1000/float64(max(rows, 1)))))
	epochs = min(max(epochs, 20), 100)
	var out []Candidate
	for _, m := range []int{m0, 2 * m0} {
		for _, T := range []int{max(m/2, 1), 3 * m / 2} {
			for _, s := range []float64{s0, 2 * s0} {
				out = append(out, Candidate{Params: ptm.Params{Clauses: m, T: T, S: s, N: 100, Epochs: epochs, Feedback: ptm.ConsistentFeedback}, Thresholds: 6})
			}
		}
	}
	return out
}

// refineThresholds and refineBandwidths are the second stage's encoding
// variants of the first stage's winner (GeneralGrid only).
var (
	refineThresholds = []int{4, 10}
	refineBandwidths = []float64{0.075, 0.3}
)

// TuneGrid returns the grid Tune uses for d when cfg.Grid is nil:
// KnownGrid(d.Name) for the data sets `ptm experiments` has a grid for
// (the built-in data itself: a CSV file named iris.csv with other content
// is a user's data), else GeneralGrid with the second stage. rows and
// boolFeatures describe the training rows (boolFeatures at 6 thresholds
// per feature).
func TuneGrid(d *Data, rows, boolFeatures int) ([]Candidate, bool) {
	if g := KnownGrid(d.Name); g != nil {
		if b, err := LoadData(d.Name, ""); err == nil && b.Fingerprint() == d.Fingerprint() {
			return g, false
		}
	}
	return GeneralGrid(rows, boolFeatures), true
}

// TuneCost estimates the work of scoring one candidate by inner
// cross-validation, in TA visits: per fold the training rows (3/4 of n)
// times epochs times the TMs a row updates (1 for two classes, else the
// target's and one other's) times clauses times literals, and the
// held-out rows' K samples over every TM's clauses and literals at
// sampleWeight each. Summed over the folds, every row trains three times
// per epoch and is sampled once.
func TuneCost(rows, classes, boolFeatures int, p ptm.Params, K int) float64 {
	tms, upd := float64(classes), 2.0
	if classes == 2 {
		tms, upd = 1, 1
	}
	lits := 2 * float64(boolFeatures)
	train := float64(CalibrationFolds-1) * float64(rows) * float64(p.Epochs) * upd * float64(p.Clauses) * lits
	sample := float64(rows) * float64(K) * tms * float64(p.Clauses) * lits * sampleWeight
	return train + sample
}

// tuneRule describes the selection rule and validation scheme.
func tuneRule(sel Selection) string {
	tie := "NLL"
	if sel != SelectAccuracy {
		tie = "accuracy"
	}
	return fmt.Sprintf("%s (ties: %s), inner %d-fold CV on the training rows, K = %d", sel, tie, CalibrationFolds, calibrationK)
}

// Tune chooses the hyper-parameters of cfg.Base for d by inner
// cross-validation on the training rows (scoreCV, the step of
// ScoreGridCV that `ptm experiments` chooses by), scoring the grid's
// candidates in order while the budget admits them and picking the best
// under DefaultSelection (the first on exact ties). With the general grid
// a second stage scores encoding variants of the first stage's winner
// (thresholds 4 and 10 when they change the thermometer; jitter 0.075 and
// 0.3 sd when the encoding has several sets and some feature has more
// than two values) within what is left of the budget. Candidates too
// large for the memory limit are dropped. When the budget admits fewer
// than two candidates nothing is scored and the first candidate is the
// choice. The test rows play no part.
func Tune(d *Data, cfg TuneConfig) (*TuneResult, error) {
	base := cfg.Base
	base.defaults()
	base.Progress, base.RowProgress, base.NewRowTrainer = nil, nil, nil
	if err := base.Params.Validate(); err != nil {
		return nil, err
	}
	if err := base.checkConfig(); err != nil {
		return nil, err
	}
	budget := cfg.Budget
	if budget == 0 {
		budget = DefaultTuneBudget
	}
	if budget < 0 {
		return nil, fmt.Errorf("pipeline: tuning budget %v, want > 0", budget)
	}
	trainRows, _, err := base.splitRows(d)
	if err != nil {
		return nil, err
	}
	tr := d.View(trainRows) // read only: no copy of the rows
	nc := len(d.Classes)
	// thermo fits (and caches) the thermometer of a thresholds count.
	thermos := map[int]*booleanize.Thermometer{}
	thermo := func(th int) (*booleanize.Thermometer, error) {
		if t, ok := thermos[th]; ok {
			return t, nil
		}
		t, err := booleanize.FitCuts(tr.X, tr.Y, nc, th, base.Encoding.Cuts)
		if err != nil {
			return nil, fmt.Errorf("pipeline: tuning: booleanizer with %d thresholds: %w", th, err)
		}
		thermos[th] = t
		return t, nil
	}
	t6, err := thermo(6)
	if err != nil {
		return nil, err
	}
	grid, refine := cfg.Grid, cfg.Refine
	if grid == nil {
		grid, refine = TuneGrid(d, len(trainRows), t6.NumBits())
	}
	limit, err := MemoryLimit()
	if err != nil {
		return nil, err
	}
	res := &TuneResult{BudgetWork: budget.Seconds() * NominalRate, Rule: tuneRule(DefaultSelection), ValRows: len(trainRows)}
	seen := map[string]bool{}
	var memErr error // the first candidate refused for its size
	// resolve applies cand to base (keeping the fixed fields) and returns
	// the candidate, or ok false for a duplicate or one over the memory
	// limit.
	resolve := func(cand Candidate) (TuneCandidate, bool, error) {
		tc := base
		p := base.Params
		if !cfg.Fixed.Clauses {
			p.Clauses = cand.Params.Clauses
		}
		if !cfg.Fixed.T {
			p.T = cand.Params.T
		}
		if !cfg.Fixed.S {
			p.S = cand.Params.S
		}
		if !cfg.Fixed.Epochs {
			p.Epochs = cand.Params.Epochs
		}
		tc.Params = p
		if !cfg.Fixed.Thresholds && cand.Thresholds > 0 {
			tc.Thresholds = cand.Thresholds
		}
		e := *base.Encoding
		if cand.Encoding != nil && !cfg.Fixed.Bandwidth && e.Sets > 1 {
			e.Bandwidth = cand.Encoding.Bandwidth
		}
		tc.Encoding = &e
		label := TuneLabel(tc)
		if seen[label] {
			return TuneCandidate{}, false, nil
		}
		seen[label] = true
		th, err := thermo(tc.Thresholds)
		if err != nil {
			return TuneCandidate{}, false, err
		}
		F := th.NumBits()
		tms := nc
		if nc == 2 {
			tms = 1
		}
		// The model, and the out-of-fold samples of the best candidate
		// and of the one being scored.
		need := TrainBytes(tms, p.Clauses, F, p.N) + 2*float64(len(trainRows))*float64(calibrationK)*float64(tms)*8
		err = checkTrainSize(nc, F, p, 0)
		if err == nil && need > float64(limit) {
			err = fmt.Errorf("pipeline: %s would need about %s while tuning, over the %s limit (PTM_MAX_MEMORY)", label, bytesString(need), bytesString(float64(limit)))
		}
		if err != nil {
			if memErr == nil {
				memErr = err
			}
			return TuneCandidate{}, false, nil
		}
		return TuneCandidate{Config: tc, Label: label, Cost: TuneCost(len(trainRows), nc, F, p, calibrationK), mem: need}, true, nil
	}
	var stage []TuneCandidate
	for _, g := range grid {
		c, ok, err := resolve(g)
		if err != nil {
			return nil, err
		}
		if ok {
			stage = append(stage, c)
		}
	}
	if len(stage) == 0 {
		return nil, fmt.Errorf("pipeline: tuning: no grid candidate fits (give --clauses, --thresholds or --states); the first: %w", memErr)
	}
	// variants are the second stage's candidates around w: its encoding
	// with other thresholds and jitters.
	variants := func(w TuneCandidate) ([]TuneCandidate, error) {
		var second []TuneCandidate
		if !cfg.Fixed.Thresholds {
			t0, err := thermo(w.Config.Thresholds)
			if err != nil {
				return nil, err
			}
			for _, th := range refineThresholds {
				t1, err := thermo(th)
				if err != nil {
					return nil, err
				}
				if th == w.Config.Thresholds || reflect.DeepEqual(t0.Thresholds, t1.Thresholds) {
					continue // the same thermometer: the same model
				}
				cand := candidateOf(w.Config)
				cand.Thresholds = th
				if c, ok, err := resolve(cand); err != nil {
					return nil, err
				} else if ok {
					second = append(second, c)
				}
			}
		}
		if !cfg.Fixed.Bandwidth && base.Encoding.Sets > 1 && !allBinary(tr.X) {
			for _, bw := range refineBandwidths {
				cand := candidateOf(w.Config)
				e := *w.Config.Encoding
				e.Bandwidth = bw
				cand.Encoding = &e
				if c, ok, err := resolve(cand); err != nil {
					return nil, err
				} else if ok {
					second = append(second, c)
				}
			}
		}
		return second, nil
	}
	if len(stage) == 1 && refine {
		// The given flags leave one first-stage candidate: its variants
		// are the grid.
		second, err := variants(stage[0])
		if err != nil {
			return nil, err
		}
		stage, refine = append(stage, second...), false
	}
	// admit marks the candidates the remaining budget covers, in order.
	admit := func(cs []TuneCandidate) []int {
		var idx []int
		for i, c := range cs {
			if res.Work+c.Cost <= res.BudgetWork {
				res.Work += c.Cost
				idx = append(idx, i)
			}
		}
		return idx
	}
	adm := admit(stage)
	res.Candidates = stage
	if len(adm) < 2 {
		// One candidate (nothing left to tune once the given flags are
		// applied), or too little budget to compare: the first
		// candidate, unscored.
		res.Work = 0
		res.Chosen = stage[0].Config
		return res, nil
	}
	var scores []ValScore
	var scoredIdx []int
	best := -1
	work := 0.0
	// par candidates are scored at once: cfg.Parallel (GOMAXPROCS), fewer
	// if that many of the largest admitted candidate would not fit the
	// memory limit. The choice does not depend on it.
	par := cfg.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	for _, i := range adm {
		par = min(par, max(int(float64(limit)/res.Candidates[i].mem), 1))
	}
	// Progress callbacks come from the goroutines scoring candidates:
	// serialized by mu, which also guards work.
	var mu sync.Mutex
	progress := func(ev TuneEvent) {
		if cfg.Progress != nil {
			mu.Lock()
			ev.Work, ev.BudgetWork = work, res.BudgetWork
			cfg.Progress(ev)
			mu.Unlock()
		}
	}
	var rowProgress func(row, rows int)
	if cfg.RowProgress != nil {
		rowProgress = func(row, rows int) {
			mu.Lock()
			cfg.RowProgress(row, rows)
			mu.Unlock()
		}
	}
	// run scores candidate i, the k-th admitted of admitted; safe to run
	// concurrently (every candidate has its own seeds and models).
	run := func(i, k, admitted int) (ValScore, *Samples, error) {
		c := res.Candidates[i]
		tc := c.Config
		tc.RowProgress = rowProgress
		onFold := func(fold, sampled, rows int) {
			ev := TuneEvent{Candidate: k, Admitted: admitted, Fold: fold, Label: c.Label}
			if sampled == rows {
				ev.Fold = fold + 1
			} else {
				ev.Sampled, ev.Rows = sampled, rows
			}
			progress(ev)
		}
		progress(TuneEvent{Candidate: k, Admitted: admitted, Label: c.Label})
		onScore := func(done, total int) {
			progress(TuneEvent{Candidate: k, Admitted: admitted, Fold: CalibrationFolds, Label: c.Label, Scored: done, Passes: total})
		}
		v, oof, err := scoreCV(d, tc, calibrationK, base.Mapping, 10, onFold, onScore)
		if err != nil {
			return ValScore{}, nil, fmt.Errorf("pipeline: tuning candidate %d (%s): %w", i+1, c.Label, err)
		}
		return v, oof, nil
	}
	// commit records candidate i's score, in admission order, keeping the
	// out-of-fold samples of the best so far only.
	commit := func(i, k, admitted int, v ValScore, oof *Samples) {
		c := &res.Candidates[i]
		c.Score = &v
		mu.Lock()
		work += c.Cost
		mu.Unlock()
		scores = append(scores, v)
		scoredIdx = append(scoredIdx, i)
		switch b := scoredIdx[DefaultSelection.Choose(scores)]; {
		case b == i:
			best, res.OOF = i, oof
		case b != best:
			// A rule whose ranking of earlier candidates depends on later
			// ones (SelectAUROC's accuracy floor): the earlier winner's
			// samples were not kept, so TrainTuned calibrates anew.
			best, res.OOF = b, nil
		}
		res.Scored++
		progress(TuneEvent{Candidate: k, Admitted: admitted, Fold: CalibrationFolds, Label: c.Label, Score: &v})
	}
	// scoreAll scores the candidates idx (admitted ordinals from k0 on),
	// par at a time, committing them in order; at most par candidates'
	// results are held at once.
	scoreAll := func(idx []int, k0, admitted int) error {
		type result struct {
			v   ValScore
			oof *Samples
			err error
		}
		outs := make([]chan result, len(idx))
		for k := range outs {
			outs[k] = make(chan result, 1)
		}
		slots := make(chan struct{}, max(min(par, len(idx)), 1))
		var stop atomic.Bool
		go func() {
			for k, i := range idx {
				slots <- struct{}{}
				go func() {
					if stop.Load() {
						outs[k] <- result{}
						return
					}
					v, oof, err := run(i, k0+k, admitted)
					outs[k] <- result{v, oof, err}
				}()
			}
		}()
		var first error
		for k, i := range idx {
			r := <-outs[k]
			if first == nil && r.err != nil {
				first = r.err
				stop.Store(true)
			}
			if first == nil {
				commit(i, k0+k, admitted, r.v, r.oof)
			}
			<-slots
		}
		return first
	}
	if err := scoreAll(adm, 0, len(adm)); err != nil {
		return nil, err
	}
	if refine {
		second, err := variants(res.Candidates[best])
		if err != nil {
			return nil, err
		}
		n0 := len(res.Candidates)
		res.Candidates = append(res.Candidates, second...)
		adm2 := admit(second)
		for j := range adm2 {
			adm2[j] += n0
		}
		if err := scoreAll(adm2, len(adm), len(adm)+len(adm2)); err != nil {
			return nil, err
		}
	}
	res.Work = work
	res.Chosen = res.Candidates[best].Config
	res.Score = res.Candidates[best].Score
	return res, nil
}

// candidateOf is the grid candidate of a resolved configuration.
func candidateOf(c TrainConfig) Candidate {
	e := *c.Encoding
	return Candidate{Params: c.Params, Thresholds: c.Thresholds, Encoding: &e}
}

// allBinary reports whether every feature takes at most two values on the
// rows (threshold jitter cannot change such a feature's thermometer bits
// while the cut stays between the two values).
func allBinary(X [][]float64) bool {
	if len(X) == 0 {
		return true
	}
	for j := range X[0] {
		a, b, n := X[0][j], X[0][j], 1
		for _, x := range X {
			v := x[j]
			switch {
			case v == a || (n == 2 && v == b):
			case n == 1:
				b, n = v, 2
			default:
				return false
			}
		}
	}
	return true
}

// TrainTuned trains the chosen configuration of r (as TrainAndCalibrate
// with cfg's progress and row trainer), fitting the mapping on r's
// out-of-fold samples when they are Calibrate's (the same folds, seeds and
// K: the result equals Calibrate's) instead of training the folds again.
func TrainTuned(d *Data, r *TuneResult, cfg TrainConfig, calibrate bool) (*modelfile.File, error) {
	tc := r.Chosen
	tc.Progress, tc.RowProgress, tc.NewRowTrainer = cfg.Progress, cfg.RowProgress, cfg.NewRowTrainer
	// Calibrated anew (no samples kept, e.g. a budget that scored
	// nothing): its progress too (issue 31 item 4: a 1,000,000-row
	// training set was silent through its calibration).
	tc.CalibrationProgress = cfg.CalibrationProgress
	if r.OOF == nil || !calibrate || cfg.NewRowTrainer != nil {
		return TrainAndCalibrate(d, tc, calibrate)
	}
	f, err := Train(d, tc)
	if err != nil {
		return nil, err
	}
	if r.OOF.p.K != calibrationK || r.OOF.Len() != len(f.Split.Train) {
		return nil, fmt.Errorf("pipeline: tuning's out-of-fold samples (%d rows, K %d) are not the model's %d training rows at K %d", r.OOF.Len(), r.OOF.p.K, len(f.Split.Train), calibrationK)
	}
	tc.defaults()
	// The fit passes over every out-of-fold sample once per candidate
	// parameter: reported as the calibration's progress.
	if cp := cfg.CalibrationProgress; cp != nil {
		cands, err := mappingCandidates(tc.Mapping.Kind, tc.floor()*float64(f.Model.T))
		if err != nil {
			return nil, err
		}
		n, pass := r.OOF.Len(), 0
		r.OOF.p.rowsDone = func(row int) {
			cp(pass*n+row, len(cands)*n)
			if row == n {
				pass++
			}
		}
		defer func() { r.OOF.p.rowsDone = nil }()
	}
	if f.Mapping, err = r.OOF.FitAbove(tc.Mapping.Kind, tc.floor()*float64(f.Model.T)); err != nil {
		return nil, err
	}
	if f.FixedTraining != nil {
		f.FixedTraining.Calibrate = true
	}
	return f, nil
}
