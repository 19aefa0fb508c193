package experiments

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"

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
	floatVote, floatReseed metrics.Report
	reseedAgree            float64
	fixed                  []metrics.Report // per bit width
	agree                  []float64        // per bit width, with floatVote's predictions
	includeErrMax          []float64        // per bit width: max |P(include) float - quantized|
	includeErrMean         []float64
}

// FixedQueries runs every input of xs (already booleanized) through the
// bit-exact core with K samples and request seed seed0+i for input i, and
// summarises each with golden/metrics. The predictive mean is
// Stats.Votes / (K * VoteUnit(NC)); the per-sample vectors behind the
// entropy and mutual information are the vote mapping of each sample's
// fixed-point class sums, whose mean is checked to equal the votes.
func FixedQueries(core *fixed.Core, m *ptm.Model, xs [][]bool, K int, seed0 uint32) ([]metrics.QueryStats, error) {
	nc := m.NumClasses
	unit := float64(fixed.VoteUnit(nc)) * float64(K)
	out := make([]metrics.QueryStats, len(xs))
	var sums32 []int32
	sums := make([]int, 0)
	for i, x := range xs {
		var st fixed.Stats
		var err error
		sums32, st, err = core.Run(x, K, seed0+uint32(i), sums32)
		if err != nil {
			return nil, err
		}
		sums = sums[:0]
		for _, v := range sums32 {
			sums = append(sums, int(v))
		}
		q := metrics.Query(m.SumsToProbs(sums, K, ptm.Mapping{Kind: ptm.Vote}))
		for c := 0; c < nc; c++ {
			p := float64(st.Votes[c]) / unit
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
	out := make([]quantSplit, res.splits)
	var done atomic.Int32
	err := parallel(r.ctx, res.splits, func(s int) error {
		q, err := r.quantSplit(res.models[s], res.d, res.testRows[s], splitSeed(s), bits)
		if err != nil {
			return fmt.Errorf("split %d: %w", s, err)
		}
		out[s] = q
		r.progress("quantization", int(done.Add(1)), res.splits)
		return nil
	})
	if err != nil {
		return "", err
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
		fv, fr, ra = append(fv, q.floatVote), append(fr, q.floatReseed), append(ra, q.reseedAgree)
	}
	setReports("quant.float_vote", fv)
	setReports("quant.float_vote_reseed", fr)
	sum.setStat("quant.float_vote_reseed.agreement", Describe(ra))
	for bi, b := range bits {
		var reps []metrics.Report
		var ag, em, ex []float64
		for _, q := range out {
			reps, ag = append(reps, q.fixed[bi]), append(ag, q.agree[bi])
			em, ex = append(em, q.includeErrMean[bi]), append(ex, q.includeErrMax[bi])
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

func (r *runner) quantSplit(f *modelfile.File, d *pipeline.Data, rows []int, seed uint64, bits []int) (quantSplit, error) {
	var q quantSplit
	K, bins := r.cfg.K, r.cfg.bins
	vote := ptm.Mapping{Kind: ptm.Vote}
	fv, err := pipeline.Evaluate(f, d, rows, K, seed+2000, vote, bins)
	if err != nil {
		return q, err
	}
	fr, err := pipeline.Evaluate(f, d, rows, K, seed+3000, vote, bins)
	if err != nil {
		return q, err
	}
	q.floatVote, q.floatReseed = fv.Report, fr.Report
	q.reseedAgree = agreement(fv.Queries, fr.Queries)
	xs := make([][]bool, len(rows))
	for i, row := range rows {
		if xs[i], err = f.Booleanizer.Encode(d.X[row], nil); err != nil {
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
		qs, err := FixedQueries(core, f.Model, xs, K, uint32(seed)*1000)
		if err != nil {
			return q, fmt.Errorf("%d bits: %w", b, err)
		}
		q.fixed = append(q.fixed, metrics.Evaluate(qs, fv.Labels, bins))
		q.agree = append(q.agree, agreement(qs, fv.Queries))
		var emax, esum float64
		for ta, p := range inc {
			e := math.Abs(bank.Include(ta) - p)
			emax, esum = max(emax, e), esum+e
		}
		q.includeErrMax = append(q.includeErrMax, emax)
		q.includeErrMean = append(q.includeErrMean, esum/float64(len(inc)))
	}
	return q, nil
}

func (r *runner) quantReport(bits []int) string {
	s := r.sum
	var b strings.Builder
	fmt.Fprintf(&b, "## 4. Hardware path: what quantization costs\n\n")
	fmt.Fprintf(&b, "The primary PTMs of section 3 (one per split) quantized with `fixed.Quantize` to B bits and run on the bit-exact core model "+
		"`fixed.Core` with a fixed lane layout (%d clause lanes x %d literal lanes, %d-bit LFSRs, one request seed per test row), K = %d. "+
		"The core accumulates votes, so its probabilities are Stats.Votes / (K * VoteUnit): the vote mapping; the entropy and mutual information use the "+
		"per-sample votes of the fixed-point class sums (their mean is checked against the accumulated votes for every query). "+
		"Agreement is the fraction of test rows whose predicted class equals the float model's under the vote mapping with the same K; "+
		"the float model resampled with another seed gives the agreement that Monte Carlo noise alone allows.\n\n",
		r.cfg.clauseLanes, r.cfg.literalLanes, r.cfg.lfsrWidth, r.cfg.K)
	b.WriteString("| model | accuracy | ECE | NLL | Brier | agreement with float (vote) | mean / max abs. error of P(include) |\n|---|---|---|---|---|---|---|\n")
	row := func(name, p, agree, inc string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, pm(s, p+".accuracy"), pm(s, p+".ece"), pm(s, p+".nll"), pm(s, p+".brier"), agree, inc)
	}
	row("float, "+s.Labels["iris.splits20.ptm.mapping"]+" (section 3)", "quant.float", "-", "-")
	row("float, vote", "quant.float_vote", "1", "0")
	row("float, vote, another seed", "quant.float_vote_reseed", pm(s, "quant.float_vote_reseed.agreement"), "0")
	for _, bb := range bits {
		p := fmt.Sprintf("quant.b%d", bb)
		row(fmt.Sprintf("fixed point, B = %d", bb), p, pm(s, p+".agreement"),
			fmt.Sprintf("%.2g / %.2g", s.get(p+".include_err_mean"), s.get(p+".include_err_max")))
	}
	lo := fmt.Sprintf("quant.b%d", bits[0])
	fmt.Fprintf(&b, "\nAt B = %d the mean ECE is %.3f against %.3f for the float model with the same (vote) mapping (%+.3f) and the accuracy %.3f against %.3f (%+.3f); "+
		"the prediction agreement %.3f compares with %.3f between two float runs with different seeds. ",
		bits[0], s.get(lo+".ece_mean"), s.get("quant.float_vote.ece_mean"), s.get(lo+".ece_mean")-s.get("quant.float_vote.ece_mean"),
		s.get(lo+".accuracy_mean"), s.get("quant.float_vote.accuracy_mean"), s.get(lo+".accuracy_mean")-s.get("quant.float_vote.accuracy_mean"),
		s.get(lo+".agreement_mean"), s.get("quant.float_vote_reseed.agreement_mean"))
	b.WriteString("Differences smaller than the spread over splits are Monte Carlo noise of the K samples, not quantization. " +
		"The hardware has no softmax: a softmax mapping needs every sample's class sums on the host, which the core's accumulated statistics do not carry.\n\n")
	b.WriteString(r.figure("quant_bits.png", "accuracy, agreement and ECE against bit width"))
	b.WriteString("\n")
	return b.String()
}

// plotQuant draws accuracy / agreement and ECE against the bit width, with
// the float (vote) values as horizontal references.
func plotQuant(path string, s *Summary, bits []int) error {
	type ref struct{ key, label string }
	mk := func(title string, keys []string, names []string, refs map[string]ref) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "bits B"
		for i, k := range keys {
			var pts plotter.XYs
			for _, b := range bits {
				pts = append(pts, plotter.XY{X: float64(b), Y: s.get(fmt.Sprintf("quant.b%d.%s_mean", b, k))})
			}
			lp, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			col := []color.Color{colClass1, colClass0}[i%2]
			lp.Color, sc.Color = col, col
			p.Add(lp, sc)
			p.Legend.Add(names[i]+", fixed point", lp, sc)
			if rf, ok := refs[k]; ok {
				v := s.get(rf.key)
				l, err := plotter.NewLine(plotter.XYs{{X: float64(bits[0]), Y: v}, {X: float64(bits[len(bits)-1]), Y: v}})
				if err != nil {
					return nil, err
				}
				l.Color = col
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				p.Add(l)
				p.Legend.Add(rf.label, l)
			}
		}
		return p, nil
	}
	a, err := mk("accuracy and agreement", []string{"accuracy", "agreement"}, []string{"accuracy", "agreement with float"},
		map[string]ref{"accuracy": {"quant.float_vote.accuracy_mean", "accuracy, float (vote)"},
			"agreement": {"quant.float_vote_reseed.agreement_mean", "agreement float vs float (another seed)"}})
	if err != nil {
		return err
	}
	e, err := mk("ECE", []string{"ece"}, []string{"ECE"}, map[string]ref{"ece": {"quant.float_vote.ece_mean", "ECE, float (vote)"}})
	if err != nil {
		return err
	}
	e.Y.Min = 0
	return savePNG(path, 9*vg.Inch, 3.8*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, [][]*plot.Plot{{a, e}}, "Iris PTM on the fixed-point core: mean over splits against bit width")
		return nil
	})
}
