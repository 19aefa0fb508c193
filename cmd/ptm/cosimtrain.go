package main

import (
	"fmt"
	"io"
	"time"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/traincosim"
)

// defaultTrainStates is the on-chip N of `ptm cosim --train`: Iris at N = 8
// fits the UP5K's SPRAM (docs/fixed-point-training.md 11) and learns as
// well as N = 100 (section 9).
const defaultTrainStates = 8

// trainEpoch is one epoch's comparison in the JSON report.
type trainEpoch struct {
	Epoch         int     `json:"epoch"`
	Examples      int     `json:"examples"`
	WordsCompared int     `json:"words_compared"`
	Mismatches    int     `json:"mismatches"`
	Cycles        uint64  `json:"cycles"`
	CyclesPerEx   float64 `json:"cycles_per_example"`
}

// trainCosimResult is the JSON report of `ptm cosim --train --data`.
type trainCosimResult struct {
	Data           string                     `json:"data"`
	Rows           int                        `json:"training_rows"`
	Shape          fixed.Shape                `json:"shape"`
	N              int                        `json:"n"`
	Bits           int                        `json:"bits"`
	LiteralLanes   int                        `json:"literal_lanes"`
	Up             uint32                     `json:"up"`
	Down           uint32                     `json:"down"`
	Feedback       string                     `json:"feedback"`
	Seed           uint64                     `json:"seed"`
	EveryExample   bool                       `json:"every_example"`
	SPVWordsPerCmp int                        `json:"words_per_comparison"`
	Epochs         []trainEpoch               `json:"epochs"`
	WordsCompared  int                        `json:"words_compared"`
	Mismatches     int                        `json:"mismatches"`
	First          []traincosim.Mismatch      `json:"first_mismatches,omitempty"`
	CyclesPerEx    float64                    `json:"cycles_per_example"`
	BuildCached    bool                       `json:"build_cached"`
	SimTime        float64                    `json:"sim_seconds"`
	Shapes         []*traincosim.RandomResult `json:"shapes,omitempty"`
}

// cmdCosimTrain is `ptm cosim --train`: the on-chip trainer co-simulated
// against golden/fixedtrain, on a data set (after every epoch, or every
// example with --every-example) or on random shapes (--shapes).
func cmdCosimTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cosim --train", "--train (--data iris|wine|breast-cancer|FILE.csv [--epochs E] | --shapes K [--examples E]) [flags] [--json]", stderr)
	def := ptm.DefaultParams()
	fs.Bool("train", true, "co-simulate the on-chip trainer (this mode)")
	data := fs.String("data", "", "data set to train on: iris, wine, breast-cancer, xor, ... or a CSV file")
	label := fs.String("label", "", "label column of a CSV file (default: the last column)")
	shapes := fs.Int("shapes", 0, "instead of --data: K random shapes (binary and multiclass, N 4..32, B 8..15), compared after every example")
	examples := fs.Int("examples", 30, "with --shapes: random examples per shape")
	seed := fs.Uint64("seed", def.Seed, "training seed (lanes; also the split and the random shapes)")
	epochs := fs.Int("epochs", 5, "training epochs")
	every := fs.Bool("every-example", false, "compare every SPV word after every example, not only after every epoch")
	clauses := fs.Int("clauses", def.Clauses, "clauses per TM (m)")
	T := fs.Int("T", def.T, "target T")
	s := fs.Float64("s", def.S, "specificity s >= 1")
	states := fs.Int("states", defaultTrainStates, "states per action N (on-chip: the SPVs of a literal lane must fit one 16K-word SPRAM on the UP5K)")
	feedback := fs.String("feedback", string(def.Feedback), "SPV update rule: consistent or paper")
	bits := fs.Int("bits", fixedtrain.DefaultBits, "SPV width B (8..15)")
	lanes := fs.Int("lanes", hw.DefaultTrainerLanes, "literal lanes of the trainer (1..4)")
	thresholds := fs.Int("thresholds", 6, "thermometer thresholds per feature")
	testFrac := fs.Float64("test-fraction", 0.2, "fraction of rows held out (not trained on)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*data == "") == (*shapes == 0) {
		return fmt.Errorf("%w: --train needs exactly one of --data or --shapes", errUsage)
	}
	switch {
	case *shapes < 0 || *shapes > 1000:
		return fmt.Errorf("%w: --shapes %d, want 1..1000", errUsage, *shapes)
	case *examples < 1 || *examples > maxCosimExamples:
		return fmt.Errorf("%w: --examples %d, want 1..%d", errUsage, *examples, maxCosimExamples)
	case *epochs < 1 || *epochs > maxCosimEpochs:
		return fmt.Errorf("%w: --epochs %d, want 1..%d", errUsage, *epochs, maxCosimEpochs)
	case *bits < fixedtrain.MinBits || *bits > fixedtrain.MaxBits:
		return fmt.Errorf("%w: --bits %d, want %d..%d", errUsage, *bits, fixedtrain.MinBits, fixedtrain.MaxBits)
	case *lanes < 1 || *lanes > hw.MaxTrainerLanes:
		return fmt.Errorf("%w: --lanes %d, want 1..%d", errUsage, *lanes, hw.MaxTrainerLanes)
	}
	if err := checkTrainFlags(16, *thresholds, *testFrac); err != nil {
		return err
	}
	if *shapes > 0 {
		return cosimTrainShapes(*shapes, *examples, *seed, *asJSON, stdout, stderr)
	}
	p := ptm.Params{Clauses: *clauses, T: *T, S: *s, N: *states, Epochs: *epochs, Seed: *seed, Feedback: ptm.Feedback(*feedback)}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	td, err := loadTrainData(*data, *label, *seed, *testFrac, *thresholds, p)
	if err != nil {
		return err
	}
	d, X, tr, sh := td.data, td.X, td.tr, td.shape
	opts := traincosim.Options{Shape: sh, N: p.N, S: p.S, Seed: p.Seed, Feedback: p.Feedback, Bits: *bits, LiteralLanes: *lanes, Progress: stderr}
	fmt.Fprintf(stderr, "building the trainer simulator for %s (%d TMs x %d clauses x %d literals, N = %d; cached after the first build)\n",
		d.Name, sh.TMs, sh.Clauses, sh.Literals(), p.N)
	sess, err := traincosim.Start(opts)
	if err != nil {
		return err
	}
	defer sess.Close()
	dp := sess.Design().Params
	res := &trainCosimResult{Data: d.Name, Rows: len(X), Shape: sh, N: p.N, Bits: *bits, LiteralLanes: dp.LL, Up: dp.Up, Down: dp.Down,
		Feedback: string(p.Feedback), Seed: p.Seed, EveryExample: *every, SPVWordsPerCmp: sh.TAs() * (2*p.N + 2), BuildCached: sess.Cached}
	start := time.Now()
	bar := newProgress(stderr, "co-simulating training")
	compare := func(ep *trainEpoch) error {
		w, total, first, err := sess.Compare(10 - len(res.First))
		if err != nil {
			return err
		}
		ep.WordsCompared += w
		ep.Mismatches += total
		res.First = append(res.First, first...)
		return nil
	}
	for e := 1; e <= p.Epochs; e++ {
		ep := trainEpoch{Epoch: e, Examples: len(X)}
		c0 := sess.Cycles()
		err := sess.Epoch(X, tr.Y, func(k int) error {
			bar.update((e-1)*len(X)+k+1, p.Epochs*len(X))
			if *every {
				return compare(&ep)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !*every {
			if err := compare(&ep); err != nil {
				return err
			}
		}
		ep.Cycles = sess.Cycles() - c0
		ep.CyclesPerEx = float64(ep.Cycles) / float64(len(X))
		res.Epochs = append(res.Epochs, ep)
		res.WordsCompared += ep.WordsCompared
		res.Mismatches += ep.Mismatches
		if !*asJSON {
			fmt.Fprintf(stdout, "epoch %d: %d examples, %d words compared, %d mismatches, %.1f cycles/example\n",
				e, ep.Examples, ep.WordsCompared, ep.Mismatches, ep.CyclesPerEx)
		}
	}
	res.SimTime = time.Since(start).Seconds()
	res.CyclesPerEx = float64(sess.Cycles()) / float64(sess.Examples())
	if err := sess.Close(); err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "co-simulated %d epochs of %s (%d rows): %d words compared, %d mismatches; %.1f cycles per example\n",
			p.Epochs, d.Name, len(X), res.WordsCompared, res.Mismatches, res.CyclesPerEx)
	}
	if res.Mismatches > 0 {
		for _, m := range res.First {
			fmt.Fprintln(stderr, "mismatch:", m)
		}
		return fmt.Errorf("%d mismatches between the RTL trainer and golden/fixedtrain", res.Mismatches)
	}
	return nil
}

// cosimTrainShapes is `ptm cosim --train --shapes K`.
// maxCosimExamples and maxCosimEpochs bound a training co-simulation's
// length: a Verilated training step takes about a millisecond or more,
// so the bounds are days of simulation, not a typo's years.
const (
	maxCosimExamples = 1_000_000
	maxCosimEpochs   = 10_000
)

func cosimTrainShapes(n, examples int, seed uint64, asJSON bool, stdout, stderr io.Writer) error {
	res := &trainCosimResult{Data: "random shapes", Seed: seed, EveryExample: true}
	start := time.Now()
	for k, o := range traincosim.RandomShapes(n, seed) {
		fmt.Fprintf(stderr, "shape %d/%d %s: building and co-simulating %d examples\n", k+1, n, o.Describe(), examples)
		o.Progress = stderr
		r, err := traincosim.RunRandom(o, examples, seed+uint64(k))
		if err != nil {
			return err
		}
		res.Shapes = append(res.Shapes, r)
		res.WordsCompared += r.WordsCompared
		res.Mismatches += r.Mismatches
		res.First = append(res.First, r.First...)
		if !asJSON {
			fmt.Fprintf(stdout, "%s: %d examples, %d words compared, %d mismatches, %.1f cycles/example\n",
				r.Shape, r.Examples, r.WordsCompared, r.Mismatches, r.CyclesPerEx)
		}
	}
	res.SimTime = time.Since(start).Seconds()
	if asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%d random shapes: %d words compared, %d mismatches\n", n, res.WordsCompared, res.Mismatches)
	}
	if res.Mismatches > 0 {
		for _, m := range res.First {
			fmt.Fprintln(stderr, "mismatch:", m)
		}
		return fmt.Errorf("%d mismatches between the RTL trainer and golden/fixedtrain", res.Mismatches)
	}
	return nil
}

// trainData is a data set's training rows booleanized with a plain
// thermometer, as the trainer co-simulation and synthesis use them.
type trainData struct {
	data  *pipeline.Data
	tr    *pipeline.Data
	X     [][]bool
	shape fixed.Shape
}

// loadTrainData loads a data set, splits it (stratified, seed), fits the
// thermometer on the training rows and returns them encoded, with the
// model shape of p.
func loadTrainData(name, label string, seed uint64, testFrac float64, thresholds int, p ptm.Params) (*trainData, error) {
	d, err := pipeline.LoadData(name, label)
	if err != nil {
		return nil, err
	}
	trainRows, _, err := d.Split(testFrac, seed)
	if err != nil {
		return nil, err
	}
	tr := &pipeline.Data{Dataset: d.Subset(trainRows)}
	th, err := booleanize.Fit(tr.X, thresholds)
	if err != nil {
		return nil, fmt.Errorf("booleanizer: %w", err)
	}
	X, err := th.EncodeAll(tr.X)
	if err != nil {
		return nil, err
	}
	nc := len(d.Classes)
	sh := fixed.Shape{Binary: nc == 2, Classes: nc, TMs: nc, Clauses: p.Clauses, Features: th.NumBits(), T: p.T}
	if sh.Binary {
		sh.TMs = 1
	}
	return &trainData{data: d, tr: tr, X: X, shape: sh}, nil
}
