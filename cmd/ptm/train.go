package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/trainboard"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/hw"
)

func init() {
	register("train", "train a PTM on a data set and write a model file", cmdTrain)
}

// openBoardLink opens the link of `ptm train --board` (transport.Open; a
// test replaces it to check that train closes the link).
var openBoardLink = transport.Open

// mappingFlags are the flags that choose the per-sample probability map.
type mappingFlags struct {
	kind   string
	temp   float64
	smooth float64
}

func (m *mappingFlags) add(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
}, defKind string, defTemp, defSmooth float64) {
	fs.StringVar(&m.kind, "mapping", defKind, "per-sample probability `map`: vote or softmax")
	fs.Float64Var(&m.temp, "temperature", defTemp, "softmax temperature, in units of the clipped class sum")
	fs.Float64Var(&m.smooth, "smoothing", defSmooth, "vote smoothing e: p = (1-e)*vote + e/classes")
}

func (m *mappingFlags) mapping() (ptm.Mapping, error) {
	mp := ptm.Mapping{Kind: ptm.MappingKind(m.kind)}
	switch mp.Kind {
	case ptm.Softmax:
		mp.Temperature = m.temp
	case ptm.Vote:
		mp.Smoothing = m.smooth
	}
	if err := mp.Validate(); err != nil {
		return mp, fmt.Errorf("%w: %v", errUsage, err)
	}
	return mp, nil
}

func cmdTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", "--data iris|wine|breast-cancer|xor|xor-noisy|xor-classic|mnist|fashion-mnist|FILE.csv|IDXDIR -o MODEL [flags]", stderr)
	def := ptm.DefaultParams()
	data := fs.String("data", "", "data set: iris, wine, breast-cancer, xor, xor-noisy, xor-classic, mnist, fashion-mnist, a CSV file, or a folder of IDX files (docs/howto-image-data.md)")
	label := fs.String("label", "", "label column of a CSV file (default: the last column)")
	out := fs.String("o", "", "output model `file`")
	seed := fs.Uint64("seed", def.Seed, "seed for training (and for the split unless --split-seed is given)")
	splitSeed := fs.Uint64("split-seed", 0, "seed of the stratified train/test split (default: --seed)")
	testFrac := fs.Float64("test-fraction", 0.2, "fraction of rows held out for testing (0: train on every row; evaluate with eval --test-data)")
	clauses := fs.Int("clauses", def.Clauses, "clauses per TM (m); tuned unless given (the default is --no-tune's)")
	T := fs.Int("T", def.T, "target T (class sums are clipped to [-T, T]); tuned unless given (the default is --no-tune's)")
	s := fs.Float64("s", def.S, "specificity s >= 1; tuned unless given (the default is --no-tune's)")
	states := fs.Int("states", def.N, "states per action N (an SPV has 2N states)")
	epochs := fs.Int("epochs", def.Epochs, "training epochs; tuned unless given (the default is --no-tune's)")
	feedback := fs.String("feedback", string(def.Feedback), "SPV update rule: consistent or paper (docs/ptm-rule.md)")
	thresholds := fs.Int("thresholds", 6, "thermometer thresholds per feature; tuned unless given (the default is --no-tune's)")
	bits := fs.Int("bits", 16, "quantization width stored in the model file (4..16)")
	calibrate := fs.Bool("calibrate", pipeline.DefaultCalibrate, "fit the mapping parameter (vote smoothing or softmax temperature) by NLL with 4-fold cross-validation on the training rows (default on unless --temperature or --smoothing is given)")
	tfloor := fs.Float64("temperature-floor", pipeline.DefaultTemperatureFloor, "with --calibrate and the softmax: the fitted temperature's lower bound, in units of T (0 = none, the grid's 1/16; docs/uncertainty.md section 9)")
	de := pipeline.DefaultEncoding
	sets := fs.Int("sets", de.Sets, "input encoding: threshold sets M sampled per inference sample (1 = the paper's plain thermometer; docs/uncertainty.md)")
	bandwidth := fs.Float64("bandwidth", de.Bandwidth, "input encoding: threshold jitter between sets, in feature standard deviations; tuned unless given (the default is --no-tune's)")
	margin := fs.Float64("margin", de.Margin, "input encoding: out-of-range reversion beyond margin..3*margin feature standard deviations outside the training range (0 = off)")
	wholeRow := fs.Bool("whole-row", de.WholeRow, "input encoding: revert the whole row, not only the out-of-range feature")
	cuts := fs.String("cuts", cutsName(de.Cuts), "input encoding: where the thresholds go: quantile (training-data quantiles), supervised (information-gain class boundaries) or mdl (Fayyad-Irani class boundaries, the rest spread), each optionally -boot (sets 1..M-1 refitted on bootstrap resamples); docs/uncertainty.md section 13")
	fixedTrain := fs.Bool("fixed", false, "train with the bit-exact fixed-point trainer (golden/fixedtrain, docs/fixed-point-training.md): integer SPVs of --bits bits (default 15), the same model on every run and every GOMAXPROCS")
	hostShuffle := fs.Bool("host-shuffle", false, "with --fixed: shuffle every epoch with the host's shuffle lane, as a training board is fed (docs/fixed-point-training.md 5.1); the model --board trains")
	boardLink := fs.String("board", "", "train on a training board at this `link` (uart:/dev/pts/N, a path; `ptm board --trainer` runs the Verilated one): the fixed-point trainer with --host-shuffle, rows streamed over the link, SPVs read back; the model file equals `ptm train --fixed --host-shuffle`'s")
	workers := fs.Int("workers", 0, "with --fixed: goroutines updating disjoint clauses (0: GOMAXPROCS); the model does not depend on it")
	tune := fs.Duration("tune", pipeline.DefaultTuneBudget, "tuning budget: without hyper-parameter flags, clauses, T, s, epochs, --thresholds and --bandwidth are chosen by inner 4-fold cross-validation on the training rows (as ptm experiments does) among grid candidates admitted in order while their estimated work fits this `duration` at a fixed nominal rate, so the choice never depends on the machine's speed or load; flags given are kept fixed; --board never tunes")
	noTune := fs.Bool("no-tune", false, "do not tune: use the flags' defaults (20 clauses, T 10, s 2, 100 epochs, 6 thresholds, jitter 0.15)")
	plain := fs.Bool("plain", false, "the paper's plain PTM: one thermometer, vote mapping smoothed by 0.05, no calibration (overrides --sets, --margin)")
	var mf mappingFlags
	mf.add(fs, string(pipeline.DefaultMapping.Kind), pipeline.DefaultMapping.Temperature, pipeline.PlainMapping.Smoothing)
	var cf convFlags
	cf.add(fs)
	resume := fs.String("resume", "", "continue training the convolutional model in this `file` for --epochs more epochs with its recipe, trainer parameters and split (--data: the data it was trained on); exact with SPVs stored at --spv-bits 15; --epochs 0 refits its fixed-point mapping only (docs/cli.md)")
	reseed := fs.Bool("reseed-lanes", false, "with --resume: resume a model file without a lane record, with lanes seeded from its seed and epochs (not the model one run gives)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *resume != "" || *reseed {
		if *resume == "" {
			return fmt.Errorf("%w: --reseed-lanes goes with --resume", errUsage)
		}
		return trainResume(fs, *resume, *data, *label, *out, *epochs, *workers, cf.spvBits, *reseed, stdout, stderr)
	}
	if *data == "" || *out == "" {
		return fmt.Errorf("%w: --data and -o are required", errUsage)
	}
	kind, err := trainKind(fs, cf.kind, *data)
	if err != nil {
		return err
	}
	if kind == kindConv {
		if *workers < 0 {
			return fmt.Errorf("%w: --workers %d, want >= 0", errUsage, *workers)
		}
		if !(*testFrac >= 0 && *testFrac < 1) {
			return fmt.Errorf("%w: --test-fraction %v, want 0 <= f < 1", errUsage, *testFrac)
		}
		if err := checkFileOutput(pathFlag{"-o", *out}, pathFlag{"--data", *data}); err != nil {
			return err
		}
		ss := *seed
		if isSet(fs, "split-seed") {
			ss = *splitSeed
		}
		d, err := pipeline.LoadDataProgress(*data, "", newProgress(stderr, "loading "+*data).bytes)
		if err != nil {
			return err
		}
		return trainConv(fs, &cf, d, *out, *seed, ss, *testFrac, *workers, stdout, stderr)
	}
	defMap := pipeline.DefaultMapping
	if *plain {
		defMap = pipeline.PlainMapping
	}
	mp, err := mf.resolve(fs, defMap)
	if err != nil {
		return err
	}
	cutsV, err := booleanize.ParseCuts(*cuts)
	if err != nil {
		return fmt.Errorf("%w: --cuts: %v", errUsage, err)
	}
	enc := pipeline.Encoding{Sets: *sets, Bandwidth: *bandwidth, Margin: *margin, WholeRow: *wholeRow, Cuts: cutsV}
	if *plain {
		enc = pipeline.Plain
		if isSet(fs, "cuts") {
			enc.Cuts = cutsV
		}
	}
	if err := enc.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if !isSet(fs, "calibrate") && (*plain || isSet(fs, "temperature") || isSet(fs, "smoothing")) {
		*calibrate = false
	}
	if *boardLink != "" {
		if isSet(fs, "fixed") && !*fixedTrain {
			return fmt.Errorf("%w: --board trains with the fixed-point trainer: drop --fixed=false", errUsage)
		}
		*fixedTrain, *hostShuffle = true, true
	}
	if *hostShuffle && !*fixedTrain {
		return fmt.Errorf("%w: --host-shuffle needs --fixed", errUsage)
	}
	if isSet(fs, "workers") && !*fixedTrain {
		return fmt.Errorf("%w: --workers applies to --fixed (the fixed-point trainer's goroutines)", errUsage)
	}
	if *label != "" && slices.Contains(pipeline.BuiltinNames, *data) {
		return fmt.Errorf("%w: --label names a column of a CSV file; %q is a built-in data set with its own labels", errUsage, *data)
	}
	// The hardware keeps K*T^2 in a 32-bit sum-of-squares word: a T that
	// gen, eval --fixed and the boards would refuse (hw.CheckT, their rule
	// at their default K) is refused now, not after training.
	if err := hw.CheckT(*T); err != nil {
		return fmt.Errorf("%w: -T %d, want 1..%d: %v", errUsage, *T, hw.MaxTFor(hw.DefaultMaxK), err)
	}
	if *fixedTrain && !isSet(fs, "bits") {
		*bits = fixedtrain.DefaultBits
	}
	if *fixedTrain && *bits > fixedtrain.MaxBits {
		return fmt.Errorf("%w: --bits %d with --fixed: the fixed-point trainer keeps at most %d-bit SPVs", errUsage, *bits, fixedtrain.MaxBits)
	}
	if *workers < 0 {
		return fmt.Errorf("%w: --workers %d, want >= 0", errUsage, *workers)
	}
	if !(*tfloor >= 0 && *tfloor <= 16) {
		return fmt.Errorf("%w: --temperature-floor %v, want 0..16", errUsage, *tfloor)
	}
	if err := checkTrainFlags(*bits, *thresholds, *testFrac); err != nil {
		return err
	}
	if *noTune && isSet(fs, "tune") {
		return fmt.Errorf("%w: --tune and --no-tune: give one", errUsage)
	}
	if *boardLink != "" {
		// A training board is built for one shape, T and s: it trains the
		// model the flags describe, untuned.
		if isSet(fs, "tune") {
			return fmt.Errorf("%w: --tune with --board: a training board trains the shape, T and s it was built for; tune with --fixed --host-shuffle (the same model) and pass the choice as flags", errUsage)
		}
		*noTune = true
	}
	if *boardLink != "" {
		// The training core's own rule (hw.GenerateTrainer's): a board
		// would refuse these after the data is loaded.
		if err := hw.CheckTrainerParams(*states, *s, *T); err != nil {
			return fmt.Errorf("%w: --board: %v", errUsage, err)
		}
	}
	if *fixedTrain && *s > 65536 {
		// fixedtrain.MovesOf: 1/s is a 16-bit fraction, so a larger s
		// would train another specificity than the one the model records.
		return fmt.Errorf("%w: -s %v with --fixed: the fixed-point trainer's move probability 1/s is a 16-bit fraction, want s 1..65536", errUsage, *s)
	}
	if *tune <= 0 {
		return fmt.Errorf("%w: --tune %v, want a positive duration such as 10m (--no-tune: no tuning)", errUsage, *tune)
	}
	fixedHP := pipeline.TuneFixed{Clauses: isSet(fs, "clauses"), T: isSet(fs, "T"), S: isSet(fs, "s"), Epochs: isSet(fs, "epochs"),
		Thresholds: isSet(fs, "thresholds"), Bandwidth: isSet(fs, "bandwidth") || enc.Sets == 1}
	if err := checkFileOutput(pathFlag{"-o", *out}, pathFlag{"--data", *data}); err != nil {
		return err
	}
	ss := *seed
	if isSet(fs, "split-seed") {
		ss = *splitSeed
	}
	p := ptm.Params{Clauses: *clauses, T: *T, S: *s, N: *states, Epochs: *epochs, Seed: *seed, Feedback: ptm.Feedback(*feedback)}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	d, err := pipeline.LoadDataProgress(*data, *label, newProgress(stderr, "loading "+*data).bytes)
	if err != nil {
		return err
	}
	tcfg := pipeline.TrainConfig{
		Params: p, Thresholds: *thresholds, TestFraction: *testFrac, SplitSeed: ss, Bits: *bits,
		Mapping: mp, NoTest: *testFrac == 0, Encoding: &enc,
		Fixed: *fixedTrain, Workers: *workers, TemperatureFloor: floorFlag(*tfloor), HostShuffle: *hostShuffle,
	}
	var boardStats []*driver.TrainInfo
	if *boardLink != "" {
		tr, err := openBoardLink(*boardLink)
		if err != nil {
			return err
		}
		// The link is closed when train returns (after the driver, which
		// does not close it): an open UART keeps its reader goroutine
		// reading the device, and a later client of the same board (the
		// next ptm command in one process, as cmd/ptm's tests run them)
		// would lose the board's answers to it.
		defer tr.Close()
		drv := driver.New(tr, driver.Opts{Window: 1, Timeout: 5 * time.Second})
		defer drv.Close()
		b := &trainboard.Board{D: drv, Stats: func(in *driver.TrainInfo) {
			boardStats = append(boardStats, in)
			fmt.Fprintf(stderr, "board: model %d trained: %d examples, %d trainer clocks (%.0f per example), %d frames, %d errors, %d CRC errors\n",
				len(boardStats), in.Trained, in.TrainCycles, float64(in.TrainCycles)/float64(max(in.Trained, 1)), in.Frames, in.Errors, in.CRCErrors)
		}}
		tcfg.NewRowTrainer = b.NewRowTrainer
	}
	var tuned *pipeline.TuneResult
	if !*noTune && !fixedHP.All() {
		if tuned, err = tuneTrain(d, tcfg, fixedHP, *tune, stdout, stderr); err != nil {
			return err
		}
		if tuned != nil {
			p = tuned.Chosen.Params
		}
	}
	bar := newProgress(stderr, "training")
	bar.update(0, p.Epochs)
	tcfg.Progress, tcfg.RowProgress = bar.update, bar.rows
	if *calibrate {
		var cal *progress
		tcfg.CalibrationProgress = func(done, total int) {
			if cal == nil {
				cal = newProgress(stderr, "calibrating (4-fold cross-validation, --calibrate=false skips it)")
			}
			cal.update(done, total)
		}
	}
	start := time.Now()
	var f *modelfile.File
	if tuned != nil {
		f, err = pipeline.TrainTuned(d, tuned, tcfg, *calibrate)
		if err == nil {
			f.Tuning = tuned.Record(*tune, fixedHP)
		}
	} else {
		f, err = pipeline.TrainAndCalibrate(d, tcfg, *calibrate)
	}
	if err != nil {
		return err
	}
	if !*fixedTrain && *boardLink == "" && f.SPVBits == modelfile.MaxSPVBits {
		// A float-trained model (a fixed-point one is exact at its
		// trainer's width, at most 15): its SPVs are stored at
		// FloatSPVBits, rounded in memory first so that the model
		// reported, written and read back is one.
		f.SPVBits = modelfile.FloatSPVBits
		if _, err := f.Canonicalize(); err != nil {
			return err
		}
	}
	hash, err := modelfile.Write(*out, f)
	if err != nil {
		return err
	}
	m := f.Model
	fmt.Fprintf(stdout, "trained %s: %d classes, %d features -> %d Boolean, %d TMs x %d clauses x %d literals = %d TAs, %d states each\n",
		d.Name, m.NumClasses, len(f.Features), m.NumFeatures, m.NumTMs(), m.Clauses, m.NumLiterals(), m.NumTAs(), 2*m.N)
	fmt.Fprintf(stdout, "%d training rows, %d test rows held out, %d epochs in %.2fs, peak RSS %.0f MB; mapping %s\n",
		len(f.Split.Train), len(f.Split.Test), p.Epochs, time.Since(start).Seconds(), float64(peakRSS())/1e6, describeMapping(f.Mapping))
	if e := f.Encoding; e != nil {
		rev := "off"
		if e.Margin > 0 {
			rev = fmt.Sprintf("beyond %g..%g sd", e.Margin, 3*e.Margin)
			if e.WholeRow {
				rev += ", whole row"
			}
		}
		fmt.Fprintf(stdout, "input encoding: %d threshold sets, jitter %g sd, reversion %s, %s thresholds\n", e.M(), e.Bandwidth, rev, cutsName(e.Cuts))
	} else {
		fmt.Fprintf(stdout, "input encoding: plain thermometer (one set), %s thresholds\n", cutsName(f.Booleanizer.Cuts))
	}
	if len(boardStats) > 0 {
		in := boardStats[0]
		fmt.Fprintf(stdout, "trained on the board: %d models (the model and %d calibration folds); the model: %d examples, %.0f trainer clocks per example\n",
			len(boardStats), len(boardStats)-1, in.Trained, float64(in.TrainCycles)/float64(max(in.Trained, 1)))
	}
	fmt.Fprintf(stdout, "wrote %s (model hash %s)\n", *out, hash[:16])
	return nil
}

func describeMapping(mp ptm.Mapping) string {
	if mp.Kind == ptm.Softmax {
		return fmt.Sprintf("softmax (temperature %.3g)", mp.Temperature)
	}
	return fmt.Sprintf("vote (smoothing %.3g)", mp.Smoothing)
}

// checkTrainFlags refuses values that used to mean "the default" or were
// out of range.
func checkTrainFlags(bits, thresholds int, testFrac float64) error {
	if err := fixed.CheckBits(bits); err != nil {
		return fmt.Errorf("%w: --bits %d: %v", errUsage, bits, err)
	}
	if thresholds < 1 || thresholds > pipeline.MaxThresholds {
		return fmt.Errorf("%w: --thresholds %d, want 1..%d", errUsage, thresholds, pipeline.MaxThresholds)
	}
	if !(testFrac >= 0 && testFrac < 1) {
		return fmt.Errorf("%w: --test-fraction %v, want 0 <= f < 1 (0: train on every row)", errUsage, testFrac)
	}
	return nil
}

// floorFlag turns --temperature-floor (0 = none) into
// TrainConfig.TemperatureFloor (0 = the default, negative = none).
func floorFlag(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

// cutsName names a threshold placement, "" as quantile.
func cutsName(c booleanize.Cuts) string {
	if c == "" {
		return string(booleanize.Quantile)
	}
	return string(c)
}

// tuneTrain runs pipeline.Tune for `ptm train`: progress on stderr (a
// line per candidate scored and a bar at least every few seconds), the
// choice and its validation score on stdout. It returns nil when the
// given flags leave a single candidate (nothing to tune).
func tuneTrain(d *pipeline.Data, base pipeline.TrainConfig, fixed pipeline.TuneFixed, budget time.Duration, stdout, stderr io.Writer) (*pipeline.TuneResult, error) {
	start := time.Now()
	bar := newProgress(stderr, "tuning")
	var label string
	cfg := pipeline.TuneConfig{Base: base, Fixed: fixed, Budget: budget,
		Progress: func(e pipeline.TuneEvent) {
			if e.Score != nil {
				fmt.Fprintf(stderr, "tuning: candidate %d/%d (%s): validation accuracy %.4f, NLL %.4f; %.0fs\n",
					e.Candidate+1, e.Admitted, e.Label, e.Score.Report.Accuracy, e.Score.Report.NLL, time.Since(start).Seconds())
				return
			}
			if e.Passes > 0 {
				bar.show(fmt.Sprintf("candidate %d/%d (%s): scoring its out-of-fold samples, %.0f%%", e.Candidate+1, e.Admitted, e.Label, 100*float64(e.Scored)/float64(e.Passes)), false)
				return
			}
			if e.Rows > 0 {
				bar.show(fmt.Sprintf("candidate %d/%d (%s), fold %d/%d: sampling held-out row %d/%d", e.Candidate+1, e.Admitted, e.Label, e.Fold+1, pipeline.CalibrationFolds, e.Sampled, e.Rows), false)
				return
			}
			label = fmt.Sprintf("candidate %d/%d (%s), fold %d/%d", e.Candidate+1, e.Admitted, e.Label, min(e.Fold+1, pipeline.CalibrationFolds), pipeline.CalibrationFolds)
			bar.show(fmt.Sprintf("%s; %.0f%% of the budget's work", label, 100*e.Work/e.BudgetWork), false)
		},
		RowProgress: func(row, rows int) {
			if label != "" {
				bar.show(fmt.Sprintf("%s, row %d/%d", label, row, rows), false)
			}
		},
	}
	if fixed.Names() != nil {
		fmt.Fprintf(stderr, "tuning: kept as given: %s\n", strings.Join(fixed.Names(), ", "))
	}
	r, err := pipeline.Tune(d, cfg)
	if err != nil {
		return nil, err
	}
	c := r.Chosen
	if r.Score == nil && len(r.Candidates) == 1 {
		fmt.Fprintf(stderr, "tuning: nothing left to tune once the given flags are applied\n")
		return nil, nil
	}
	if r.Score == nil {
		fmt.Fprintf(stdout, "tuning: the budget %v admits fewer than two of %d candidates: trained the first, unscored: %s (--tune DURATION for more)\n",
			budget, len(r.Candidates), pipeline.TuneLabel(c))
		return r, nil
	}
	fmt.Fprintf(stdout, "tuned in %.1fs: %d of %d candidates scored by %s (%.0f%% of the %v budget's nominal work)\n",
		time.Since(start).Seconds(), r.Scored, len(r.Candidates), r.Rule, 100*r.Work/r.BudgetWork, budget)
	fmt.Fprintf(stdout, "chosen: %s; validation accuracy %.4f, NLL %.4f over %d training rows (out of fold)\n",
		pipeline.TuneLabel(c), r.Score.Report.Accuracy, r.Score.Report.NLL, r.ValRows)
	return r, nil
}
