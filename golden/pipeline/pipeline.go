package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Built-in data set names accepted by LoadData (anything else is a CSV path).
const (
	Iris         = "iris"          // the Iris data set (150 rows, 4 features, 3 classes)
	Wine         = "wine"          // UCI wine (178 rows, 13 features, 3 classes)
	BreastCancer = "breast-cancer" // Wisconsin diagnostic breast cancer (569 rows, 30 features, 2 classes)
	XOR          = "xor"           // the paper's noise-free XOR: 2 features, 1000 rows
	XORNoisy     = "xor-noisy"     // the paper's XOR with 30% label noise
	XORClassic   = "xor-classic"   // 12 features (2 informative): 5000 training rows with 40% label noise, then 5000 clean test rows
	MNIST        = "mnist"         // MNIST digits: 60,000 training then 10,000 test images of 28 x 28 pixels, 10 classes
	FashionMNIST = "fashion-mnist" // Zalando's Fashion-MNIST, laid out as MNIST (Debian package dataset-fashion-mnist)
)

// Data is a loaded data set with its fixed split, if it has one.
type Data struct {
	*dataset.Dataset
	// FixedTrain/FixedTest are set for data sets whose split is part of
	// their definition (xor-classic, and every data set with a
	// dataset.Dataset.Predefined split: mnist, fashion-mnist, an IDX
	// folder with test files); others are split by StratifiedSplit.
	FixedTrain, FixedTest []int
}

// LoadData returns a built-in data set by name, reads an IDX data set
// folder (dataset.LoadIDXDir: the training and test images and labels in
// their standard file names) or reads a CSV file (label column by name,
// or the last column when label is empty).
func LoadData(name, label string) (*Data, error) {
	return loadData(name, dataset.CSVOptions{Label: label})
}

// withSplit wraps d, taking its predefined split as the fixed one.
func withSplit(d *dataset.Dataset) *Data {
	if p := d.Predefined; p != nil {
		return &Data{Dataset: d, FixedTrain: p.Train, FixedTest: p.Test}
	}
	return &Data{Dataset: d}
}

func loadData(name string, opt dataset.CSVOptions) (*Data, error) {
	switch name {
	case Iris:
		return &Data{Dataset: dataset.Iris()}, nil
	case Wine:
		return &Data{Dataset: dataset.Wine()}, nil
	case BreastCancer:
		return &Data{Dataset: dataset.BreastCancer()}, nil
	case XOR:
		return &Data{Dataset: dataset.NoisyXOR(1000, 0, 1)}, nil
	case XORNoisy:
		return &Data{Dataset: dataset.NoisyXOR(1000, 0.3, 1)}, nil
	case XORClassic:
		train := dataset.NoisyXORClassic(5000, 0.4, 1)
		test := dataset.NoisyXORClassic(5000, 0, 2)
		d := train.Clone()
		d.Name = XORClassic
		d.X = append(d.X, test.X...)
		d.Y = append(d.Y, test.Y...)
		tr, te := make([]int, 5000), make([]int, 5000)
		for i := range tr {
			tr[i], te[i] = i, 5000+i
		}
		return &Data{Dataset: d, FixedTrain: tr, FixedTest: te}, nil
	case MNIST, FashionMNIST:
		load := dataset.MNIST
		if name == FashionMNIST {
			load = dataset.FashionMNIST
		}
		d, err := load(opt.Progress)
		if err != nil {
			return nil, err
		}
		return withSplit(d), nil
	}
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		d, err := dataset.LoadIDXDir(name, dataset.IDXOptions{Progress: opt.Progress})
		if err != nil {
			return nil, err
		}
		return withSplit(d), nil
	}
	if isIDXFile(name) {
		return nil, fmt.Errorf("pipeline: %s is an IDX file: it holds images or labels alone; give the folder that holds %s",
			name, strings.Join(dataset.IDXFiles[:], ", "))
	}
	return loadCSV(name, opt)
}

// isIDXFile says whether name is named like an IDX file (MNIST's
// train-images-idx3-ubyte, x.idx, their .gz forms).
func isIDXFile(name string) bool {
	base := strings.TrimSuffix(filepath.Base(name), ".gz")
	return strings.HasSuffix(base, ".idx") || strings.Contains(base, "-idx1-ubyte") || strings.Contains(base, "-idx3-ubyte") || strings.HasSuffix(base, "ubyte")
}

// Split returns the training and test rows: the data set's own split when
// it has one, else a stratified split with the given fraction and seed.
func (d *Data) Split(testFraction float64, seed uint64) (train, test []int, err error) {
	if d.FixedTrain != nil {
		return d.FixedTrain, d.FixedTest, nil
	}
	if !(testFraction > 0 && testFraction < 1) {
		return nil, nil, fmt.Errorf("pipeline: test fraction %v, want 0 < f < 1", testFraction)
	}
	train, test = dataset.StratifiedSplit(d.Y, len(d.Classes), testFraction, seed)
	if len(train) == 0 || len(test) == 0 {
		return nil, nil, fmt.Errorf("pipeline: %d rows split into %d training and %d test rows", d.Len(), len(train), len(test))
	}
	return train, test, nil
}

// TrainConfig configures Train.
type TrainConfig struct {
	Params       ptm.Params
	Thresholds   int         // thermometer thresholds per feature (default 6)
	TestFraction float64     // held-out fraction (default 0.2)
	SplitSeed    uint64      // seed of the stratified split
	Bits         int         // quantization width stored in the file (default 16)
	Mapping      ptm.Mapping // default mapping stored in the file
	// Rows, if set, trains on exactly these rows instead of the split's
	// training rows (used for validation sweeps).
	Rows []int
	// Progress, if set, is called after every epoch.
	Progress func(epoch, epochs int)
	// RowProgress, if set, is called within every epoch (ptm.Trainer.Progress).
	RowProgress func(row, rows int)
	// NoTest holds out no rows: the model trains on every row and records
	// an empty test split (--test-fraction 0). Data sets with their own
	// split keep it.
	NoTest bool
	// Encoding configures the sampled input encoding; nil means
	// DefaultEncoding. &Encoding{Sets: 1} is the paper's plain PTM (one
	// thermometer).
	Encoding *Encoding
	// Fixed trains with the bit-exact fixed-point trainer
	// (golden/fixedtrain, docs/fixed-point-training.md) instead of the
	// float one; Bits is then its SPV width (default 15, at most 15).
	Fixed bool
	// Workers bounds the goroutines of the fixed-point trainer (0:
	// GOMAXPROCS); the model does not depend on it.
	Workers int
	// HostShuffle (with Fixed) shuffles every epoch with the host's
	// shuffle lane (fixedtrain.NewShuffler) and trains the rows in that
	// order, so the control lane makes only the negative-class draws: the
	// order of a hardware trainer that leaves the shuffle to the host
	// (docs/fixed-point-training.md 5.1). The model differs from the
	// control-lane shuffle's.
	HostShuffle bool
	// NewRowTrainer, if set (with Fixed), makes the trainer that trains
	// the host-shuffled rows (HostShuffle is implied), e.g. a training
	// board (host/trainboard); nil means the golden fixed-point trainer.
	// It is called once per model trained (Calibrate's folds included).
	NewRowTrainer func(cfg fixedtrain.Config, classes, features int, binary bool) (RowTrainer, error)
	// CalibrationProgress, if set, is called while TrainAndCalibrate
	// calibrates: done of total steps, over every fold's training
	// (epoch by epoch, row by row) and sampling.
	CalibrationProgress func(done, total int)
	// planCalibration: Calibrate follows this training (TrainAndCalibrate),
	// so its memory is planned with it (checkTrainSize).
	planCalibration bool
	// resume, if set (with Fixed), restarts the trainer from a model
	// file's state (ResumeTabular).
	resume *tabResume
	// TemperatureFloor bounds Calibrate's softmax temperature below, in
	// units of the clip bound T (the unit of the class scores): the fit
	// chooses among the grid's temperatures >= TemperatureFloor * T.
	// 0 means DefaultTemperatureFloor; a negative value, no floor (the
	// grid's 1/16, the fit before docs/uncertainty.md section 9).
	TemperatureFloor float64
}

// DefaultTemperatureFloor is the TemperatureFloor of a TrainConfig that
// sets none. Without a floor, the NLL fit on the out-of-fold predictions
// runs to the grid's 1/16 (the vote in all but name) whenever the few
// out-of-fold errors do not hold it back, and the test errors of such a
// model come with near-zero entropy. 0.05 T (e.g. 0.5 for T = 10, 1 for
// T = 20) was chosen by a nested cross-validation of the fit on the
// training rows of iris, wine and breast cancer: it is the floor whose
// validation NLL is no worse than the unbounded fit's on any of the three
// and best in total (docs/uncertainty.md section 9).
var DefaultTemperatureFloor = 0.05

// floor returns the temperature floor of c in units of T (0 = none).
func (c *TrainConfig) floor() float64 {
	switch {
	case c.TemperatureFloor == 0:
		return DefaultTemperatureFloor
	case c.TemperatureFloor < 0:
		return 0
	}
	return c.TemperatureFloor
}

// Encoding configures the sampled input encoding of a model
// (booleanize.Sets, docs/uncertainty.md).
type Encoding struct {
	Sets      int     `json:"sets"`                // M threshold sets; 1 = the plain thermometer
	Bandwidth float64 `json:"bandwidth"`           // threshold jitter, in feature standard deviations
	Margin    float64 `json:"margin,omitempty"`    // out-of-range reversion margin, in feature standard deviations (0 = off)
	WholeRow  bool    `json:"whole_row,omitempty"` // revert the whole row, not only the out-of-range feature
	// Cuts places the thresholds (booleanize.Cuts: quantile, supervised or
	// mdl, optionally -boot; "" = quantile; docs/uncertainty.md section 13).
	Cuts booleanize.Cuts `json:"cuts,omitempty"`
	// TrainBandwidth, if set, is the jitter of the sets that encode the
	// training rows (per row and epoch), in feature standard deviations,
	// instead of Bandwidth; 0 trains on the plain thermometer alone. The
	// model's sets, and so inference, keep Bandwidth. A study knob
	// (docs/uncertainty.md section 14); nil, the default, trains on the
	// inference sets.
	TrainBandwidth *float64 `json:"train_bandwidth,omitempty"`
}

// Plain is the encoding of the paper's PTM: one thermometer, nothing
// sampled but the automata.
var Plain = Encoding{Sets: 1}

// Validate checks the encoding's ranges.
func (e Encoding) Validate() error {
	if e.Sets < 1 || e.Sets > booleanize.MaxSets {
		return fmt.Errorf("pipeline: %d encoding sets, want 1..%d", e.Sets, booleanize.MaxSets)
	}
	if !(e.Bandwidth >= 0 && e.Bandwidth <= 10) || !(e.Margin >= 0 && e.Margin <= 100) {
		return fmt.Errorf("pipeline: encoding bandwidth %v and margin %v, want 0..10 and 0..100", e.Bandwidth, e.Margin)
	}
	if tb := e.TrainBandwidth; tb != nil && !(*tb >= 0 && *tb <= 10) {
		return fmt.Errorf("pipeline: encoding training bandwidth %v, want 0..10", *tb)
	}
	if err := e.Cuts.Validate(); err != nil {
		return fmt.Errorf("pipeline: encoding: %w", err)
	}
	return nil
}

func (c *TrainConfig) defaults() {
	if c.Thresholds == 0 {
		c.Thresholds = 6
	}
	if c.TestFraction == 0 {
		c.TestFraction = 0.2
	}
	if c.Bits == 0 {
		c.Bits = 16
		if c.Fixed {
			c.Bits = fixedtrain.DefaultBits
		}
	}
	if c.Mapping.Kind == "" {
		c.Mapping = DefaultMapping
	}
	if c.Encoding == nil {
		e := DefaultEncoding
		c.Encoding = &e
	}
}

// DefaultMapping is the per-sample probability mapping used when none is
// chosen: the softmax of each sample's clipped class sums. Its temperature
// is fitted by 4-fold cross-validation on the training rows when
// DefaultCalibrate is set (the default of `ptm train`); 1 is the value used
// without calibration. With the sampled encoding it ranks errors better than
// the vote on validation rows of all three data sets (docs/uncertainty.md).
var DefaultMapping = ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}

// PlainMapping is the mapping of the plain PTM before the sampled encoding:
// each sample's vote smoothed by 0.05 towards uniform (docs/calibration.md).
var PlainMapping = ptm.Mapping{Kind: ptm.Vote, Smoothing: 0.05}

// Train splits d, fits the booleanizer on the training rows, trains a PTM
// and returns the complete model file.
func Train(d *Data, cfg TrainConfig) (*modelfile.File, error) {
	cfg.defaults()
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Mapping.Validate(); err != nil {
		return nil, err
	}
	if err := fixed.CheckBits(cfg.Bits); err != nil {
		return nil, err
	}
	if cfg.Fixed && cfg.Bits > fixedtrain.MaxBits {
		return nil, fmt.Errorf("pipeline: the fixed-point trainer keeps %d-bit SPVs at most, not %d (docs/fixed-point-training.md 1)", fixedtrain.MaxBits, cfg.Bits)
	}
	if err := cfg.checkConfig(); err != nil {
		return nil, err
	}
	if err := cfg.Encoding.Validate(); err != nil {
		return nil, err
	}
	trainRows, testRows, err := cfg.splitRows(d)
	if err != nil {
		return nil, err
	}
	rows := trainRows
	if cfg.Rows != nil {
		rows = cfg.Rows
	}
	// A view: the training rows are read, never changed; a copy would
	// cost 376 MB on MNIST.
	tr := d.View(rows)
	enc := cfg.Encoding
	th, err := booleanize.FitCuts(tr.X, tr.Y, len(d.Classes), cfg.Thresholds, enc.Cuts)
	if err != nil {
		return nil, fmt.Errorf("pipeline: booleanizer: %w", err)
	}
	var sets *booleanize.Sets
	scfg := booleanize.SetsConfig{
		PerFeature: cfg.Thresholds, M: enc.Sets, Bandwidth: enc.Bandwidth, Margin: enc.Margin, Seed: cfg.Params.Seed, WholeRow: enc.WholeRow, Cuts: enc.Cuts}
	if enc.Sets > 1 || enc.Margin > 0 {
		sets, err = booleanize.FitSets(tr.X, tr.Y, len(d.Classes), scfg)
		if err != nil {
			return nil, fmt.Errorf("pipeline: encoding: %w", err)
		}
	}
	X, err := th.EncodeAll(tr.X)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	trainSets := sets
	if tb := enc.TrainBandwidth; tb != nil && sets != nil {
		trainSets = nil
		if *tb > 0 {
			tcfg := scfg
			tcfg.Bandwidth = *tb
			trainSets, err = booleanize.FitSets(tr.X, tr.Y, len(d.Classes), tcfg)
			if err != nil {
				return nil, fmt.Errorf("pipeline: training encoding: %w", err)
			}
		}
	}
	epochX, err := augmenter(trainSets, tr, X, cfg.Params.Seed)
	if err != nil {
		return nil, err
	}
	nc := len(d.Classes)
	calibRows := 0
	if cfg.planCalibration {
		calibRows = len(rows)
	}
	if err := checkTrainSize(nc, th.NumBits(), cfg.Params, calibRows); err != nil {
		return nil, err
	}
	m, bank, lanes, err := trainModel(cfg, nc, th.NumBits(), epochX, tr.Y)
	if err != nil {
		return nil, err
	}
	f := &modelfile.File{
		Model: m, Booleanizer: th, Features: d.Features, Classes: d.Classes,
		Split: modelfile.Split{Dataset: d.Name, Rows: d.Len(), Seed: cfg.SplitSeed, TestFraction: cfg.TestFraction,
			Train: trainRows, Test: testRows},
		Mapping: cfg.Mapping, Bank: bank, Encoding: sets,
	}
	if lanes != nil && enc.TrainBandwidth == nil && cfg.Rows == nil {
		ej, err := json.Marshal(enc)
		if err != nil {
			return nil, fmt.Errorf("pipeline: encoding: %w", err)
		}
		f.FixedTraining = &modelfile.FixedTraining{Lanes: *lanes, Thresholds: cfg.Thresholds, Encoding: ej,
			Calibrate: cfg.planCalibration, TemperatureFloor: cfg.TemperatureFloor}
	}
	f.DataFingerprint = d.Fingerprint()
	// The model as a model file stores it (SPVs at 16 bits, or at the
	// fixed-point trainer's width, which changes nothing), so that it
	// evaluates the same before and after a write and read.
	if _, err := f.Canonicalize(); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// trainModel trains the PTM of Train on the rows epochX returns each epoch
// and quantizes it: with the float trainer and fixed.Quantize, or with the
// fixed-point trainer, whose SPVs are the bank (cfg.Fixed).
//
// With the fixed-point trainer and its control lane's shuffle it also
// returns the lanes at the end of training (nil otherwise); cfg.resume
// restarts that trainer from a model file's state (ResumeTabular).
func trainModel(cfg TrainConfig, nc, features int, epochX func() [][]bool, y []int) (*ptm.Model, *fixed.Bank, *modelfile.Lanes, error) {
	if cfg.Fixed && (cfg.HostShuffle || cfg.NewRowTrainer != nil) {
		m, bank, err := trainHostShuffled(cfg, nc, features, epochX, y)
		return m, bank, nil, err
	}
	if cfg.Fixed {
		t, err := fixedtrain.New(fixedtrain.Config{Params: cfg.Params, Bits: cfg.Bits, Workers: cfg.Workers}, nc, features, nc == 2)
		if err != nil {
			return nil, nil, nil, err
		}
		if r := cfg.resume; r != nil {
			if err := r.restore(t, epochX); err != nil {
				return nil, nil, nil, err
			}
		}
		t.Progress = cfg.RowProgress
		for e := t.Epochs; e < cfg.Params.Epochs; e++ {
			if err := t.RunEpoch(epochX(), y); err != nil {
				return nil, nil, nil, err
			}
			if cfg.Progress != nil {
				cfg.Progress(e+1, cfg.Params.Epochs)
			}
		}
		m, err := t.Model()
		if err != nil {
			return nil, nil, nil, err
		}
		bank, err := t.Bank()
		if err != nil {
			return nil, nil, nil, err
		}
		ln := &modelfile.Lanes{Clauses: make([]uint64, t.NumTAs()/(2*features))}
		for i := 0; i <= len(ln.Clauses); i++ {
			s, err := t.Lane(i)
			if err != nil {
				return nil, nil, nil, err
			}
			if i == 0 {
				ln.Control = s
			} else {
				ln.Clauses[i-1] = s
			}
		}
		return m, bank, ln, nil
	}
	m, err := ptm.New(cfg.Params, nc, features, nc == 2)
	if err != nil {
		return nil, nil, nil, err
	}
	t := ptm.NewTrainer(m)
	t.Progress = cfg.RowProgress
	for e := 0; e < cfg.Params.Epochs; e++ {
		if err := t.RunEpoch(epochX(), y); err != nil {
			return nil, nil, nil, err
		}
		if cfg.Progress != nil {
			cfg.Progress(e+1, cfg.Params.Epochs)
		}
	}
	bank, err := fixed.Quantize(m, cfg.Bits)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, bank, nil, nil
}

// RowTrainer trains a fixed-point PTM (golden/fixedtrain's contract) on
// rows in the order given: the host has shuffled them.
type RowTrainer interface {
	// TrainRows trains on every row of X (labels y) in order.
	TrainRows(X [][]bool, y []int) error
	// Trained returns the trained model and its bank after epochs epochs.
	Trained(epochs int) (*ptm.Model, *fixed.Bank, error)
}

// goldenRows is the golden fixed-point trainer as a RowTrainer.
type goldenRows struct{ t *fixedtrain.Trainer }

func (g goldenRows) TrainRows(X [][]bool, y []int) error {
	for r := range X {
		if err := g.t.Update(X[r], y[r]); err != nil {
			return err
		}
	}
	return nil
}

func (g goldenRows) Trained(epochs int) (*ptm.Model, *fixed.Bank, error) {
	g.t.Epochs = epochs
	m, err := g.t.Model()
	if err != nil {
		return nil, nil, err
	}
	bank, err := g.t.Bank()
	return m, bank, err
}

// trainHostShuffled is trainModel with the host's shuffle lane
// (TrainConfig.HostShuffle, NewRowTrainer).
func trainHostShuffled(cfg TrainConfig, nc, features int, epochX func() [][]bool, y []int) (*ptm.Model, *fixed.Bank, error) {
	fc := fixedtrain.Config{Params: cfg.Params, Bits: cfg.Bits, Workers: cfg.Workers}
	var rt RowTrainer
	if cfg.NewRowTrainer != nil {
		var err error
		if rt, err = cfg.NewRowTrainer(fc, nc, features, nc == 2); err != nil {
			return nil, nil, err
		}
	} else {
		t, err := fixedtrain.New(fc, nc, features, nc == 2)
		if err != nil {
			return nil, nil, err
		}
		rt = goldenRows{t}
	}
	clauses := cfg.Params.Clauses * nc
	if nc == 2 {
		clauses = cfg.Params.Clauses
	}
	sh := fixedtrain.NewShuffler(cfg.Params.Seed, clauses)
	for e := 0; e < cfg.Params.Epochs; e++ {
		X := epochX()
		if len(X) != len(y) {
			return nil, nil, fmt.Errorf("pipeline: %d rows but %d labels", len(X), len(y))
		}
		order := sh.Order(len(X))
		ox, oy := make([][]bool, len(X)), make([]int, len(X))
		for k, r := range order {
			ox[k], oy[k] = X[r], y[r]
		}
		if err := rt.TrainRows(ox, oy); err != nil {
			return nil, nil, err
		}
		if cfg.RowProgress != nil {
			cfg.RowProgress(len(X), len(X))
		}
		if cfg.Progress != nil {
			cfg.Progress(e+1, cfg.Params.Epochs)
		}
	}
	return rt.Trained(cfg.Params.Epochs)
}

// Rows returns the rows of d named by split ("train", "test" or "all") as
// recorded in the model file, checking that d is the data set the model
// was trained on.
func Rows(f *modelfile.File, d *Data, split string) ([]int, error) {
	if err := d.CheckFeatures(f.Features); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return rowsOfSplit(d, &f.Split, f.DataFingerprint, split, tabularNoTest)
}

// The advice of rowsOfSplit's error for a model that holds out no test
// rows: a tabular model was trained with --test-fraction 0; a
// convolutional model's data had a predefined split without test images.
const (
	tabularNoTest = " (trained with --test-fraction 0): use --test-data FILE or --split all"
	convNoTest    = ": use --split all on a separate data set"
)

// rowsOfSplit returns the rows of d that split names: every row for "all";
// for "train" and "test" the rows sp records, when d is the data the
// model was trained on: sp's number of rows and, when the model records
// one (model files before fingerprints do not), its data fingerprint fp.
// A "test" split without rows is an error ending in noTest, the advice
// for the model's kind. Rows and ConvRows check d's features or image
// shape first.
func rowsOfSplit(d *Data, sp *modelfile.Split, fp, split, noTest string) ([]int, error) {
	switch split {
	case "all":
		rows := make([]int, d.Len())
		for i := range rows {
			rows[i] = i
		}
		return rows, nil
	case "train", "test":
		if sp.Rows != d.Len() {
			return nil, fmt.Errorf("pipeline: the model was trained on %q with %d rows, this data set has %d: --split %s needs the same data", sp.Dataset, sp.Rows, d.Len(), split)
		}
		if fp != "" {
			if dfp := d.Fingerprint(); dfp != fp {
				return nil, fmt.Errorf("pipeline: the model was trained on %q (fingerprint %.23s...), this data (%q, fingerprint %.23s...) differs: --split %s picks rows by index and needs the same data; use --split all, or --test-data FILE for a separate test file",
					sp.Dataset, fp, d.Name, dfp, split)
			}
		}
		if split == "train" {
			return sp.Train, nil
		}
		if len(sp.Test) == 0 {
			return nil, fmt.Errorf("pipeline: the model holds out no test rows%s", noTest)
		}
		return sp.Test, nil
	}
	return nil, fmt.Errorf("pipeline: unknown split %q (want train, test or all)", split)
}

// Labels maps d's class names onto the model's classes; a label the model
// does not know is an error naming the row.
func Labels(f *modelfile.File, d *Data, rows []int) ([]int, error) {
	return labelsOf(f.Classes, d, rows)
}

// labelsOf maps d's labels of rows onto classes by name, for models of
// either kind.
func labelsOf(classes []string, d *Data, rows []int) ([]int, error) {
	idx := map[string]int{}
	for i, c := range classes {
		idx[c] = i
	}
	out := make([]int, len(rows))
	for i, r := range rows {
		name := d.Classes[d.Y[r]]
		c, ok := idx[name]
		if !ok {
			return nil, fmt.Errorf("pipeline: row %d has label %q, which the model does not know (classes: %s)", r+1, name, strings.Join(classes, ", "))
		}
		out[i] = c
	}
	return out, nil
}

// EvalResult holds per-query statistics and the aggregate report.
type EvalResult struct {
	Report  metrics.Report
	Queries []metrics.QueryStats
	Labels  []int
	Rows    []int
}

// Evaluate draws K samples for every row, maps them with mp and computes the
// metrics (ECE with bins equal-width bins). seed fixes the sampler.
func Evaluate(f *modelfile.File, d *Data, rows []int, K int, seed uint64, mp ptm.Mapping, bins int) (*EvalResult, error) {
	s := ptm.NewSampler(f.Model, seed)
	return evaluate(f, d, rows, K, mp, bins, func(r int, sums []int) ([]int, error) {
		return SampleRow(f, s, d.X[r], K, sums)
	})
}

// EvaluateFixed is Evaluate for the fixed-point model the hardware runs
// (golden/fixed, bit-exact with the board): the bank on lanes h, row r
// (a data row index) queried with seed seed + r over every set of the
// model's input encoding (fixed.Core.RunSets), as `ptm stream` queries a
// board. Its figures are the ones a board's stream report must equal.
func EvaluateFixed(f *modelfile.File, bank *fixed.Bank, h fixed.HW, d *Data, rows []int, K int, seed uint32, mp ptm.Mapping, bins int) (*EvalResult, error) {
	core, err := fixed.NewCore(bank, h)
	if err != nil {
		return nil, fmt.Errorf("pipeline: fixed-point core: %w", err)
	}
	var raw []int32
	return evaluate(f, d, rows, K, mp, bins, func(r int, sums []int) ([]int, error) {
		xs, err := f.EncodeSets(d.X[r])
		if err != nil {
			return nil, err
		}
		if raw, _, err = core.RunSets(xs, K, seed+uint32(r), raw); err != nil {
			return nil, err
		}
		sums = sums[:0]
		for _, v := range raw {
			sums = append(sums, int(v))
		}
		return sums, nil
	})
}

// evaluate maps the K class sums that sample draws for each row (reusing
// its buffer) with mp and computes the metrics.
func evaluate(f *modelfile.File, d *Data, rows []int, K int, mp ptm.Mapping, bins int, sample func(r int, sums []int) ([]int, error)) (*EvalResult, error) {
	if err := mp.Validate(); err != nil {
		return nil, err
	}
	if err := CheckSamples(f, K); err != nil {
		return nil, err
	}
	labels, err := Labels(f, d, rows)
	if err != nil {
		return nil, err
	}
	res := &EvalResult{Labels: labels, Rows: rows, Queries: make([]metrics.QueryStats, len(rows))}
	var sums []int
	for i, r := range rows {
		if sums, err = sample(r, sums); err != nil {
			return nil, fmt.Errorf("pipeline: row %d: %w", r+1, err)
		}
		res.Queries[i] = metrics.Query(f.Model.SumsToProbs(sums, K, mp))
	}
	res.Report = metrics.Evaluate(res.Queries, labels, bins)
	return res, nil
}

// FitMapping chooses the parameter of a mapping kind that minimizes the
// NLL of the K-sample predictive mean on the given rows: the vote smoothing
// from a grid over [0, 0.3], or the softmax temperature from 1/16 to 16 in
// steps of 2^(1/4). The samples are drawn once and re-mapped per candidate.
func FitMapping(f *modelfile.File, d *Data, rows []int, K int, seed uint64, kind ptm.MappingKind) (ptm.Mapping, error) {
	var p pooled
	if err := p.add(f, d, rows, K, seed); err != nil {
		return ptm.Mapping{}, err
	}
	return p.fit(kind)
}

// pooled holds K-sample class sums of rows from one or several models, so
// that a mapping parameter can be fitted on all of them at once.
type pooled struct {
	models []*ptm.Model
	sums   [][]int
	labels []int
	K      int
	// progress, if set, is called by add every 64 rows (rows sampled of
	// rows to sample).
	progress func(done, total int)
	// rowsDone, if set, is called by every pass over the rows (nll, the
	// reports of scorePooledProgress) every passStep rows and at the end
	// of the pass with the rows done in it: a pass over 160,000 rows of
	// K = 100 takes over 10 s.
	rowsDone func(row int)
}

// passStep is how many rows a pass over pooled samples goes between two
// calls of pooled.rowsDone.
const passStep = 4096

func (p *pooled) add(f *modelfile.File, d *Data, rows []int, K int, seed uint64) error {
	labels, err := Labels(f, d, rows)
	if err != nil {
		return err
	}
	s := ptm.NewSampler(f.Model, seed)
	mm := mappingModel(f.Model)
	for i, r := range rows {
		if p.progress != nil && i%64 == 0 {
			p.progress(i, len(rows))
		}
		sums, err := SampleRow(f, s, d.X[r], K, nil)
		if err != nil {
			return fmt.Errorf("pipeline: row %d: %w", r+1, err)
		}
		p.models = append(p.models, mm)
		p.sums = append(p.sums, sums)
		p.labels = append(p.labels, labels[i])
	}
	p.K = K
	return nil
}

func (p *pooled) fit(kind ptm.MappingKind) (ptm.Mapping, error) {
	return p.fitAbove(kind, 0)
}

// fitAbove is fit with the softmax grid restricted to temperatures >= min
// (when min exceeds the grid, its largest temperature).
func (p *pooled) fitAbove(kind ptm.MappingKind, min float64) (ptm.Mapping, error) {
	cands, err := mappingCandidates(kind, min)
	if err != nil {
		return ptm.Mapping{}, err
	}
	best, bestNLL := cands[0], math.Inf(1)
	for _, mp := range cands {
		if nll := p.nll(mp); nll < bestNLL {
			best, bestNLL = mp, nll
		}

	}
	return best, nil
}

// mappingCandidates is the grid a mapping parameter is fitted on: the
// vote smoothing over [0, 0.3], or the softmax temperature from 1/16 to
// 16 in steps of 2^(1/4), restricted to temperatures >= min (when min
// exceeds the grid, its largest temperature).
func mappingCandidates(kind ptm.MappingKind, min float64) ([]ptm.Mapping, error) {
	var cands []ptm.Mapping
	switch kind {
	case ptm.Vote:
		for _, e := range []float64{0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3} {
			cands = append(cands, ptm.Mapping{Kind: ptm.Vote, Smoothing: e})
		}
	case ptm.Softmax:
		for e := -16; e <= 16; e++ {
			if t := math.Pow(2, float64(e)/4); t >= min*(1-1e-12) || e == 16 {
				cands = append(cands, ptm.Mapping{Kind: ptm.Softmax, Temperature: t})
			}
		}
	default:
		return nil, fmt.Errorf("pipeline: cannot fit mapping kind %q", kind)
	}
	return cands, nil
}

// CalibrationFolds is the number of cross-validation folds Calibrate uses.
const CalibrationFolds = 4

// Calibrate fits the parameter of cfg's mapping kind without touching the
// test rows: it splits f's training rows into CalibrationFolds stratified
// folds (seeded from the split seed), trains cfg on all but one fold in
// turn, samples the held-out fold, and fits the parameter by NLL on the
// pooled out-of-fold predictions of every training row (OutOfFold, then
// Samples.FitAbove). A softmax temperature is chosen among the grid's
// temperatures >= cfg's temperature floor times the model's T
// (TrainConfig.TemperatureFloor).
//
// The samples are not kept: every held-out row's NLL under every candidate
// parameter is added up as the row is sampled (in the row order
// Samples.FitAbove sums them, so the choice is the same), and the memory
// of the calibration does not grow with the rows (issue 31 item 4: K = 100
// samples of 800,000 training rows planned 4.62 GiB).
func Calibrate(d *Data, f *modelfile.File, cfg TrainConfig) (ptm.Mapping, error) {
	cfg.defaults()
	cands, err := mappingCandidates(cfg.Mapping.Kind, cfg.floor()*float64(f.Model.T))
	if err != nil {
		return ptm.Mapping{}, err
	}
	n := &nllSums{cands: cands, nll: make([]float64, len(cands))}
	if err := foldsInto(d, f.Split.Train, cfg, calibrationK, nil, n); err != nil {
		return ptm.Mapping{}, err
	}
	best, bestNLL := cands[0], math.Inf(1)
	for c, mp := range cands {
		if n.nll[c] < bestNLL {
			best, bestNLL = mp, n.nll[c]
		}
	}
	return best, nil
}

// foldSink takes the held-out rows of each fold of foldsInto: pooled
// keeps their samples, nllSums only the NLL of every candidate mapping.
type foldSink interface {
	// add samples rows through f (K samples each, sampler seed seed).
	add(f *modelfile.File, d *Data, rows []int, K int, seed uint64) error
	// setProgress sets the hook add calls every 64 rows (nil: none).
	setProgress(func(done, total int))
}

func (p *pooled) setProgress(fn func(done, total int)) { p.progress = fn }

// nllSums adds up, per candidate mapping, the NLL of the K-sample
// predictive mean of every row it is given (as pooled.nll does on kept
// samples, row by row in the same order), keeping no samples.
type nllSums struct {
	cands    []ptm.Mapping
	nll      []float64
	progress func(done, total int)
	sums     []int
	sc, pr   []float64
}

// meanProb is metrics.Query(m.SumsToProbs(sums, K, mp)).Mean[label],
// the same additions in the same order (so the same float64), without
// the other statistics or any allocation; sc and pr are scratch buffers.
func meanProb(m *ptm.Model, sums []int, K int, mp ptm.Mapping, label int, sc, pr *[]float64) float64 {
	nt := m.NumTMs()
	var acc float64
	for k := 0; k < K; k++ {
		*sc = m.Scores(sums[k*nt:(k+1)*nt], *sc)
		*pr = mp.Prob(*sc, *pr)
		acc += (*pr)[label]
	}
	return acc / float64(K)
}

func (n *nllSums) setProgress(fn func(done, total int)) { n.progress = fn }

func (n *nllSums) add(f *modelfile.File, d *Data, rows []int, K int, seed uint64) error {
	labels, err := Labels(f, d, rows)
	if err != nil {
		return err
	}
	s := ptm.NewSampler(f.Model, seed)
	for i, r := range rows {
		if n.progress != nil && i%64 == 0 {
			n.progress(i, len(rows))
		}
		sums, err := SampleRow(f, s, d.X[r], K, n.sums)
		if err != nil {
			return fmt.Errorf("pipeline: row %d: %w", r+1, err)
		}
		n.sums = sums
		for c, mp := range n.cands {
			n.nll[c] -= math.Log(math.Max(meanProb(f.Model, sums, K, mp, labels[i], &n.sc, &n.pr), metrics.NLLFloor))
		}
	}
	return nil
}

// OutOfFold returns the K = 100 samples of every training row of f from a
// CalibrationFolds-fold cross-validation on the training rows: the folds
// are stratified (each class's rows shuffled with a PCG seeded from the
// split seed and dealt round-robin); cfg is trained on all but one fold in
// turn and the held-out fold sampled (seed cfg.Params.Seed + fold). These
// are the predictions Calibrate fits on; the test rows play no part.
func OutOfFold(d *Data, f *modelfile.File, cfg TrainConfig) (*Samples, error) {
	return outOfFold(d, f.Split.Train, cfg, calibrationK, nil)
}

// calibrationK is the number of samples per row of OutOfFold.
const calibrationK = 100

// outOfFold is OutOfFold on the training rows rows with K samples per
// held-out row; onFold, if set, is called while fold i's held-out rows
// are sampled (done of total rows, every 64 rows) and once the fold is
// done (done = total).
func outOfFold(d *Data, rows []int, cfg TrainConfig, K int, onFold func(fold, done, total int)) (*Samples, error) {
	s := &Samples{}
	if err := foldsInto(d, rows, cfg, K, onFold, &s.p); err != nil {
		return nil, err
	}
	return s, nil
}

// foldsInto is outOfFold giving each fold's held-out rows to sink.
func foldsInto(d *Data, rows []int, cfg TrainConfig, K int, onFold func(fold, done, total int), sink foldSink) error {
	cfg.defaults()
	cfg.Progress = nil
	folds := make([][]int, CalibrationFolds)
	y := make([]int, len(rows))
	for i, r := range rows {
		y[i] = d.Y[r]
	}
	// Deal each class's rows, shuffled with a seeded PCG, round-robin.
	rng := rand.New(rand.NewPCG(cfg.SplitSeed, 0x6361_6c69_6272_6174)) // "calibrat"
	byClass := make([][]int, len(d.Classes))
	for i, r := range rows {
		byClass[y[i]] = append(byClass[y[i]], r)
	}
	for _, cls := range byClass {
		rng.Shuffle(len(cls), func(a, b int) { cls[a], cls[b] = cls[b], cls[a] })
	}
	k := 0
	for _, cls := range byClass {
		for _, r := range cls {
			folds[k%CalibrationFolds] = append(folds[k%CalibrationFolds], r)
			k++
		}
	}
	// Progress in thousandths: each fold is its epochs and its sampling
	// (one more step), each step reported row by row. Without it, the
	// caller's RowProgress (Tune's) still hears of every fold's training
	// rows: a fold on 150,000 rows trains for tens of seconds.
	cp := cfg.CalibrationProgress
	cfg.CalibrationProgress, cfg.planCalibration = nil, false
	if cp != nil {
		cfg.RowProgress = nil
	}
	steps := CalibrationFolds * (cfg.Params.Epochs + 1)
	report := func(step int, frac float64) {
		if cp != nil {
			cp(int(1000*(float64(step)+min(frac, 1))/float64(steps)), 1000)
		}
	}
	for i, val := range folds {
		var fit []int
		for j, fold := range folds {
			if j != i {
				fit = append(fit, fold...)
			}
		}
		cfg.Rows = fit
		base := i * (cfg.Params.Epochs + 1)
		if cp != nil {
			epoch := 0
			cfg.Progress = func(e, _ int) { epoch = e; report(base+e, 0) }
			cfg.RowProgress = func(r, n int) { report(base+epoch, float64(r)/float64(max(n, 1))) }
		}
		g, err := Train(d, cfg)
		if err != nil {
			return fmt.Errorf("pipeline: calibration fold %d: %w", i, err)
		}
		if cp != nil || onFold != nil {
			sink.setProgress(func(done, total int) {
				report(base+cfg.Params.Epochs, float64(done)/float64(max(total, 1)))
				if onFold != nil {
					onFold(i, done, total)
				}
			})
		}
		if err := sink.add(g, d, val, K, cfg.Params.Seed+uint64(i)); err != nil {
			return err
		}
		sink.setProgress(nil)
		report(base+cfg.Params.Epochs+1, 0)
		if onFold != nil {
			onFold(i, len(val), len(val))
		}
	}
	return nil
}
