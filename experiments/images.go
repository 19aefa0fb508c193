package experiments

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
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
	// (quick: a small model, not the 1024-clause default); epochs, if not
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
		return imagesConfig{trainRows: 3000, testRows: 1000, clauses: 64, T: 500, epochs: 2,
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
}

var imgSpecs = []imgSpec{{"mnist", "MNIST", dataset.MNIST}, {"fashion_mnist", "Fashion-MNIST", dataset.FashionMNIST}}

// imgResult is one data set's comparison.
type imgResult struct {
	spec        imgSpec
	classes     []string
	train, test *imageSet
	ptm         *imagePTM
	testQ       map[string][]metrics.QueryStats // per model, the test images
	oodQ        map[string][]metrics.QueryStats // per model, the other data set's test images (MNIST only)
	fit         map[string]time.Duration        // per model, training wall time
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

// subset returns the images of s at idx.
func (s *imageSet) subset(idx []int) *imageSet {
	out := &imageSet{H: s.H, W: s.W, X: make([][]uint8, len(idx)), Y: make([]int, len(idx))}
	for i, j := range idx {
		out.X[i], out.Y[i] = s.X[j], s.Y[j]
	}
	return out
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

// images runs the images section: on MNIST and Fashion-MNIST, the
// convolutional PTM and the baselines trained on the standard training
// images and scored on the standard test images; the models trained on
// MNIST are also scored on Fashion-MNIST's test images (out of
// distribution).
func (r *runner) images() (string, error) {
	ic := imagesSettings(r.cfg.quick)
	res := make([]*imgResult, len(imgSpecs))
	for i, spec := range imgSpecs {
		r.progress("images: load "+spec.key, 0, 1)
		tr, te, cls, err := loadImages(spec, ic.trainRows, ic.testRows)
		if err != nil {
			return "", err
		}
		res[i] = &imgResult{spec: spec, classes: cls, train: tr, test: te,
			testQ: map[string][]metrics.QueryStats{}, oodQ: map[string][]metrics.QueryStats{}, fit: map[string]time.Duration{}}
		r.progress("images: load "+spec.key, 1, 1)
	}
	for i, d := range res {
		var ood *imageSet
		if i == 0 {
			ood = res[1].test
		}
		if err := r.imagesPTM(ic, d, ood); err != nil {
			return "", fmt.Errorf("%s, ptm: %w", d.spec.key, err)
		}
		if err := r.imagesBaselines(ic, d, ood); err != nil {
			return "", fmt.Errorf("%s: %w", d.spec.key, err)
		}
	}
	r.imagesSummary(res)
	return r.imagesReport(ic, res)
}

// imagesPTM trains the PTM of one data set with pipeline.TrainConv and
// scores it and the plain PTM (the same trained model through its base
// thresholds alone, the raw vote smoothed by 0.05, nothing fitted) with
// pipeline.SampleConv.
func (r *runner) imagesPTM(ic imagesConfig, d *imgResult, ood *imageSet) error {
	cfg, err := imagesPTMConfig(ic, d.spec, d.train.H, d.train.W, len(d.classes))
	if err != nil {
		return err
	}
	stage := "images: " + d.spec.key + " ptm training"
	p, err := trainImagePTM(r.ctx, cfg, d.train, d.test, imgSeed,
		func(done, total int) { r.progress(stage, done, total) })
	if err != nil {
		return err
	}
	d.ptm = p
	d.fit["ptm"] = time.Duration(p.TrainS * float64(time.Second))
	d.fit["ptm_plain"] = d.fit["ptm"]
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
	r.progress("images: "+d.spec.key+" ptm scoring", 0, 1)
	if err := score(d.test, imgSeed+2000, d.testQ); err != nil {
		return err
	}
	if ood != nil {
		if err := score(ood, imgSeed+3000, d.oodQ); err != nil {
			return err
		}
	}
	r.progress("images: "+d.spec.key+" ptm scoring", 1, 1)
	return nil
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

// imagesBaselines trains and scores the MLP with MC dropout, the MLP
// ensemble and the random forest of one data set.
func (r *runner) imagesBaselines(ic imagesConfig, d *imgResult, ood *imageSet) error {
	K := d.ptm.Config.K
	Xtr := d.train.floats()
	ytr := d.train.Y
	nc := len(d.classes)
	mcd := mlp.New(mlp.Opts{Hidden: ic.mlpHidden, Epochs: ic.mlpEpochs, LearningRate: imgMLPRate, WeightDecay: imgMLPDecay, Seed: imgSeed})
	ens := make(mlpEnsemble, imgEnsemble)
	for i := range ens {
		ens[i] = mlp.New(mlp.Opts{Hidden: ic.mlpHidden, Epochs: ic.mlpEpochs, LearningRate: imgMLPRate, WeightDecay: imgMLPDecay,
			Dropout: mlp.NoDropout, Seed: imgSeed + 100 + uint64(i)})
	}
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
	// Fit: the six MLPs in parallel, then the forest (its trees in
	// parallel).
	fits := append([]*mlp.Model{mcd}, ens...)
	var done atomic.Int32
	stage := "images: " + d.spec.key + " baselines training"
	ensTime := make([]time.Duration, len(fits))
	err := parallel(r.ctx, len(fits), func(i int) error {
		t0 := time.Now()
		if err := fits[i].Fit(Xtr, ytr, nc); err != nil {
			return err
		}
		ensTime[i] = time.Since(t0)
		r.progress(stage, int(done.Add(1)), len(fits)+1)
		return nil
	})
	if err != nil {
		return err
	}
	d.fit["mlp"] = ensTime[0]
	for _, t := range ensTime[1:] {
		d.fit["mlp_ens"] += t
	}
	t0 := time.Now()
	if err := await(r.ctx, func() error { return forest.Fit(rfX, rfY, nc) }); err != nil {
		return err
	}
	d.fit["rf"] = time.Since(t0)
	r.progress(stage, len(fits)+1, len(fits)+1)
	score := func(X [][]float64, dst map[string][]metrics.QueryStats) error {
		models := []string{"mlp", "mlp_ens", "rf"}
		qs := make([][]metrics.QueryStats, len(models))
		err := parallel(r.ctx, len(models), func(j int) error {
			qs[j] = make([]metrics.QueryStats, len(X))
			for i, x := range X {
				switch models[j] {
				case "mlp_ens":
					qs[j][i] = ens.query(x)
				default:
					var c baseline.Classifier = mcd
					if models[j] == "rf" {
						c = forest
					}
					q, err := baseline.Query(c, x, K)
					if err != nil {
						return err
					}
					qs[j][i] = q
				}
			}
			return nil
		})
		for j, m := range models {
			dst[m] = qs[j]
		}
		return err
	}
	r.progress("images: "+d.spec.key+" baselines scoring", 0, 1)
	if err := score(d.test.floats(), d.testQ); err != nil {
		return err
	}
	if ood != nil {
		if err := score(ood.floats(), d.oodQ); err != nil {
			return err
		}
	}
	r.progress("images: "+d.spec.key+" baselines scoring", 1, 1)
	return nil
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
// "mnist.ood_fashion.<model>.auroc_{entropy,mi}",
// "mnist.ptm.{model_bytes,train_s,peak_rss_mb}" and the settings.
func (r *runner) imagesSummary(res []*imgResult) {
	s := r.sum
	for _, d := range res {
		p := d.spec.key
		s.set(p+".train_images", float64(len(d.train.X)))
		s.set(p+".test_images", float64(len(d.test.X)))
		for _, m := range imgModels {
			rep := metrics.Evaluate(d.testQ[m.key], d.test.Y, r.cfg.bins)
			for _, mt := range imgMetrics {
				s.set(p+".test."+m.key+"."+mt, reportValue(rep, mt))
			}
			s.set(p+".test."+m.key+".train_s", d.fit[m.key].Seconds())
			if q, ok := d.oodQ[m.key]; ok {
				s.set(p+".ood_fashion."+m.key+".auroc_entropy", OODAUROC(d.testQ[m.key], q, entropyOf))
				s.set(p+".ood_fashion."+m.key+".auroc_mi", OODAUROC(d.testQ[m.key], q, miOf))
			}
		}
		c := d.ptm.Config
		s.set(p+".ptm.model_bytes", float64(d.ptm.ModelBytes))
		s.label(p+".ptm.model_bytes_is", fmt.Sprintf("the model file `ptm train` writes (modelfile.EncodeConv: SPVs at %d bits, the %d-bit bank, the split)", d.ptm.File.SPVBits, c.BankBits))
		s.set(p+".ptm.train_s", d.ptm.TrainS)
		s.set(p+".ptm.peak_rss_mb", d.ptm.PeakRSSMB)
		s.label(p+".ptm.mapping", mappingName(d.ptm.File.Mapping))
		s.label(p+".ptm.config", imgConfigName(c))
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
		"**PTM**: the convolutional PTM of `convtrain.ImageDefaults` (%s), trained by the fixed-point trainer (golden/conv/convtrain) "+
		"by pipeline.TrainConv (the train-and-fit step of `ptm train`) on %d of the training images and its %s mapping's parameter fitted by NLL on the other %d (a stratified carve, seed %d); "+
		"queries draw K samples from the float model (golden/conv Sampler) through every threshold set. "+
		"**PTM, plain**: the same trained model, one threshold set, the raw vote smoothed by 0.05 and nothing fitted (the tabular plain PTM's mapping). "+
		"**MLP-MCd**: experiments/baseline/mlp, hidden layers %v, %d epochs, Adam step %g, weight decay %g, dropout 0.1 kept on at test time, K = %d masks. "+
		"**MLP ensemble**: %d such MLPs without dropout, each its own seed; its samples are its members' predictions. "+
		"**RF**: experiments/baseline/rf, %d trees%s. Baselines see the 784 pixels scaled to 0..1 (and standardize them as their package does). "+
		"AUROC(entropy) and AUROC(MI) rank wrong predictions above right ones; ECE has %d equal-width bins.\n\n",
		len(m0.train.X), len(m0.test.X), imgConfigName(m0.ptm.Config), len(m0.ptm.File.Split.Train),
		m0.ptm.Config.Mapping, m0.ptm.File.Calibration.Rows, imgSeed,
		ic.mlpHidden, ic.mlpEpochs, imgMLPRate, imgMLPDecay, m0.ptm.Config.K, imgEnsemble, ic.rfTrees, rfRowsText(ic), r.cfg.bins)
	for _, d := range res {
		p := d.spec.key
		fmt.Fprintf(&b, "### %s (%d test images; summary keys `%s.test.MODEL.*`)\n\n", d.spec.name, len(d.test.X), p)
		b.WriteString("| model | accuracy | ECE | NLL | AUROC(entropy) | AUROC(MI) | training (s) |\n|---|---|---|---|---|---|---|\n")
		for _, m := range imgModels {
			k := p + ".test." + m.key + "."
			fmt.Fprintf(&b, "| %s | %.4f | %.4f | %.4f | %s | %s | %.0f |\n", m.name, s.get(k+"accuracy"), s.get(k+"ece"), s.get(k+"nll"),
				fmtMaybe(s.get(k+"auroc_entropy")), fmtMaybe(s.get(k+"auroc_mi")), s.get(k+"train_s"))
		}
		fmt.Fprintf(&b, "\nPTM mapping fitted on the validation images: %s. Model: %d bytes (%s); training %.0f s; peak RSS of the process after training %.0f MB.\n\n",
			s.Labels[p+".ptm.mapping"], int(s.get(p+".ptm.model_bytes")), s.Labels[p+".ptm.model_bytes_is"], s.get(p+".ptm.train_s"), s.get(p+".ptm.peak_rss_mb"))
	}
	fmt.Fprintf(&b, "### Out of distribution: models trained on MNIST, queried with Fashion-MNIST's test images (summary keys `mnist.ood_fashion.MODEL.*`)\n\n"+
		"AUROC of ranking the %d Fashion-MNIST test images above the %d MNIST test images by the score.\n\n", len(res[1].test.X), len(m0.test.X))
	b.WriteString("| model | AUROC(entropy) | AUROC(MI) | mean entropy MNIST / Fashion (bits) |\n|---|---|---|---|\n")
	for _, m := range imgModels {
		k := "mnist.ood_fashion." + m.key + "."
		fmt.Fprintf(&b, "| %s | %s | %s | %.3f / %.3f |\n", m.name, fmtMaybe(s.get(k+"auroc_entropy")), fmtMaybe(s.get(k+"auroc_mi")),
			meanOf(m0.testQ[m.key], entropyOf), meanOf(m0.oodQ[m.key], entropyOf))
	}
	b.WriteString("\n")
	figs, err := r.imagesFigures(res)
	if err != nil {
		return "", err
	}
	b.WriteString(figs)
	return b.String(), nil
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
