package experiments

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/experiments/baseline/gp"
	"github.com/ptmhw/ptm/experiments/baseline/mlp"
	"github.com/ptmhw/ptm/experiments/baseline/rf"
	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// testFraction is the test share of every split (80/20).
const testFraction = 0.2

// dsSpec describes one data set of the comparison.
type dsSpec struct {
	key  string // summary key prefix: iris, wine, breast_cancer
	name string // display name
	data string // pipeline.LoadData name
	// splits is the number of stratified splits; oodSplits the splits per
	// held-out class (0 = no out-of-distribution experiment).
	splits, oodSplits int
	grid              []pipeline.Candidate // without encoding: each PTM sets its own
}

// dsModels are the five models compared on every data set.
var dsModels = []irisModel{{"ptm", "PTM"}, {"ptm_plain", "PTM, plain"}, {"gp", "GP"}, {"mlp", "MLP-MCd"}, {"rf", "RF"}}

// baselineModels are the models of dsModels that are not PTMs, in the
// order newBaselines returns them.
var baselineModels = dsModels[2:]

// plainMapping is the mapping of the plain PTM: the vote smoothed by 0.05
// towards uniform, the paper's PTM as this project had it before the
// sampled encoding.
var plainMapping = ptm.Mapping{Kind: ptm.Vote, Smoothing: 0.05}

// ptmKind is one of the two PTMs of the comparison: an input encoding, a
// mapping and whether the mapping's parameter is fitted by cross-validation
// on the training rows.
type ptmKind struct {
	key       string
	enc       pipeline.Encoding
	mapping   ptm.Mapping
	calibrate bool
}

// ptmKinds returns the primary PTM, which follows golden/pipeline's
// defaults at run time (DefaultEncoding, DefaultMapping,
// DefaultCalibrate), and the plain PTM (one thermometer, plainMapping, no
// calibration).
func ptmKinds() []ptmKind {
	return []ptmKind{
		{"ptm", pipeline.DefaultEncoding, pipeline.DefaultMapping, pipeline.DefaultCalibrate},
		{"ptm_plain", pipeline.Plain, plainMapping, false},
	}
}

// withEncoding returns a copy of grid whose candidates use k's encoding.
// For the primary PTM a candidate that names its own encoding (an
// encoding grid dimension, chosen on validation rows like the rest) keeps
// it; the plain PTM always gets the plain encoding, and candidates that
// then coincide are kept once.
func (k ptmKind) withEncoding(grid []pipeline.Candidate) []pipeline.Candidate {
	var out []pipeline.Candidate
	seen := map[pipeline.Candidate]bool{}
	for _, c := range grid {
		if c.Encoding != nil && k.key == "ptm" {
			e := *c.Encoding
			c.Encoding = &e
			out = append(out, c)
			continue
		}
		key := c
		key.Encoding = nil
		if seen[key] {
			continue
		}
		seen[key] = true
		e := k.enc
		c.Encoding = &e
		out = append(out, c)
	}
	return out
}

// protocol runs split s of the repeated-split protocol for k on d: model
// selection on validation rows carved from the training rows, the winner
// retrained on all training rows, calibrated if k says so, and evaluated
// on the test rows.
func (k ptmKind) protocol(d *pipeline.Data, grid []pipeline.Candidate, s int, cfg config) (pipeline.SplitResult, error) {
	rs, err := pipeline.RepeatedSplits(d, pipeline.ProtocolConfig{
		Splits: 1, First: s, TestFraction: testFraction, K: cfg.K, Bins: cfg.bins,
		Grid: k.withEncoding(grid), Calibrate: k.calibrate, Mapping: k.mapping, Select: cfg.sel, CV: cfg.cv,
	})
	if err != nil {
		return pipeline.SplitResult{}, fmt.Errorf("%s, split %d: %w", k.key, s, err)
	}
	return rs[0], nil
}

// describe says how k maps samples to probabilities, given the mappings
// its splits used.
func (k ptmKind) describe(srs []pipeline.SplitResult) string {
	if !k.calibrate {
		return mappingName(k.mapping)
	}
	param := "smoothing"
	v := make([]float64, len(srs))
	for i, sr := range srs {
		v[i] = sr.Mapping.Smoothing
	}
	if k.mapping.Kind == ptm.Softmax {
		param = "temperature"
		for i, sr := range srs {
			v[i] = sr.Mapping.Temperature
		}
	}
	st := Describe(v)
	return fmt.Sprintf("%s, %s fitted per split by NLL in a %d-fold cross-validation on the training rows%s (mean %.3g, range %.3g-%.3g)",
		k.mapping.Kind, param, pipeline.CalibrationFolds, floorNote(k.mapping), st.Mean, st.Min, st.Max)
}

// floorNote names the temperature floor of a calibrated softmax
// (pipeline.DefaultTemperatureFloor), "" for other mappings or no floor.
func floorNote(mp ptm.Mapping) string {
	if mp.Kind != ptm.Softmax || pipeline.DefaultTemperatureFloor <= 0 {
		return ""
	}
	return fmt.Sprintf(", not below %g T", pipeline.DefaultTemperatureFloor)
}

// encodingName describes an input encoding.
func encodingName(e pipeline.Encoding) string {
	cuts := ""
	if e.Cuts != "" && e.Cuts != booleanize.Quantile {
		cuts = fmt.Sprintf(", %s thresholds", e.Cuts)
	}
	if e.Sets == 1 && e.Margin == 0 {
		return "plain thermometer" + cuts
	}
	s := fmt.Sprintf("%d threshold sets, bandwidth %g feature sd", e.Sets, e.Bandwidth)
	if e.Margin > 0 {
		s += fmt.Sprintf(", out-of-range margin %g sd", e.Margin)
		if e.WholeRow {
			s += " (whole row)"
		}
	}
	if tb := e.TrainBandwidth; tb != nil {
		if *tb == 0 {
			s += ", trained on the plain thermometer"
		} else {
			s += fmt.Sprintf(", trained at bandwidth %g", *tb)
		}
	}
	return s + cuts
}

// newBaselines returns the GP, MLP-MCd and RF with their package defaults
// and the given seed. The GP and the MLP standardize their inputs with
// statistics of the training rows (experiments/baseline/internal/scale);
// the RF's splits do not depend on scale.
func newBaselines(seed uint64) []baseline.Classifier {
	return []baseline.Classifier{gp.New(gp.Opts{Seed: seed}), mlp.New(mlp.Opts{Seed: seed}), rf.New(rf.Opts{Seed: seed, Workers: 1})}
}

// dsResult holds what one data set's comparison measured, per split.
type dsResult struct {
	spec dsSpec
	d    *pipeline.Data
	// test rows and their labels per split (the same for every model)
	testRows, labels [][]int
	// reports and queries [model key][split]
	reports map[string][]metrics.Report
	queries map[string][][]metrics.QueryStats
	// protocol[PTM key][split]: the chosen candidate and mapping (the
	// model itself stays in its unit); features[PTM key][split]: the
	// chosen model's Boolean inputs
	protocol map[string][]pipeline.SplitResult
	features map[string][]int
	// iris[split]: the primary Iris PTM's other mappings and quantization
	// (Iris only)
	iris []*irisExtra
	ood  *oodResult
}

// ptmSplit is what one PTM's protocol on one split leaves for the report.
type ptmSplit struct {
	SR       pipeline.SplitResult // with Model nil
	Features int                  // the chosen model's Boolean inputs
	Iris     *irisExtra           // the primary Iris PTM only
}

// baselineSplit is what the baselines leave for the report on one split,
// in baselineModels order.
type baselineSplit struct {
	Reports []metrics.Report
	Queries [][]metrics.QueryStats
}

// newDSResult loads a data set and fixes its test rows.
func newDSResult(spec dsSpec) (*dsResult, error) {
	d, err := pipeline.LoadData(spec.data, "")
	if err != nil {
		return nil, err
	}
	res := &dsResult{spec: spec, d: d, reports: map[string][]metrics.Report{},
		queries: map[string][][]metrics.QueryStats{}, protocol: map[string][]pipeline.SplitResult{}, features: map[string][]int{},
		iris: make([]*irisExtra, spec.splits)}
	for s := 0; s < spec.splits; s++ {
		_, test, err := d.Split(testFraction, splitSeed(s))
		if err != nil {
			return nil, err
		}
		y := make([]int, len(test))
		for i, row := range test {
			y[i] = d.Y[row]
		}
		res.testRows, res.labels = append(res.testRows, test), append(res.labels, y)
	}
	for _, m := range dsModels {
		res.reports[m.key] = make([]metrics.Report, spec.splits)
		res.queries[m.key] = make([][]metrics.QueryStats, spec.splits)
	}
	for _, k := range ptmKinds() {
		res.protocol[k.key] = make([]pipeline.SplitResult, spec.splits)
		res.features[k.key] = make([]int, spec.splits)
	}
	return res, nil
}

// splitUnits returns the units of res's repeated splits: per split, each
// PTM's protocol (for the primary Iris PTM also its other mappings and
// quantization, which need the model) and the three baselines.
func (r *runner) splitUnits(res *dsResult) []unit {
	d := res.d
	size := float64(d.Len() * len(d.Features))
	var us []unit
	for s := 0; s < res.spec.splits; s++ {
		for _, k := range ptmKinds() {
			cost := size * float64(len(res.spec.grid)+1)
			switch {
			case r.cfg.cv: // 4 folds of 75% per candidate; calibration reuses them
				cost = size * float64(3*len(res.spec.grid)+1)
			case k.calibrate:
				cost += size * 3
			}
			if k.enc.Sets > 1 {
				cost *= 1.2
			}
			extra := res.spec.key == "iris" && k.key == "ptm"
			if extra {
				cost += size * 4
			}
			o := &ptmSplit{}
			us = append(us, unit{name: fmt.Sprintf("%s.s%02d.%s", res.spec.key, s, k.key), cost: cost, out: o, run: func() error {
				sr, err := k.protocol(d, res.spec.grid, s, r.cfg)
				if err != nil {
					return err
				}
				o.Features = sr.Model.Model.NumFeatures
				if extra {
					if o.Iris, err = r.irisExtraSplit(d, sr, res.testRows[s], s); err != nil {
						return err
					}
				}
				sr.Model = nil
				o.SR = sr
				return nil
			}, apply: func() {
				res.protocol[k.key][s], res.features[k.key][s] = o.SR, o.Features
				res.reports[k.key][s], res.queries[k.key][s] = o.SR.Report, o.SR.Eval.Queries
				if extra {
					res.iris[s] = o.Iris
				}
			}})
		}
		o := &baselineSplit{}
		us = append(us, unit{name: fmt.Sprintf("%s.s%02d.baselines", res.spec.key, s), cost: size * 0.5, out: o, run: func() error {
			if err := r.ctx.Err(); err != nil {
				return err
			}
			train, _, err := d.Split(testFraction, splitSeed(s))
			if err != nil {
				return err
			}
			X, y := rowsOf(d, train)
			Xt, _ := rowsOf(d, res.testRows[s])
			for i, c := range newBaselines(splitSeed(s)) {
				m := baselineModels[i]
				if err := c.Fit(X, y, len(d.Classes)); err != nil {
					return fmt.Errorf("%s, split %d: %w", m.name, s, err)
				}
				rep, qs, err := baseline.Evaluate(c, Xt, res.labels[s], r.cfg.K, r.cfg.bins)
				if err != nil {
					return fmt.Errorf("%s, split %d: %w", m.name, s, err)
				}
				o.Reports, o.Queries = append(o.Reports, rep), append(o.Queries, qs)
			}
			return nil
		}, apply: func() {
			for i, m := range baselineModels {
				res.reports[m.key][s], res.queries[m.key][s] = o.Reports[i], o.Queries[i]
			}
		}})
	}
	return us
}

func rowsOf(d *pipeline.Data, rows []int) ([][]float64, []int) {
	X, y := make([][]float64, len(rows)), make([]int, len(rows))
	for i, row := range rows {
		X[i], y[i] = d.X[row], d.Y[row]
	}
	return X, y
}

// planDatasets declares the units of the five-model comparison on every
// data set and of the out-of-distribution experiment.
func (r *runner) planDatasets() ([]unit, error) {
	var us []unit
	r.ds = map[string]*dsResult{}
	for _, spec := range r.cfg.datasets {
		res, err := newDSResult(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.name, err)
		}
		r.ds[spec.key] = res
		us = append(us, r.splitUnits(res)...)
		if spec.oodSplits > 0 {
			ood, ou, err := r.oodUnits(res)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", spec.name, err)
			}
			res.ood = ood
			us = append(us, ou...)
		}
	}
	return us, nil
}

// datasets writes the summary keys of the comparison of the five models on
// every data set and of the out-of-distribution experiment; the report
// sections are written by iris, uciReport and oodReport.
func (r *runner) datasets() (string, error) {
	for _, spec := range r.cfg.datasets {
		res := r.ds[spec.key]
		r.dsSummary(res)
		if res.ood != nil {
			r.oodSummary(res)
		}
	}
	return "", nil
}

// dsMetrics are the per-split report fields summarised over splits for
// every data set.
var dsMetrics = append(append([]struct {
	key, name string
	get       func(metrics.Report) float64
}{}, irisMetrics...),
	struct {
		key, name string
		get       func(metrics.Report) float64
	}{"auroc_mi", "AUROC(MI)", func(r metrics.Report) float64 { return r.AUROCMI }},
	struct {
		key, name string
		get       func(metrics.Report) float64
	}{"identical_samples_fraction", "identical samples", func(r metrics.Report) float64 { return r.Identical }},
)

// pooledQueries concatenates the test queries and labels of every split.
func (res *dsResult) pooledQueries(key string) ([]metrics.QueryStats, []int) {
	var qs []metrics.QueryStats
	var ys []int
	for s := range res.queries[key] {
		qs, ys = append(qs, res.queries[key][s]...), append(ys, res.labels[s]...)
	}
	return qs, ys
}

// rightWrong splits queries into right and wrong predictions.
func rightWrong(qs []metrics.QueryStats, ys []int) (right, wrong group) {
	for i, q := range qs {
		g := &right
		if q.Pred != ys[i] {
			g = &wrong
		}
		g.entropy = append(g.entropy, q.Entropy)
		g.mi = append(g.mi, q.MutualInfo)
	}
	return right, wrong
}

// dsSummary writes the keys of one data set: "<d>.splits20.<model>.*"
// (statistics over the per-split reports) and "<d>.pooled.<model>.*" (one
// report over the test rows of every split together).
func (r *runner) dsSummary(res *dsResult) {
	s, pre := r.sum, res.spec.key
	n := res.spec.splits
	s.set(pre+".splits20.splits", float64(n))
	s.set(pre+".test_rows", float64(len(res.testRows[0])))
	s.set(pre+".rows", float64(res.d.Len()))
	s.set(pre+".features", float64(len(res.d.Features)))
	s.label(pre+".ptm.grid", gridName(res.spec.grid))
	for _, m := range dsModels {
		for _, mt := range dsMetrics {
			v := make([]float64, n)
			for i, rep := range res.reports[m.key] {
				v[i] = mt.get(rep)
			}
			st := Describe(v)
			s.setStat(pre+".splits20."+m.key+"."+mt.key, st)
			switch mt.key {
			case "accuracy", "ece", "nll":
				s.set(pre+".splits20."+m.key+"."+mt.key+"_sd", st.Std)
			}
		}
		qs, ys := res.pooledQueries(m.key)
		rep := metrics.Evaluate(qs, ys, r.cfg.bins)
		p := pre + ".pooled." + m.key + "."
		s.set(p+"accuracy", rep.Accuracy)
		s.set(p+"ece", rep.ECE)
		s.set(p+"nll", rep.NLL)
		s.set(p+"auroc_entropy", rep.AUROCEntropy)
		s.set(p+"auroc_mi", rep.AUROCMI)
		s.set(p+"identical_samples_fraction", rep.Identical)
		right, wrong := rightWrong(qs, ys)
		s.set(p+"n_correct", float64(len(right.entropy)))
		s.set(p+"n_incorrect", float64(len(wrong.entropy)))
		s.set(p+"entropy_correct_median", median(right.entropy))
		s.set(p+"entropy_incorrect_median", median(wrong.entropy))
		s.set(p+"mi_correct_median", median(right.mi))
		s.set(p+"mi_incorrect_median", median(wrong.mi))
	}
	for _, k := range ptmKinds() {
		srs := res.protocol[k.key]
		var bits []float64
		for _, n := range res.features[k.key] {
			bits = append(bits, float64(n))
		}
		_, keys := gridLabels(res.spec.grid)
		for i, n := range chosenCounts(k, res.spec.grid, srs) {
			s.set(pre+".splits20."+k.key+".chosen."+keys[i], float64(n))
		}
		s.set(pre+".boolean_inputs", Describe(bits).Mean)
		s.label(pre+".splits20."+k.key+".mapping", k.describe(srs))
		s.label(pre+".splits20."+k.key+".encoding", encodingName(k.enc))
	}
	best := ""
	for _, m := range baselineModels {
		if best == "" || s.get(pre+".splits20."+m.key+".accuracy_mean") > s.get(pre+".splits20."+best+".accuracy_mean") {
			best = m.key
		}
	}
	s.label(pre+".best_baseline", best)
	s.set(pre+".diff.ptm_minus_best_baseline.accuracy_mean", s.get(pre+".splits20.ptm.accuracy_mean")-s.get(pre+".splits20."+best+".accuracy_mean"))
}

// dsTable is the report table of one data set: the five models'
// accuracy, per-split and pooled ECE, NLL, pooled AUROC of entropy and MI
// as detectors of wrong predictions, and the fraction of test rows whose
// K samples were identical.
func (r *runner) dsTable(key string) string {
	s := r.sum
	var b strings.Builder
	b.WriteString("| model | accuracy (mean ± sd) | ECE per split (mean ± sd) | pooled ECE | NLL (mean ± sd) | AUROC(entropy), pooled | AUROC(MI), pooled | identical samples, pooled |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, m := range dsModels {
		p := key + ".splits20." + m.key + "."
		q := key + ".pooled." + m.key + "."
		fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %s | %s | %s | %.2f |\n", m.name, pm(s, p+"accuracy"), pm(s, p+"ece"), s.get(q+"ece"),
			pm(s, p+"nll"), fmtMaybe(s.get(q+"auroc_entropy")), fmtMaybe(s.get(q+"auroc_mi")), s.get(q+"identical_samples_fraction"))
	}
	return b.String()
}

// dsSetup describes the models of a data set's comparison.
func (r *runner) dsSetup(key string) string {
	s := r.sum
	var b strings.Builder
	fmt.Fprintf(&b, "- PTM (the primary model): %s encoding, mapping: %s; `pipeline.DefaultEncoding`, `pipeline.DefaultMapping` and `pipeline.DefaultCalibrate` at run time.\n",
		s.Labels[key+".splits20.ptm.encoding"], s.Labels[key+".splits20.ptm.mapping"])
	fmt.Fprintf(&b, "- PTM, plain: the paper's PTM, one thermometer (`pipeline.Plain`), mapping: %s, no calibration.\n", s.Labels[key+".splits20.ptm_plain.mapping"])
	fmt.Fprintf(&b, "- Both PTMs: `pipeline.RepeatedSplits`, the grid point chosen per split %s (%s), "+
		"retrained on all training rows; the test rows play no part in any choice. Grid: %s (%.0f Boolean inputs).\n",
		chooseOnDesc(r.cfg.cv), selectionDesc(r.cfg.sel), s.Labels[key+".ptm.grid"], s.get(key+".boolean_inputs"))
	for _, k := range []string{"ptm", "ptm_plain"} {
		fmt.Fprintf(&b, "  Chosen (%s):", k)
		names, keys := gridLabels(r.ds[key].spec.grid)
		for i := range r.ds[key].spec.grid {
			fmt.Fprintf(&b, " %s: %d;", names[i], int(s.get(key+".splits20."+k+".chosen."+keys[i])))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// uciReport is the section on wine and breast cancer.
func (r *runner) uciReport() (string, error) {
	var b strings.Builder
	s := r.sum
	b.WriteString("## 5. Wine and breast cancer\n\n")
	fmt.Fprintf(&b, "The protocol of section 3 on two more UCI data sets: stratified 80/20 splits (seed = split index + 1), the same splits for every model, "+
		"K = %d samples per test row. Baselines as in section 3 (the GP and the MLP standardize the features with the training rows' statistics). "+
		"*Pooled* metrics are computed once over the test rows of all splits together; *per split* metrics are the mean ± sd of the per-split values. "+
		"AUROC(entropy) and AUROC(MI) rank wrong predictions above right ones.\n\n", r.cfg.K)
	for _, key := range []string{"wine", "breast_cancer"} {
		res, ok := r.ds[key]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "### %s (%d rows, %d features, %d classes; %d splits, %d test rows each)\n\n", res.spec.name, res.d.Len(), len(res.d.Features),
			len(res.d.Classes), res.spec.splits, len(res.testRows[0]))
		if r.cfg.quick {
			fmt.Fprintf(&b, "**Quick run: %d splits only; a smoke test.**\n\n", res.spec.splits)
		}
		b.WriteString(r.dsSetup(key))
		b.WriteString("\n")
		b.WriteString(r.dsTable(key))
		best := s.Labels[key+".best_baseline"]
		pa, ba := s.get(key+".splits20.ptm.accuracy_mean"), s.get(key+".splits20."+best+".accuracy_mean")
		pe, re := s.get(key+".pooled.ptm.auroc_entropy"), s.get(key+".pooled.rf.auroc_entropy")
		auroc := metWord(pe >= re)
		if math.IsNaN(pe) {
			auroc = "undefined: the PTM made no wrong prediction"
		}
		fmt.Fprintf(&b, "\nTargets: PTM AUROC(entropy) %s against RF's %s (%s); PTM accuracy %.3f, best baseline (%s) %.3f, difference %+.3f (%s: within 0.02).\n\n",
			fmtMaybe(pe), fmtMaybe(re), auroc, pa, best, ba, pa-ba, metWord(pa >= ba-0.02))
		if err := plotDSUncertainty(filepath.Join(r.out, key+"_uncertainty.png"), res, r.cfg.bins); err != nil {
			return "", err
		}
		b.WriteString(r.figure(key+"_uncertainty.png", res.spec.name+": reliability and entropy of right and wrong predictions"))
		b.WriteString("\n")
	}
	return b.String(), nil
}

// metWord is "met" or "**not met**".
func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// finite replaces NaN by def (for comparisons of possibly undefined AUROCs).
func finite(v, def float64) float64 {
	if math.IsNaN(v) {
		return def
	}
	return v
}

// reliabilityPanel is one reliability diagram: accuracy against mean
// confidence per bin of the pooled queries, with the diagonal.
func reliabilityPanel(name string, qs []metrics.QueryStats, ys []int, bins int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (pooled ECE %.3f)", name, metrics.Evaluate(qs, ys, bins).ECE)
	p.X.Label.Text, p.Y.Label.Text = "confidence", "accuracy"
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	var pts plotter.XYs
	for _, bn := range metrics.ReliabilityBins(qs, ys, bins) {
		if bn.Count > 0 {
			pts = append(pts, plotter.XY{X: bn.Confidence, Y: bn.Accuracy})
		}
	}
	lp, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, err
	}
	lp.Color, sc.Color = colClass1, colClass1
	p.Add(diag, lp, sc)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	return p, nil
}

// plotDSUncertainty draws, for one data set, the reliability diagram of
// every model (top) and box plots of the entropy and mutual information of
// right and wrong predictions (bottom), all pooled over the splits.
func plotDSUncertainty(path string, res *dsResult, bins int) error {
	var top []*plot.Plot
	for _, m := range dsModels {
		qs, ys := res.pooledQueries(m.key)
		p, err := reliabilityPanel(m.name, qs, ys, bins)
		if err != nil {
			return err
		}
		top = append(top, p)
	}
	var bottom []*plot.Plot
	for _, which := range []string{"predictive entropy (bits)", "mutual information (bits)"} {
		p := plot.New()
		p.Title.Text = which
		var groups [][]float64
		var names []string
		var fills []color.Color
		for _, m := range dsModels {
			right, wrong := rightWrong(res.pooledQueries(m.key))
			rv, wv := right.entropy, wrong.entropy
			if strings.HasPrefix(which, "mutual") {
				rv, wv = right.mi, wrong.mi
			}
			groups = append(groups, rv, wv)
			names = append(names, fmt.Sprintf("%s right (%d)", m.name, len(rv)), fmt.Sprintf("wrong (%d)", len(wv)))
			fills = append(fills, colRight, colWrong)
		}
		if err := boxes(p, groups, fills, names); err != nil {
			return err
		}
		p.Y.Min = 0
		bottom = append(bottom, p)
	}
	// Two rows of different widths: the bottom row's two panels span the
	// width of the five reliability diagrams.
	return savePNG(path, 14*vg.Inch, 8*vg.Inch, func(dc draw.Canvas) error {
		title := fmt.Sprintf("%s: reliability and uncertainty of right and wrong test predictions, pooled over %d splits", res.spec.name, res.spec.splits)
		upper := draw.Crop(dc, 0, 0, 4.2*vg.Inch, 0)
		lower := draw.Crop(dc, 0, 0, 0, -3.8*vg.Inch)
		drawGrid(upper, [][]*plot.Plot{top}, title)
		drawGrid(lower, [][]*plot.Plot{bottom}, "")
		return nil
	})
}
