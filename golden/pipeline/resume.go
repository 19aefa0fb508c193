package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/modelfile"
)

// ErrNoLanes is wrapped by ResumeConv's error for a model file without
// the trainer's lanes (written before the record existed) when
// ResumeConfig.ReseedLanes is not set.
var ErrNoLanes = errors.New("the model file has no lane record")

// ResumeConfig configures ResumeConv.
type ResumeConfig struct {
	// Epochs is the epochs to train on top of the file's (>= 1).
	Epochs int
	// SPVBits is the width the new file stores the SPVs at (0: the
	// file's).
	SPVBits int
	// ReseedLanes lets a file without a lane record resume: the lanes
	// are then seeded from the trainer's seed and the epochs done
	// (ResumeLaneSeed), so the model is not the one a single run of all
	// the epochs gives.
	ReseedLanes bool
	// Workers is the goroutines of training and sampling (0: GOMAXPROCS).
	Workers int
	// Progress, RowProgress, CalibrationProgress and
	// FixedCalibrationProgress are ConvConfig's.
	Progress                 func(epoch, epochs int)
	RowProgress              func(done, total int)
	CalibrationProgress      func(done, total int)
	FixedCalibrationProgress func(done, total int)
}

// ResumeLaneSeed is the seed the lanes of a resumed file without a lane
// record start from: the trainer's seed mixed with the epochs done
// (splitmix64 of their sum), so that no lane repeats the first run's
// stream from its start.
func ResumeLaneSeed(seed uint64, epochs int) uint64 {
	return rowSeed(seed, epochs)
}

// ResumeConv continues training the convolutional model f for cfg.Epochs
// more epochs on d, the data it was trained on (same fingerprint, image
// shape and classes), with the file's recipe and trainer parameters: the
// trainer restarts from the stored SPVs (scaled from SPVBits to the
// trainer's width; rounded when the file stores fewer bits), weights,
// lanes and epoch count, trains on the file's training rows, and the
// mapping parameter is fitted again on the validation rows carved when
// the model was first trained (the data's training rows less the file's).
// With the SPVs stored exactly (SPVBits = Trainer.Bits) and the lane
// record, the file returned is the one TrainConv writes for all the
// epochs in one run (with the epochs marked overridden), byte for byte.
func ResumeConv(d *Data, f *modelfile.ConvFile, cfg ResumeConfig) (*modelfile.ConvFile, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: resume: %w", err)
	}
	if cfg.Epochs < 1 {
		return nil, fmt.Errorf("pipeline: resume: %d epochs, want >= 1", cfg.Epochs)
	}
	if f.Trainer.Epochs+cfg.Epochs > 1<<20 {
		return nil, fmt.Errorf("pipeline: resume: %d + %d epochs, at most %d in all", f.Trainer.Epochs, cfg.Epochs, 1<<20)
	}
	sh := f.Head.Shape
	if err := checkConvData(d, f); err != nil {
		return nil, fmt.Errorf("pipeline: resume: %w", err)
	}
	if f.Recipe == nil {
		return nil, fmt.Errorf("pipeline: resume: the model file has no recipe record (not written by ptm train)")
	}
	if f.Lanes == nil && !cfg.ReseedLanes {
		return nil, fmt.Errorf("pipeline: resume: %w (written before lanes were recorded): --reseed-lanes resumes it with new lanes, not the model one run gives", ErrNoLanes)
	}
	sw := cfg.SPVBits
	if sw == 0 {
		sw = f.SPVBits
	}
	fit := f.Split.Train
	val, err := convValRows(d, f)
	if err != nil {
		return nil, fmt.Errorf("pipeline: resume: %w", err)
	}
	rc := convtrain.ImageConfig{WY: sh.WY, WX: sh.WX, Thresholds: slices.Clone(f.Encoder.Thresholds), Adaptive: f.Encoder.Adaptive, JitterSets: f.JitterSets, JitterSpread: f.JitterSpread,
		Structure: f.Head.Structure, Clauses: f.Head.Clauses, T: f.Head.T, S: f.Trainer.S, N: f.Trainer.N, BankBits: f.BankBits,
		WeightClip: f.Trainer.WeightClip, LiteralBudget: f.Trainer.LiteralBudget, BoostTruePositive: f.Trainer.BoostTruePositive,
		Epochs: f.Trainer.Epochs + cfg.Epochs, Mapping: f.Mapping.Kind, K: f.K}
	if err := CheckConvSize(rc, sh.H, sh.W, len(fit)); err != nil {
		return nil, err
	}
	tcfg := rc.Trainer(sh.H, sh.W, f.Head.Classes, f.Trainer.Seed)
	tcfg.Bits = f.Trainer.Bits
	tcfg.Workers = cfg.Workers
	enc := f.Encoder
	X := make([][]bool, len(fit))
	y := make([]int, len(fit))
	var img []uint8
	for i, r := range fit {
		img = pixels(d, r, img)
		if X[i], err = enc.Booleanize(sh, img, nil); err != nil {
			return nil, fmt.Errorf("pipeline: row %d: %w", r+1, err)
		}
		y[i] = d.Y[r]
	}
	tr, err := convtrain.New(tcfg)
	if err != nil {
		return nil, fmt.Errorf("pipeline: resume: %w", err)
	}
	defer tr.Close()
	st := convtrain.State{SPV: make([]uint16, len(f.SPV)), Weights: f.Head.Weights, Epochs: f.Trainer.Epochs}
	up := uint(f.Trainer.Bits - f.SPVBits)
	for i, v := range f.SPV {
		st.SPV[i] = v << up
	}
	if f.Lanes != nil {
		st.Control, st.Lanes = f.Lanes.Control, f.Lanes.Clauses
	} else {
		s := ResumeLaneSeed(f.Trainer.Seed, f.Trainer.Epochs)
		st.Control = fixedtrain.ControlSeed(s)
		st.Lanes = make([]uint64, f.Head.Clauses)
		for c := range st.Lanes {
			st.Lanes[c] = fixedtrain.ClauseSeed(s, c)
		}
	}
	if err := tr.Resume(st); err != nil {
		return nil, fmt.Errorf("pipeline: resume: %w", err)
	}
	tr.Progress = cfg.RowProgress
	for e := 0; e < cfg.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			return nil, fmt.Errorf("pipeline: resume: epoch %d: %w", f.Trainer.Epochs+e+1, err)
		}
		if cfg.Progress != nil {
			cfg.Progress(e+1, cfg.Epochs)
		}
	}
	X = nil
	sp := f.Split
	sp.Train, sp.Test = slices.Clone(sp.Train), slices.Clone(sp.Test)
	recipe := &modelfile.ConvRecipe{Source: f.Recipe.Source, Overridden: withEpochs(f.Recipe.Overridden)}
	return finishConv(tr, d, rc, enc, sp, val, convFinish{Recipe: recipe, Seed: f.Calibration.Seed, SPVBits: sw, Workers: cfg.Workers,
		Progress: cfg.CalibrationProgress, FixedProgress: cfg.FixedCalibrationProgress})
}

// checkConvData checks that d is the data convolutional model f was
// trained on (image shape, classes, rows, fingerprint) and that f has the
// calibration record of ptm train.
func checkConvData(d *Data, f *modelfile.ConvFile) error {
	if err := checkImages(d, f.Head.Shape); err != nil {
		return err
	}
	if !slices.Equal(d.Classes, f.Classes) {
		return fmt.Errorf("classes: the data has %q, the model %q", d.Classes, f.Classes)
	}
	if f.Split.Rows != d.Len() {
		return fmt.Errorf("split.rows: the model was trained on %q with %d rows, this data set has %d", f.Split.Dataset, f.Split.Rows, d.Len())
	}
	if fp := d.Fingerprint(); f.DataFingerprint != fp {
		if f.DataFingerprint == "" {
			return fmt.Errorf("data_fingerprint: the model file records none, so the data cannot be checked")
		}
		return fmt.Errorf("data_fingerprint: the model was trained on %q (fingerprint %.23s...), this data (%q, fingerprint %.23s...) differs", f.Split.Dataset, f.DataFingerprint, d.Name, fp)
	}
	if f.Calibration == nil {
		return fmt.Errorf("the model file has no calibration record (not written by ptm train)")
	}
	return nil
}

// convValRows returns the validation rows TrainConv carved for model f
// from d's training rows (the data's training rows less the file's) and
// checks them against the file's split and calibration record.
func convValRows(d *Data, f *modelfile.ConvFile) ([]int, error) {
	train, test, err := d.Split(f.Split.TestFraction, f.Split.Seed)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(test, f.Split.Test) {
		return nil, fmt.Errorf("split.test: the data's test rows (%d) are not the model's (%d)", len(test), len(f.Split.Test))
	}
	fit := f.Split.Train
	var val []int
	for _, r := range train {
		if _, in := slices.BinarySearch(fit, r); !in {
			val = append(val, r)
		}
	}
	if len(val) != f.Calibration.Rows || len(val)+len(fit) != len(train) {
		return nil, fmt.Errorf("split.train: the model's %d training rows and %d validation rows are not the data's %d training rows", len(fit), f.Calibration.Rows, len(train))
	}
	return val, nil
}

// RefitConvFixed returns a copy of convolutional model f with its
// fixed-point mapping (FixedMapping, Calibration.Fixed) fitted as
// TrainConv fits it, on d, the data f was trained on: the calibration
// rows carved when f was trained, sampled on the fixed-point core at
// f.BankBits. Nothing else changes (the model, the float mapping); a file
// written before the fixed mapping existed gains it. cfg's Workers and
// FixedCalibrationProgress apply; its other fields are not used.
func RefitConvFixed(d *Data, f *modelfile.ConvFile, cfg ResumeConfig) (*modelfile.ConvFile, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: refit: %w", err)
	}
	if err := checkConvData(d, f); err != nil {
		return nil, fmt.Errorf("pipeline: refit: %w", err)
	}
	val, err := convValRows(d, f)
	if err != nil {
		return nil, fmt.Errorf("pipeline: refit: %w", err)
	}
	g := *f
	cal := *f.Calibration
	g.Calibration = &cal
	labels, err := ConvLabels(&g, d, val)
	if err != nil {
		return nil, err
	}
	if err := fitFixed(&g, d, val, labels, cfg.Workers, cfg.FixedCalibrationProgress); err != nil {
		return nil, fmt.Errorf("pipeline: refit: %w", err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: refit: %w", err)
	}
	return &g, nil
}

// withEpochs returns the overridden fields of a recipe record with
// "epochs" among them (a resumed model's epochs are the user's): after
// the trainer's fields `ptm train` names before it (clauses, T, s,
// states), before the rest, as `ptm train --epochs` records it.
func withEpochs(over []string) []string {
	if slices.Contains(over, "epochs") {
		return slices.Clone(over)
	}
	i := 0
	for i < len(over) && slices.Contains([]string{"clauses", "T", "s", "states"}, over[i]) {
		i++
	}
	return slices.Insert(slices.Clone(over), i, "epochs")
}

// tabResume is the state a tabular fixed-point trainer restarts from.
type tabResume struct {
	spv, inc []uint16
	lanes    modelfile.Lanes
	epochs   int
}

// restore puts r into a new trainer t and moves the per-epoch encoding
// draws (epochX) past the epochs done, so that training continues as the
// first run would have.
func (r *tabResume) restore(t *fixedtrain.Trainer, epochX func() [][]bool) error {
	if err := t.Restore(r.spv, r.inc); err != nil {
		return fmt.Errorf("pipeline: resume: %w", err)
	}
	if err := t.SetLane(0, r.lanes.Control); err != nil {
		return fmt.Errorf("pipeline: resume: %w", err)
	}
	for c, s := range r.lanes.Clauses {
		if err := t.SetLane(c+1, s); err != nil {
			return fmt.Errorf("pipeline: resume: %w", err)
		}
	}
	if _, err := t.Lane(len(r.lanes.Clauses) + 1); err == nil {
		return fmt.Errorf("pipeline: resume: %d clause lanes, the trainer has more", len(r.lanes.Clauses))
	}
	for e := 0; e < r.epochs; e++ {
		epochX()
	}
	t.Epochs = r.epochs
	return nil
}

// ResumeTabular continues training the tabular model f, trained by the
// fixed-point trainer (its file holds the FixedTraining record), for
// cfg.Epochs more epochs on d, the data it was trained on (same features,
// classes, rows and fingerprint): the encoding is fitted again on the
// file's training rows as Train does (the same), the trainer restarts from
// the stored SPVs (exact: the trainer's width) and lanes, the sampled
// encoding's per-epoch draws continue where they stopped, and the mapping
// parameter is fitted again when the first run fitted it. The file
// returned is the one Train (TrainAndCalibrate) writes for all the epochs
// in one run with the same settings, byte for byte; a tuned model's
// tuning record is not kept (its hyper-parameters are). cfg.SPVBits and
// cfg.ReseedLanes do not apply.
func ResumeTabular(d *Data, f *modelfile.File, cfg ResumeConfig) (*modelfile.File, error) {
	r := f.FixedTraining
	if r == nil {
		return nil, fmt.Errorf("pipeline: resume: the model file has no fixed-point training record: a float-trained model keeps no integer SPVs or trainer state to continue from (and --fixed models trained with --host-shuffle or --board, or before the record existed, keep no lanes); train it again with the total epochs")
	}
	m := f.Model
	if f.SPVBits != f.Bank.Bits {
		return nil, fmt.Errorf("pipeline: resume: spv_bits: the SPVs are stored at %d bits, the trainer's are %d", f.SPVBits, f.Bank.Bits)
	}
	if cfg.Epochs < 1 {
		return nil, fmt.Errorf("pipeline: resume: %d epochs, want >= 1", cfg.Epochs)
	}
	if err := d.CheckFeatures(f.Features); err != nil {
		return nil, fmt.Errorf("pipeline: resume: features: %w", err)
	}
	if !slices.Equal(d.Classes, f.Classes) {
		return nil, fmt.Errorf("pipeline: resume: classes: the data has %q, the model %q", d.Classes, f.Classes)
	}
	if f.Split.Rows != d.Len() {
		return nil, fmt.Errorf("pipeline: resume: split.rows: the model was trained on %q with %d rows, this data set has %d", f.Split.Dataset, f.Split.Rows, d.Len())
	}
	if fp := d.Fingerprint(); f.DataFingerprint != fp {
		return nil, fmt.Errorf("pipeline: resume: data_fingerprint: the model was trained on %q (fingerprint %.23s...), this data (%q, fingerprint %.23s...) differs", f.Split.Dataset, f.DataFingerprint, d.Name, fp)
	}
	var enc Encoding
	dec := json.NewDecoder(bytes.NewReader(r.Encoding))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&enc); err != nil {
		return nil, fmt.Errorf("pipeline: resume: fixed_training.encoding: %w", err)
	}
	p := m.Params
	p.Epochs += cfg.Epochs
	tc := TrainConfig{Params: p, Thresholds: r.Thresholds, TestFraction: f.Split.TestFraction, SplitSeed: f.Split.Seed, Bits: f.Bank.Bits,
		Mapping: f.Mapping, NoTest: len(f.Split.Test) == 0 && d.FixedTrain == nil, Encoding: &enc, Fixed: true, Workers: cfg.Workers,
		TemperatureFloor: r.TemperatureFloor, Progress: cfg.Progress, RowProgress: cfg.RowProgress, CalibrationProgress: cfg.CalibrationProgress}
	train, test, err := tc.splitRows(d)
	if err != nil {
		return nil, fmt.Errorf("pipeline: resume: %w", err)
	}
	if !slices.Equal(train, f.Split.Train) || !slices.Equal(test, f.Split.Test) {
		return nil, fmt.Errorf("pipeline: resume: split: the data's split (%d training, %d test rows) is not the model's (%d, %d)", len(train), len(test), len(f.Split.Train), len(f.Split.Test))
	}
	st := &tabResume{spv: make([]uint16, len(f.Bank.SPV)), inc: make([]uint16, m.NumTAs()), lanes: r.Lanes, epochs: m.Epochs}
	n := m.N
	for i, v := range f.Bank.SPV {
		st.spv[i] = uint16(v)
		if i%(2*n) >= n {
			st.inc[i/(2*n)] += uint16(v)
		}
	}
	tc.resume = st
	g, err := TrainAndCalibrate(d, tc, r.Calibrate)
	if err != nil {
		return nil, err
	}
	return g, nil
}
