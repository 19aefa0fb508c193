package pipeline

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// DefaultConvValRows is the number of validation rows TrainConv carves
// from the training rows to fit the mapping parameter (at most a tenth of
// the training rows).
const DefaultConvValRows = 5000

// ConvRecipeSource names the recipe TrainConv records
// (modelfile.ConvRecipe.Source) for a recipe name: "convtrain.ImageRecipe(NAME)".
func ConvRecipeSource(name string) string {
	return "convtrain.ImageRecipe(" + name + ")"
}

// ConvConfig configures TrainConv.
type ConvConfig struct {
	// Recipe is the model's recipe (convtrain.ImageRecipe, by default
	// the data set's (convtrain.RecipeFor), with the user's overrides);
	// Overridden names the fields the user set.
	Recipe     convtrain.ImageConfig
	Overridden []string
	Seed       uint64
	// SplitSeed and TestFraction split a data set without a predefined
	// split (an IDX folder of training files only).
	SplitSeed    uint64
	TestFraction float64
	// Workers is the goroutines of training and sampling (0: GOMAXPROCS);
	// the model and the fitted parameter do not depend on it.
	Workers int
	// ValRows is the validation rows carved (0: DefaultConvValRows).
	ValRows int
	// TrainRows keeps only the first TrainRows training rows (0: all of
	// them), the validation rows carved from those: a quick model.
	TrainRows int
	// SPVBits is the width the file stores the SPVs at (0:
	// modelfile.DefaultConvSPVBits; the trainer's B stores them exactly).
	SPVBits int
	// Progress is called after each epoch, RowProgress within one (rows
	// done of total), CalibrationProgress while the validation rows are
	// sampled.
	Progress            func(epoch, epochs int)
	RowProgress         func(done, total int)
	CalibrationProgress func(done, total int)
	// FixedCalibrationProgress is called while the validation rows are
	// sampled on the fixed-point core (the fixed mapping's fit).
	FixedCalibrationProgress func(done, total int)
}

// The lanes of the fixed-point core TrainConv fits the fixed mapping on
// and `ptm eval --fixed` runs by default (TestMNIST's: 8 clause lanes x 8
// literal lanes, fewer for a smaller model). The lanes change which
// random draws a TA gets, not their distribution.
const (
	DefaultConvClauseLanes  = 8
	DefaultConvLiteralLanes = 8
)

// DefaultConvHW is the fixed-point core at bits with the default LFSR
// width and lanes (at most the head's clauses and literals).
func DefaultConvHW(h *conv.Head, bits int) conv.HW {
	return conv.HW{Bits: bits, LFSRWidth: lfsr.DefaultWidth, ClauseLanes: min(DefaultConvClauseLanes, h.Clauses), LiteralLanes: min(DefaultConvLiteralLanes, h.Shape.Literals())}
}

// IsImage reports whether d's features are the pixels of images.
func IsImage(d *Data) bool {
	return d.Image.Rows > 0 && d.Image.Cols > 0 && d.Image.Rows*d.Image.Cols == len(d.Features)
}

// ConvTrainBytes estimates the peak memory of TrainConv: per SPV value 2
// bytes in the trainer, 2 in the file and 2 more while the payload is
// written; per TA 16 (include masses, supports, the float model and the
// bank); per training image its booleanized planes; and the validation
// samples.
func ConvTrainBytes(r convtrain.ImageConfig, h, w, rows int) float64 {
	sh := r.Shape(h, w)
	tas := float64(r.Clauses) * float64(sh.Literals())
	spv := tas * 2 * float64(r.N)
	return spv*6 + tas*16 + float64(rows)*float64(sh.Planes*sh.Pixels()+24)
}

// CheckConvSize refuses a convolutional model too large for the memory
// limit (PTM_MAX_MEMORY) or the model file format before anything of its
// size is allocated, naming the flags that set the size.
func CheckConvSize(r convtrain.ImageConfig, h, w, rows int) error {
	limit, err := MemoryLimit()
	if err != nil {
		return err
	}
	sh := r.Shape(h, w)
	if err := sh.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	desc := fmt.Sprintf("%d clauses (--clauses) x %d literals (--window %dx%d, %d --pixel-thresholds) x %d states (2 x --states), %d training images",
		r.Clauses, sh.Literals(), r.WY, r.WX, sh.Planes, 2*r.N, rows)
	if need := ConvTrainBytes(r, h, w, rows); need > float64(limit) {
		return fmt.Errorf("pipeline: the convolutional model would need about %s of memory (%s), over the %s limit (PTM_MAX_MEMORY): lower --clauses, --states, --window or --pixel-thresholds",
			bytesString(need), desc, bytesString(float64(limit)))
	}
	if spv := float64(r.Clauses) * float64(sh.Literals()) * 2 * float64(r.N); spv > modelfile.MaxSPVValues {
		return fmt.Errorf("pipeline: the model would have %.4g SPV values (%s), over the model file limit of %d", spv, desc, modelfile.MaxSPVValues)
	}
	return nil
}

// pixels converts row r of an image data set to 8-bit pixels (values are
// rounded and clamped to 0..255; IDX images are bytes already).
func pixels(d *Data, r int, dst []uint8) []uint8 {
	x := d.X[r]
	if cap(dst) < len(x) {
		dst = make([]uint8, len(x))
	}
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = uint8(math.Max(0, math.Min(255, math.Round(v))))
	}
	return dst
}

// checkImages refuses data whose images are not the shape's.
func checkImages(d *Data, sh conv.Shape) error {
	if !IsImage(d) {
		return fmt.Errorf("pipeline: %q is not an image data set (no image geometry): a convolutional model needs images (mnist, fashion-mnist, an IDX folder)", d.Name)
	}
	if d.Image.Rows != sh.H || d.Image.Cols != sh.W {
		return fmt.Errorf("pipeline: %q has %dx%d images, the model takes %dx%d", d.Name, d.Image.Rows, d.Image.Cols, sh.H, sh.W)
	}
	return nil
}

// carve splits rows into fit and validation rows: n rows drawn
// stratified by label with seed, both ascending.
func carve(d *Data, rows []int, n int, seed uint64) (fit, val []int) {
	y := make([]int, len(rows))
	for i, r := range rows {
		y[i] = d.Y[r]
	}
	a, b := dataset.StratifiedSplit(y, len(d.Classes), float64(n)/float64(len(rows)), seed)
	for _, i := range a {
		fit = append(fit, rows[i])
	}
	for _, i := range b {
		val = append(val, rows[i])
	}
	slices.Sort(fit)
	slices.Sort(val)
	return fit, val
}

// TrainConv trains a convolutional PTM on an image data set with the
// fixed-point trainer (convtrain) and returns its model file: the
// training rows are the data set's predefined ones (or a stratified split
// by TestFraction); ValRows of them, carved stratified with the seed, are
// held out of training to fit the mapping parameter (Recipe.Mapping's
// kind) by NLL of K-sample predictions (K = Recipe.K); the stored model
// is the one trained on the remaining rows, so that the fitted parameter
// belongs to it (modelfile.ConvCalibration.FinalOnCarve false).
func TrainConv(d *Data, cfg ConvConfig) (*modelfile.ConvFile, error) {
	if !IsImage(d) {
		return nil, fmt.Errorf("pipeline: %q is not an image data set: a convolutional model needs images (mnist, fashion-mnist, an IDX folder); --kind tabular trains a tabular model", d.Name)
	}
	nc := len(d.Classes)
	if nc < 2 || nc > conv.MaxClasses {
		return nil, fmt.Errorf("pipeline: %q has %d classes, a convolutional model takes 2..%d", d.Name, nc, conv.MaxClasses)
	}
	rc := cfg.Recipe
	h, w := d.Image.Rows, d.Image.Cols
	tcfg := rc.Trainer(h, w, nc, cfg.Seed)
	tcfg.Workers = cfg.Workers
	if err := tcfg.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := rc.Encoder().Validate(tcfg.Shape); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if _, err := conv.Jitter(rc.Encoder(), rc.JitterSets, rc.JitterSpread); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if rc.Epochs < 1 || rc.K < 1 {
		return nil, fmt.Errorf("pipeline: %d epochs and K = %d, want >= 1", rc.Epochs, rc.K)
	}
	train, test, err := d.Split(cfg.TestFraction, cfg.SplitSeed)
	if err != nil {
		return nil, err
	}
	if cfg.TrainRows < 0 {
		return nil, fmt.Errorf("pipeline: TrainRows %d, want >= 0", cfg.TrainRows)
	}
	if cfg.TrainRows > 0 && cfg.TrainRows < len(train) {
		train = train[:cfg.TrainRows]
	}
	if err := CheckConvSize(rc, h, w, len(train)); err != nil {
		return nil, err
	}
	nv := cfg.ValRows
	if nv == 0 {
		nv = DefaultConvValRows
	}
	nv = min(nv, len(train)/10)
	if nv < nc {
		return nil, fmt.Errorf("pipeline: %d training images leave %d validation rows for %d classes: a convolutional model needs at least %d training images", len(train), nv, nc, 10*nc)
	}
	fit, val := carve(d, train, nv, cfg.Seed)
	enc := rc.Encoder()
	X := make([][]bool, len(fit))
	y := make([]int, len(fit))
	var img []uint8
	for i, r := range fit {
		img = pixels(d, r, img)
		if X[i], err = enc.Booleanize(tcfg.Shape, img, nil); err != nil {
			return nil, fmt.Errorf("pipeline: row %d: %w", r+1, err)
		}
		y[i] = d.Y[r]
	}
	tr, err := convtrain.New(tcfg)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	defer tr.Close()
	tr.Progress = cfg.RowProgress
	for e := 0; e < rc.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			return nil, fmt.Errorf("pipeline: epoch %d: %w", e+1, err)
		}
		if cfg.Progress != nil {
			cfg.Progress(e+1, rc.Epochs)
		}
	}
	X = nil
	sp := modelfile.Split{Dataset: d.Name, Rows: d.Len(), Seed: cfg.SplitSeed, TestFraction: cfg.TestFraction, Train: fit, Test: slices.Clone(test)}
	if d.FixedTrain != nil {
		sp.TestFraction = 0
	}
	return finishConv(tr, d, rc, enc, sp, val, convFinish{Recipe: &modelfile.ConvRecipe{Source: ConvRecipeSource(rc.Name), Overridden: cfg.Overridden}, Seed: cfg.Seed, SPVBits: cfg.SPVBits, Workers: cfg.Workers,
		Progress: cfg.CalibrationProgress, FixedProgress: cfg.FixedCalibrationProgress})
}

// convFinish is what finishConv needs besides the trainer and the recipe.
type convFinish struct {
	Recipe        *modelfile.ConvRecipe
	Seed          uint64
	SPVBits       int
	Workers       int
	Progress      func(done, total int)
	FixedProgress func(done, total int)
}

// finishConv writes trained tr's model file (SPVs at c.SPVBits, the lanes,
// the bank at rc.BankBits), closes tr and fits the mapping parameter on
// the validation rows val, for the float model and for the fixed-point
// core at rc.BankBits (FitConvFixedMapping): the end TrainConv and
// ResumeConv share.
func finishConv(tr *convtrain.Trainer, d *Data, rc convtrain.ImageConfig, enc conv.Encoder, sp modelfile.Split, val []int, c convFinish) (*modelfile.ConvFile, error) {
	defer tr.Close()
	tc := tr.Config()
	cl := tr.Clauses()
	sw := c.SPVBits
	if sw == 0 {
		sw = min(modelfile.DefaultConvSPVBits, cl.Bits())
	}
	if sw < modelfile.MinSPVBits || sw > cl.Bits() {
		return nil, fmt.Errorf("pipeline: --spv-bits %d, want %d..%d (the trainer's width)", sw, modelfile.MinSPVBits, cl.Bits())
	}
	ctl, lanes := tr.Lanes()
	f := &modelfile.ConvFile{Head: *tr.Head(), Classes: slices.Clone(d.Classes), Encoder: enc,
		JitterSets: rc.JitterSets, JitterSpread: rc.JitterSpread, SPVBits: sw,
		Trainer: modelfile.ConvTrainer{S: tc.S, N: tc.N, Bits: cl.Bits(), Seed: tc.Seed, Epochs: tr.Epochs,
			WeightClip: tc.WeightClip, LiteralBudget: tc.LiteralBudget, BoostTruePositive: tc.BoostTruePositive},
		BankBits: rc.BankBits, K: rc.K, Mapping: ptm.Mapping{Kind: rc.Mapping},
		Split:           sp,
		DataFingerprint: d.Fingerprint(),
		Recipe:          c.Recipe,
		Lanes:           &modelfile.Lanes{Control: ctl, Clauses: lanes},
	}
	f.Head.Weights = slices.Clone(f.Head.Weights)
	if err := f.SetSPVs(cl.SPV); err != nil {
		return nil, err
	}
	bank, err := tr.Bank(rc.BankBits)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	f.Thresh = bank.Thresh
	tr.Close()
	if f.Mapping, err = defaultMapping(rc.Mapping); err != nil {
		return nil, err
	}
	// Fit the mapping parameter on the carved rows.
	labels, err := ConvLabels(f, d, val)
	if err != nil {
		return nil, err
	}
	sums, err := SampleConv(f, d, val, ConvSampling{K: rc.K, Seed: c.Seed, Workers: c.Workers, Progress: c.Progress})
	if err != nil {
		return nil, err
	}
	best, bestNLL, bestAcc, err := fitConvMapping(&f.Head, sums, rc.K, labels, rc.Mapping)
	if err != nil {
		return nil, err
	}
	f.Mapping = best
	f.Calibration = &modelfile.ConvCalibration{Rows: len(val), Seed: c.Seed, K: rc.K, NLL: bestNLL, Accuracy: bestAcc}
	sums = nil
	if err := fitFixed(f, d, val, labels, c.Workers, c.FixedProgress); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// fitFixed samples the validation rows val (labels their classes) on the
// fixed-point core at f.BankBits (DefaultConvHW, K and seed
// uint32(Seed) of f.Calibration) and sets f.FixedMapping and
// f.Calibration.Fixed to the mapping of f.Mapping's kind fitted on them
// (fitConvMapping).
func fitFixed(f *modelfile.ConvFile, d *Data, val, labels []int, workers int, progress func(done, total int)) error {
	c := f.Calibration
	hw := DefaultConvHW(&f.Head, f.BankBits)
	bank, err := f.Bank(f.BankBits)
	if err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	sums, err := SampleConv(f, d, val, ConvSampling{K: c.K, Seed: uint64(uint32(c.Seed)), Fixed: &hw, Bank: bank, Workers: workers, Progress: progress})
	if err != nil {
		return err
	}
	mp, nll, acc, err := fitConvMapping(&f.Head, sums, c.K, labels, f.Mapping.Kind)
	if err != nil {
		return err
	}
	f.FixedMapping = &mp
	c.Fixed = &modelfile.ConvFixedCalibration{Bits: hw.Bits, LFSRWidth: hw.LFSRWidth, ClauseLanes: hw.ClauseLanes, LiteralLanes: hw.LiteralLanes, NLL: nll, Accuracy: acc}
	return nil
}

// fitConvMapping fits the parameter of a mapping kind by NLL of the
// K-sample predictions of held-out rows: a softmax temperature among
// convtrain.SoftmaxGrid(h.T) (convtrain.FitSoftmax: the class sums of a
// convolutional model scale with T), a vote smoothing among the grid of
// the tabular pipeline (mappingCandidates). It returns the mapping with
// the NLL and accuracy of the rows under it.
func fitConvMapping(h *conv.Head, sums [][]int32, K int, labels []int, kind ptm.MappingKind) (ptm.Mapping, float64, float64, error) {
	if len(sums) == 0 {
		return ptm.Mapping{}, 0, 0, fmt.Errorf("pipeline: no validation rows to fit the %s mapping on", kind)
	}
	var cands []ptm.Mapping
	switch kind {
	case ptm.Softmax:
		mp, err := convtrain.FitSoftmax(h, sums, K, labels)
		if err != nil {
			return ptm.Mapping{}, 0, 0, fmt.Errorf("pipeline: %w", err)
		}
		cands = []ptm.Mapping{mp}
	default:
		var err error
		if cands, err = mappingCandidates(kind, 0); err != nil {
			return ptm.Mapping{}, 0, 0, err
		}
	}
	best, bestNLL, bestAcc := cands[0], math.Inf(1), 0.0
	for _, mp := range cands {
		r := metrics.Evaluate(ConvQueries(h, sums, K, mp), labels, 0)
		if r.NLL < bestNLL {
			best, bestNLL, bestAcc = mp, r.NLL, r.Accuracy
		}
	}
	return best, bestNLL, bestAcc, nil
}

// defaultMapping is the mapping of a kind with the parameter TrainConv
// starts from.
func defaultMapping(kind ptm.MappingKind) (ptm.Mapping, error) {
	switch kind {
	case ptm.Vote:
		return PlainMapping, nil
	case ptm.Softmax:
		return DefaultMapping, nil
	}
	return ptm.Mapping{}, fmt.Errorf("pipeline: mapping kind %q, want %q or %q", kind, ptm.Vote, ptm.Softmax)
}

// ConvSampling says how SampleConv draws: K samples per row; the float
// sampler of row r is seeded from Seed and r, the fixed-point core (Fixed
// set) queries row r with seed uint32(Seed) + r as `ptm eval --fixed` does
// for tabular models; Workers goroutines (0: GOMAXPROCS), the results
// independent of it; Progress is called every 64 rows.
type ConvSampling struct {
	K        int
	Seed     uint64
	Fixed    *conv.HW
	Bank     *conv.Bank // the bank Fixed runs (nil: the file's at HW bits)
	Workers  int
	Progress func(done, total int)
}

// rowSeed is the float sampler's seed of row r (splitmix64 of seed and r).
func rowSeed(seed uint64, r int) uint64 {
	z := seed + uint64(r+1)*0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// SampleConv draws K samples for every row of d (images of the model's
// shape) and returns each row's raw class sums (K*Classes, sample-major):
// the float model's, or the bit-exact fixed-point core's when s.Fixed is
// set. The labels of the rows are not used.
func SampleConv(f *modelfile.ConvFile, d *Data, rows []int, s ConvSampling) ([][]int32, error) {
	sh := f.Head.Shape
	if err := checkImages(d, sh); err != nil {
		return nil, err
	}
	if s.K < 1 {
		return nil, fmt.Errorf("pipeline: K = %d, want >= 1", s.K)
	}
	if err := CheckConvSamples(f, s.K, len(rows)); err != nil {
		return nil, err
	}
	sets, err := f.Sets()
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	var m *conv.Model
	bank := s.Bank
	if s.Fixed == nil {
		m = f.Model()
	} else if bank == nil {
		if bank, err = f.Bank(s.Fixed.Bits); err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
	}
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(rows)))
	out := make([][]int32, len(rows))
	var next, done atomic.Int64
	var mu sync.Mutex
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func(wk int) {
			defer wg.Done()
			pts := make([]*conv.Patches, len(sets))
			for j := range pts {
				pts[j] = conv.NewPatches(sh)
			}
			var core *conv.Core
			if s.Fixed != nil {
				c, err := conv.NewCore(bank, *s.Fixed)
				if err != nil {
					errs[wk] = fmt.Errorf("pipeline: fixed-point core: %w", err)
					return
				}
				core = c
			}
			var img []uint8
			var buf []bool
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rows) {
					return
				}
				r := rows[i]
				img = pixels(d, r, img)
				for j, e := range sets {
					var err error
					if buf, err = e.Encode(img, pts[j], buf); err != nil {
						errs[wk] = fmt.Errorf("pipeline: row %d: %w", r+1, err)
						return
					}
				}
				var sums []int32
				var err error
				if core != nil {
					sums, _, err = core.RunSets(pts, s.K, uint32(s.Seed)+uint32(r), nil)
				} else {
					var smp *conv.Sampler
					if smp, err = conv.NewSampler(m, rowSeed(s.Seed, r)); err == nil {
						sums, err = smp.RunSets(pts, s.K, nil)
					}
				}
				if err != nil {
					errs[wk] = fmt.Errorf("pipeline: row %d: %w", r+1, err)
					return
				}
				out[i] = sums
				if n := done.Add(1); s.Progress != nil && (n%64 == 0 || int(n) == len(rows)) {
					mu.Lock()
					s.Progress(int(n), len(rows))
					mu.Unlock()
				}
			}
		}(wk)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// ConvEvalBytes estimates the memory SampleConv keeps per row for K
// samples (the raw class sums) and per query (the statistics).
func ConvEvalBytes(f *modelfile.ConvFile, K int) float64 {
	return float64(K)*(4*float64(f.Head.Classes)+8*float64(f.Head.Classes)+24) + 64
}

// CheckConvSamples refuses a K whose buffers for rows rows would exceed
// the memory limit; the error names --samples.
func CheckConvSamples(f *modelfile.ConvFile, K, rows int) error {
	limit, err := MemoryLimit()
	if err != nil {
		return err
	}
	if need := ConvEvalBytes(f, K) * float64(max(rows, 1)); need > float64(limit) {
		return fmt.Errorf("pipeline: --samples %d over %d rows would need about %s of memory, over the %s limit (PTM_MAX_MEMORY)",
			K, rows, bytesString(need), bytesString(float64(limit)))
	}
	return nil
}

// ConvQueries maps every row's K samples of raw class sums with mp.
func ConvQueries(h *conv.Head, sums [][]int32, K int, mp ptm.Mapping) []metrics.QueryStats {
	q := make([]metrics.QueryStats, len(sums))
	for i, s := range sums {
		q[i] = metrics.Query(h.Probs(s, K, mp))
	}
	return q
}

// ConvLabels maps d's labels of rows onto the model's classes by name.
func ConvLabels(f *modelfile.ConvFile, d *Data, rows []int) ([]int, error) {
	return labelsOf(f.Classes, d, rows)
}

// ConvRows returns the rows of d that split names ("train", "test" as
// recorded in the model, or "all"), checking for train and test that d is
// the data the model was trained on (its fingerprint).
func ConvRows(f *modelfile.ConvFile, d *Data, split string) ([]int, error) {
	if err := checkImages(d, f.Head.Shape); err != nil {
		return nil, err
	}
	return rowsOfSplit(d, &f.Split, f.DataFingerprint, split, convNoTest)
}

// OODReport scores out-of-distribution queries against in-distribution
// ones: the AUROC of entropy and of mutual information for telling them
// apart (OOD positive), and both groups' mean entropy and MI.
type OODReport struct {
	// Rows and InRows count the OOD and in-distribution queries.
	Rows, InRows          int
	AUROCEntropy, AUROCMI float64
	// The groups' mean entropy, mutual information (bits) and confidence.
	EntropyIn, EntropyOOD   float64
	MIIn, MIOOD             float64
	MeanConfIn, MeanConfOOD float64
}

// ScoreOOD computes the OOD report of ood queries against in queries.
func ScoreOOD(in, ood []metrics.QueryStats) OODReport {
	n := len(in) + len(ood)
	ent := make([]float64, 0, n)
	mi := make([]float64, 0, n)
	pos := make([]bool, 0, n)
	var r OODReport
	r.Rows, r.InRows = len(ood), len(in)
	for k, qs := range [][]metrics.QueryStats{in, ood} {
		var se, sm, sc float64
		for _, q := range qs {
			ent = append(ent, q.Entropy)
			mi = append(mi, q.MutualInfo)
			pos = append(pos, k == 1)
			se += q.Entropy
			sm += q.MutualInfo
			sc += q.Conf
		}
		c := float64(max(len(qs), 1))
		if k == 0 {
			r.EntropyIn, r.MIIn, r.MeanConfIn = se/c, sm/c, sc/c
		} else {
			r.EntropyOOD, r.MIOOD, r.MeanConfOOD = se/c, sm/c, sc/c
		}
	}
	r.AUROCEntropy = metrics.AUROC(ent, pos)
	r.AUROCMI = metrics.AUROC(mi, pos)
	return r
}
