package experiments

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// SelectionOptions configures SelectionStudy.
type SelectionOptions struct {
	// Data is the data set: its key or pipeline name (iris, wine,
	// breast_cancer or breast-cancer).
	Data string
	// Splits is the number of 80/20 splits (default 20 when OODSplits is
	// 0 too; 0 with OODSplits > 0 runs only the OOD experiment); OODSplits the
	// splits per held-out class of the out-of-distribution experiment
	// (0 = none; needs >= 3 classes).
	Splits, OODSplits int
	// Rules are the selection rules compared (default pipeline.Selections).
	Rules []pipeline.Selection
	// Grid is the PTM grid (default: the full run's grid of the data set);
	// the primary PTM's encoding is applied to it.
	Grid []pipeline.Candidate
	// K is the number of samples per query (default 100).
	K        int
	Progress func(done, total int)
	// ChoicesOnly skips the test rows: per split (First.. First+Splits-1)
	// only the validation step runs and the table lists each rule's choice
	// and every candidate's validation scores.
	ChoicesOnly bool
	// First is the first split (the splits run are First..First+Splits-1).
	First int
	// Partial, if set, is called after every finished split with the
	// table over the splits finished so far.
	Partial func(table string)
	// Base, if > 0, adds for every rule a row that chooses among the
	// first Base grid candidates only (on the same validation scores and
	// test samples), so that a grid and a widened grid are compared on
	// the same splits in one run.
	Base int
	// CV adds, for every rule, a row that chooses by inner
	// cross-validation on the training rows (pipeline.ScoreGridCV) instead
	// of the single validation carve, on the same splits; each chosen
	// candidate is calibrated on its out-of-fold samples (the same mapping
	// as pipeline.Calibrate's). It also adds a table that compares the
	// two choices on the training rows alone (foldOut): for the first
	// rule, per inner fold held out, a choice on one other fold (a carve)
	// against a choice on the other folds pooled, both scored on the
	// held-out fold.
	CV bool
	// CVOnly (implies CV) skips the single validation carve: only the
	// inner cross-validation's choices are made and reported (half the
	// validation trainings of CV; the training-rows table still compares
	// a one-fold carve with the pooled folds, from the same out-of-fold
	// samples). With Base, the CV rows and the training-rows table also
	// choose among the first Base candidates and among the others alone.
	CVOnly bool
}

// ruleVariant is a selection rule applied to the first n candidates.
type ruleVariant struct {
	rule pipeline.Selection
	lo   int // candidates lo..n-1
	n    int
	name string
	cv   bool // choose on the inner cross-validation's scores
}

// selOutcome is what one selection rule gave on one split: the test
// result of the candidate it chose.
type selOutcome struct {
	chosen int
	sr     pipeline.SplitResult
	outQ   []metrics.QueryStats // OOD: the held-out rows' queries
}

// SelectionStudy compares model-selection rules for the primary PTM
// (pipeline.DefaultEncoding, DefaultMapping, DefaultCalibrate) on one data
// set under the protocol of the full run: per split every grid candidate is
// trained on the fit rows and scored on the validation rows once; each rule
// picks a candidate from these scores (validation rows only); each picked
// candidate is retrained on all training rows, calibrated and evaluated on
// the test rows (once, however many rules picked it). The test rows are
// used for the report only. With OODSplits, the same is done with each
// class held out in turn (as the full run's section 6: held-out rows
// sampled with seed split+4000) and the AUROC of MI and entropy as
// detectors of held-out rows is reported. It returns a markdown table,
// one row per rule.
func SelectionStudy(ctx context.Context, opt SelectionOptions) (string, error) {
	full, spec, err := studySpec("selection", opt.Data)
	if err != nil {
		return "", err
	}
	if opt.Splits == 0 && opt.OODSplits == 0 {
		opt.Splits = 20
	}
	if opt.Rules == nil {
		opt.Rules = pipeline.Selections
	}
	if opt.Grid == nil {
		opt.Grid = spec.grid
	}
	if opt.K == 0 {
		opt.K = 100
	}
	d, err := pipeline.LoadData(spec.data, "")
	if err != nil {
		return "", err
	}
	k := ptmKinds()[0]
	pc := pipeline.ProtocolConfig{TestFraction: testFraction, K: opt.K, Bins: full.bins,
		Grid: k.withEncoding(opt.Grid), Calibrate: k.calibrate, Mapping: k.mapping}
	if opt.Base < 0 || opt.Base > len(opt.Grid) {
		return "", fmt.Errorf("experiments: selection study: base %d outside the grid's %d candidates", opt.Base, len(opt.Grid))
	}
	if opt.CVOnly {
		opt.CV = true
	}
	G := len(opt.Grid)
	split := opt.Base > 0 && opt.Base < G
	var variants []ruleVariant
	for _, r := range opt.Rules {
		if !opt.CVOnly {
			variants = append(variants, ruleVariant{r, 0, G, string(r), false})
			if split {
				variants = append(variants, ruleVariant{r, 0, opt.Base, fmt.Sprintf("%s, first %d candidates", r, opt.Base), false})
			}
		}
		if opt.CV {
			cvName := fmt.Sprintf("%s, inner %d-fold CV", r, pipeline.CalibrationFolds)
			variants = append(variants, ruleVariant{r, 0, G, cvName, true})
			if split && opt.CVOnly {
				variants = append(variants, ruleVariant{r, 0, opt.Base, fmt.Sprintf("%s, first %d candidates", cvName, opt.Base), true},
					ruleVariant{r, opt.Base, G, fmt.Sprintf("%s, candidates %d-%d", cvName, opt.Base+1, G), true})
			}
		}
	}
	base := 0
	if split && opt.CVOnly {
		base = opt.Base
	}
	nr := len(variants)
	if opt.ChoicesOnly {
		return choicesTable(ctx, d, pc, opt)
	}
	// runSplit scores the grid on split s of data dd and finishes the
	// candidate each rule picks; held, if any, are OOD rows to query.
	runSplit := func(dd *pipeline.Data, s int, held [][]float64) ([]selOutcome, *foldOutcome, error) {
		var val []pipeline.ValScore
		var err error
		if !opt.CVOnly {
			if val, err = pipeline.ScoreGrid(dd, pc, s); err != nil {
				return nil, nil, err
			}
		}
		var cvVal []pipeline.ValScore
		var oof []*pipeline.Samples
		var fo *foldOutcome
		if opt.CV {
			if cvVal, oof, err = pipeline.ScoreGridCV(dd, pc, s); err != nil {
				return nil, nil, err
			}
			if held == nil {
				if fo, err = foldOut(oof, opt.Rules[0], k.mapping, k.calibrate, full.bins, base); err != nil {
					return nil, nil, err
				}
			}
		}
		done := map[int]selOutcome{}
		out := make([]selOutcome, nr)
		for i, rv := range variants {
			v := val
			if rv.cv {
				v = cvVal
			}
			c := rv.lo + rv.rule.Choose(v[rv.lo:rv.n])
			o, ok := done[c]
			if !ok {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				var reuse *pipeline.Samples
				if oof != nil {
					reuse = oof[c]
				}
				sr, err := pipeline.FinishSplitOOF(dd, pc, s, pc.Grid[c], reuse)
				if err != nil {
					return nil, nil, err
				}
				sr.Val, sr.ValAccuracy = v, v[c].Report.Accuracy
				o = selOutcome{chosen: c, sr: sr}
				if held != nil {
					if o.outQ, err = ptmQueries(sr.Model, held, opt.K, splitSeed(s)+4000, sr.Mapping); err != nil {
						return nil, nil, err
					}
				}
				o.sr.Model = nil // not needed any more
				done[c] = o
			}
			out[i] = o
		}
		return out, fo, nil
	}

	tasks, subs, helds, err := studyTasks(d, opt.First, opt.Splits, opt.OODSplits)
	if err != nil {
		return "", err
	}
	results := make([][]selOutcome, len(tasks))
	folds := make([]*foldOutcome, len(tasks))
	var n atomic.Int32
	var mu sync.Mutex

	table := func() string {
		var b strings.Builder
		nIn, nOOD := 0, 0
		for i, t := range tasks {
			switch {
			case results[i] == nil:
			case t.class < 0:
				nIn++
			default:
				nOOD++
			}
		}
		fmt.Fprintf(&b, "%s, primary PTM, %d splits, K = %d, grid %s; pooled = over the test rows of all splits", d.Name, nIn, opt.K, gridName(opt.Grid))
		if opt.OODSplits > 0 {
			fmt.Fprintf(&b, "; OOD: each class held out, %d splits each (%d of %d done), AUROC pooled per class then averaged", opt.OODSplits, nOOD, len(tasks)-opt.Splits)
		}
		b.WriteString("\n\n| rule | accuracy (mean) | pooled ECE | per-split ECE (mean) | calibrated floor of the per-split ECE | pooled NLL | AUROC(entropy) | AUROC(MI) | OOD AUROC(MI) | OOD AUROC(entropy) | chosen | temperature (mean) |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for ri, rv := range variants {
			var qs []metrics.QueryStats
			var ys []int
			var acc, temp, ece, floor float64
			count := make([]int, len(opt.Grid))
			inQ := make([][]metrics.QueryStats, len(subs))
			outQ := make([][]metrics.QueryStats, len(subs))
			for i, t := range tasks {
				if results[i] == nil {
					continue
				}
				o := results[i][ri]
				if t.class >= 0 {
					inQ[t.class] = append(inQ[t.class], o.sr.Eval.Queries...)
					outQ[t.class] = append(outQ[t.class], o.outQ...)
					continue
				}
				qs, ys = append(qs, o.sr.Eval.Queries...), append(ys, o.sr.Eval.Labels...)
				acc += o.sr.Report.Accuracy
				ece += o.sr.Report.ECE
				floor += CalibratedECE(o.sr.Eval.Queries, full.bins, 200, uint64(t.split)+7000)
				temp += o.sr.Mapping.Temperature
				count[o.chosen]++
			}
			rep := metrics.Evaluate(qs, ys, full.bins)
			oodMI, oodH := math.NaN(), math.NaN()
			if len(subs) > 0 {
				var mis, hs []float64
				for c := range subs {
					if len(outQ[c]) == 0 {
						continue
					}
					mis = append(mis, OODAUROC(inQ[c], outQ[c], miOf))
					hs = append(hs, OODAUROC(inQ[c], outQ[c], entropyOf))
				}
				oodMI, oodH = Describe(mis).Mean, Describe(hs).Mean
			}
			var ch []string
			names, _ := gridLabels(opt.Grid)
			for c := range opt.Grid {
				ch = append(ch, fmt.Sprintf("%s: %d", names[c], count[c]))
			}
			fmt.Fprintf(&b, "| %s | %.4f | %.4f | %.4f | %.4f | %.3f | %s | %s | %s | %s | %s | %.3g |\n", rv.name, acc/float64(nIn), rep.ECE, ece/float64(nIn), floor/float64(nIn), rep.NLL,
				fmtMaybe(rep.AUROCEntropy), fmtMaybe(rep.AUROCMI), fmtMaybe(oodMI), fmtMaybe(oodH), strings.Join(ch, ", "), temp/float64(nIn))
		}
		if opt.CV {
			b.WriteString(foldOutTable(folds, opt.Rules[0], full.bins, gridLabelsOf(opt.Grid), base))
		}
		return b.String()
	}
	err = parallel(ctx, len(tasks), func(i int) error {
		t := tasks[i]
		var res []selOutcome
		var fo *foldOutcome
		var err error
		if t.class < 0 {
			res, fo, err = runSplit(d, t.split, nil)
		} else {
			res, _, err = runSplit(subs[t.class], t.split, helds[t.class])
		}
		mu.Lock()
		results[i], folds[i] = res, fo
		mu.Unlock()
		if err != nil {
			return fmt.Errorf("task %d (class %d, split %d): %w", i, t.class, t.split, err)
		}
		if opt.Partial != nil {
			mu.Lock()
			opt.Partial(table())
			mu.Unlock()
		}
		if opt.Progress != nil {
			opt.Progress(int(n.Add(1)), len(tasks))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return table(), nil
}

// choicesTable runs only the validation step of splits opt.First..
// opt.First+opt.Splits-1 and tabulates each rule's choice with every
// candidate's validation accuracy, NLL (temperature 1), fitted NLL (and
// temperature) and AUROC(entropy).
func choicesTable(ctx context.Context, d *pipeline.Data, pc pipeline.ProtocolConfig, opt SelectionOptions) (string, error) {
	vals := make([][]pipeline.ValScore, opt.Splits)
	var n atomic.Int32
	var mu sync.Mutex
	table := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "%s, validation rows only, K = %d; per candidate: accuracy / NLL / fitted NLL (temperature) / AUROC(entropy)\n\n| split |", d.Name, opt.K)
		for _, r := range opt.Rules {
			fmt.Fprintf(&b, " %s |", r)
		}
		names, _ := gridLabels(opt.Grid)
		for _, n := range names {
			fmt.Fprintf(&b, " %s |", n)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(opt.Rules)+len(opt.Grid)) + "\n")
		agree := 0
		done := 0
		for i, v := range vals {
			if v == nil {
				continue
			}
			done++
			fmt.Fprintf(&b, "| %d |", opt.First+i)
			same := true
			for _, r := range opt.Rules {
				c := r.Choose(v)
				same = same && c == opt.Rules[0].Choose(v)
				fmt.Fprintf(&b, " %s |", names[c])
			}
			if same {
				agree++
			}
			for _, x := range v {
				fmt.Fprintf(&b, " %.3f / %.3f / %.3f (%.3g) / %s |", x.Report.Accuracy, x.Report.NLL, x.FittedReport.NLL, x.Fitted.Temperature, fmtMaybe(x.Report.AUROCEntropy))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\nAll rules agree on %d of %d splits.\n", agree, done)
		return b.String()
	}
	err := parallel(ctx, opt.Splits, func(i int) error {
		v, err := pipeline.ScoreGrid(d, pc, opt.First+i)
		if err != nil {
			return err
		}
		mu.Lock()
		vals[i] = v
		if opt.Partial != nil {
			opt.Partial(table())
		}
		mu.Unlock()
		if opt.Progress != nil {
			opt.Progress(int(n.Add(1)), opt.Splits)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return table(), nil
}

// foldOutcome is what foldOut found on one split: the held-out folds'
// queries and labels under the carve's choices (one per other fold, so
// every held-out row three times) and under the pooled folds' choice
// (once), and how often the two choices differed.
type foldOutcome struct {
	carveQ, cvQ         []metrics.QueryStats
	carveY, cvY         []int
	carveN, cvN         []int // per candidate: times chosen
	differ, comparisons int
	// With a base: the pooled folds' choice among the first base
	// candidates ([0]) and among the others ([1]).
	partQ [2][]metrics.QueryStats
	partY [2][]int
	partN [2][]int
}

// foldOut compares, on one split's training rows alone, a grid choice on a
// single validation carve with one on pooled folds. oof holds every
// candidate's out-of-fold samples (pipeline.ScoreGridCV, rows in fold
// order). For each fold i held out: the carve rule chooses on one other
// fold j alone (25% of the training rows, for each of the other j in
// turn), the CV rule on all the other folds pooled; each choice's samples
// of fold i are then mapped (with calibrate, the mapping's parameter
// fitted on the other folds' samples of that candidate, temperature floor
// as pipeline.Calibrate's) and kept. No choice sees fold i. With 0 < base
// < len(oof), the pooled folds also choose among the first base
// candidates alone and among the others alone.
func foldOut(oof []*pipeline.Samples, rule pipeline.Selection, mp ptm.Mapping, calibrate bool, bins, base int) (*foldOutcome, error) {
	sizes := pipeline.FoldSizes(oof[0].Len())
	lo := make([]int, len(sizes)+1)
	for i, n := range sizes {
		lo[i+1] = lo[i] + n
	}
	fold := func(c, i int) *pipeline.Samples { return oof[c].Slice(lo[i], lo[i+1]) }
	others := func(c, i int) *pipeline.Samples {
		var parts []*pipeline.Samples
		for j := range sizes {
			if j != i {
				parts = append(parts, fold(c, j))
			}
		}
		return pipeline.Join(parts...)
	}
	cLo, cHi := 0, len(oof) // the candidates score chooses among
	score := func(get func(c int) *pipeline.Samples) (int, error) {
		v := make([]pipeline.ValScore, cHi-cLo)
		for c := cLo; c < cHi; c++ {
			var err error
			if v[c-cLo], err = get(c).Score(mp, bins); err != nil {
				return 0, err
			}
		}
		return cLo + rule.Choose(v), nil
	}
	fo := &foldOutcome{carveN: make([]int, len(oof)), cvN: make([]int, len(oof))}
	fo.partN[0], fo.partN[1] = make([]int, len(oof)), make([]int, len(oof))
	for i := range sizes {
		mapped := func(c int) ([]metrics.QueryStats, []int, error) {
			m := mp
			if calibrate {
				o := others(c, i)
				var err error
				if m, err = o.FitAbove(mp.Kind, pipeline.DefaultTemperatureFloor*float64(o.ClipT())); err != nil {
					return nil, nil, err
				}
			}
			f := fold(c, i)
			return f.Queries(m), f.Labels(), nil
		}
		// choose picks a candidate on the rows get returns and maps the
		// held-out fold i with it.
		choose := func(get func(c int) *pipeline.Samples) (int, []metrics.QueryStats, []int, error) {
			c, err := score(get)
			if err != nil {
				return 0, nil, nil, err
			}
			q, y, err := mapped(c)
			return c, q, y, err
		}
		cv, q, y, err := choose(func(c int) *pipeline.Samples { return others(c, i) })
		if err != nil {
			return nil, err
		}
		fo.cvQ, fo.cvY = append(fo.cvQ, q...), append(fo.cvY, y...)
		fo.cvN[cv]++
		if base > 0 && base < len(oof) {
			for p, r := range [2][2]int{{0, base}, {base, len(oof)}} {
				cLo, cHi = r[0], r[1]
				c, q, y, err := choose(func(c int) *pipeline.Samples { return others(c, i) })
				if err != nil {
					return nil, err
				}
				fo.partQ[p], fo.partY[p] = append(fo.partQ[p], q...), append(fo.partY[p], y...)
				fo.partN[p][c]++
			}
			cLo, cHi = 0, len(oof)
		}
		for j := range sizes {
			if j == i {
				continue
			}
			ca, q, y, err := choose(func(c int) *pipeline.Samples { return fold(c, j) })
			if err != nil {
				return nil, err
			}
			fo.carveQ, fo.carveY = append(fo.carveQ, q...), append(fo.carveY, y...)
			fo.carveN[ca]++
			fo.comparisons++
			if ca != cv {
				fo.differ++
			}
		}
	}
	return fo, nil
}

// foldOutTable tabulates foldOut's outcomes over the splits done.
func foldOutTable(fos []*foldOutcome, rule pipeline.Selection, bins int, names []string, base int) string {
	var cq, vq []metrics.QueryStats
	var cy, vy []int
	cn, vn := make([]int, len(names)), make([]int, len(names))
	var pq [2][]metrics.QueryStats
	var py [2][]int
	pn := [2][]int{make([]int, len(names)), make([]int, len(names))}
	differ, comps, splits := 0, 0, 0
	for _, fo := range fos {
		if fo == nil {
			continue
		}
		splits++
		cq, cy = append(cq, fo.carveQ...), append(cy, fo.carveY...)
		vq, vy = append(vq, fo.cvQ...), append(vy, fo.cvY...)
		for c := range names {
			cn[c] += fo.carveN[c]
			vn[c] += fo.cvN[c]
		}
		for p := range 2 {
			pq[p], py[p] = append(pq[p], fo.partQ[p]...), append(py[p], fo.partY[p]...)
			for c := range fo.partN[p] {
				pn[p][c] += fo.partN[p][c]
			}
		}
		differ += fo.differ
		comps += fo.comparisons
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nTraining rows only (%d splits, rule %s): each inner fold held out in turn; \"carve\" chooses on one other fold (each of the %d in turn, so every held-out row counts %d times), \"cv\" on the other folds pooled; both scored on the held-out fold. The choices differ in %d of %d comparisons.\n\n",
		splits, rule, pipeline.CalibrationFolds-1, pipeline.CalibrationFolds-1, differ, comps)
	b.WriteString("| choice | rows | accuracy | pooled ECE | NLL | AUROC(entropy) | AUROC(MI) | chosen |\n|---|---|---|---|---|---|---|---|\n")
	row := func(name string, q []metrics.QueryStats, y, n []int) {
		if len(q) == 0 {
			return
		}
		r := metrics.Evaluate(q, y, bins)
		var ch []string
		for c := range names {
			ch = append(ch, fmt.Sprintf("%s: %d", names[c], n[c]))
		}
		fmt.Fprintf(&b, "| %s | %d | %.4f | %.4f | %.4f | %s | %s | %s |\n", name, len(q), r.Accuracy, r.ECE, r.NLL, fmtMaybe4(r.AUROCEntropy), fmtMaybe4(r.AUROCMI), strings.Join(ch, ", "))
	}
	row("carve (one fold)", cq, cy, cn)
	row("cv (other folds pooled)", vq, vy, vn)
	if base > 0 {
		row(fmt.Sprintf("cv, first %d candidates", base), pq[0], py[0], pn[0])
		row(fmt.Sprintf("cv, candidates %d-%d", base+1, len(names)), pq[1], py[1], pn[1])
	}
	return b.String()
}

// gridLabelsOf returns the grid's candidate names.
func gridLabelsOf(g []pipeline.Candidate) []string {
	names, _ := gridLabels(g)
	return names
}

// fmtMaybe4 is fmtMaybe with four decimals (the training-rows table, whose
// decision rules compare AUROCs to 0.01).
func fmtMaybe4(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}
