package experiments

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/gp"
	"github.com/ptmhw/ptm/experiments/baseline/mlp"
	"github.com/ptmhw/ptm/experiments/baseline/rf"
	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// The regions of the 2-D experiment, as Chebyshev radii: inside the
// training square, and "far outside" beyond twice its half-width.
const (
	synthInner = dataset.Synthetic2DTrainRegion // 2
	synthOuter = 2 * dataset.Synthetic2DTrainRegion
)

// WithRangeBits returns a copy of th with two more thresholds per feature:
// the smallest training value of the feature (below which the new bit
// x >= min turns 0) and the next float64 above its largest training value
// (above which x >= max+ turns 1). Both bits are constant on the training
// data X, so a PTM can only learn to include "x >= min" and
// "NOT x >= max+" as guards that hold everywhere on the training range;
// outside it they falsify every clause that includes them. X must be the
// data th was fitted on (rows of th.NumFeatures() finite values).
func WithRangeBits(th *booleanize.Thermometer, X [][]float64) (*booleanize.Thermometer, error) {
	if len(X) == 0 {
		return nil, fmt.Errorf("experiments: range bits: no training rows")
	}
	out := &booleanize.Thermometer{Thresholds: make([][]float64, th.NumFeatures())}
	for f, ts := range th.Thresholds {
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, x := range X {
			if len(x) != th.NumFeatures() {
				return nil, fmt.Errorf("experiments: range bits: row %d has %d values, want %d", i, len(x), th.NumFeatures())
			}
			lo, hi = min(lo, x[f]), max(hi, x[f])
		}
		t := append([]float64{lo}, ts...)
		out.Thresholds[f] = append(t, math.Nextafter(hi, math.Inf(1)))
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("experiments: range bits: %w", err)
	}
	return out, nil
}

// predictor summarises K samples of one model at one input.
type predictor func(x []float64) (metrics.QueryStats, error)

// ptmPredictor samples a PTM on thermometer-encoded inputs.
func ptmPredictor(m *ptm.Model, th *booleanize.Thermometer, K int, seed uint64, mp ptm.Mapping) predictor {
	s := ptm.NewSampler(m, seed)
	var bits []bool
	var sums []int
	return func(x []float64) (metrics.QueryStats, error) {
		var err error
		if bits, err = th.Encode(x, bits); err != nil {
			return metrics.QueryStats{}, err
		}
		if sums, err = s.Sample(bits, K, sums); err != nil {
			return metrics.QueryStats{}, err
		}
		return metrics.Query(m.SumsToProbs(sums, K, mp)), nil
	}
}

func classifierPredictor(c baseline.Classifier, K int) predictor {
	return func(x []float64) (metrics.QueryStats, error) { return baseline.Query(c, x, K) }
}

// synthModel is one model of the 2-D experiment.
type synthModel struct {
	key, name string
	fit       func() (predictor, error)
	out       synthOut
}

// synthOut is what one model of the 2-D experiment leaves for the report:
// its queries on the test points and on the heat-map grid, and its report
// on the held-out labelled points.
type synthOut struct {
	Test, Grid []metrics.QueryStats
	Val        metrics.Report
}

// synthPair is the result of the unit that trains the plain PTM and the
// one with range bits together.
type synthPair struct{ Plain, Range synthOut }

// synthPrimaryOut is the result of the primary PTM's unit: its queries and
// the mapping it chose.
type synthPrimaryOut struct {
	Out     synthOut
	Mapping ptm.Mapping
}

// synthState is what the 2-D experiment's plan fixes for its units and
// its report.
type synthState struct {
	train, test, held *dataset.Dataset
	testX, gridPts    [][]float64
	gridXs            []float64
	gpTrain           *dataset.Dataset
	models            []*synthModel
	pair              synthPair
	primary           synthPrimaryOut
	sweep             []synthSweepRow
}

// trainPTM2D trains a binary PTM on thermometer-encoded rows.
func trainPTM2D(p ptm.Params, th *booleanize.Thermometer, d *dataset.Dataset) (*ptm.Model, error) {
	X, err := th.EncodeAll(d.X)
	if err != nil {
		return nil, err
	}
	m, err := ptm.New(p, 2, th.NumBits(), true)
	if err != nil {
		return nil, err
	}
	tr := ptm.NewTrainer(m)
	for e := 0; e < p.Epochs; e++ {
		if err := tr.RunEpoch(X, d.Y); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// synthPTMs returns the plain PTM (pipeline.Train, thermometer fitted on
// the training rows) and the PTM with range bits, both trained with p.
func synthPTMs(p ptm.Params, thresholds int, train *dataset.Dataset) (plain *ptm.Model, plainTh *booleanize.Thermometer, ranged *ptm.Model, rangeTh *booleanize.Thermometer, err error) {
	all := make([]int, train.Len())
	for i := range all {
		all[i] = i
	}
	f, err := pipeline.Train(&pipeline.Data{Dataset: train}, pipeline.TrainConfig{Params: p, Thresholds: thresholds, Rows: all, Encoding: &pipeline.Plain})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("train PTM: %w", err)
	}
	rangeTh, err = WithRangeBits(f.Booleanizer, train.X)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ranged, err = trainPTM2D(p, rangeTh, train)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("train PTM with range bits: %w", err)
	}
	return f.Model, f.Booleanizer, ranged, rangeTh, nil
}

// synthPrimary trains the primary PTM (pipeline.DefaultEncoding) on every
// training row and returns it with its mapping: pipeline.DefaultMapping,
// with its parameter fitted by pipeline.Calibrate when
// pipeline.DefaultCalibrate is set.
func synthPrimary(p ptm.Params, thresholds int, train *dataset.Dataset) (*modelfile.File, ptm.Mapping, error) {
	d := &pipeline.Data{Dataset: train}
	enc := pipeline.DefaultEncoding
	tc := pipeline.TrainConfig{Params: p, Thresholds: thresholds, NoTest: true, Encoding: &enc, Mapping: pipeline.DefaultMapping}
	f, err := pipeline.Train(d, tc)
	if err != nil {
		return nil, ptm.Mapping{}, fmt.Errorf("train PTM: %w", err)
	}
	mp := pipeline.DefaultMapping
	if pipeline.DefaultCalibrate {
		if mp, err = pipeline.Calibrate(d, f, tc); err != nil {
			return nil, ptm.Mapping{}, fmt.Errorf("calibrate PTM: %w", err)
		}
	}
	return f, mp, nil
}

// filePredictor samples a model file's PTM through its input encoding.
func filePredictor(f *modelfile.File, K int, seed uint64, mp ptm.Mapping) predictor {
	s := ptm.NewSampler(f.Model, seed)
	var sums []int
	return func(x []float64) (metrics.QueryStats, error) {
		var err error
		if sums, err = pipeline.SampleRow(f, s, x, K, sums); err != nil {
			return metrics.QueryStats{}, err
		}
		return metrics.Query(f.Model.SumsToProbs(sums, K, mp)), nil
	}
}

// planSynth declares the units of the 2-D experiment: the plain PTM
// with the range-bit PTM (trained together), the primary PTM, the GP, the
// MLP, the RF, and each point of the full run's hyper-parameter sweep.
func (r *runner) planSynth() ([]unit, error) {
	cfg := r.cfg
	st := &synthState{}
	r.synthSt = st
	train, test := dataset.Synthetic2D(1)
	held, _ := dataset.Synthetic2D(2) // a labelled set from the same distribution
	st.train, st.held, st.testX = train, held, test
	K, mp := cfg.K, plainMapping
	st.gridXs = linspace(-dataset.Synthetic2DTestRange, dataset.Synthetic2DTestRange, cfg.synthGrid)
	for _, y := range st.gridXs {
		for _, x := range st.gridXs {
			st.gridPts = append(st.gridPts, []float64{x, y})
		}
	}
	gpTrain := train
	if cfg.synthGPSubset > 0 && cfg.synthGPSubset < train.Len() {
		idx := make([]int, cfg.synthGPSubset)
		for i := range idx {
			idx[i] = i // classes alternate, so any prefix is balanced
		}
		gpTrain = train.Subset(idx)
	}
	st.gpTrain = gpTrain
	st.models = []*synthModel{
		{key: "ptm_plain", name: "PTM, plain"},
		{key: "ptm_range", name: "PTM + range bits"}, // fitted with the plain PTM
		{key: "ptm", name: "PTM"},
		{key: "gp", name: "GP", fit: func() (predictor, error) {
			c := gp.New(gp.Opts{Seed: 1})
			if err := c.Fit(gpTrain.X, gpTrain.Y, 2); err != nil {
				return nil, fmt.Errorf("GP: %w", err)
			}
			return classifierPredictor(c, K), nil
		}},
		{key: "mlp", name: "MLP-MCd", fit: func() (predictor, error) {
			c := mlp.New(mlp.Opts{Seed: 1})
			if err := c.Fit(train.X, train.Y, 2); err != nil {
				return nil, fmt.Errorf("MLP: %w", err)
			}
			return classifierPredictor(c, K), nil
		}},
		{key: "rf", name: "RF", fit: func() (predictor, error) {
			c := rf.New(rf.Opts{Seed: 1, Workers: 1})
			if err := c.Fit(train.X, train.Y, 2); err != nil {
				return nil, fmt.Errorf("RF: %w", err)
			}
			return classifierPredictor(c, K), nil
		}},
	}
	eval := func(name string, pred predictor) (synthOut, error) {
		var o synthOut
		run := func(pts [][]float64) ([]metrics.QueryStats, error) {
			out := make([]metrics.QueryStats, len(pts))
			for i, x := range pts {
				if i%256 == 0 {
					if err := r.ctx.Err(); err != nil {
						return nil, err
					}
				}
				var err error
				if out[i], err = pred(x); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
			return out, nil
		}
		var err error
		if o.Test, err = run(test); err != nil {
			return o, err
		}
		if o.Grid, err = run(st.gridPts); err != nil {
			return o, err
		}
		vq, err := run(held.X)
		if err != nil {
			return o, err
		}
		o.Val = metrics.Evaluate(vq, held.Y, cfg.bins)
		return o, nil
	}
	size := float64(len(test) + len(st.gridPts) + len(held.X))
	us := []unit{
		{name: "synthetic2d.ptm_plain_range", cost: 3 * size, out: &st.pair, apply: func() { st.models[0].out, st.models[1].out = st.pair.Plain, st.pair.Range }, run: func() error {
			plain, plainTh, ranged, rangeTh, err := synthPTMs(cfg.synthParams, cfg.synthThresholds, train)
			if err != nil {
				return err
			}
			if st.pair.Plain, err = eval(st.models[0].name, ptmPredictor(plain, plainTh, K, 11, mp)); err != nil {
				return err
			}
			st.pair.Range, err = eval(st.models[1].name, ptmPredictor(ranged, rangeTh, K, 12, mp))
			return err
		}},
		{name: "synthetic2d.ptm", cost: 3 * size, out: &st.primary, apply: func() { st.models[2].out = st.primary.Out }, run: func() error {
			f, m, err := synthPrimary(cfg.synthParams, cfg.synthThresholds, train)
			if err != nil {
				return err
			}
			st.primary.Mapping = m
			st.primary.Out, err = eval(st.models[2].name, filePredictor(f, K, 13, m))
			return err
		}},
	}
	for _, sm := range st.models[3:] {
		us = append(us, unit{name: "synthetic2d." + sm.key, cost: 2 * size, out: &sm.out, run: func() error {
			pred, err := sm.fit()
			if err != nil {
				return err
			}
			sm.out, err = eval(sm.name, pred)
			return err
		}})
	}
	return append(us, r.planSynthSweep(st)...), nil
}

// synth reports the 2-D synthetic experiment.
func (r *runner) synth() (string, error) {
	cfg := r.cfg
	st := r.synthSt
	train, test, held, gpTrain := st.train, st.testX, st.held, st.gpTrain
	K, mp := cfg.K, plainMapping
	primaryMapping := st.primary.Mapping
	models := st.models
	// Report order: the primary PTM first.
	models = append([]*synthModel{models[2], models[0], models[1]}, models[3:]...)
	for _, sm := range models {
		pre := "synthetic2d." + sm.key
		r.sum.set(pre+".accuracy", sm.out.Val.Accuracy)
		r.sum.set(pre+".ece", sm.out.Val.ECE)
		r.sum.set(pre+".nll", sm.out.Val.NLL)
		ent, std, mi := make([]float64, len(test)), make([]float64, len(test)), make([]float64, len(test))
		for i, q := range sm.out.Test {
			ent[i], std[i], mi[i] = q.Entropy, q.Std[1], q.MutualInfo
		}
		for name, v := range map[string][]float64{"entropy": ent, "std": std, "mi": mi} {
			reg := Regions(test, v, synthInner, synthOuter)
			r.sum.set(pre+"."+name+"_inside", reg[Inside].Mean)
			r.sum.set(pre+"."+name+"_near", reg[Near].Mean)
			r.sum.set(pre+"."+name+"_outside", reg[Far].Mean)
			if sm.key == "ptm" && name == "entropy" {
				r.sum.set("synthetic2d.n_inside", float64(reg[Inside].N))
				r.sum.set("synthetic2d.n_near", float64(reg[Near].N))
				r.sum.set("synthetic2d.n_outside", float64(reg[Far].N))
			}
		}
	}
	for _, k := range []string{"ptm", "ptm_plain", "ptm_range"} {
		r.sum.set("synthetic2d."+k+".entropy_outside_minus_gp", r.sum.get("synthetic2d."+k+".entropy_outside")-r.sum.get("synthetic2d.gp.entropy_outside"))
	}
	r.sum.label("synthetic2d.ptm.params", paramsName(cfg.synthParams, cfg.synthThresholds))
	r.sum.label("synthetic2d.ptm.mapping", mappingName(primaryMapping))
	r.sum.label("synthetic2d.ptm.encoding", encodingName(pipeline.DefaultEncoding))
	r.sum.label("synthetic2d.ptm_plain.mapping", mappingName(mp))
	r.sum.set("synthetic2d.gp.train_rows", float64(gpTrain.Len()))
	r.sum.set("synthetic2d.grid", float64(cfg.synthGrid))

	if err := plotSynthData(filepath.Join(r.out, "synthetic2d_data.png"), train); err != nil {
		return "", err
	}
	if err := plotSynthHeat(filepath.Join(r.out, "synthetic2d_uncertainty.png"), models, st.gridXs, K); err != nil {
		return "", err
	}
	sweep := r.synthSweep()
	return r.synthReport(models, gpTrain.Len(), train.Len(), len(held.Y)) + sweep, nil
}

// paramsName is a compact description of PTM hyper-parameters.
func paramsName(p ptm.Params, thresholds int) string {
	return fmt.Sprintf("%d clauses, T %d, s %g, N %d, %d epochs, %d thresholds/feature, %s feedback",
		p.Clauses, p.T, p.S, p.N, p.Epochs, thresholds, p.Feedback)
}

func (r *runner) synthReport(models []*synthModel, gpRows, trainRows, heldRows int) string {
	var b strings.Builder
	s := r.sum
	fmt.Fprintf(&b, "## 2. 2-D synthetic data: uncertainty inside and outside the training region (paper Figs. 3-4)\n\n")
	fmt.Fprintf(&b, "`dataset.Synthetic2D(1)`: %d labelled training points, two Gaussian blobs truncated to the square [-2, 2]^2, "+
		"and 2000 unlabelled test points uniform over [-6, 6)^2. Accuracy, ECE and NLL are measured on %d fresh labelled points "+
		"from the same distribution (`Synthetic2D(2)`; Bayes accuracy about 0.95). Every model draws K = %d samples per point.\n\n",
		trainRows, heldRows, r.cfg.K)
	fmt.Fprintf(&b, "- PTM: %s; input encoding %s (`pipeline.DefaultEncoding`), %s mapping; encoding fitted on the training points only (`pipeline.Train`).\n",
		s.Labels["synthetic2d.ptm.params"], s.Labels["synthetic2d.ptm.encoding"], s.Labels["synthetic2d.ptm.mapping"])
	fmt.Fprintf(&b, "- PTM, plain: the same hyper-parameters, one thermometer (`pipeline.Plain`), %s mapping.\n", s.Labels["synthetic2d.ptm_plain.mapping"])
	fmt.Fprintf(&b, "- PTM + range bits (an extension, not in the paper): the plain PTM's thermometer plus two bits per feature, "+
		"x >= (training minimum) and x >= (just above the training maximum), both constant on the training data (`WithRangeBits`).\n")
	fmt.Fprintf(&b, "- GP: binary Laplace GP, RBF kernel, hyper-parameters by marginal likelihood, trained on %d points. "+
		"MLP-MCd: 2 x 64 ReLU, dropout 0.1 at inference. RF: 100 trees, the samples are the trees.\n\n", gpRows)
	b.WriteString(r.figure("synthetic2d_data.png", "training data"))
	b.WriteString("\n")
	b.WriteString(r.figure("synthetic2d_uncertainty.png", "predictive mean, entropy and std over the test range"))
	fmt.Fprintf(&b, "\nRows: predictive mean p(class 1), predictive entropy (bits) and standard deviation of p(class 1) over the K samples; "+
		"solid square: training region, dashed square: the far-outside boundary. The heat maps are evaluated on a %d x %d grid of cell centres.\n\n",
		r.cfg.synthGrid, r.cfg.synthGrid)
	fmt.Fprintf(&b, "Regions by the Chebyshev radius max(|x1|, |x2|) of the %d test points: **inside** <= 2 (the training square, %d points), "+
		"near 2..4 (%d points), **far outside** > 4 (%d points). Means over the points of each region:\n\n",
		2000, int(s.get("synthetic2d.n_inside")), int(s.get("synthetic2d.n_near")), int(s.get("synthetic2d.n_outside")))
	b.WriteString("| model | accuracy | ECE | NLL | entropy inside | entropy near | entropy far outside | std inside | std far outside | MI inside | MI far outside |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range models {
		p := "synthetic2d." + m.key + "."
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", m.name,
			s.get(p+"accuracy"), s.get(p+"ece"), s.get(p+"nll"), s.get(p+"entropy_inside"), s.get(p+"entropy_near"), s.get(p+"entropy_outside"),
			s.get(p+"std_inside"), s.get(p+"std_outside"), s.get(p+"mi_inside"), s.get(p+"mi_outside"))
	}
	gpOut := s.get("synthetic2d.gp.entropy_outside")
	fmt.Fprintf(&b, "\nThe aim: PTM entropy far outside at least as high as the GP's (%.3f bits).\n\n", gpOut)
	for _, k := range []struct{ key, name string }{{"ptm", "The PTM"}, {"ptm_plain", "The plain PTM"}, {"ptm_range", "The plain PTM with range bits"}} {
		v := s.get("synthetic2d." + k.key + ".entropy_outside")
		mi := s.get("synthetic2d." + k.key + ".mi_outside")
		d := v - gpOut
		if d >= 0 {
			fmt.Fprintf(&b, "- %s: %.3f bits far outside, %.3f above the GP: **aim met**", k.name, v, d)
		} else {
			fmt.Fprintf(&b, "- %s: %.3f bits far outside, %.3f **below** the GP (%.0f%% of it): **aim not met**", k.name, v, -d, 100*v/gpOut)
		}
		fmt.Fprintf(&b, "; mutual information far outside %.3f bits (aim >= 0.3: %s).\n", mi, metWord(mi >= 0.3))
	}
	fmt.Fprintf(&b, "\nThe kind of uncertainty differs. Far outside, the GP's samples disagree (mutual information %.3f bits, std of p(class 1) %.3f), "+
		"so most of its entropy is epistemic in the paper's decomposition. The primary PTM's samples (sampled encoding) have mutual information %.3f bits far outside and %.3f inside. The plain PTM's samples hardly vary anywhere (std %.3f inside and %.3f far outside; "+
		"with range bits %.3f and %.3f): where it is uncertain, every sample is itself a tie (no clause fires, class sum 0), so its mutual information stays near 0 "+
		"(%.3f far outside with range bits) and the paper's observation of a high PTM standard deviation in sparse regions does not reproduce here.\n",
		s.get("synthetic2d.gp.mi_outside"), s.get("synthetic2d.gp.std_outside"), s.get("synthetic2d.ptm.mi_outside"), s.get("synthetic2d.ptm.mi_inside"),
		s.get("synthetic2d.ptm_plain.std_inside"), s.get("synthetic2d.ptm_plain.std_outside"),
		s.get("synthetic2d.ptm_range.std_inside"), s.get("synthetic2d.ptm_range.std_outside"), s.get("synthetic2d.ptm_range.mi_outside"))
	fmt.Fprintf(&b, "\nWhy the plain PTM cannot do it: a thermometer bit x >= t is 1 for every x above the highest threshold and 0 below the lowest, "+
		"so every point outside the training square is encoded exactly like a point on its border: (6, 6) looks like (2, 2). "+
		"The PTM's uncertainty there is its uncertainty at the border, high only where the border itself is ambiguous "+
		"(the off-diagonal corners, where neither class's clauses fire) and low where one class's clauses fire (the class-0 and class-1 corners). "+
		"The range bits give the clauses something to hold on to: bits that are constant on the training data are literals a clause "+
		"can include at no cost in training, and a clause that includes them stops firing outside the training range, so far out "+
		"the class sums fall to 0 and the prediction becomes a tie (entropy 1 bit). This works only as far as the clauses really include "+
		"the range literals, which depends on the hyper-parameters (see the sweep below when present); it says nothing about points "+
		"inside the training range's bounding box but far from the data.\n\n")
	return b.String()
}

// synthSweepRow is one point of the 2-D hyper-parameter sweep: accuracy
// on the held-out points and mean entropy inside and far outside the
// training region, plain PTM [0] and with range bits [1].
type synthSweepRow struct{ Acc, In, Out [2]float64 }

// planSynthSweep declares one unit per point of the full run's 2-D
// hyper-parameter sweep: the plain and range-bit PTMs trained and scored.
func (r *runner) planSynthSweep(st *synthState) []unit {
	ps := r.cfg.synthSweep
	st.sweep = make([]synthSweepRow, len(ps))
	K, mp := r.cfg.K, plainMapping
	train, held, test := st.train, st.held, st.testX
	var us []unit
	for i, p := range ps {
		row := &st.sweep[i]
		name := fmt.Sprintf("synthetic2d.sweep.c%d_T%d_s%g_e%d", p.Clauses, p.T, p.S, p.Epochs)
		us = append(us, unit{name: name, cost: float64(p.Clauses*p.Epochs) * 10, out: row, run: func() error {
			plain, plainTh, ranged, rangeTh, err := synthPTMs(p, r.cfg.synthThresholds, train)
			if err != nil {
				return err
			}
			for v, pr := range []predictor{ptmPredictor(plain, plainTh, K, 11, mp), ptmPredictor(ranged, rangeTh, K, 12, mp)} {
				qs := make([]metrics.QueryStats, len(held.X))
				for j, x := range held.X {
					if qs[j], err = pr(x); err != nil {
						return err
					}
				}
				row.Acc[v] = metrics.Evaluate(qs, held.Y, r.cfg.bins).Accuracy
				ent := make([]float64, len(test))
				for j, x := range test {
					q, err := pr(x)
					if err != nil {
						return err
					}
					ent[j] = q.Entropy
				}
				reg := Regions(test, ent, synthInner, synthOuter)
				row.In[v], row.Out[v] = reg[Inside].Mean, reg[Far].Mean
			}
			return nil
		}})
	}
	return us
}

// synthSweep reports the full run's 2-D hyper-parameter sweep: accuracy
// and the inside / far-outside entropy of the plain and range-bit PTMs.
func (r *runner) synthSweep() string {
	ps := r.cfg.synthSweep
	if len(ps) == 0 {
		return ""
	}
	mp := plainMapping
	rows := r.synthSt.sweep
	var b strings.Builder
	fmt.Fprintf(&b, "Sensitivity of the far-outside entropy to the PTM's hyper-parameters (%d thresholds per feature, N = 100, %s mapping; GP far outside: %.3f bits):\n\n",
		r.cfg.synthThresholds, mappingName(mp), r.sum.get("synthetic2d.gp.entropy_outside"))
	b.WriteString("| clauses | T | s | epochs | accuracy plain | accuracy range bits | entropy inside plain | entropy inside range bits | entropy far outside plain | entropy far outside range bits |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for i, p := range ps {
		key := fmt.Sprintf("synthetic2d.sweep.c%d_T%d_s%g_e%d.", p.Clauses, p.T, p.S, p.Epochs)
		for v, name := range []string{"plain", "range"} {
			r.sum.set(key+name+".accuracy", rows[i].Acc[v])
			r.sum.set(key+name+".entropy_inside", rows[i].In[v])
			r.sum.set(key+name+".entropy_outside", rows[i].Out[v])
		}
		fmt.Fprintf(&b, "| %d | %d | %g | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", p.Clauses, p.T, p.S, p.Epochs,
			rows[i].Acc[0], rows[i].Acc[1], rows[i].In[0], rows[i].In[1], rows[i].Out[0], rows[i].Out[1])
	}
	b.WriteString("\n")
	return b.String()
}

// plotSynthData draws the training points by class with the region squares.
func plotSynthData(path string, train *dataset.Dataset) error {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = "x1", "x2"
	for c, col := range []color.Color{colClass0, colClass1} {
		var pts plotter.XYs
		for i, x := range train.X {
			if train.Y[i] == c {
				pts = append(pts, plotter.XY{X: x[0], Y: x[1]})
			}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = col, vg.Points(1.6), draw.CircleGlyph{}
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("class %d", c), sc)
	}
	inner, err := squareLine(synthInner, nil)
	if err != nil {
		return err
	}
	outer, err := squareLine(synthOuter, []vg.Length{vg.Points(4), vg.Points(3)})
	if err != nil {
		return err
	}
	p.Add(inner, outer)
	p.Legend.Add("training region", inner)
	p.Legend.Add("far-outside boundary", outer)
	p.Legend.Top, p.Legend.Left = true, true
	lim := dataset.Synthetic2DTestRange
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -lim, lim, -lim, lim
	return savePNG(path, 5.5*vg.Inch, 5.8*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, [][]*plot.Plot{{p}}, fmt.Sprintf("Synthetic 2-D data: the %d training points", train.Len()))
		return nil
	})
}

// plotSynthHeat draws the grid of heat maps: rows mean / entropy / std,
// one column per model, and a colour bar per row.
func plotSynthHeat(path string, models []*synthModel, xs []float64, K int) error {
	type rowSpec struct {
		label  string
		lo, hi float64
		cmap   func() palette.ColorMap
		value  func(q metrics.QueryStats) float64
	}
	specs := []rowSpec{
		{"mean p(class 1)", 0, 1, func() palette.ColorMap { return moreland.SmoothBlueRed() }, func(q metrics.QueryStats) float64 { return q.Mean[1] }},
		{"entropy (bits)", 0, 1, moreland.ExtendedKindlmann, func(q metrics.QueryStats) float64 { return q.Entropy }},
		{"std of p(class 1)", 0, 0.5, moreland.BlackBody, func(q metrics.QueryStats) float64 { return q.Std[1] }},
	}
	rows := make([][]*plot.Plot, len(specs))
	bars := make([][]*plot.Plot, len(specs))
	for j, sp := range specs {
		for i, m := range models {
			z := make([]float64, len(m.out.Grid))
			for k, q := range m.out.Grid {
				z[k] = sp.value(q)
			}
			p := heatPlot(grid{xs: xs, ys: xs, z: z}, sp.cmap(), sp.lo, sp.hi, "")
			if j == 0 {
				p.Title.Text = m.name
			}
			if i == 0 {
				p.Y.Label.Text = sp.label
			}
			inner, err := squareLine(synthInner, nil)
			if err != nil {
				return err
			}
			outer, err := squareLine(synthOuter, []vg.Length{vg.Points(3), vg.Points(3)})
			if err != nil {
				return err
			}
			inner.Color, outer.Color = color.White, color.White
			p.Add(inner, outer)
			rows[j] = append(rows[j], p)
		}
		bars[j] = []*plot.Plot{colorBarPlot(sp.cmap(), sp.lo, sp.hi, "")}
	}
	w := vg.Length(len(models))*2.6*vg.Inch + 0.9*vg.Inch
	h := 3*2.5*vg.Inch + 0.4*vg.Inch
	return savePNG(path, w, h, func(dc draw.Canvas) error {
		title := fmt.Sprintf("Predictive mean, entropy and standard deviation, K = %d samples per point", K)
		main := draw.Crop(dc, 0, -0.9*vg.Inch, 0, 0)
		drawGrid(main, rows, title)
		side := draw.Crop(dc, w-0.9*vg.Inch, 0, 0, -vg.Points(22))
		drawGrid(side, bars, "")
		return nil
	})
}
