package experiments

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// quantSplit is what one Iris split measured on the fixed-point path.
type quantSplit struct {
	FloatHW, FloatReseed metrics.Report
	ReseedAgree          float64
	Fixed                []metrics.Report // per bit width
	Agree                []float64        // per bit width, with floatVote's predictions
	IncludeErrMax        []float64        // per bit width: max |P(include) float - quantized|
	IncludeErrMean       []float64
}

// FixedQueries runs every input of xs (already booleanized) through the
// bit-exact core with K samples and request seed seed0+i for input i, and
// summarises each with golden/metrics under the vote mapping mp (which may
// smooth). The predictive mean is (1-e) * Stats.Votes / (K * VoteUnit(NC))
// + e/NC, e being mp.Smoothing; the per-sample vectors behind the entropy
// and mutual information are mp applied to each sample's fixed-point class
// sums, and their mean is checked to equal the one from the votes.
func FixedQueries(core *fixed.Core, m *ptm.Model, xs [][]bool, K int, seed0 uint32, mp ptm.Mapping) ([]metrics.QueryStats, error) {
	sets := make([][][]bool, len(xs))
	for i, x := range xs {
		sets[i] = [][]bool{x}
	}
	return FixedSetQueries(core, m, sets, K, seed0, mp)
}

// FixedSetQueries is FixedQueries for models with a sampled input
// encoding: xs[i] holds input i encoded by every threshold set
// (modelfile.File.EncodeSets), and the core shares the K samples among
// the sets (fixed.Core.RunSets).
func FixedSetQueries(core *fixed.Core, m *ptm.Model, xs [][][]bool, K int, seed0 uint32, mp ptm.Mapping) ([]metrics.QueryStats, error) {
	if mp.Kind != ptm.Vote {
		return nil, fmt.Errorf("experiments: the core accumulates votes; mapping %q cannot be computed from them", mp.Kind)
	}
	if err := mp.Validate(); err != nil {
		return nil, err
	}
	nc := m.NumClasses
	unit := float64(fixed.VoteUnit(nc)) * float64(K)
	e := mp.Smoothing
	out := make([]metrics.QueryStats, len(xs))
	var sums32 []int32
	sums := make([]int, 0)
	for i, x := range xs {
		var st fixed.Stats
		var err error
		sums32, st, err = core.RunSets(x, K, seed0+uint32(i), sums32)
		if err != nil {
			return nil, err
		}
		sums = sums[:0]
		for _, v := range sums32 {
			sums = append(sums, int(v))
		}
		q := metrics.Query(m.SumsToProbs(sums, K, mp))
		for c := 0; c < nc; c++ {
			p := (1-e)*float64(st.Votes[c])/unit + e/float64(nc)
			if math.Abs(p-q.Mean[c]) > 1e-9 {
				return nil, fmt.Errorf("input %d class %d: votes give %v, the samples' mean %v", i, c, p, q.Mean[c])
			}
			q.Mean[c] = p
		}
		q.Pred, q.Conf = 0, q.Mean[0]
		for c, p := range q.Mean {
			if p > q.Conf {
				q.Pred, q.Conf = c, p
			}
		}
		out[i] = q
	}
	return out, nil
}

// agreement is the fraction of queries whose predicted classes match.
func agreement(a, b []metrics.QueryStats) float64 {
	n := 0
	for i := range a {
		if a[i].Pred == b[i].Pred {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// quant recomputes the Iris PTM numbers on the bit-exact fixed-point path.
func (r *runner) quant() (string, error) {
	res := r.irisRes
	if res == nil {
		return "", fmt.Errorf("the Iris section has not run")
	}
	cfg := r.cfg
	bits := cfg.quantBits
	mp := hwMapping(pipeline.DefaultMapping)
	out := make([]quantSplit, res.splits)
	for s := range out {
		out[s] = res.extra[s].Quant
	}
	sum := r.sum
	setReports := func(prefix string, reps []metrics.Report) {
		for _, mt := range irisMetrics[:4] {
			v := make([]float64, len(reps))
			for i, rep := range reps {
				v[i] = mt.get(rep)
			}
			sum.setStat(prefix+"."+mt.key, Describe(v))
		}
	}
	setReports("quant.float", res.reports["ptm"])
	var fv, fr []metrics.Report
	var ra []float64
	for _, q := range out {
		fv, fr, ra = append(fv, q.FloatHW), append(fr, q.FloatReseed), append(ra, q.ReseedAgree)
	}
	setReports("quant.float_hw", fv)
	setReports("quant.float_hw_reseed", fr)
	sum.setStat("quant.float_hw_reseed.agreement", Describe(ra))
	sum.label("quant.mapping", mappingName(mp))
	for bi, b := range bits {
		var reps []metrics.Report
		var ag, em, ex []float64
		for _, q := range out {
			reps, ag = append(reps, q.Fixed[bi]), append(ag, q.Agree[bi])
			em, ex = append(em, q.IncludeErrMean[bi]), append(ex, q.IncludeErrMax[bi])
		}
		p := fmt.Sprintf("quant.b%d", b)
		setReports(p, reps)
		sum.setStat(p+".agreement", Describe(ag))
		sum.set(p+".include_err_mean", Describe(em).Mean)
		sum.set(p+".include_err_max", Describe(ex).Max)
	}
	sum.set("quant.clause_lanes", float64(cfg.clauseLanes))
	sum.set("quant.literal_lanes", float64(cfg.literalLanes))
	sum.set("quant.lfsr_width", float64(cfg.lfsrWidth))
	if err := plotQuant(filepath.Join(r.out, "quant_bits.png"), sum, bits); err != nil {
		return "", err
	}
	return r.quantReport(bits), nil
}

// hwMapping is the mapping the hardware path uses: the primary mapping
// when it is a (possibly smoothed) vote, which the host computes exactly
// from the accumulated votes, else the raw vote.
func hwMapping(primary ptm.Mapping) ptm.Mapping {
	if primary.Kind == ptm.Vote {
		return primary
	}
	return ptm.Mapping{Kind: ptm.Vote}
}

func (r *runner) quantSplit(f *modelfile.File, d *pipeline.Data, rows []int, seed uint64, bits []int, mp ptm.Mapping) (quantSplit, error) {
	var q quantSplit
	K, bins := r.cfg.K, r.cfg.bins
	fv, err := pipeline.Evaluate(f, d, rows, K, seed+2000, mp, bins)
	if err != nil {
		return q, err
	}
	fr, err := pipeline.Evaluate(f, d, rows, K, seed+3000, mp, bins)
	if err != nil {
		return q, err
	}
	q.FloatHW, q.FloatReseed = fv.Report, fr.Report
	q.ReseedAgree = agreement(fv.Queries, fr.Queries)
	xs := make([][][]bool, len(rows))
	for i, row := range rows {
		if xs[i], err = f.EncodeSets(d.X[row]); err != nil {
			return q, err
		}
	}
	inc := f.Model.IncludeAll()
	for _, b := range bits {
		bank, err := fixed.Quantize(f.Model, b)
		if err != nil {
			return q, err
		}
		core, err := fixed.NewCore(bank, fixed.HW{Bits: b, LFSRWidth: r.cfg.lfsrWidth, ClauseLanes: r.cfg.clauseLanes, LiteralLanes: r.cfg.literalLanes})
		if err != nil {
			return q, err
		}
		qs, err := FixedSetQueries(core, f.Model, xs, K, uint32(seed)*1000, mp)
		if err != nil {
			return q, fmt.Errorf("%d bits: %w", b, err)
		}
		q.Fixed = append(q.Fixed, metrics.Evaluate(qs, fv.Labels, bins))
		q.Agree = append(q.Agree, agreement(qs, fv.Queries))
		var emax, esum float64
		for ta, p := range inc {
			e := math.Abs(bank.Include(ta) - p)
			emax, esum = max(emax, e), esum+e
		}
		q.IncludeErrMax = append(q.IncludeErrMax, emax)
		q.IncludeErrMean = append(q.IncludeErrMean, esum/float64(len(inc)))
	}
	return q, nil
}

func (r *runner) quantReport(bits []int) string {
	s := r.sum
	hw := s.Labels["quant.mapping"]
	var b strings.Builder
	fmt.Fprintf(&b, "## 4. Hardware path: what quantization costs\n\n")
	fmt.Fprintf(&b, "The primary PTMs of section 3 (one per split) quantized with `fixed.Quantize` to B bits and run on the bit-exact core model "+
		"`fixed.Core` with a fixed lane layout (%d clause lanes x %d literal lanes, %d-bit LFSRs, one request seed per test row), K = %d. "+
		"The core accumulates votes, so the host's probabilities are the accumulated votes Stats.Votes / (K * VoteUnit) under the %s mapping "+
		"(with smoothing e: (1-e) * votes + e/NC); the entropy and mutual information use the per-sample votes of the fixed-point class sums, "+
		"whose mean is checked against the accumulated votes for every query. "+
		"Agreement is the fraction of test rows whose predicted class equals the float model's (same mapping, same K); "+
		"the float model resampled with another seed gives the agreement that Monte Carlo noise alone allows.\n\n",
		r.cfg.clauseLanes, r.cfg.literalLanes, r.cfg.lfsrWidth, r.cfg.K, hw)
	b.WriteString("| model | accuracy | ECE | NLL | Brier | agreement with float | mean / max abs. error of P(include) |\n|---|---|---|---|---|---|---|\n")
	row := func(name, p, agree, inc string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, pm(s, p+".accuracy"), pm(s, p+".ece"), pm(s, p+".nll"), pm(s, p+".brier"), agree, inc)
	}
	if hw != s.Labels["iris.splits20.ptm.mapping"] {
		row("float, "+s.Labels["iris.splits20.ptm.mapping"]+" (section 3)", "quant.float", "-", "-")
	}
	row("float, "+hw, "quant.float_hw", "1", "0")
	row("float, "+hw+", another seed", "quant.float_hw_reseed", pm(s, "quant.float_hw_reseed.agreement"), "0")
	for _, bb := range bits {
		p := fmt.Sprintf("quant.b%d", bb)
		row(fmt.Sprintf("fixed point, B = %d", bb), p, pm(s, p+".agreement"),
			fmt.Sprintf("%.2g / %.2g", s.get(p+".include_err_mean"), s.get(p+".include_err_max")))
	}
	lo := fmt.Sprintf("quant.b%d", bits[0])
	fmt.Fprintf(&b, "\nAt B = %d the mean ECE is %.3f against %.3f for the float model with the same mapping (%+.3f) and the accuracy %.3f against %.3f (%+.3f); "+
		"the prediction agreement %.3f compares with %.3f between two float runs with different seeds. ",
		bits[0], s.get(lo+".ece_mean"), s.get("quant.float_hw.ece_mean"), s.get(lo+".ece_mean")-s.get("quant.float_hw.ece_mean"),
		s.get(lo+".accuracy_mean"), s.get("quant.float_hw.accuracy_mean"), s.get(lo+".accuracy_mean")-s.get("quant.float_hw.accuracy_mean"),
		s.get(lo+".agreement_mean"), s.get("quant.float_hw_reseed.agreement_mean"))
	fmt.Fprintf(&b, "The largest change of an include probability at B = %d is %.3f (mean %.1g); with the PTM's samples identical on %.0f%% of the Iris test rows "+
		"(section 3), the class-sum margins are rarely close enough to a tie for such changes to move a vote. ",
		bits[0], s.get(lo+".include_err_max"), s.get(lo+".include_err_mean"), 100*s.get("iris.pooled.ptm.identical_samples_fraction"))
	b.WriteString("Differences smaller than the spread over splits are Monte Carlo noise of the K samples, not quantization. " +
		"A softmax mapping cannot run on this path: it needs every sample's class sums on the host, which the core's accumulated statistics do not carry.\n\n")
	b.WriteString(r.figure("quant_bits.png", "accuracy, agreement and ECE against bit width"))
	b.WriteString("\n")
	return b.String()
}

// plotQuant draws accuracy, agreement and ECE against the bit width, with
// the float (vote) values as dashed references.
func plotQuant(path string, s *Summary, bits []int) error {
	panel := func(title, key, refKey, refLabel string) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "bits B"
		var pts plotter.XYs
		for _, b := range bits {
			pts = append(pts, plotter.XY{X: float64(b), Y: s.get(fmt.Sprintf("quant.b%d.%s_mean", b, key))})
		}
		lp, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		lp.Color, sc.Color = colClass1, colClass1
		v := s.get(refKey)
		ref, err := plotter.NewLine(plotter.XYs{{X: float64(bits[0]), Y: v}, {X: float64(bits[len(bits)-1]), Y: v}})
		if err != nil {
			return nil, err
		}
		ref.Color = colClass0
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(lp, sc, ref)
		p.Legend.Add("fixed point", lp, sc)
		p.Legend.Add(refLabel, ref)
		p.Legend.Top = false
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		lo, hi := v, v
		for _, q := range pts {
			lo, hi = min(lo, q.Y), max(hi, q.Y)
		}
		pad := max(0.01, (hi-lo)*0.3)
		p.Y.Min, p.Y.Max = max(0, lo-3*pad), hi+pad
		return p, nil
	}
	a, err := panel("accuracy", "accuracy", "quant.float_hw.accuracy_mean", "float")
	if err != nil {
		return err
	}
	g, err := panel("agreement with the float model", "agreement", "quant.float_hw_reseed.agreement_mean", "float vs float, another seed")
	if err != nil {
		return err
	}
	e, err := panel("ECE", "ece", "quant.float_hw.ece_mean", "float")
	if err != nil {
		return err
	}
	return savePNG(path, 11*vg.Inch, 3.8*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, [][]*plot.Plot{{a, g, e}}, "Iris PTM on the fixed-point core: mean over splits against bit width")
		return nil
	})
}
