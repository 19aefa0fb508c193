package experiments

import (
	"fmt"
	"math"
	"strings"

	"github.com/ptmhw/ptm/experiments/baseline"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// WithoutClass returns the data set d without the rows of class c,
// relabelled 0..NC-2 in the original class order with the class names
// kept (so a three-class data set becomes a binary one whose classes are
// the other two names), and the feature rows of class c, the
// out-of-distribution rows. The returned data set has no fixed split.
func WithoutClass(d *dataset.Dataset, c int) (*dataset.Dataset, [][]float64, error) {
	nc := len(d.Classes)
	if nc < 3 {
		return nil, nil, fmt.Errorf("experiments: holding out a class needs >= 3 classes, %s has %d", d.Name, nc)
	}
	if c < 0 || c >= nc {
		return nil, nil, fmt.Errorf("experiments: class %d outside [0, %d)", c, nc)
	}
	relabel := make([]int, nc)
	var classes []string
	for k, name := range d.Classes {
		if k == c {
			relabel[k] = -1
			continue
		}
		relabel[k] = len(classes)
		classes = append(classes, name)
	}
	var keep []int
	var held [][]float64
	for i, y := range d.Y {
		if y == c {
			held = append(held, append([]float64(nil), d.X[i]...))
		} else {
			keep = append(keep, i)
		}
	}
	sub := d.Subset(keep)
	sub.Name = d.Name + "-without-" + d.Classes[c]
	sub.Classes = classes
	for i := range sub.Y {
		sub.Y[i] = relabel[sub.Y[i]]
	}
	if err := sub.Validate(); err != nil {
		return nil, nil, fmt.Errorf("experiments: %w", err)
	}
	return sub, held, nil
}

// OODAUROC is the AUROC of score (entropy or mutual information) as a
// detector of out-of-distribution rows: how often a held-out-class row
// scores higher than an in-distribution test row (ties count half). NaN if
// either group is empty.
func OODAUROC(in, out []metrics.QueryStats, score func(metrics.QueryStats) float64) float64 {
	scores := make([]float64, 0, len(in)+len(out))
	pos := make([]bool, 0, len(in)+len(out))
	for _, q := range in {
		scores, pos = append(scores, score(q)), append(pos, false)
	}
	for _, q := range out {
		scores, pos = append(scores, score(q)), append(pos, true)
	}
	return metrics.AUROC(scores, pos)
}

func entropyOf(q metrics.QueryStats) float64 { return q.Entropy }
func miOf(q metrics.QueryStats) float64      { return q.MutualInfo }

// ptmQueries samples the PTM of f K times on every raw row of X (through
// its input encoding) and summarises the samples under mp. X's rows need
// no labels, so rows of a class the model does not know are fine.
func ptmQueries(f *modelfile.File, X [][]float64, K int, seed uint64, mp ptm.Mapping) ([]metrics.QueryStats, error) {
	s := ptm.NewSampler(f.Model, seed)
	out := make([]metrics.QueryStats, len(X))
	var sums []int
	var err error
	for i, x := range X {
		if sums, err = pipeline.SampleRow(f, s, x, K, sums); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out[i] = metrics.Query(f.Model.SumsToProbs(sums, K, mp))
	}
	return out, nil
}

// oodResult holds the out-of-distribution experiment of one data set:
// for every model, held-out class and split, the queries of the
// in-distribution test rows (with their labels) and of the held-out rows.
type oodResult struct {
	classes []string
	splits  int
	subs    []*pipeline.Data // per held-out class: the data without it
	held    [][][]float64    // per held-out class: its rows
	// [model key][class][split]
	in, out map[string][][][]metrics.QueryStats
	labels  [][][]int // [class][split]
}

// oodOut is what one model leaves for the report on one split without
// one class: the queries of the in-distribution test rows and of the
// held-out class's rows.
type oodOut struct{ In, Out []metrics.QueryStats }

// oodUnits prepares the out-of-distribution experiment of res: every class
// held out in turn, oodSplits stratified splits of the remaining rows, each
// model trained (and, for the PTMs, selected) on the training rows of the
// remaining classes only and evaluated on their test rows and on every
// row of the held-out class.
func (r *runner) oodUnits(res *dsResult) (*oodResult, []unit, error) {
	d := res.d
	nc, n := len(d.Classes), res.spec.oodSplits
	o := &oodResult{classes: d.Classes, splits: n, in: map[string][][][]metrics.QueryStats{}, out: map[string][][][]metrics.QueryStats{}}
	for _, m := range dsModels {
		o.in[m.key], o.out[m.key] = make([][][]metrics.QueryStats, nc), make([][][]metrics.QueryStats, nc)
		for c := range nc {
			o.in[m.key][c], o.out[m.key][c] = make([][]metrics.QueryStats, n), make([][]metrics.QueryStats, n)
		}
	}
	o.labels = make([][][]int, nc)
	for c := range nc {
		sub, held, err := WithoutClass(d.Dataset, c)
		if err != nil {
			return nil, nil, err
		}
		sd := &pipeline.Data{Dataset: sub}
		o.subs, o.held = append(o.subs, sd), append(o.held, held)
		o.labels[c] = make([][]int, n)
		for s := range n {
			_, test, err := sd.Split(testFraction, splitSeed(s))
			if err != nil {
				return nil, nil, err
			}
			_, o.labels[c][s] = rowsOf(sd, test)
		}
	}
	size := float64(d.Len()*len(d.Features)) * float64(nc-1) / float64(nc)
	var us []unit
	for c := range nc {
		sub, held := o.subs[c], o.held[c]
		for s := range n {
			seed := splitSeed(s)
			for _, k := range ptmKinds() {
				cost := size * float64(len(res.spec.grid)+1)
				if k.calibrate {
					cost += size * 3
				}
				q := &oodOut{}
				us = append(us, unit{name: fmt.Sprintf("%s.ood.c%d.s%02d.%s", res.spec.key, c, s, k.key), cost: cost, out: q, run: func() error {
					sr, err := k.protocol(sub, res.spec.grid, s, r.cfg)
					if err != nil {
						return fmt.Errorf("OOD without class %s: %w", d.Classes[c], err)
					}
					outQ, err := ptmQueries(sr.Model, held, r.cfg.K, seed+4000, sr.Mapping)
					if err != nil {
						return fmt.Errorf("OOD without class %s, %s, split %d: %w", d.Classes[c], k.key, s, err)
					}
					q.In, q.Out = sr.Eval.Queries, outQ
					return nil
				}, apply: func() { o.in[k.key][c][s], o.out[k.key][c][s] = q.In, q.Out }})
			}
			bq := &[]oodOut{}
			us = append(us, unit{name: fmt.Sprintf("%s.ood.c%d.s%02d.baselines", res.spec.key, c, s), cost: size * 0.5, out: bq, run: func() error {
				if err := r.ctx.Err(); err != nil {
					return err
				}
				train, test, err := sub.Split(testFraction, seed)
				if err != nil {
					return err
				}
				X, y := rowsOf(sub, train)
				Xt, _ := rowsOf(sub, test)
				for i, cl := range newBaselines(seed) {
					m := baselineModels[i]
					if err := cl.Fit(X, y, len(sub.Classes)); err != nil {
						return fmt.Errorf("OOD without class %s, %s, split %d: %w", d.Classes[c], m.name, s, err)
					}
					inQ := make([]metrics.QueryStats, len(Xt))
					for j, x := range Xt {
						if inQ[j], err = baseline.Query(cl, x, r.cfg.K); err != nil {
							return err
						}
					}
					outQ := make([]metrics.QueryStats, len(held))
					for j, x := range held {
						if outQ[j], err = baseline.Query(cl, x, r.cfg.K); err != nil {
							return err
						}
					}
					*bq = append(*bq, oodOut{In: inQ, Out: outQ})
				}
				return nil
			}, apply: func() {
				for i, m := range baselineModels {
					o.in[m.key][c][s], o.out[m.key][c][s] = (*bq)[i].In, (*bq)[i].Out
				}
			}})
		}
	}
	return o, us, nil
}

// oodSummary writes "<d>.ood.<model>.auroc_mi" and ".auroc_entropy" (the
// mean over held-out classes of the AUROC pooled over that class's
// splits), the same per class under ".class_<name>.", and the
// in-distribution accuracy.
func (r *runner) oodSummary(res *dsResult) {
	o, s := res.ood, r.sum
	pre := res.spec.key + ".ood."
	s.set(pre+"splits", float64(o.splits))
	for _, m := range dsModels {
		var mis, ents, accs []float64
		for c, name := range o.classes {
			var in, out []metrics.QueryStats
			var ys []int
			for sp := 0; sp < o.splits; sp++ {
				in, out = append(in, o.in[m.key][c][sp]...), append(out, o.out[m.key][c][sp]...)
				ys = append(ys, o.labels[c][sp]...)
			}
			mi, ent := OODAUROC(in, out, miOf), OODAUROC(in, out, entropyOf)
			acc := metrics.Evaluate(in, ys, r.cfg.bins).Accuracy
			p := pre + m.key + ".class_" + keyName(name) + "."
			s.set(p+"auroc_mi", mi)
			s.set(p+"auroc_entropy", ent)
			s.set(p+"accuracy_in", acc)
			s.set(p+"n_in", float64(len(in)))
			s.set(p+"n_out", float64(len(out)))
			mis, ents, accs = append(mis, mi), append(ents, ent), append(accs, acc)
		}
		s.set(pre+m.key+".auroc_mi", Describe(mis).Mean)
		s.set(pre+m.key+".auroc_entropy", Describe(ents).Mean)
		s.set(pre+m.key+".accuracy_in", Describe(accs).Mean)
	}
	best := ""
	for _, m := range baselineModels {
		if best == "" || finite(s.get(pre+m.key+".auroc_mi"), -1) > finite(s.get(pre+best+".auroc_mi"), -1) {
			best = m.key
		}
	}
	s.label(pre+"best_baseline_mi", best)
}

// keyName turns a class name into a summary-key component.
func keyName(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			return c
		}
		return '_'
	}, s)
}

// oodReport is the section on out-of-distribution detection.
func (r *runner) oodReport() (string, error) {
	s := r.sum
	var b strings.Builder
	b.WriteString("## 6. Out of distribution: a class never seen in training\n\n")
	b.WriteString("Each class of a three-class data set is held out in turn: its rows play no part in training or model selection. " +
		"The remaining rows form a binary problem (relabelled, class names kept; `WithoutClass`), split 80/20 as in section 3 " +
		"(split seeds 1, 2, ...); every model, the PTMs with their validation-only grid search, is trained on the training rows and queried on the " +
		"in-distribution test rows and on every row of the held-out class. The table gives the AUROC of the predictive entropy and of the mutual information " +
		"as detectors of held-out-class rows (ranked above the in-distribution test rows; 0.5 = chance), pooled over the splits of each held-out class, " +
		"then averaged over the classes, and the in-distribution test accuracy.\n\n")
	for _, key := range []string{"iris", "wine"} {
		res, ok := r.ds[key]
		if !ok || res.ood == nil {
			continue
		}
		o := res.ood
		pre := key + ".ood."
		fmt.Fprintf(&b, "### %s (%d splits per held-out class)\n\n", res.spec.name, o.splits)
		b.WriteString("| model | AUROC(MI) | AUROC(entropy) | in-distribution accuracy |")
		for _, c := range o.classes {
			fmt.Fprintf(&b, " MI / entropy, without %s |", c)
		}
		b.WriteString("\n|---|---|---|---|" + strings.Repeat("---|", len(o.classes)) + "\n")
		for _, m := range dsModels {
			p := pre + m.key + "."
			fmt.Fprintf(&b, "| %s | %s | %s | %.3f |", m.name, fmtMaybe(s.get(p+"auroc_mi")), fmtMaybe(s.get(p+"auroc_entropy")), s.get(p+"accuracy_in"))
			for _, c := range o.classes {
				q := p + "class_" + keyName(c) + "."
				fmt.Fprintf(&b, " %s / %s |", fmtMaybe(s.get(q+"auroc_mi")), fmtMaybe(s.get(q+"auroc_entropy")))
			}
			b.WriteString("\n")
		}
		best := s.Labels[pre+"best_baseline_mi"]
		pm, bm := s.get(pre+"ptm.auroc_mi"), s.get(pre+best+".auroc_mi")
		fmt.Fprintf(&b, "\nPTM AUROC(MI) %s against the best baseline's (%s) %s: %s. The plain PTM: %s.\n\n", fmtMaybe(pm), best, fmtMaybe(bm),
			compareWord(pm, bm), fmtMaybe(s.get(pre+"ptm_plain.auroc_mi")))
	}
	return b.String(), nil
}

// compareWord says whether a is at least b.
func compareWord(a, b float64) string {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return "undefined"
	case a >= b:
		return fmt.Sprintf("**at least as high** (%+.3f)", a-b)
	}
	return fmt.Sprintf("**lower** (%+.3f)", a-b)
}
