package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
)

// Model kinds of `ptm train --kind`.
const (
	kindAuto    = "auto"
	kindTabular = "tabular"
	kindConv    = "conv"
)

// convFlags are train's flags for convolutional models.
type convFlags struct {
	kind, window, pixels, structure string
	recipe, adaptive                string
	jitterSets, jitterSpread        int
	valRows, spvBits, trainRows     int
	weightClip, literalBudget       int
	printRecipe, boostTruePositive  bool
}

func (c *convFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&c.kind, "kind", kindAuto, "model `kind`: conv (convolutional PTM), tabular, or auto (conv on image data: mnist, fashion-mnist, an IDX folder; tabular otherwise)")
	fs.StringVar(&c.recipe, "recipe", "", "conv: the image `recipe` the other conv flags override: mnist, fashion-mnist, generic or mnist-up5k (the UP5K core's 128-clause MNIST model) (default: the data set's own for mnist and fashion-mnist, generic otherwise)")
	fs.StringVar(&c.adaptive, "adaptive", "", "conv: the adaptive (local contrast) bit-plane after the --pixel-thresholds planes, `BLOCK,C` (pixel > its BLOCKxBLOCK Gaussian-weighted mean - C), or none (default: the recipe's)")
	fs.StringVar(&c.window, "window", "", "conv: the clause window `HxW` (or N for NxN), stride 1 (default: the recipe's, 10x10)")
	fs.StringVar(&c.pixels, "pixel-thresholds", "", "conv: pixel thresholds, one bit-plane each (pixel > t), comma-separated, or empty for none (default: the recipe's)")
	fs.StringVar(&c.structure, "structure", "", "conv: how clauses vote: coalesced (every clause votes for every class with a learned signed weight) or per-class (default: the recipe's, coalesced)")
	fs.IntVar(&c.jitterSets, "jitter-sets", 0, "conv: threshold sets of the sampled pixel encoding at inference (1 = one set; default: the recipe's)")
	fs.IntVar(&c.jitterSpread, "jitter-spread", 0, "conv: the sets' pixel thresholds spread evenly over +-this `value` around --pixel-thresholds (default: the recipe's)")
	fs.IntVar(&c.spvBits, "spv-bits", 0, "conv: the width the model file stores the SPVs at for resumed training (default 8; 15, the trainer's, stores them exactly, about 5x larger); inference reads the exact include masses and bank either way")
	fs.IntVar(&c.weightClip, "weight-clip", 0, "conv: the coalesced class weights saturate at +-this `value` in training, 1..32767 (0: 32767, no clip) (default: the recipe's)")
	fs.IntVar(&c.literalBudget, "literal-budget", 0, "conv: per-clause literal budget: a clause whose sampled action includes this many literals or more gets Type I feedback as if it had not fired, 1..the clause's literals (0: none) (default: the recipe's)")
	fs.BoolVar(&c.boostTruePositive, "boost-true-positive", false, "conv: boosted true-positive feedback (tmu's boost_true_positive_feedback): Type I feedback to a clause that fired moves every 1-literal of its patch towards include with probability 1 instead of (s-1)/s; --boost-true-positive=false turns a recipe's off (default: the recipe's)")
	fs.IntVar(&c.trainRows, "train-rows", 0, "conv: train on the first `N` training rows only (0: all), for a quick model (make demo DATA=mnist QUICK=1); the validation rows are carved from them")
	fs.BoolVar(&c.printRecipe, "print-recipe", false, "conv: print what these flags would train, as one line of JSON (the --data value, the recipe after the flags, the seeds and the rows: every setting the model depends on), and exit without training or writing -o; scripts/demo-images.sh reuses a model only when this line is the one it trained with")
	fs.IntVar(&c.valRows, "val-rows", pipeline.DefaultConvValRows, "conv: validation rows carved (stratified, seeded by --seed) from the training rows to fit the mapping parameter; at most a tenth of them; the model trains on the rest")
}

// tabularOnly lists train's flags that a convolutional model does not take.
var tabularOnly = []string{"label", "thresholds", "sets", "bandwidth", "margin", "whole-row", "cuts", "fixed", "host-shuffle",
	"board", "tune", "no-tune", "plain", "feedback", "calibrate", "temperature-floor", "temperature", "smoothing"}

// convOnly lists train's flags that only a convolutional model takes.
var convOnly = []string{"recipe", "adaptive", "window", "pixel-thresholds", "structure", "jitter-sets", "jitter-spread", "val-rows", "spv-bits", "train-rows", "print-recipe", "weight-clip", "literal-budget", "boost-true-positive"}

// imageSource reports whether a --data value names image data: the
// built-in image sets or a folder (of IDX files).
func imageSource(name string) bool {
	if name == pipeline.MNIST || name == pipeline.FashionMNIST {
		return true
	}
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

// trainKind resolves --kind for a data source.
func trainKind(fs *flag.FlagSet, kind, data string) (string, error) {
	switch kind {
	case kindAuto:
		if imageSource(data) {
			kind = kindConv
		} else {
			kind = kindTabular
		}
	case kindTabular, kindConv:
	default:
		return "", fmt.Errorf("%w: --kind %q, want auto, tabular or conv", errUsage, kind)
	}
	var bad []string
	for _, n := range tabularOnly {
		if kind == kindConv && isSet(fs, n) {
			bad = append(bad, "--"+n)
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%w: %s apply to tabular models; %s trains a convolutional model (--kind tabular for a tabular one)", errUsage, strings.Join(bad, ", "), data)
	}
	for _, n := range convOnly {
		if kind == kindTabular && isSet(fs, n) {
			bad = append(bad, "--"+n)
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%w: %s apply to convolutional models (--kind conv on image data)", errUsage, strings.Join(bad, ", "))
	}
	return kind, nil
}

// flagValue returns the parsed value of flag name.
func flagValue(fs *flag.FlagSet, name string) any {
	return fs.Lookup(name).Value.(flag.Getter).Get()
}

// convRecipe applies the flags given to the recipe (--recipe, or the data
// set's: convtrain.RecipeFor) of an h x w image with nc classes and
// returns it with the overridden fields' names.
func convRecipe(fs *flag.FlagSet, cf *convFlags, dataset string, h, w, nc int) (convtrain.ImageConfig, []string, error) {
	name := convtrain.RecipeFor(dataset)
	if isSet(fs, "recipe") {
		name = cf.recipe
		if !slices.Contains(convtrain.RecipeNames, name) {
			return convtrain.ImageConfig{}, nil, fmt.Errorf("%w: --recipe %q, want one of %s", errUsage, name, strings.Join(convtrain.RecipeNames, ", "))
		}
	}
	rc, err := convtrain.ImageRecipe(name, h, w, nc)
	if err != nil {
		return rc, nil, err
	}
	var over []string
	set := func(name string) bool {
		if isSet(fs, name) {
			over = append(over, name)
			return true
		}
		return false
	}
	if set("clauses") {
		rc.Clauses = flagValue(fs, "clauses").(int)
	}
	if set("T") {
		rc.T = flagValue(fs, "T").(int)
	}
	if set("s") {
		rc.S = flagValue(fs, "s").(float64)
	}
	if set("states") {
		rc.N = flagValue(fs, "states").(int)
	}
	if set("epochs") {
		rc.Epochs = flagValue(fs, "epochs").(int)
	}
	if set("bits") {
		rc.BankBits = flagValue(fs, "bits").(int)
	}
	if set("mapping") {
		rc.Mapping = ptm.MappingKind(flagValue(fs, "mapping").(string))
	}
	if set("window") {
		a, b, ok := strings.Cut(cf.window, "x")
		if !ok {
			b = a
		}
		wy, e1 := strconv.Atoi(a)
		wx, e2 := strconv.Atoi(b)
		if e1 != nil || e2 != nil || wy < 1 || wx < 1 || wy > h || wx > w {
			return rc, nil, fmt.Errorf("%w: --window %q, want HxW (or N) within the %dx%d images", errUsage, cf.window, h, w)
		}
		rc.WY, rc.WX = wy, wx
	}
	if set("adaptive") {
		rc.Adaptive = nil
		if cf.adaptive != "none" {
			a, b, ok := strings.Cut(cf.adaptive, ",")
			block, e1 := strconv.Atoi(strings.TrimSpace(a))
			c, e2 := strconv.Atoi(strings.TrimSpace(b))
			at := conv.AdaptiveThreshold{Block: block, C: c}
			if !ok || e1 != nil || e2 != nil || at.Validate() != nil {
				return rc, nil, fmt.Errorf("%w: --adaptive %q, want BLOCK,C (BLOCK odd 3..%d, C -255..255) or none", errUsage, cf.adaptive, conv.MaxAdaptiveBlock)
			}
			rc.Adaptive = &at
		}
	}
	if set("pixel-thresholds") {
		rc.Thresholds = nil
		for _, s := range strings.Split(cf.pixels, ",") {
			if strings.TrimSpace(s) == "" && cf.pixels == "" {
				break // no threshold planes (the adaptive plane only)
			}
			t, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || t < 0 || t > 254 {
				return rc, nil, fmt.Errorf("%w: --pixel-thresholds %q: %q, want integers 0..254", errUsage, cf.pixels, s)
			}
			rc.Thresholds = append(rc.Thresholds, t)
		}
	}
	if p := rc.Encoder().Planes(); p < 1 || p > conv.MaxPlanes {
		return rc, nil, fmt.Errorf("%w: --pixel-thresholds and --adaptive make %d bit-planes, want 1..%d", errUsage, p, conv.MaxPlanes)
	}
	if set("structure") {
		rc.Structure = conv.Structure(cf.structure)
		if rc.Structure != conv.Coalesced && rc.Structure != conv.PerClass {
			return rc, nil, fmt.Errorf("%w: --structure %q, want coalesced or per-class", errUsage, cf.structure)
		}
	}
	if set("weight-clip") {
		rc.WeightClip = cf.weightClip
	}
	if set("literal-budget") {
		rc.LiteralBudget = cf.literalBudget
	}
	if set("boost-true-positive") {
		rc.BoostTruePositive = cf.boostTruePositive
	}
	if set("jitter-sets") {
		rc.JitterSets = cf.jitterSets
	}
	if set("jitter-spread") {
		rc.JitterSpread = cf.jitterSpread
	}
	switch {
	case rc.Clauses < 1:
		return rc, nil, fmt.Errorf("%w: --clauses %d, want >= 1", errUsage, rc.Clauses)
	case hw.CheckConvT(nc, rc.T) != nil:
		// The rule of the convolutional boards (hw.ConvKMaxOK at K = 1).
		return rc, nil, fmt.Errorf("%w: -T %d, want 1..%d: %v", errUsage, rc.T, hw.MaxT, hw.CheckConvT(nc, rc.T))
	case !(rc.S >= 1):
		return rc, nil, fmt.Errorf("%w: -s %v, want >= 1", errUsage, rc.S)
	case rc.N < 1 || rc.N > modelfile.MaxConvStates:
		return rc, nil, fmt.Errorf("%w: --states %d, want 1..%d", errUsage, rc.N, modelfile.MaxConvStates)
	case rc.Epochs < 1:
		return rc, nil, fmt.Errorf("%w: --epochs %d, want >= 1", errUsage, rc.Epochs)
	case rc.Structure == conv.PerClass && rc.Clauses%nc != 0:
		return rc, nil, fmt.Errorf("%w: --structure per-class needs --clauses (%d) a multiple of the %d classes", errUsage, rc.Clauses, nc)
	case rc.WeightClip < 0 || rc.WeightClip > conv.MaxWeight:
		return rc, nil, fmt.Errorf("%w: --weight-clip %d, want 1..%d (0: no clip)", errUsage, rc.WeightClip, conv.MaxWeight)
	case rc.WeightClip != 0 && rc.Structure == conv.PerClass:
		return rc, nil, fmt.Errorf("%w: --weight-clip %d with --structure per-class, whose weights are fixed at +-1", errUsage, rc.WeightClip)
	case rc.LiteralBudget < 0 || rc.LiteralBudget > rc.Shape(h, w).Literals():
		return rc, nil, fmt.Errorf("%w: --literal-budget %d, want 1..%d (the literals of a %dx%d window on %dx%d images; 0: none)", errUsage, rc.LiteralBudget, rc.Shape(h, w).Literals(), rc.WY, rc.WX, h, w)
	case rc.JitterSets < 1 || rc.JitterSets > modelfile.MaxJitterSets:
		return rc, nil, fmt.Errorf("%w: --jitter-sets %d, want 1..%d", errUsage, rc.JitterSets, modelfile.MaxJitterSets)
	case rc.JitterSpread < 0 || rc.JitterSpread > 255:
		return rc, nil, fmt.Errorf("%w: --jitter-spread %d, want 0..255", errUsage, rc.JitterSpread)
	case rc.Mapping != ptm.Vote && rc.Mapping != ptm.Softmax:
		return rc, nil, fmt.Errorf("%w: --mapping %q, want vote or softmax", errUsage, rc.Mapping)
	}
	if err := fixed.CheckBits(rc.BankBits); err != nil {
		return rc, nil, fmt.Errorf("%w: --bits %d: %v", errUsage, rc.BankBits, err)
	}
	return rc, over, nil
}

// convPlan is what `ptm train --print-recipe` prints: every input a
// convolutional model depends on (the worker count is not one). Data is
// the --data value as given (a built-in set's name or a folder's path).
type convPlan struct {
	Data         string                `json:"data"`
	Recipe       convtrain.ImageConfig `json:"recipe"`
	Overridden   []string              `json:"overridden"`
	Seed         uint64                `json:"seed"`
	SplitSeed    uint64                `json:"split_seed"`
	TestFraction float64               `json:"test_fraction"`
	ValRows      int                   `json:"val_rows"`
	TrainRows    int                   `json:"train_rows"`
	SPVBits      int                   `json:"spv_bits"`
}

// printConvPlan writes p as one line of JSON: the same line for the same
// plan, whatever the flags' order (encoding/json writes struct fields in
// declaration order; Overridden is in convRecipe's fixed order).
func printConvPlan(w io.Writer, p convPlan) error {
	if p.Overridden == nil {
		p.Overridden = []string{}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("--print-recipe: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// peakRSS returns the process's peak resident set size in bytes (0 if
// unknown).
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024 // Linux reports KiB
}

// trainConv is `ptm train` for a convolutional model.
func trainConv(fs *flag.FlagSet, cf *convFlags, d *pipeline.Data, out string, seed, splitSeed uint64, testFrac float64, workers int, stdout, stderr io.Writer) error {
	if !pipeline.IsImage(d) {
		return fmt.Errorf("%w: --kind conv: %q has no image geometry (a convolutional model trains on mnist, fashion-mnist or an IDX folder)", errUsage, d.Name)
	}
	rc, over, err := convRecipe(fs, cf, d.Name, d.Image.Rows, d.Image.Cols, len(d.Classes))
	if err != nil {
		return err
	}
	if isSet(fs, "spv-bits") && (cf.spvBits < modelfile.MinSPVBits || cf.spvBits > modelfile.MaxConvSPVBits) {
		return fmt.Errorf("%w: --spv-bits %d, want %d..%d", errUsage, cf.spvBits, modelfile.MinSPVBits, modelfile.MaxConvSPVBits)
	}
	if cf.valRows < 1 {
		return fmt.Errorf("%w: --val-rows %d, want >= 1", errUsage, cf.valRows)
	}
	if cf.trainRows < 0 {
		return fmt.Errorf("%w: --train-rows %d, want >= 0 (0: every training row)", errUsage, cf.trainRows)
	}
	if cf.printRecipe {
		return printConvPlan(stdout, convPlan{Data: flagValue(fs, "data").(string), Recipe: rc, Overridden: over, Seed: seed, SplitSeed: splitSeed,
			TestFraction: testFrac, ValRows: cf.valRows, TrainRows: cf.trainRows, SPVBits: cf.spvBits})
	}
	start := time.Now()
	bar := newProgress(stderr, "training")
	bar.update(0, rc.Epochs)
	cfg := pipeline.ConvConfig{Recipe: rc, Overridden: over, Seed: seed, SplitSeed: splitSeed, TestFraction: testFrac,
		Workers: workers, ValRows: cf.valRows, TrainRows: cf.trainRows, SPVBits: cf.spvBits, Progress: bar.update, RowProgress: bar.rows,
		CalibrationProgress:      lazyProgress(stderr, "calibrating (sampling the validation rows)"),
		FixedCalibrationProgress: lazyProgress(stderr, fmt.Sprintf("calibrating the %d-bit core (sampling the validation rows)", rc.BankBits))}
	f, err := pipeline.TrainConv(d, cfg)
	if err != nil {
		return err
	}
	hash, err := modelfile.WriteConv(out, f)
	if err != nil {
		return err
	}
	size := int64(-1)
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	sh := f.Head.Shape
	fmt.Fprintf(stdout, "trained %s: convolutional PTM, %d classes, %dx%d images, %dx%d window, %d bit-plane(s) (%s), %d %s clauses x %d literals = %d TAs, %d states each\n",
		d.Name, f.Head.Classes, sh.H, sh.W, sh.WY, sh.WX, sh.Planes, describeEncoder(f.Encoder), f.Head.Clauses, f.Head.Structure, sh.Literals(), f.TAs(), 2*f.Trainer.N)
	fmt.Fprintf(stdout, "T %d, s %g, %d epochs on %d training rows (%d validation rows carved from the training rows, %d test rows held out); %.1fs, peak RSS %.0f MB\n",
		f.Head.T, f.Trainer.S, f.Trainer.Epochs, len(f.Split.Train), f.Calibration.Rows, len(f.Split.Test), time.Since(start).Seconds(), float64(peakRSS())/1e6)
	fmt.Fprintf(stdout, "mapping %s, fitted on the validation rows at K %d: NLL %.4f, accuracy %.4f\n",
		describeMapping(f.Mapping), f.Calibration.K, f.Calibration.NLL, f.Calibration.Accuracy)
	printFixedMapping(stdout, f, "")
	if len(over) > 0 {
		fmt.Fprintf(stdout, "recipe: %s, overridden by flags: %s\n", f.Recipe.Source, strings.Join(over, ", "))
	} else {
		fmt.Fprintf(stdout, "recipe: %s\n", f.Recipe.Source)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes, model hash %s)\n", out, size, hash[:16])
	return nil
}

// describeEncoder names an encoder's bit-planes: "pixel > 75, adaptive
// 11,2" (block, C).
func describeEncoder(e conv.Encoder) string {
	var parts []string
	if len(e.Thresholds) > 0 {
		parts = append(parts, fmt.Sprintf("pixel > %v", e.Thresholds))
	}
	if a := e.Adaptive; a != nil {
		parts = append(parts, fmt.Sprintf("adaptive %d,%d", a.Block, a.C))
	}
	return strings.Join(parts, ", ")
}

// lazyProgress returns a progress callback whose bar, labelled label,
// appears at its first call.
func lazyProgress(stderr io.Writer, label string) func(done, total int) {
	var p *progress
	return func(done, total int) {
		if p == nil {
			p = newProgress(stderr, label)
		}
		p.update(done, total)
	}
}

// printFixedMapping prints the line of a convolutional model's
// fixed-point mapping (none for a file without one), prefixed by indent.
func printFixedMapping(w io.Writer, f *modelfile.ConvFile, indent string) {
	if f.FixedMapping == nil || f.Calibration == nil || f.Calibration.Fixed == nil {
		return
	}
	x := f.Calibration.Fixed
	fmt.Fprintf(w, "%sfixed-point mapping %s (the %d-bit core's: ptm eval --fixed, ptm stream), fitted on the same rows on the %d-bit core: NLL %.4f, accuracy %.4f\n",
		indent, describeMapping(*f.FixedMapping), x.Bits, x.Bits, x.NLL, x.Accuracy)
}
