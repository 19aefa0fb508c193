package experiments

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/mlp"
	"github.com/ptmhw/ptm/experiments/baseline/rf"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
)

// OnlyImages and OnlyTables are the values of Options.Only: the images
// section alone, or every section but the images.
const (
	OnlyImages = "images"
	OnlyTables = "tables"
)

// checkOnly validates Options.Only.
func checkOnly(only string) error {
	switch only {
	case "", OnlyImages, OnlyTables:
		return nil
	}
	return fmt.Errorf("run only %q: want %s or %s", only, OnlyImages, OnlyTables)
}

// runsSection reports whether the section named name runs under
// Options.Only.
func runsSection(only, name string) bool {
	switch only {
	case OnlyImages:
		return name == imagesSection
	case OnlyTables:
		return name != imagesSection
	}
	return true
}

// imagesSection is the images section's name in Run.
const imagesSection = "images"

// imagesConfig holds the settings of the images section that differ
// between the full and the quick run.
type imagesConfig struct {
	// trainRows and testRows subset the standard training and test sets
	// (0 = all): a stratified, seeded subset (dataset.StratifiedSplit,
	// seed imgSeed).
	trainRows, testRows int
	// clauses and T, if not 0, replace the PTM recipe's clauses and T
	// (quick: a small model, not the default recipe); epochs, if not
	// 0, replaces its epochs.
	clauses, T, epochs int
	// mlpEpochs are the epochs of every MLP; mlpHidden their layers.
	mlpEpochs int
	mlpHidden []int
	// rfRows, if not 0, is the random forest's training subset (stratified,
	// seeded) and rfTrees its trees.
	rfRows, rfTrees int
}

// imgSeed seeds every subset, carve, model and sampler of the section.
const imgSeed = 1

// imgMLPRate and imgMLPDecay are the images' MLP step size and weight
// decay. The package defaults (0.01 and 1e-2, chosen on Iris) under-train
// on 784 pixels: on 10,000 MNIST training images, 3 epochs, 64-64 layers,
// test accuracy on 2,000 test images was 0.811 with them, 0.828 with
// decay 1e-4 and 0.925 with step 0.001 and decay 1e-4.
const (
	imgMLPRate  = 0.001
	imgMLPDecay = 1e-4
)

// imgEnsemble is the number of MLPs in the ensemble baseline.
const imgEnsemble = 5

func imagesSettings(quick bool) imagesConfig {
	if quick {
		return imagesConfig{trainRows: 1000, testRows: 500, clauses: 64, T: 500, epochs: 4,
			mlpEpochs: 4, mlpHidden: []int{64, 64}, rfTrees: 50}
	}
	return imagesConfig{mlpEpochs: 5, mlpHidden: []int{64, 64}, rfRows: 20000, rfTrees: 100}
}

// imgModels are the models the section compares.
var imgModels = []irisModel{{"ptm", "PTM"}, {"ptm_plain", "PTM, plain"}, {"mlp", "MLP-MCd"}, {"mlp_ens", "MLP ensemble"}, {"rf", "RF"}}

// imgSpec is one image data set of the section.
type imgSpec struct {
	key, name string
	load      func(progress func(read, total int64)) (*dataset.Dataset, error)
	// ood is the index in imgSpecs of the data set whose test images are
	// this data set's out-of-distribution images, and oodKey the summary
	// keys' part that names them ("<key>.<oodKey>.MODEL.auroc_*").
	ood    int
	oodKey string
}

// imgSpecs are the section's data sets: models trained on MNIST are scored
// on Fashion-MNIST's test images out of distribution, and the reverse.
var imgSpecs = []imgSpec{
	{"mnist", "MNIST", dataset.MNIST, 1, "ood_fashion"},
	{"fashion_mnist", "Fashion-MNIST", dataset.FashionMNIST, 0, "ood_mnist"},
}

// loadImages loads a built-in image data set and returns its standard
// training and test images, subset to n and m rows when not 0.
func loadImages(spec imgSpec, n, m int) (train, test *imageSet, classes []string, err error) {
	d, err := spec.load(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if d.Predefined == nil || d.Image.Rows == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no predefined split or image shape", spec.key)
	}
	data := &pipeline.Data{Dataset: d}
	set := func(rows []int, n int) *imageSet {
		if n > 0 && n < len(rows) {
			y := make([]int, len(rows))
			for i, r := range rows {
				y[i] = d.Y[r]
			}
			_, keep := dataset.StratifiedSplit(y, len(d.Classes), float64(n)/float64(len(rows)), imgSeed)
			sub := make([]int, len(keep))
			for i, k := range keep {
				sub[i] = rows[k]
			}
			slices.Sort(sub)
			rows = sub
		}
		s := &imageSet{H: d.Image.Rows, W: d.Image.Cols, Data: data, Rows: rows}
		for _, r := range rows {
			img := make([]uint8, len(d.X[r]))
			for j, v := range d.X[r] {
				img[j] = uint8(v)
			}
			s.X = append(s.X, img)
			s.Y = append(s.Y, d.Y[r])
		}
		return s
	}
	return set(d.Predefined.Train, n), set(d.Predefined.Test, m), d.Classes, nil
}

// floats returns the pixels scaled to 0..1, the baselines' features.
func (s *imageSet) floats() [][]float64 {
	out := make([][]float64, len(s.X))
	for i, img := range s.X {
		out[i] = make([]float64, len(img))
		for j, v := range img {
			out[i][j] = float64(v) / 255
		}
	}
	return out
}

// imagesPTMConfig is the PTM's recipe: the data set's
// convtrain.ImageRecipe (what `ptm train` uses), in the quick run with its
// clauses, T and epochs.
func imagesPTMConfig(ic imagesConfig, spec imgSpec, h, w, classes int) (convtrain.ImageConfig, error) {
	name := convtrain.RecipeMNIST
	if spec.key == "fashion_mnist" {
		name = convtrain.RecipeFashionMNIST
	}
	cfg, err := convtrain.ImageRecipe(name, h, w, classes)
	if err != nil {
		return cfg, err
	}
	if ic.clauses > 0 {
		cfg.Clauses = max(classes, ic.clauses)
	}
	if ic.T > 0 {
		cfg.T = ic.T
	}
	if ic.epochs > 0 {
		cfg.Epochs = ic.epochs
	}
	return cfg, nil
}

// imgGroup is one unit of the images section per data set: a model
// trained on its training images, and the models it scores (the PTM unit
// scores the PTM and the plain PTM, one trained model).
type imgGroup struct {
	key    string
	models []string
}

// imgGroups are the units of each data set, in the report's model order.
var imgGroups = []imgGroup{
	{"ptm", []string{"ptm", "ptm_plain"}},
	{"mlp", []string{"mlp"}},
	{"mlp_ens", []string{"mlp_ens"}},
	{"rf", []string{"rf"}},
}

// imgCostPerSecond converts imgUnitSeconds to unit costs: the tables'
// units cost about 1,500-2,500 per CPU-second (the quick tables' costs
// sum to 4.9e5 for about 3 CPU-minutes, the full ones' to 9.7e6 for
// about 2 CPU-hours).
const imgCostPerSecond = 2000

// imgUnitSeconds estimates the CPU-seconds of an images unit on this
// project's 2-core machine from its configuration: the PTM's training
// (rows x clauses x epochs) and sampling (test and out-of-distribution
// images x K x clauses), an MLP's epochs over the rows (five for the
// ensemble), the forest's trees over its rows (n log n). The constants
// were fitted to a full run of an earlier 256-clause recipe (PTM 161 s of
// training, MLP 85 s, ensemble 441 s, forest 139 s on two cores, MNIST)
// and under-estimate the PTM units of today's recipes: MNIST's (512
// clauses, 7 epochs) took 3,094 s wall (1,639 s training and the
// mapping's fit, about 1,360 s scoring 20,000 images) beside Fashion-MNIST's
// PTM unit at a load average of 8-13, against 1,403 estimated. The costs
// only order the units and balance shards, and the PTM units stay the
// most expensive either way; the quick units take less than they say
// (fixed costs dominate), which only shifts the order of the quick
// sweep's units.
func imgUnitSeconds(ic imagesConfig, cfg convtrain.ImageConfig, group string, rows, queries float64) float64 {
	switch group {
	case "ptm":
		return 5e-6*rows*float64(cfg.Clauses*cfg.Epochs) + 2e-6*queries*float64(cfg.K*cfg.Clauses)
	case "mlp":
		return 3e-4 * rows * float64(ic.mlpEpochs)
	case "mlp_ens":
		return 3e-4 * rows * float64(ic.mlpEpochs*imgEnsemble)
	}
	if ic.rfRows > 0 {
		rows = min(rows, float64(ic.rfRows))
	}
	return 1e-5 * rows * math.Log2(rows) * float64(ic.rfTrees)
}

// imgUnitOut is the results of one unit of the images section: one model
// (for "ptm" the PTM and the plain PTM, one trained model) trained on one
// data set's training images and queried on its test images and on the
// other data set's test images (imgSpec.ood). It holds what the report reads,
// not the trained model; shards gob-encode it.
type imgUnitOut struct {
	// Dataset is the data set's key, Classes its class names.
	Dataset string
	Classes []string
	// TrainImages counts the training images. TestRows are the data set's
	// rows of the test images and TestY their labels; OODImages counts the
	// out-of-distribution images queried (0: none).
	TrainImages int
	TestRows    []int
	TestY       []int
	OODImages   int
	// Test and OOD hold, per model key, the query statistics of every test
	// image and every out-of-distribution image, in order.
	Test, OOD map[string][]metrics.QueryStats
	// FitS is, per model key, the training wall time (seconds).
	FitS map[string]float64
	// PTM is set by the PTM unit.
	PTM *imgPTMOut
}

// imgPTMOut is what the report reads of a trained convolutional PTM.
type imgPTMOut struct {
	// Config is the recipe (imgConfigName), MappingKind its mapping's
	// kind, K its samples per query, BankBits its bank's width.
	Config, MappingKind string
	K, BankBits         int
	// Mapping is the mapping fitted on the carve (mappingName), SPVBits
	// the width the model file stores the SPVs at.
	Mapping string
	SPVBits int
	// TrainRows and CalibrationRows count the images the trainer and the
	// mapping's fit used.
	TrainRows, CalibrationRows int
	// ModelBytes, TrainS and PeakRSSMB are imagePTM's.
	ModelBytes        int
	TrainS, PeakRSSMB float64
	// Least and Most are the positions among the test images of the
	// imgExtremes images of the highest and of the lowest PTM entropy
	// (highest first, lowest last).
	Least, Most []int
}

// imgState is the images section's state in one run or merge: the data
// sets its units read (each loaded once, on first use, and shared read-only)
// and the units' results, per data set and imgGroups entry.
type imgState struct {
	ic   imagesConfig
	data []*imgData
	outs [][]*imgUnitOut
}

// imgData is one data set of imgSpecs, loaded by runner.imgLoad.
type imgData struct {
	once        sync.Once
	err         error
	train, test *imageSet
	classes     []string

	trainOnce, testOnce sync.Once
	trainF, testF       [][]float64
}

// imgLoad returns data set i of imgSpecs, loading it on first use.
func (r *runner) imgLoad(i int) (*imgData, error) {
	st := r.img
	g := st.data[i]
	g.once.Do(func() {
		key := imgSpecs[i].key
		r.progress("images: load "+key, 0, 1)
		g.train, g.test, g.classes, g.err = loadImages(imgSpecs[i], st.ic.trainRows, st.ic.testRows)
		if g.err != nil {
			g.err = fmt.Errorf("load %s: %w", key, g.err)
			return
		}
		r.progress("images: load "+key, 1, 1)
	})
	return g, g.err
}

// trainFloats and testFloats are the pixels of the training and the test
// images scaled to 0..1 (imageSet.floats), computed once.
func (g *imgData) trainFloats() [][]float64 {
	g.trainOnce.Do(func() { g.trainF = g.train.floats() })
	return g.trainF
}

func (g *imgData) testFloats() [][]float64 {
	g.testOnce.Do(func() { g.testF = g.test.floats() })
	return g.testF
}

// planImages declares the images section's units: per data set, one per
// imgGroups entry ("images.mnist.ptm", "images.fashion_mnist.rf", ...).
// Every unit also queries its models with the test images of the other
// data set (imgSpec.ood). Each unit loads the data it needs (once per process) and seeds
// its models from imgSeed alone, so it computes the same in any process
// and any order. The cost is imgUnitSeconds in the tables' units.
func (r *runner) planImages() ([]unit, error) {
	ic := imagesSettings(r.cfg.quick)
	st := &imgState{ic: ic, outs: make([][]*imgUnitOut, len(imgSpecs))}
	for range imgSpecs {
		st.data = append(st.data, &imgData{})
	}
	r.img = st
	// The costs take each data set's recipe at MNIST's sizes (28 x 28
	// images, 10 classes, 60,000 training and 10,000 test images), so
	// planning loads nothing.
	rows, test := float64(ic.trainRows), float64(ic.testRows)
	if rows == 0 {
		rows = 60000
	}
	if test == 0 {
		test = 10000
	}
	var us []unit
	for i, spec := range imgSpecs {
		cfg, err := imagesPTMConfig(ic, spec, 28, 28, 10)
		if err != nil {
			return nil, err
		}
		queries := 2 * test // and the other data set's test images
		for _, g := range imgGroups {
			o := &imgUnitOut{}
			st.outs[i] = append(st.outs[i], o)
			cost := imgCostPerSecond * imgUnitSeconds(ic, cfg, g.key, rows, queries)
			us = append(us, unit{name: "images." + spec.key + "." + g.key, cost: cost, out: o, run: func() error {
				return r.imagesUnit(i, g.key, o)
			}})
		}
	}
	return us, nil
}

// imagesUnit runs the unit of model group on data set i into o.
func (r *runner) imagesUnit(i int, group string, o *imgUnitOut) error {
	spec := imgSpecs[i]
	d, err := r.imgLoad(i)
	if err != nil {
		return err
	}
	ood, err := r.imgLoad(spec.ood)
	if err != nil {
		return err
	}
	cfg, err := imagesPTMConfig(r.img.ic, spec, d.train.H, d.train.W, len(d.classes))
	if err != nil {
		return err
	}
	*o = imgUnitOut{Dataset: spec.key, Classes: d.classes, TrainImages: len(d.train.X), TestRows: d.test.Rows, TestY: d.test.Y,
		Test: map[string][]metrics.QueryStats{}, FitS: map[string]float64{},
		OOD: map[string][]metrics.QueryStats{}, OODImages: len(ood.test.X)}
	if group == "ptm" {
		return r.imagesPTM(cfg, spec, d, ood, o)
	}
	return r.imagesBaseline(cfg.K, group, spec, d, ood, o)
}

// imagesPTM trains the PTM of one data set with pipeline.TrainConv and
// scores it and the plain PTM (the same trained model through its base
// thresholds alone, the raw vote smoothed by 0.05, nothing fitted) with
// pipeline.SampleConv.
func (r *runner) imagesPTM(cfg convtrain.ImageConfig, spec imgSpec, d, ood *imgData, o *imgUnitOut) error {
	stage := "images: " + spec.key + " ptm training"
	p, err := trainImagePTM(r.ctx, cfg, d.train, d.test, imgSeed,
		func(done, total int) { r.progress(stage, done, total) })
	if err != nil {
		return err
	}
	o.FitS["ptm"], o.FitS["ptm_plain"] = p.TrainS, p.TrainS
	f := p.File
	plain := *f
	plain.JitterSets, plain.JitterSpread = 1, 0
	score := func(imgs *imageSet, seed uint64, dst map[string][]metrics.QueryStats) error {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		sums, err := pipeline.SampleConv(f, imgs.Data, imgs.Rows, pipeline.ConvSampling{K: cfg.K, Seed: seed})
		if err != nil {
			return err
		}
		dst["ptm"] = pipeline.ConvQueries(&f.Head, sums, cfg.K, f.Mapping)
		if f.JitterSets > 1 {
			if sums, err = pipeline.SampleConv(&plain, imgs.Data, imgs.Rows, pipeline.ConvSampling{K: cfg.K, Seed: seed}); err != nil {
				return err
			}
		}
		dst["ptm_plain"] = pipeline.ConvQueries(&f.Head, sums, cfg.K, plainMapping)
		return nil
	}
	r.progress("images: "+spec.key+" ptm scoring", 0, 1)
	if err := score(d.test, imgSeed+2000, o.Test); err != nil {
		return err
	}
	if ood != nil {
		if err := score(ood.test, imgSeed+3000, o.OOD); err != nil {
			return err
		}
	}
	r.progress("images: "+spec.key+" ptm scoring", 1, 1)
	o.PTM = &imgPTMOut{Config: imgConfigName(cfg), MappingKind: fmt.Sprint(cfg.Mapping), K: cfg.K, BankBits: cfg.BankBits,
		Mapping: mappingName(f.Mapping), SPVBits: f.SPVBits, TrainRows: len(f.Split.Train), CalibrationRows: f.Calibration.Rows,
		ModelBytes: p.ModelBytes, TrainS: p.TrainS, PeakRSSMB: p.PeakRSSMB}
	o.PTM.Least, o.PTM.Most = extremesOf(o.Test["ptm"])
	return nil
}

// extremesOf returns the positions of the imgExtremes queries of the
// highest entropy (highest first) and of the lowest (lowest last), at most
// half of qs each; ties keep the queries' order.
func extremesOf(qs []metrics.QueryStats) (least, most []int) {
	idx := make([]int, len(qs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return qs[idx[a]].Entropy > qs[idx[b]].Entropy })
	n := min(imgExtremes, len(idx)/2)
	return slices.Clone(idx[:n]), slices.Clone(idx[len(idx)-n:])
}

// mlpEnsemble is the ensemble baseline: imgEnsemble MLPs without dropout,
// each with its own seed (initialization and batch order), trained on the
// same rows. Its samples are its members' predictions, one each.
type mlpEnsemble []*mlp.Model

func (e mlpEnsemble) query(x []float64) metrics.QueryStats {
	s := make([][]float64, len(e))
	for i, m := range e {
		s[i] = m.Proba(x)
	}
	return metrics.Query(s)
}

// imagesBaseline trains one baseline of one data set ("mlp", the MLP with
// MC dropout; "mlp_ens", the MLP ensemble, its members in parallel; "rf",
// the random forest) and queries it with K samples per image (the
// ensemble: one per member) on the test images and the
// out-of-distribution images, in order: the MLP's dropout masks come from
// its own stream, so the unit's numbers depend on nothing else.
func (r *runner) imagesBaseline(K int, model string, spec imgSpec, d, ood *imgData, o *imgUnitOut) error {
	ic := r.img.ic
	Xtr, ytr := d.trainFloats(), d.train.Y
	nc := len(d.classes)
	stage := "images: " + spec.key + " " + model + " training"
	var query func(x []float64) (metrics.QueryStats, error)
	t0 := time.Now()
	switch model {
	case "mlp":
		mcd := mlp.New(mlp.Opts{Hidden: ic.mlpHidden, Epochs: ic.mlpEpochs, LearningRate: imgMLPRate, WeightDecay: imgMLPDecay, Seed: imgSeed})
		r.progress(stage, 0, 1)
		if err := await(r.ctx, func() error { return mcd.Fit(Xtr, ytr, nc) }); err != nil {
			return err
		}
		o.FitS[model] = time.Since(t0).Seconds()
		r.progress(stage, 1, 1)
		query = func(x []float64) (metrics.QueryStats, error) { return baseline.Query(mcd, x, K) }
	case "mlp_ens":
		ens := make(mlpEnsemble, imgEnsemble)
		for i := range ens {
			ens[i] = mlp.New(mlp.Opts{Hidden: ic.mlpHidden, Epochs: ic.mlpEpochs, LearningRate: imgMLPRate, WeightDecay: imgMLPDecay,
				Dropout: mlp.NoDropout, Seed: imgSeed + 100 + uint64(i)})
		}
		secs := make([]float64, len(ens))
		var done atomic.Int32
		r.progress(stage, 0, len(ens))
		if err := parallel(r.ctx, len(ens), func(i int) error {
			t := time.Now()
			if err := ens[i].Fit(Xtr, ytr, nc); err != nil {
				return err
			}
			secs[i] = time.Since(t).Seconds()
			r.progress(stage, int(done.Add(1)), len(ens))
			return nil
		}); err != nil {
			return err
		}
		for _, s := range secs {
			o.FitS[model] += s
		}
		query = func(x []float64) (metrics.QueryStats, error) { return ens.query(x), nil }
	case "rf":
		rfX, rfY := Xtr, ytr
		if ic.rfRows > 0 && ic.rfRows < len(Xtr) {
			_, keep := dataset.StratifiedSplit(ytr, nc, float64(ic.rfRows)/float64(len(Xtr)), imgSeed+4000)
			slices.Sort(keep)
			rfX, rfY = make([][]float64, len(keep)), make([]int, len(keep))
			for i, k := range keep {
				rfX[i], rfY[i] = Xtr[k], ytr[k]
			}
		}
		forest := rf.New(rf.Opts{NTrees: ic.rfTrees, Seed: imgSeed, Workers: runtime.GOMAXPROCS(0)})
		r.progress(stage, 0, 1)
		if err := await(r.ctx, func() error { return forest.Fit(rfX, rfY, nc) }); err != nil {
			return err
		}
		o.FitS[model] = time.Since(t0).Seconds()
		r.progress(stage, 1, 1)
		query = func(x []float64) (metrics.QueryStats, error) { return baseline.Query(forest, x, K) }
	default:
		return fmt.Errorf("images: unknown baseline %q", model)
	}
	score := func(X [][]float64) ([]metrics.QueryStats, error) {
		qs := make([]metrics.QueryStats, len(X))
		for i, x := range X {
			if i%256 == 0 {
				if err := r.ctx.Err(); err != nil {
					return nil, err
				}
			}
			q, err := query(x)
			if err != nil {
				return nil, err
			}
			qs[i] = q
		}
		return qs, nil
	}
	stage = "images: " + spec.key + " " + model + " scoring"
	r.progress(stage, 0, 1)
	var err error
	if o.Test[model], err = score(d.testFloats()); err != nil {
		return err
	}
	if ood != nil {
		if o.OOD[model], err = score(ood.testFloats()); err != nil {
			return err
		}
	}
	r.progress(stage, 1, 1)
	return nil
}

// imgResult is one data set's comparison as the report reads it: its
// units' results put together.
type imgResult struct {
	spec        imgSpec
	classes     []string
	trainImages int
	testRows    []int
	testY       []int
	oodImages   int
	ptm         *imgPTMOut
	testQ       map[string][]metrics.QueryStats // per model, the test images
	oodQ        map[string][]metrics.QueryStats // per model, the other data set's test images (imgSpec.ood)
	fitS        map[string]float64              // per model, training wall time (seconds)
}

// imgResults puts the units' results together per data set, checking that
// the units of a data set tested the same images.
func (r *runner) imgResults() ([]*imgResult, error) {
	res := make([]*imgResult, len(imgSpecs))
	for i, spec := range imgSpecs {
		d := &imgResult{spec: spec, testQ: map[string][]metrics.QueryStats{}, oodQ: map[string][]metrics.QueryStats{}, fitS: map[string]float64{}}
		for j, g := range imgGroups {
			o := r.img.outs[i][j]
			name := "images." + spec.key + "." + g.key
			if o.Dataset != spec.key {
				return nil, fmt.Errorf("unit %s holds results of %q", name, o.Dataset)
			}
			if j == 0 {
				d.classes, d.trainImages, d.testRows, d.testY, d.oodImages = o.Classes, o.TrainImages, o.TestRows, o.TestY, o.OODImages
			} else if o.TrainImages != d.trainImages || o.OODImages != d.oodImages || !slices.Equal(o.TestRows, d.testRows) ||
				!slices.Equal(o.TestY, d.testY) || !slices.Equal(o.Classes, d.classes) {
				return nil, fmt.Errorf("unit %s was trained or tested on other images than unit images.%s.%s", name, spec.key, imgGroups[0].key)
			}
			if o.PTM != nil {
				d.ptm = o.PTM
			}
			for _, m := range g.models {
				if len(o.Test[m]) != len(d.testY) {
					return nil, fmt.Errorf("unit %s: %d queries of model %s for %d test images", name, len(o.Test[m]), m, len(d.testY))
				}
				d.testQ[m], d.fitS[m] = o.Test[m], o.FitS[m]
				if q, ok := o.OOD[m]; ok || d.oodImages > 0 {
					if len(q) != d.oodImages {
						return nil, fmt.Errorf("unit %s: %d out-of-distribution queries of model %s for %d images", name, len(q), m, d.oodImages)
					}
					d.oodQ[m] = q
				}
			}
		}
		if d.ptm == nil {
			return nil, fmt.Errorf("unit images.%s.ptm holds no PTM", spec.key)
		}
		res[i] = d
	}
	return res, nil
}

// images writes the images section's summary keys, text and figures from
// its units' results: on MNIST and Fashion-MNIST, the convolutional PTM
// and the baselines trained on the standard training images and scored on
// the standard test images; each data set's models also scored on the
// other data set's test images (out of distribution). The loaded data sets
// are released afterwards.
func (r *runner) images() (string, error) {
	defer func() {
		for i := range r.img.data {
			r.img.data[i] = &imgData{}
		}
	}()
	res, err := r.imgResults()
	if err != nil {
		return "", err
	}
	r.imagesSummary(res)
	return r.imagesReport(r.img.ic, res)
}

// imgMetrics are the summary's per-model metrics on test images.
var imgMetrics = []string{"accuracy", "ece", "nll", "auroc_entropy", "auroc_mi"}

func reportValue(rep metrics.Report, m string) float64 {
	switch m {
	case "accuracy":
		return rep.Accuracy
	case "ece":
		return rep.ECE
	case "nll":
		return rep.NLL
	case "auroc_entropy":
		return rep.AUROCEntropy
	case "auroc_mi":
		return rep.AUROCMI
	}
	return math.NaN()
}

// imagesSummary writes the section's keys: "<d>.test.<model>.<metric>",
// "mnist.ood_fashion.<model>.auroc_{entropy,mi}" (MNIST's models on
// Fashion-MNIST's test images), "fashion_mnist.ood_mnist.<model>.auroc_*"
// (the reverse),
// "mnist.ptm.{model_bytes,train_s,peak_rss_mb}" and the settings.
func (r *runner) imagesSummary(res []*imgResult) {
	s := r.sum
	for _, d := range res {
		p := d.spec.key
		s.set(p+".train_images", float64(d.trainImages))
		s.set(p+".test_images", float64(len(d.testY)))
		for _, m := range imgModels {
			rep := metrics.Evaluate(d.testQ[m.key], d.testY, r.cfg.bins)
			for _, mt := range imgMetrics {
				s.set(p+".test."+m.key+"."+mt, reportValue(rep, mt))
			}
			s.set(p+".test."+m.key+".train_s", d.fitS[m.key])
			if q, ok := d.oodQ[m.key]; ok {
				s.set(p+"."+d.spec.oodKey+"."+m.key+".auroc_entropy", OODAUROC(d.testQ[m.key], q, entropyOf))
				s.set(p+"."+d.spec.oodKey+"."+m.key+".auroc_mi", OODAUROC(d.testQ[m.key], q, miOf))
			}
		}
		c := d.ptm
		s.set(p+".ptm.model_bytes", float64(c.ModelBytes))
		s.label(p+".ptm.model_bytes_is", fmt.Sprintf("the model file `ptm train` writes (modelfile.EncodeConv: SPVs at %d bits, the %d-bit bank, the split)", c.SPVBits, c.BankBits))
		s.set(p+".ptm.train_s", c.TrainS)
		s.set(p+".ptm.peak_rss_mb", c.PeakRSSMB)
		s.label(p+".ptm.mapping", c.Mapping)
		s.label(p+".ptm.config", c.Config)
		s.set(p+".ptm.k", float64(c.K))
	}
}

// imgConfigName describes a convolutional PTM recipe in one line.
func imgConfigName(c convtrain.ImageConfig) string {
	enc := fmt.Sprintf("pixel thresholds %v", c.Thresholds)
	if a := c.Adaptive; a != nil {
		enc += fmt.Sprintf(" and the adaptive plane (block %d, C %d)", a.Block, a.C)
	}
	return fmt.Sprintf("%d %s clauses, T %d, s %g, N %d, %dx%d window, %s, %d threshold set(s) over +-%d, %d epochs, %d-bit bank, K %d",
		c.Clauses, c.Structure, c.T, c.S, c.N, c.WY, c.WX, enc, c.JitterSets, c.JitterSpread, c.Epochs, c.BankBits, c.K)
}

// imagesReport writes the section's text and figures.
func (r *runner) imagesReport(ic imagesConfig, res []*imgResult) (string, error) {
	s := r.sum
	var b strings.Builder
	b.WriteString("## 7. Images: MNIST and Fashion-MNIST\n\n")
	if r.cfg.quick {
		fmt.Fprintf(&b, "**Quick run: %d training and %d test images per data set (stratified, seeded subsets), a PTM of %d clauses and T %d instead of the default's; a smoke test.**\n\n",
			ic.trainRows, ic.testRows, ic.clauses, ic.T)
	}
	m0 := res[0]
	fmt.Fprintf(&b, "Standard splits (%d training, %d test images per data set in this run). "+
		"**PTM**: the convolutional PTM of the data set's recipe (`convtrain.ImageRecipe`, what `ptm train` uses; each data set's below), trained by the fixed-point trainer (golden/conv/convtrain) "+
		"by pipeline.TrainConv (the train-and-fit step of `ptm train`) on %d of the training images and its %s mapping's parameter fitted by NLL on the other %d (a stratified carve, seed %d); "+
		"queries draw K samples from the float model (golden/conv Sampler) through every threshold set. "+
		"**PTM, plain**: the same trained model, one threshold set, the raw vote smoothed by 0.05 and nothing fitted (the tabular plain PTM's mapping). "+
		"**MLP-MCd**: experiments/baseline/mlp, hidden layers %v, %d epochs, Adam step %g, weight decay %g, dropout 0.1 kept on at test time, K = %d masks. "+
		"**MLP ensemble**: %d such MLPs without dropout, each its own seed; its samples are its members' predictions. "+
		"**RF**: experiments/baseline/rf, %d trees%s. Baselines see the 784 pixels scaled to 0..1 (and standardize them as their package does). "+
		"AUROC(entropy) and AUROC(MI) rank wrong predictions above right ones; ECE has %d equal-width bins.\n\n",
		m0.trainImages, len(m0.testY), m0.ptm.TrainRows,
		m0.ptm.MappingKind, m0.ptm.CalibrationRows, imgSeed,
		ic.mlpHidden, ic.mlpEpochs, imgMLPRate, imgMLPDecay, m0.ptm.K, imgEnsemble, ic.rfTrees, rfRowsText(ic), r.cfg.bins)
	for _, d := range res {
		p := d.spec.key
		fmt.Fprintf(&b, "### %s (%d test images; summary keys `%s.test.MODEL.*`)\n\n", d.spec.name, len(d.testY), p)
		b.WriteString("| model | accuracy | ECE | NLL | AUROC(entropy) | AUROC(MI) | training (s) |\n|---|---|---|---|---|---|---|\n")
		for _, m := range imgModels {
			k := p + ".test." + m.key + "."
			fmt.Fprintf(&b, "| %s | %.4f | %.4f | %.4f | %s | %s | %.0f |\n", m.name, s.get(k+"accuracy"), s.get(k+"ece"), s.get(k+"nll"),
				fmtMaybe(s.get(k+"auroc_entropy")), fmtMaybe(s.get(k+"auroc_mi")), s.get(k+"train_s"))
		}
		fmt.Fprintf(&b, "\nPTM recipe: %s. PTM mapping fitted on the validation images: %s. Model: %d bytes (%s); training %.0f s; peak RSS of the process after training %.0f MB.\n\n",
			s.Labels[p+".ptm.config"], s.Labels[p+".ptm.mapping"], int(s.get(p+".ptm.model_bytes")), s.Labels[p+".ptm.model_bytes_is"], s.get(p+".ptm.train_s"), s.get(p+".ptm.peak_rss_mb"))
	}
	for _, d := range res {
		o := imgSpecs[d.spec.ood]
		fmt.Fprintf(&b, "### Out of distribution: models trained on %s, queried with %s's test images (summary keys `%s.%s.MODEL.*`)\n\n"+
			"AUROC of ranking the %d %s test images above the %d %s test images by the score.\n\n",
			d.spec.name, o.name, d.spec.key, d.spec.oodKey, d.oodImages, o.name, len(d.testY), d.spec.name)
		fmt.Fprintf(&b, "| model | AUROC(entropy) | AUROC(MI) | mean entropy %s / %s (bits) |\n|---|---|---|---|\n", imgShort[d.spec.key], imgShort[o.key])
		for _, m := range imgModels {
			k := d.spec.key + "." + d.spec.oodKey + "." + m.key + "."
			fmt.Fprintf(&b, "| %s | %s | %s | %.3f / %.3f |\n", m.name, fmtMaybe(s.get(k+"auroc_entropy")), fmtMaybe(s.get(k+"auroc_mi")),
				meanOf(d.testQ[m.key], entropyOf), meanOf(d.oodQ[m.key], entropyOf))
		}
		b.WriteString("\n")
		b.WriteString(r.oodVerdict(d))
	}
	figs, err := r.imagesFigures(res)
	if err != nil {
		return "", err
	}
	b.WriteString(figs)
	return b.String(), nil
}

// imgOODTarget is issue 28's floor for the better of the PTM's two
// out-of-distribution AUROCs, models trained on MNIST.
const imgOODTarget = 0.95

// oodBest is the better of a model's out-of-distribution AUROCs by
// entropy and by MI of data set d (NaN only if both are).
func (r *runner) oodBest(d *imgResult, model string) float64 {
	k := d.spec.key + "." + d.spec.oodKey + "." + model + "."
	e, m := r.sum.get(k+"auroc_entropy"), r.sum.get(k+"auroc_mi")
	switch {
	case math.IsNaN(e):
		return m
	case math.IsNaN(m):
		return e
	}
	return max(e, m)
}

// oodVerdict compares the PTM's better out-of-distribution AUROC with the
// MLPs' on data set d, and for MNIST states issue 28's target: at least
// imgOODTarget and at least the MLP with MC dropout's (aim: the MLP
// ensemble's too).
func (r *runner) oodVerdict(d *imgResult) string {
	p, mcd, ens := r.oodBest(d, "ptm"), r.oodBest(d, "mlp"), r.oodBest(d, "mlp_ens")
	txt := fmt.Sprintf("Better of AUROC(entropy) and AUROC(MI): PTM %.3f, MLP-MCd %.3f, MLP ensemble %.3f, RF %.3f.", p, mcd, ens, r.oodBest(d, "rf"))
	if d.spec.key == "mnist" {
		status := "met"
		if !(p >= imgOODTarget && p >= mcd) {
			status = "**not met**"
		}
		aim := "above"
		if !(p > ens) {
			aim = "**not above**"
		}
		txt += fmt.Sprintf(" Target (issue 28): the PTM's >= %.2f and >= MLP-MCd's: %s; aim, above the MLP ensemble's: %s.", imgOODTarget, status, aim)
	}
	return txt + "\n\n"
}

func rfRowsText(ic imagesConfig) string {
	if ic.rfRows == 0 {
		return ", all training images"
	}
	return fmt.Sprintf(", trained on a stratified subset of %d training images (seed %d; all 60,000 take too long on two cores)", ic.rfRows, imgSeed+4000)
}

func meanOf(qs []metrics.QueryStats, f func(metrics.QueryStats) float64) float64 {
	if len(qs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, q := range qs {
		t += f(q)
	}
	return t / float64(len(qs))
}
