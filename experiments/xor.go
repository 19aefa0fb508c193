package experiments

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// xorLiterals lists the literals of the 2-feature XOR model in the paper's
// TA order (TA-1..TA-4 = x1, NOT x1, x2, NOT x2): literal index, display
// name and summary-key name. Literals 0..1 are x1, x2 and 2..3 their
// negations.
var xorLiterals = []struct {
	index     int
	name, key string
}{{0, "x1", "x1"}, {2, "NOT x1", "not_x1"}, {1, "x2", "x2"}, {3, "NOT x2", "not_x2"}}

// clauseName is the name `ptm inspect` uses: C+j votes for class 1 (even
// j), C-j against it.
func clauseName(j int) string {
	if j%2 == 0 {
		return fmt.Sprintf("C+%d", j)
	}
	return fmt.Sprintf("C-%d", j)
}

// xorParams are the paper's XOR settings.
func (r *runner) xorParams() ptm.Params {
	return ptm.Params{Clauses: 4, T: 2, S: 3.9, N: 8, Epochs: r.cfg.xorEpochs, Seed: 1, Feedback: ptm.ConsistentFeedback}
}

// xorVariants are the two XOR data sets.
var xorVariants = []struct{ key, data, title string }{
	{"clean", pipeline.XOR, "without noise"},
	{"noisy", pipeline.XORNoisy, "with 30% label noise"},
}

// xorOut is what one XOR model leaves for the report: its test accuracy,
// its SPVs and include masses (Model's unexported state does not travel
// through a shard's file, so Include keeps Model.IncludeAll).
type xorOut struct {
	Accuracy float64
	Model    *ptm.Model
	Include  []float64
}

// include is P(include) of TA (0, clause, literal).
func (o *xorOut) include(clause, literal int) float64 {
	return o.Include[o.Model.TAIndex(0, clause, literal)]
}

// planXOR declares one unit per XOR data set: the paper's 4-clause PTM
// trained and evaluated on it.
func (r *runner) planXOR() ([]unit, error) {
	p := r.xorParams()
	r.xorOut = make([]xorOut, len(xorVariants))
	var us []unit
	for i, v := range xorVariants {
		o := &r.xorOut[i]
		us = append(us, unit{name: "xor." + v.key, cost: 1000, out: o, run: func() error {
			d, err := pipeline.LoadData(v.data, "")
			if err != nil {
				return err
			}
			f, err := pipeline.Train(d, pipeline.TrainConfig{Params: p, SplitSeed: 1})
			if err != nil {
				return fmt.Errorf("train %s: %w", v.data, err)
			}
			ev, err := pipeline.Evaluate(f, d, f.Split.Test, r.cfg.K, 1, pipeline.DefaultMapping, r.cfg.bins)
			if err != nil {
				return fmt.Errorf("evaluate %s: %w", v.data, err)
			}
			*o = xorOut{Accuracy: ev.Report.Accuracy, Model: f.Model, Include: append([]float64(nil), f.Model.IncludeAll()...)}
			return nil
		}})
	}
	return us, nil
}

// xor reports the paper's 4-clause PTM on the noise-free and the 30%-noise
// XOR and plots every automaton's SPV.
func (r *runner) xor() (string, error) {
	var b strings.Builder
	p := r.xorParams()
	fmt.Fprintf(&b, "## 1. Noisy XOR: learned state probabilities (paper Figs. 1-2)\n\n")
	fmt.Fprintf(&b, "Settings of docs/noisy-xor.md: m = %d clauses, T = %d, s = %g, N = %d (2N = %d states), %d epochs, seed %d, %s feedback; "+
		"data `pipeline.LoadData(\"xor\")` and `(\"xor-noisy\")` (1000 rows, 30%% of the labels flipped in the noisy one), "+
		"80/20 split with seed 1, test accuracy with K = %d samples and the %s mapping.\n\n",
		p.Clauses, p.T, p.S, p.N, 2*p.N, p.Epochs, p.Seed, p.Feedback, r.cfg.K, mappingName(pipeline.DefaultMapping))
	variants := xorVariants
	files := r.xorOut
	for i, v := range variants {
		o := &files[i]
		r.sum.set("xor."+v.key+".accuracy", o.Accuracy)
		for j := 0; j < p.Clauses; j++ {
			for _, l := range xorLiterals {
				r.sum.set(fmt.Sprintf("xor.%s.include.c%d.%s", v.key, j, l.key), o.include(j, l.index))
			}
		}
		name := "xor_spv_" + v.key + ".png"
		if err := plotSPVs(filepath.Join(r.out, name), o, "State probabilities of every TA, XOR "+v.title); err != nil {
			return "", err
		}
	}
	r.sum.set("xor.noisy.accuracy_ceiling", 0.7)

	fmt.Fprintf(&b, "P(include) of every automaton (the include mass, states N+1..2N); C+j clauses vote for class 1, C-j against it:\n\n")
	fmt.Fprintf(&b, "| clause |")
	for _, v := range variants {
		for _, l := range xorLiterals {
			fmt.Fprintf(&b, " %s (%s) |", l.name, v.key)
		}
	}
	fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("---|", 2*len(xorLiterals)))
	for j := 0; j < p.Clauses; j++ {
		fmt.Fprintf(&b, "| %s |", clauseName(j))
		for _, v := range variants {
			for _, l := range xorLiterals {
				fmt.Fprintf(&b, " %.3f |", r.sum.get(fmt.Sprintf("xor.%s.include.c%d.%s", v.key, j, l.key)))
			}
		}
		fmt.Fprintln(&b)
	}
	fmt.Fprintf(&b, "\nTest accuracy: %.3f without noise, %.3f with noise (noisy test labels: the ceiling is 0.70).\n\n",
		r.sum.get("xor.clean.accuracy"), r.sum.get("xor.noisy.accuracy"))
	fmt.Fprintf(&b, "Without noise every automaton should sit at P(include) 0 or 1 and the four clauses should be the four XOR patterns; "+
		"with noise, as in the paper's Fig. 2, some clauses keep their probability mass spread over several states and literals. "+
		"Here %d of 16 automata are undecided (0.05 < P(include) < 0.95) without noise and %d with noise.\n\n",
		undecided(&files[0]), undecided(&files[1]))
	b.WriteString(r.figure("xor_spv_clean.png", "SPVs, XOR without noise"))
	b.WriteString("\n")
	b.WriteString(r.figure("xor_spv_noisy.png", "SPVs, XOR with 30% label noise"))
	r.sum.set("xor.clean.undecided", float64(undecided(&files[0])))
	r.sum.set("xor.noisy.undecided", float64(undecided(&files[1])))
	return b.String(), nil
}

// undecided counts the automata of TM 0 with 0.05 < P(include) < 0.95.
func undecided(o *xorOut) int {
	n, m := 0, o.Model
	for j := 0; j < m.Clauses; j++ {
		for i := 0; i < m.NumLiterals(); i++ {
			if v := o.include(j, i); v > 0.05 && v < 0.95 {
				n++
			}
		}
	}
	return n
}

// plotSPVs draws one bar chart per (clause, literal) of TM 0: the
// probability of each of the 2N states, exclude states grey, include states
// blue, on a common [0, 1] scale.
func plotSPVs(path string, o *xorOut, title string) error {
	m := o.Model
	n := m.N
	rows := make([][]*plot.Plot, m.Clauses)
	for j := range rows {
		for _, l := range xorLiterals {
			spv := m.TASPV(0, j, l.index)
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s, %s: P(inc) = %.2f", clauseName(j), l.name, o.include(j, l.index))
			p.Title.TextStyle.Font.Size = vg.Points(9)
			exc, err := plotter.NewBarChart(plotter.Values(spv[:n]), vg.Points(6))
			if err != nil {
				return err
			}
			exc.Color, exc.LineStyle.Width = colExclude, 0
			exc.XMin = 1
			inc, err := plotter.NewBarChart(plotter.Values(spv[n:]), vg.Points(6))
			if err != nil {
				return err
			}
			inc.Color, inc.LineStyle.Width = colInclude, 0
			inc.XMin = float64(n + 1)
			p.Add(exc, inc)
			p.Y.Min, p.Y.Max = 0, 1
			p.X.Min, p.X.Max = 0.3, float64(2*n)+0.7
			p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 1, Label: "1"}, {Value: float64(n), Label: fmt.Sprint(n)}, {Value: float64(n + 1), Label: fmt.Sprint(n + 1)}, {Value: float64(2 * n), Label: fmt.Sprint(2 * n)}})
			if j == m.Clauses-1 {
				p.X.Label.Text = "state"
			}
			rows[j] = append(rows[j], p)
		}
	}
	return savePNG(path, 10*vg.Inch, 8*vg.Inch, func(dc draw.Canvas) error {
		drawGrid(dc, rows, title+" (grey: exclude states, blue: include states)")
		return nil
	})
}

// mappingName describes a probability mapping.
func mappingName(mp ptm.Mapping) string {
	switch {
	case mp.Kind == ptm.Softmax:
		return fmt.Sprintf("softmax (temperature %g)", mp.Temperature)
	case mp.Kind == ptm.Vote && mp.Smoothing > 0:
		return fmt.Sprintf("vote (smoothing %g)", mp.Smoothing)
	}
	return string(mp.Kind)
}
