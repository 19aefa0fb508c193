package pipeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/testenv"
)

// stripesRecipe is a recipe for the 4 x 4 stripes images.
func stripesRecipe(t *testing.T) convtrain.ImageConfig {
	t.Helper()
	rc, err := convtrain.ImageDefaults(4, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	rc.WY, rc.WX, rc.Clauses, rc.T, rc.N, rc.Epochs, rc.Thresholds, rc.Adaptive = 2, 2, 8, 8, 16, 10, []int{100}, nil
	return rc
}

// TestTrainConv: TrainConv on an IDX folder of stripes keeps the
// predefined split less the carved validation rows (stratified, disjoint,
// recorded), fits the mapping on them, learns the task, and its samples do
// not depend on the worker count.
func TestTrainConv(t *testing.T) {
	dir := stripes(t, 200, 40)
	d, err := LoadData(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := TrainConv(d, ConvConfig{Recipe: stripesRecipe(t), Seed: 3, ValRows: 20, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Calibration
	if c == nil || c.Rows != 20 || c.FinalOnCarve || len(f.Split.Train) != 180 || !slices.Equal(f.Split.Test, d.FixedTest) {
		t.Fatalf("calibration %+v, %d training rows, test %v", c, len(f.Split.Train), f.Split.Test)
	}
	// The carved rows are training rows, 10 of each class.
	var val []int
	for _, r := range d.FixedTrain {
		if !slices.Contains(f.Split.Train, r) {
			val = append(val, r)
		}
	}
	per := [2]int{}
	for _, r := range val {
		per[d.Y[r]]++
	}
	if len(val) != 20 || per != [2]int{10, 10} {
		t.Fatalf("carved %d rows, per class %v", len(val), per)
	}
	if f.Mapping.Kind != ptm.Softmax || !slices.Contains(convtrain.SoftmaxGrid(f.Head.T), f.Mapping.Temperature) || f.Recipe == nil || f.Recipe.Source != ConvRecipeSource(convtrain.RecipeGeneric) || f.DataFingerprint != d.Fingerprint() {
		t.Fatalf("mapping %+v, recipe %+v", f.Mapping, f.Recipe)
	}
	rows, err := ConvRows(f, d, "test")
	if err != nil {
		t.Fatal(err)
	}
	labels, err := ConvLabels(f, d, rows)
	if err != nil {
		t.Fatal(err)
	}
	var outs [][][]int32
	for _, w := range []int{1, 3} {
		s, err := SampleConv(f, d, rows, ConvSampling{K: 8, Seed: 4, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, s)
	}
	for i := range outs[0] {
		if !slices.Equal(outs[0][i], outs[1][i]) {
			t.Fatalf("row %d: samples differ between 1 and 3 workers", i)
		}
	}
	r := metrics.Evaluate(ConvQueries(&f.Head, outs[0], 8, f.Mapping), labels, 10)
	// Vertical against horizontal bars: a 2 x 2 window sees which.
	// Measured: accuracy 1.
	if r.Accuracy < 0.9 {
		t.Errorf("test accuracy %.3f on the stripes, want >= 0.9", r.Accuracy)
	}
	// The fixed-point core draws the same on any worker count too.
	hw := conv.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 4}
	a, err := SampleConv(f, d, rows, ConvSampling{K: 8, Seed: 4, Workers: 1, Fixed: &hw})
	if err != nil {
		t.Fatal(err)
	}
	b, err := SampleConv(f, d, rows, ConvSampling{K: 8, Seed: 4, Workers: 2, Fixed: &hw})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("fixed row %d: samples differ between 1 and 2 workers", i)
		}
	}
	// Another data set's rows are refused for --split test.
	other := stripes(t, 200, 41)
	d2, err := LoadData(other, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConvRows(f, d2, "test"); err == nil || !strings.Contains(err.Error(), "rows") {
		t.Errorf("ConvRows on other data: %v", err)
	}
	// Not images: refused.
	if _, err := TrainConv(&Data{Dataset: dataset.Iris()}, ConvConfig{Recipe: stripesRecipe(t)}); err == nil || !strings.Contains(err.Error(), "not an image data set") {
		t.Errorf("TrainConv on iris: %v", err)
	}
}

// TestTrainConvLargeT: a model trained with a large T gets its softmax
// temperature from the grid that scales with T (convtrain.SoftmaxGrid),
// inside it rather than pinned at an end, and far above the tabular
// pipeline's grid (which stops at 16); a vote mapping keeps the smoothing
// grid. The stripes' labels are made noisy so that no model is certain.
// TestTrainConvTrainRows: TrainRows keeps the first training rows only,
// the validation rows carved from them; the test rows stay the split's.
func TestTrainConvTrainRows(t *testing.T) {
	dir := stripes(t, 200, 40)
	d, err := LoadData(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	rc := stripesRecipe(t)
	rc.Epochs = 2
	f, err := TrainConv(d, ConvConfig{Recipe: rc, Seed: 3, ValRows: 10, TrainRows: 100, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Split.Train) != 90 || f.Calibration == nil || f.Calibration.Rows != 10 || !slices.Equal(f.Split.Test, d.FixedTest) {
		t.Fatalf("%d training rows, calibration %+v, test %v; want 90, 10 carved, the predefined test rows", len(f.Split.Train), f.Calibration, f.Split.Test)
	}
	for _, r := range f.Split.Train {
		if r >= d.FixedTrain[100] {
			t.Fatalf("training row %d is not among the first 100 training rows", r)
		}
	}
	if _, err := TrainConv(d, ConvConfig{Recipe: rc, TrainRows: -1}); err == nil || !strings.Contains(err.Error(), "TrainRows -1") {
		t.Fatalf("TrainRows -1: %v", err)
	}
}

func TestTrainConvLargeT(t *testing.T) {
	d, err := LoadData(stripes(t, 200, 40), "")
	if err != nil {
		t.Fatal(err)
	}
	// One label in five flipped: the task is no longer separable, so the
	// best temperature is not the smallest.
	for r := range d.Y {
		if r%5 == 0 {
			d.Y[r] = 1 - d.Y[r]
		}
	}
	rc := stripesRecipe(t)
	rc.Clauses, rc.T, rc.Epochs = 32, 2000, 4
	f, err := TrainConv(d, ConvConfig{Recipe: rc, Seed: 3, ValRows: 40, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	g := convtrain.SoftmaxGrid(rc.T)
	tt := f.Mapping.Temperature
	t.Logf("T %d: temperature %.4g (%.4g T), validation NLL %.4f, accuracy %.3f", rc.T, tt, tt/float64(rc.T), f.Calibration.NLL, f.Calibration.Accuracy)
	if f.Mapping.Kind != ptm.Softmax || !slices.Contains(g, tt) || tt == g[0] || tt == g[len(g)-1] || tt <= 16 {
		t.Errorf("mapping %+v, want a softmax temperature inside %.4g..%.4g and above 16", f.Mapping, g[0], g[len(g)-1])
	}
	rc.Mapping = ptm.Vote
	f, err = TrainConv(d, ConvConfig{Recipe: rc, Seed: 3, ValRows: 40, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	cands, err := mappingCandidates(ptm.Vote, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Mapping.Kind != ptm.Vote || !slices.Contains(cands, f.Mapping) {
		t.Errorf("vote mapping %+v, want one of the smoothing grid", f.Mapping)
	}
}

// TestScoreOOD: queries with higher entropy and MI out of distribution
// give AUROC 1; equal ones 0.5.
func TestScoreOOD(t *testing.T) {
	q := func(h, mi float64) metrics.QueryStats {
		return metrics.QueryStats{Entropy: h, MutualInfo: mi, Conf: 1 - h/4}
	}
	in := []metrics.QueryStats{q(0.1, 0.01), q(0.2, 0.02), q(0.3, 0.0)}
	ood := []metrics.QueryStats{q(1, 0.3), q(2, 0.4)}
	r := ScoreOOD(in, ood)
	if r.AUROCEntropy != 1 || r.AUROCMI != 1 || r.Rows != 2 || r.InRows != 3 || r.EntropyOOD != 1.5 {
		t.Errorf("%+v", r)
	}
	if r := ScoreOOD(in, in); r.AUROCEntropy != 0.5 {
		t.Errorf("same queries: AUROC %v, want 0.5", r.AUROCEntropy)
	}
}

// TestTrainConvMemoryLimit: a convolutional model over the planned-memory
// limit is refused before training, naming the flags that size it.
func TestTrainConvMemoryLimit(t *testing.T) {
	d, err := LoadData(stripes(t, 40, 10), "")
	if err != nil {
		t.Fatal(err)
	}
	rc := stripesRecipe(t)
	rc.Clauses, rc.N = 4000, 1000
	t.Setenv("PTM_MAX_MEMORY", "64M")
	_, err = TrainConv(d, ConvConfig{Recipe: rc, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "PTM_MAX_MEMORY") || !strings.Contains(err.Error(), "--clauses") {
		t.Errorf("TrainConv over the limit: %v", err)
	}
}

// TestFitConvMapping checks the mapping fit on hand-made samples: two classes,
// K = 4; the vote is right on 3 of 4 samples for every image, so the
// predictive mean of the true class is 0.75 (1-e) + e/2 and the NLL is
// smallest at the grid's smallest smoothing; when the vote is wrong on
// one image of four, the largest smoothing of the grid wins.
func TestFitConvMapping(t *testing.T) {
	h := &conv.Head{Classes: 2, T: 10}
	right := []int32{5, -5, 5, -5, 5, -5, -5, 5} // sample-major: 3 of 4 samples vote class 0
	sums := [][]int32{right, right, right, right}
	y := []int{0, 0, 0, 0}
	mp, _, _, err := fitConvMapping(h, sums, 4, y, ptm.Vote)
	if err != nil {
		t.Fatal(err)
	}
	if mp.Kind != ptm.Vote || mp.Smoothing != 0 {
		t.Errorf("all right: %+v, want vote smoothing 0", mp)
	}
	wrong := []int32{-5, 5, -5, 5, -5, 5, -5, 5} // every sample votes class 1
	sums = [][]int32{right, wrong, right, right}
	if mp, _, _, err = fitConvMapping(h, sums, 4, y, ptm.Vote); err != nil {
		t.Fatal(err)
	}
	// NLL(e) = -3 ln(0.75 - 0.25 e) - ln(e/2) falls until e = 0.75, past
	// the grid's largest smoothing, 0.3.
	if mp.Smoothing != 0.3 {
		t.Errorf("one image wrong: smoothing %v, want 0.3", mp.Smoothing)
	}
	if _, _, _, err := fitConvMapping(h, nil, 4, nil, ptm.Vote); err == nil {
		t.Error("no validation images: no error")
	}
	if _, _, _, err := fitConvMapping(h, sums, 4, y, "bogus"); err == nil {
		t.Error("bogus mapping kind: no error")
	}
}

// TestTrainConvFixedMapping: on 2,000 MNIST training images (400 of them
// carved), a 32-clause model of the mnist-up5k recipe gets a fixed-point
// mapping fitted on its 4-bit core's class sums (calibration.fixed: the
// default core, the NLL and accuracy of the carved rows under it, at most
// the float mapping's NLL there) whose temperature differs from the
// float-fitted one, and which gives a lower NLL on 1,000 held-out test
// images sampled on that core. Measured: temperatures 26.91 (float) and
// 34.9 (4-bit core), test NLL 1.9456 and 1.9136.
func TestTrainConvFixedMapping(t *testing.T) {
	start := time.Now()
	d, err := LoadData(MNIST, "")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := convtrain.ImageRecipe("mnist-up5k", 28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	rc.Clauses, rc.T, rc.Epochs = 32, 256, 1
	f, err := TrainConv(d, ConvConfig{Recipe: rc, Seed: 3, ValRows: 400, TrainRows: 2000, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] trained in %v (load %s)", time.Since(start).Round(time.Millisecond), testenv.LoadString())
	fm, x := f.FixedMapping, f.Calibration.Fixed
	if fm == nil || x == nil || x.Bits != rc.BankBits || *x != (modelfile.ConvFixedCalibration{Bits: rc.BankBits, LFSRWidth: lfsr.DefaultWidth, ClauseLanes: 8, LiteralLanes: 8, NLL: x.NLL, Accuracy: x.Accuracy}) {
		t.Fatalf("fixed mapping %+v, calibration %+v", fm, x)
	}
	// The record's NLL and accuracy are those of the carved rows on the
	// core, and no grid temperature does better there.
	var val []int
	for _, r := range d.FixedTrain[:2000] {
		if _, in := slices.BinarySearch(f.Split.Train, r); !in {
			val = append(val, r)
		}
	}
	vl, err := ConvLabels(f, d, val)
	if err != nil {
		t.Fatal(err)
	}
	hw := DefaultConvHW(&f.Head, f.BankBits)
	vs, err := SampleConv(f, d, val, ConvSampling{K: f.K, Seed: f.Calibration.Seed, Fixed: &hw})
	if err != nil {
		t.Fatal(err)
	}
	r := metrics.Evaluate(ConvQueries(&f.Head, vs, f.K, *fm), vl, 0)
	if r.NLL != x.NLL || r.Accuracy != x.Accuracy {
		t.Errorf("carved rows on the core: NLL %v accuracy %v, the record says %v %v", r.NLL, r.Accuracy, x.NLL, x.Accuracy)
	}
	for _, g := range convtrain.SoftmaxGrid(f.Head.T) {
		if n := convtrain.NLL(&f.Head, vs, f.K, vl, ptm.Mapping{Kind: ptm.Softmax, Temperature: g}); n < x.NLL-1e-12 {
			t.Errorf("temperature %.4g gives the carved rows NLL %.6f on the core, below the fitted %.4g's %.6f", g, n, fm.Temperature, x.NLL)
		}
	}
	// Held out: the test images on the core.
	rows, err := ConvRows(f, d, "test")
	if err != nil {
		t.Fatal(err)
	}
	rows = rows[:1000]
	labels, err := ConvLabels(f, d, rows)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := SampleConv(f, d, rows, ConvSampling{K: f.K, Seed: 7, Fixed: &hw})
	if err != nil {
		t.Fatal(err)
	}
	nFloat := metrics.Evaluate(ConvQueries(&f.Head, sums, f.K, f.Mapping), labels, 0).NLL
	nFixed := metrics.Evaluate(ConvQueries(&f.Head, sums, f.K, *fm), labels, 0).NLL
	t.Logf("temperature: float-fitted %.4g, %d-bit core's %.4g; test NLL on the core: %.4f and %.4f", f.Mapping.Temperature, x.Bits, fm.Temperature, nFloat, nFixed)
	if fm.Temperature == f.Mapping.Temperature || !(nFixed < nFloat) {
		t.Errorf("the core's temperature %.4g (test NLL %.4f), the float one %.4g (%.4f): want them apart and the core's NLL lower", fm.Temperature, nFixed, f.Mapping.Temperature, nFloat)
	}
}
