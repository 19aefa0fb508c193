package pipeline

import (
	"fmt"
	"math"

	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Candidate is one point of a hyper-parameter grid.
type Candidate struct {
	Params     ptm.Params
	Thresholds int
	// Encoding is the input encoding (nil = DefaultEncoding).
	Encoding *Encoding
}

// SplitResult is the outcome of one repeated split.
type SplitResult struct {
	Split       int
	Chosen      Candidate   // chosen on validation rows carved from the training rows
	Mapping     ptm.Mapping // mapping used on the test rows
	Report      metrics.Report
	ValAccuracy float64 // the chosen candidate's validation accuracy
	// Val holds every grid candidate's validation scores, in grid order.
	Val []ValScore
	// Model is the chosen candidate retrained on all training rows: the
	// model evaluated on the test rows.
	Model *modelfile.File
	// Eval holds the per-query statistics of the test rows.
	Eval *EvalResult
}

// ProtocolConfig configures RepeatedSplits.
type ProtocolConfig struct {
	Splits int // number of stratified splits (e.g. 20)
	// First is the index of the first split: the splits run are
	// First..First+Splits-1, split s with seed s+1, so that callers can run
	// the splits of one protocol concurrently (0 = from the first).
	First        int
	TestFraction float64 // test fraction of each split (0.2)
	ValFraction  float64 // fraction of the training rows carved out for validation (0.25)
	K            int     // samples per query
	Bins         int     // ECE bins
	Grid         []Candidate
	// Calibrate fits the parameter of Mapping's kind (vote smoothing or
	// softmax temperature) for the chosen candidate by cross-validation on
	// the training rows (Calibrate); when false, Mapping is used as is.
	Calibrate bool
	Mapping   ptm.Mapping
	// Select is the rule that picks a candidate from its validation
	// scores ("" = DefaultSelection).
	Select Selection
	// CV chooses on an inner CalibrationFolds-fold cross-validation over
	// the split's training rows (ScoreGridCV: every training row is a
	// validation row once, the scores pooled over the folds) instead of
	// one validation carve of ValFraction (ScoreGrid). The winner's
	// out-of-fold samples are the ones Calibrate would draw, so they are
	// reused for its calibration.
	CV       bool
	Progress func(split, splits int)
}

// DefaultCV tells whether the experiments' protocol chooses the grid point
// by inner cross-validation on the training rows (ProtocolConfig.CV)
// rather than on one validation carve (docs/uncertainty.md section 12:
// adopted by the rule fixed there; docs/results is its full run).
var DefaultCV = true

// RepeatedSplits runs the evaluation protocol of the Iris experiments: for
// each of Splits stratified splits (seed = split index + 1), the training
// rows are split again into fit and validation rows; every grid candidate
// is trained on the fit rows and scored on the validation rows; the rule
// cfg.Select (DefaultSelection if empty) picks the winner, which is
// retrained on all training rows and evaluated on the test rows. With
// cfg.CV the fit/validation carve is replaced by an inner cross-validation
// on the training rows (ScoreGridCV). The test rows play no part in any
// choice.
func RepeatedSplits(d *Data, cfg ProtocolConfig) ([]SplitResult, error) {
	if cfg.Splits < 1 || cfg.First < 0 || len(cfg.Grid) == 0 {
		return nil, fmt.Errorf("pipeline: need >= 1 split, a first split >= 0 and a non-empty grid")
	}
	cfg.defaults()
	sel, err := ParseSelection(string(cfg.Select))
	if err != nil {
		return nil, err
	}
	var out []SplitResult
	for s := cfg.First; s < cfg.First+cfg.Splits; s++ {
		var val []ValScore
		var oof []*Samples
		if cfg.CV {
			val, oof, err = ScoreGridCV(d, cfg, s)
		} else {
			val, err = ScoreGrid(d, cfg, s)
		}
		if err != nil {
			return nil, err
		}
		best := sel.Choose(val)
		var reuse *Samples
		if oof != nil {
			reuse = oof[best]
		}
		sr, err := FinishSplitOOF(d, cfg, s, cfg.Grid[best], reuse)
		if err != nil {
			return nil, err
		}
		sr.Val, sr.ValAccuracy = val, val[best].Report.Accuracy
		out = append(out, sr)
		if cfg.Progress != nil {
			cfg.Progress(s-cfg.First+1, cfg.Splits)
		}
	}
	return out, nil
}

func (cfg *ProtocolConfig) defaults() {
	if cfg.TestFraction == 0 {
		cfg.TestFraction = 0.2
	}
	if cfg.ValFraction == 0 {
		cfg.ValFraction = 0.25
	}
	if cfg.K == 0 {
		cfg.K = 100
	}
	if cfg.Mapping.Kind == "" {
		cfg.Mapping = DefaultMapping
	}
}

// ScoreGrid is the validation step of split s (0-based; seed s+1) of the
// protocol: the split's training rows are split again into fit and
// validation rows (cfg.ValFraction, seed s+1001), every candidate of
// cfg.Grid is trained on the fit rows and scored on the validation rows
// (Validate, under cfg.Mapping). The test rows are not used.
func ScoreGrid(d *Data, cfg ProtocolConfig, s int) ([]ValScore, error) {
	cfg.defaults()
	seed := uint64(s + 1)
	trainRows, _, err := d.Split(cfg.TestFraction, seed)
	if err != nil {
		return nil, err
	}
	trY := make([]int, len(trainRows))
	for i, r := range trainRows {
		trY[i] = d.Y[r]
	}
	fitIdx, valIdx := dataset.StratifiedSplit(trY, len(d.Classes), cfg.ValFraction, seed+1000)
	fitRows, valRows := pick(trainRows, fitIdx), pick(trainRows, valIdx)
	out := make([]ValScore, len(cfg.Grid))
	for c, cand := range cfg.Grid {
		p := cand.Params
		p.Seed = seed
		f, err := Train(d, TrainConfig{Params: p, Thresholds: cand.Thresholds, TestFraction: cfg.TestFraction, SplitSeed: seed, Rows: fitRows, Encoding: cand.Encoding})
		if err != nil {
			return nil, err
		}
		if out[c], err = Validate(f, d, valRows, cfg.K, seed, cfg.Mapping, cfg.Bins); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ScoreGridCV is the validation step of split s (0-based; seed s+1) by
// inner cross-validation: every candidate of cfg.Grid is trained on all
// but one of the CalibrationFolds stratified folds of the split's training
// rows in turn and the held-out fold sampled (OutOfFold's folds, training
// configuration and sampler seeds, with cfg.K samples per row), so that
// every training row is a validation row once; the candidate's score is
// that of its out-of-fold samples pooled over the folds (as Validate
// scores a carve, under cfg.Mapping and with the mapping's parameter
// fitted on the same samples). It returns the scores and the out-of-fold
// samples, in grid order (rows in OutOfFold's order: fold 0's, then fold
// 1's, ...; FoldSizes). The test rows are not used.
func ScoreGridCV(d *Data, cfg ProtocolConfig, s int) ([]ValScore, []*Samples, error) {
	cfg.defaults()
	val := make([]ValScore, len(cfg.Grid))
	oof := make([]*Samples, len(cfg.Grid))
	for c, cand := range cfg.Grid {
		var err error
		if val[c], oof[c], err = scoreCV(d, cfg.trainConfig(s, cand), cfg.K, cfg.Mapping, cfg.Bins, nil, nil); err != nil {
			return nil, nil, fmt.Errorf("pipeline: split %d, candidate %d: %w", s, c, err)
		}
	}
	return val, oof, nil
}

// scoreCV is the inner cross-validation of one candidate, the training
// configuration tc (ScoreGridCV's step, shared with Tune): tc is trained on
// all but one of the CalibrationFolds folds of its training rows in turn,
// the held-out fold sampled (K samples per row), and the pooled
// out-of-fold samples scored under mp (and under mp's kind fitted on the
// same samples). onFold, if set, is called as outOfFold calls it.
//
// onScore, if set, is called after every pass of the scoring over the
// pooled samples (scorePooledProgress).
func scoreCV(d *Data, tc TrainConfig, K int, mp ptm.Mapping, bins int, onFold func(fold, done, total int), onScore func(done, total int)) (ValScore, *Samples, error) {
	trainRows, _, err := tc.splitRows(d)
	if err != nil {
		return ValScore{}, nil, err
	}
	oof, err := outOfFold(d, trainRows, tc, K, onFold)
	if err != nil {
		return ValScore{}, nil, err
	}
	v, err := scorePooledProgress(&oof.p, mp, bins, onScore)
	if err != nil {
		return ValScore{}, nil, err
	}
	return v, oof, nil
}

// trainConfig is the training configuration of candidate cand on split s
// (seed s+1) of the protocol, on all the split's training rows.
func (cfg *ProtocolConfig) trainConfig(s int, cand Candidate) TrainConfig {
	seed := uint64(s + 1)
	p := cand.Params
	p.Seed = seed
	return TrainConfig{Params: p, Thresholds: cand.Thresholds, TestFraction: cfg.TestFraction, SplitSeed: seed, Mapping: cfg.Mapping, Encoding: cand.Encoding}
}

// FinishSplit is the test step of split s of the protocol for a chosen
// candidate: cand is trained on all training rows of the split, its
// mapping calibrated on them if cfg.Calibrate, and evaluated on the test
// rows. The result's Val and ValAccuracy are left for the caller.
func FinishSplit(d *Data, cfg ProtocolConfig, s int, cand Candidate) (SplitResult, error) {
	return FinishSplitOOF(d, cfg, s, cand, nil)
}

// FinishSplitOOF is FinishSplit with cand's out-of-fold samples already
// drawn (ScoreGridCV's, for this split and candidate): when cfg.Calibrate
// and oof holds Calibrate's K = 100 samples, the mapping is fitted on them
// instead of training the folds again; the result is the same as
// Calibrate's. With oof nil it is FinishSplit.
func FinishSplitOOF(d *Data, cfg ProtocolConfig, s int, cand Candidate, oof *Samples) (SplitResult, error) {
	cfg.defaults()
	seed := uint64(s + 1)
	_, testRows, err := d.Split(cfg.TestFraction, seed)
	if err != nil {
		return SplitResult{}, err
	}
	tc := cfg.trainConfig(s, cand)
	f, err := Train(d, tc)
	if err != nil {
		return SplitResult{}, err
	}
	mp := cfg.Mapping
	switch {
	case !cfg.Calibrate:
	case oof != nil && oof.p.K == calibrationK && oof.Len() == len(f.Split.Train):
		tc.defaults()
		if mp, err = oof.FitAbove(tc.Mapping.Kind, tc.floor()*float64(f.Model.T)); err != nil {
			return SplitResult{}, err
		}
	default:
		if mp, err = Calibrate(d, f, tc); err != nil {
			return SplitResult{}, err
		}
	}
	r, err := Evaluate(f, d, testRows, cfg.K, seed+2000, mp, cfg.Bins)
	if err != nil {
		return SplitResult{}, err
	}
	return SplitResult{Split: s, Chosen: cand, Mapping: mp, Report: r.Report, Model: f, Eval: r}, nil
}

func pick(rows, idx []int) []int {
	out := make([]int, len(idx))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out
}

// MeanStd returns the mean and sample standard deviation of f over results.
func MeanStd(rs []SplitResult, f func(metrics.Report) float64) (mean, std float64) {
	for _, r := range rs {
		mean += f(r.Report)
	}
	mean /= float64(len(rs))
	if len(rs) > 1 {
		for _, r := range rs {
			d := f(r.Report) - mean
			std += d * d
		}
		std = math.Sqrt(std / float64(len(rs)-1))
	}
	return mean, std
}
