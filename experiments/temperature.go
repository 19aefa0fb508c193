package experiments

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TemperatureOptions configures TemperatureStudy.
type TemperatureOptions struct {
	// Data is the data set (iris, wine, breast_cancer or breast-cancer).
	Data string
	// Splits is the number of 80/20 splits, the first being First;
	// OODSplits the splits per held-out class of the out-of-distribution
	// experiment (0 = none).
	Splits, First, OODSplits int
	// Grid is the PTM grid (default: the full run's grid of the data set);
	// the primary PTM's encoding is applied to it.
	Grid []pipeline.Candidate
	// K is the number of samples per query (default 100).
	K        int
	Progress func(done, total int)
	// Partial, if set, is called after every finished split with the
	// tables over the splits finished so far.
	Partial func(table string)
	// Dump, if set, receives the samples of every finished task (gob),
	// rewritten after each; Load, if set, holds such dumps: the study
	// re-maps their finished tasks (matched by held-out class and split;
	// tasks the options list but no dump holds are left out) instead of
	// training and sampling.
	Dump func(b []byte)
	Load [][]byte
}

// tempDump is the stored form of a temperature study's samples.
type tempDump struct {
	Classes []int // per task: -1 or the held-out class
	Splits  []int
	Chosen  []int
	// Per task; a task not finished has Chosen -1 and empty samples, a
	// task without held-out rows empty Held (gob cannot store nil
	// pointers in a slice).
	OOF  []pipeline.SamplesData
	Test []pipeline.SamplesData
	Held []pipeline.SamplesData
}

// tempSplit is what one split of the temperature study sampled once: the
// out-of-fold samples of the training rows (pipeline.OutOfFold), the test
// rows' samples and, for OOD tasks, the held-out class's samples, all of
// the candidate the protocol chose (validation accuracy, then NLL).
type tempSplit struct {
	chosen          int
	oof, test, held *pipeline.Samples
}

// TempRule is a way of fitting the per-sample softmax temperature from the
// out-of-fold predictions of the training rows (never the test rows).
type TempRule struct {
	Name string
	// Fit returns the per-sample mapping and, if not nil, a transform of
	// the predictive mean applied after it (a final calibration).
	Fit func(oof *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats)
}

// tempFloorRule names the rules that fit by NLL above a floor in units of
// T; defaultTempRule is the one pipeline.Calibrate applies by default.
const tempFloorRule = "nll, temperature >= %g T"

var defaultTempRule = fmt.Sprintf(tempFloorRule, pipeline.DefaultTemperatureFloor)

// TempRules are the rules the temperature study compares.
func TempRules() []TempRule {
	rs := []TempRule{{Name: "nll, grid 1/16..16 (current)", Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
		return fitSoftmaxGrid(o, -16, 16), nil
	}}}
	for _, lo := range []int{-4, 0} {
		rs = append(rs, TempRule{Name: fmt.Sprintf("nll, grid %.3g..16", math.Pow(2, float64(lo)/4)), Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
			return fitSoftmaxGrid(o, lo, 16), nil
		}})
	}
	for _, frac := range []float64{0.05, 0.1, 0.2} {
		rs = append(rs, TempRule{Name: fmt.Sprintf(tempFloorRule, frac), Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
			mp, _ := o.FitAbove(ptm.Softmax, frac*float64(o.ClipT())) // cannot fail for softmax
			return mp, nil
		}})
		rs = append(rs, TempRule{Name: fmt.Sprintf("fixed %g T", frac), Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
			return ptm.Mapping{Kind: ptm.Softmax, Temperature: frac * float64(o.ClipT())}, nil
		}})
	}
	for _, sigma := range []float64{0.5, 1} {
		rs = append(rs, TempRule{Name: fmt.Sprintf("map, log2 temperature ~ N(0, %g^2)", sigma), Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
			return fitSoftmaxMAP(o, sigma), nil
		}})
	}
	rs = append(rs, TempRule{Name: "posterior mean of log temperature (flat prior on the grid)", Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
		var ls, ws []float64
		minN := math.Inf(1)
		for e := -16; e <= 16; e++ {
			n := o.NLL(ptm.Mapping{Kind: ptm.Softmax, Temperature: math.Pow(2, float64(e)/4)}) * float64(o.Len())
			ls, ws = append(ls, float64(e)/4), append(ws, n)
			minN = math.Min(minN, n)
		}
		var z, m float64
		for i := range ls {
			w := math.Exp(-(ws[i] - minN))
			z += w
			m += w * ls[i]
		}
		return ptm.Mapping{Kind: ptm.Softmax, Temperature: math.Pow(2, m/z)}, nil
	}})
	for _, t := range []float64{0.0625, 0.25, 0.5, 1, 2, 4} {
		rs = append(rs, TempRule{Name: fmt.Sprintf("fixed %g", t), Fit: func(*pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
			return ptm.Mapping{Kind: ptm.Softmax, Temperature: t}, nil
		}})
	}
	rs = append(rs, TempRule{Name: "auroc(entropy) on OOF, then nll", Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
		best, bestA, bestN := ptm.Mapping{}, math.Inf(-1), math.Inf(1)
		for e := -16; e <= 16; e++ {
			mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: math.Pow(2, float64(e)/4)}
			rep := metrics.Evaluate(o.Queries(mp), o.Labels(), 0)
			a := finite(rep.AUROCEntropy, -1)
			if a > bestA+1e-12 || (math.Abs(a-bestA) <= 1e-12 && rep.NLL < bestN) {
				best, bestA, bestN = mp, a, rep.NLL
			}
		}
		return best, nil
	}})
	for _, ts := range []float64{1, 4} {
		rs = append(rs, TempRule{Name: fmt.Sprintf("per-sample %g, final temperature on the mean by nll", ts), Fit: func(o *pipeline.Samples) (ptm.Mapping, func([]metrics.QueryStats) []metrics.QueryStats) {
			mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: ts}
			qs, ys := o.Queries(mp), o.Labels()
			bestT, bestN := 1.0, math.Inf(1)
			for e := -16; e <= 16; e++ {
				T := math.Pow(2, float64(e)/4)
				var n float64
				for i, q := range qs {
					n -= math.Log(math.Max(powMean(q.Mean, T)[ys[i]], metrics.NLLFloor))
				}
				if n < bestN {
					bestT, bestN = T, n
				}
			}
			return mp, func(in []metrics.QueryStats) []metrics.QueryStats { return finalTemp(in, bestT) }
		}})
	}
	return rs
}

// nestedQueries maps every fold of oof (pipeline.FoldSizes) with what the
// rule fits on the other folds: a validation of the fit itself on the
// training rows only.
func nestedQueries(rule TempRule, oof *pipeline.Samples) ([]metrics.QueryStats, []int) {
	sizes := pipeline.FoldSizes(oof.Len())
	var folds []*pipeline.Samples
	lo := 0
	for _, n := range sizes {
		folds = append(folds, oof.Slice(lo, lo+n))
		lo += n
	}
	var qs []metrics.QueryStats
	var ys []int
	for j, f := range folds {
		var rest []*pipeline.Samples
		for i, g := range folds {
			if i != j {
				rest = append(rest, g)
			}
		}
		mp, post := rule.Fit(pipeline.Join(rest...))
		q := f.Queries(mp)
		if post != nil {
			q = post(q)
		}
		qs, ys = append(qs, q...), append(ys, f.Labels()...)
	}
	return qs, ys
}

// fitSoftmaxGrid fits the softmax temperature by NLL on o over the grid
// 2^(e/4), e = lo..hi.
func fitSoftmaxGrid(o *pipeline.Samples, lo, hi int) ptm.Mapping {
	best, bestN := ptm.Mapping{}, math.Inf(1)
	for e := lo; e <= hi; e++ {
		mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: math.Pow(2, float64(e)/4)}
		if n := o.NLL(mp); n < bestN {
			best, bestN = mp, n
		}
	}
	return best
}

// fitSoftmaxMAP fits the softmax temperature on o by the maximum a
// posteriori rule: the total NLL (nats) plus (log2 tau)^2 / (2 sigma^2),
// over the grid 2^(e/4), e = -16..16.
func fitSoftmaxMAP(o *pipeline.Samples, sigma float64) ptm.Mapping {
	best, bestN := ptm.Mapping{}, math.Inf(1)
	for e := -16; e <= 16; e++ {
		l := float64(e) / 4
		mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: math.Pow(2, l)}
		if n := o.NLL(mp)*float64(o.Len()) + l*l/(2*sigma*sigma); n < bestN {
			best, bestN = mp, n
		}
	}
	return best
}

// powMean is the mean raised to 1/T and renormalized (temperature scaling
// of the log predictive mean).
func powMean(m []float64, T float64) []float64 {
	out := make([]float64, len(m))
	var z float64
	for c, v := range m {
		out[c] = math.Exp(math.Log(math.Max(v, 1e-300)) / T)
		z += out[c]
	}
	for c := range out {
		out[c] /= z
	}
	return out
}

// finalTemp applies powMean to every query's mean; entropy and confidence
// follow the new mean, the prediction is unchanged, the mutual information
// is the samples' (unchanged).
func finalTemp(in []metrics.QueryStats, T float64) []metrics.QueryStats {
	out := make([]metrics.QueryStats, len(in))
	for i, q := range in {
		q.Mean = powMean(q.Mean, T)
		q.Entropy = metrics.Entropy(q.Mean)
		q.Conf = q.Mean[q.Pred]
		out[i] = q
	}
	return out
}

// TemperatureStudy compares ways of fitting the per-sample softmax
// temperature of the primary PTM (docs/uncertainty.md section 9). Per
// split the protocol's validation step chooses the candidate (validation
// accuracy, then NLL; rows carved from the training rows), the candidate is
// retrained on all training rows, and the out-of-fold predictions of a
// 4-fold cross-validation on the training rows (pipeline.OutOfFold), the
// test rows and, with OODSplits, a held-out class are sampled once. Each
// rule fits its temperature on the out-of-fold predictions only; the test
// rows are then mapped with it. The table reports, per rule, the
// out-of-fold ("validation") figures pooled over splits, which are what a
// choice may use, and the test figures, which are for the report only.
func TemperatureStudy(ctx context.Context, opt TemperatureOptions) (string, error) {
	full, spec, err := studySpec("temperature", opt.Data)
	if err != nil {
		return "", err
	}
	if opt.K == 0 {
		opt.K = 100
	}
	if opt.Grid == nil {
		opt.Grid = spec.grid
	}
	d, err := pipeline.LoadData(spec.data, "")
	if err != nil {
		return "", err
	}
	k := ptmKinds()[0]
	pc := pipeline.ProtocolConfig{TestFraction: testFraction, K: opt.K, Bins: full.bins,
		Grid: k.withEncoding(opt.Grid), Mapping: k.mapping}
	runSplit := func(dd *pipeline.Data, s int, held [][]float64) (*tempSplit, error) {
		val, err := pipeline.ScoreGrid(dd, pc, s)
		if err != nil {
			return nil, err
		}
		c := pipeline.SelectAccuracy.Choose(val)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		seed := splitSeed(s)
		cand := pc.Grid[c]
		p := cand.Params
		p.Seed = seed
		tc := pipeline.TrainConfig{Params: p, Thresholds: cand.Thresholds, TestFraction: testFraction, SplitSeed: seed, Mapping: k.mapping, Encoding: cand.Encoding}
		f, err := pipeline.Train(dd, tc)
		if err != nil {
			return nil, err
		}
		out := &tempSplit{chosen: c}
		if out.oof, err = pipeline.OutOfFold(dd, f, tc); err != nil {
			return nil, err
		}
		if out.test, err = pipeline.SampleRows(f, dd, f.Split.Test, opt.K, seed+2000); err != nil {
			return nil, err
		}
		if held != nil {
			if out.held, err = pipeline.SampleInputs(f, held, opt.K, seed+4000); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	tasks, subs, helds, err := studyTasks(d, opt.First, opt.Splits, opt.OODSplits)
	if err != nil {
		return "", err
	}
	results := make([]*tempSplit, len(tasks))
	rules := TempRules()
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
		fmt.Fprintf(&b, "%s, primary PTM chosen by validation accuracy, %d splits from %d, K = %d; validation = out-of-fold predictions of the training rows (4-fold CV), each fold mapped with the temperature the rule fits on the other three folds, pooled over splits; test pooled over splits", d.Name, nIn, opt.First, opt.K)
		if opt.OODSplits > 0 {
			fmt.Fprintf(&b, "; OOD: %d of %d held-out-class splits, AUROC pooled per class then averaged", nOOD, len(tasks)-opt.Splits)
		}
		b.WriteString("\n\n| rule | temperature mean [min, max] | val NLL | val ECE | val AUROC(H) | val AUROC(MI) | test accuracy | test NLL | test pooled ECE | test AUROC(H) | test AUROC(MI) | per-split mean AUROC(H) | OOD AUROC(MI) | OOD AUROC(H) |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, rule := range rules {
			var oq, tq []metrics.QueryStats
			var oy, ty []int
			var temps, perSplit []float64
			inQ := make([][]metrics.QueryStats, len(subs))
			outQ := make([][]metrics.QueryStats, len(subs))
			for i, t := range tasks {
				r := results[i]
				if r == nil {
					continue
				}
				mp, post := rule.Fit(r.oof)
				apply := func(s *pipeline.Samples) []metrics.QueryStats {
					q := s.Queries(mp)
					if post != nil {
						q = post(q)
					}
					return q
				}
				q := apply(r.test)
				if t.class >= 0 {
					inQ[t.class] = append(inQ[t.class], q...)
					outQ[t.class] = append(outQ[t.class], apply(r.held)...)
					continue
				}
				temps = append(temps, mp.Temperature)
				nq, ny := nestedQueries(rule, r.oof)
				oq, oy = append(oq, nq...), append(oy, ny...)
				tq, ty = append(tq, q...), append(ty, r.test.Labels()...)
				if a := metrics.Evaluate(q, r.test.Labels(), full.bins).AUROCEntropy; !math.IsNaN(a) {
					perSplit = append(perSplit, a)
				}
			}
			if len(temps) == 0 && nOOD == 0 {
				continue
			}
			ts := Describe(temps)
			orep := metrics.Evaluate(oq, oy, full.bins)
			trep := metrics.Evaluate(tq, ty, full.bins)
			oodMI, oodH := math.NaN(), math.NaN()
			var mis, hs []float64
			for c := range subs {
				if len(outQ[c]) == 0 {
					continue
				}
				mis = append(mis, OODAUROC(inQ[c], outQ[c], miOf))
				hs = append(hs, OODAUROC(inQ[c], outQ[c], entropyOf))
			}
			if len(mis) > 0 {
				oodMI, oodH = Describe(mis).Mean, Describe(hs).Mean
			}
			fmt.Fprintf(&b, "| %s | %.3g [%.3g, %.3g] | %.4f | %.4f | %s | %s | %.4f | %.4f | %.4f | %s | %s | %s | %s | %s |\n",
				rule.Name, ts.Mean, ts.Min, ts.Max, orep.NLL, orep.ECE, fmtMaybe(orep.AUROCEntropy), fmtMaybe(orep.AUROCMI),
				trep.Accuracy, trep.NLL, trep.ECE, fmtMaybe(trep.AUROCEntropy), fmtMaybe(trep.AUROCMI), fmtMaybe(Describe(perSplit).Mean), fmtMaybe(oodMI), fmtMaybe(oodH))
		}
		// How much the default rule's pooled test AUROC rests on few rows.
		for _, rule := range rules {
			if rule.Name != defaultTempRule {
				continue
			}
			var tq []metrics.QueryStats
			var ty []int
			for i, t := range tasks {
				if r := results[i]; r != nil && t.class < 0 {
					mp, _ := rule.Fit(r.oof)
					tq, ty = append(tq, r.test.Queries(mp)...), append(ty, r.test.Labels()...)
				}
			}
			if len(tq) > 0 {
				fmt.Fprintf(&b, "\nTest rows, rule %q: %s\n", rule.Name, RankNoise(tq, ty, 2000))
			}
		}
		// Per split: the chosen candidate, the current rule's temperature
		// and the out-of-fold errors it was fitted on.
		b.WriteString("\n| split | chosen | OOF rows | OOF errors (temperature 1) | OOF NLL at 1/16, 1/4, 1, 4, 16 | current temperature | test errors |\n|---|---|---|---|---|---|---|\n")
		for i, t := range tasks {
			r := results[i]
			if r == nil || t.class >= 0 {
				continue
			}
			one := ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}
			orep := metrics.Evaluate(r.oof.Queries(one), r.oof.Labels(), full.bins)
			mp, _ := rules[0].Fit(r.oof)
			trep := metrics.Evaluate(r.test.Queries(mp), r.test.Labels(), full.bins)
			var curve []string
			for _, tau := range []float64{1.0 / 16, 0.25, 1, 4, 16} {
				curve = append(curve, fmt.Sprintf("%.4f", r.oof.NLL(ptm.Mapping{Kind: ptm.Softmax, Temperature: tau})))
			}
			fmt.Fprintf(&b, "| %d | %s | %d | %d | %s | %.3g | %d |\n", t.split, candName(opt.Grid[r.chosen])+fmt.Sprintf(", %d thresholds", opt.Grid[r.chosen].Thresholds), orep.N,
				int(math.Round((1-orep.Accuracy)*float64(orep.N))), strings.Join(curve, ", "), mp.Temperature, int(math.Round((1-trep.Accuracy)*float64(trep.N))))
		}
		return b.String()
	}
	if opt.Load != nil {
		index := map[task]int{}
		for i, t := range tasks {
			index[t] = i
		}
		for _, raw := range opt.Load {
			var td tempDump
			if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&td); err != nil {
				return "", fmt.Errorf("experiments: temperature study: load: %w", err)
			}
			for j := range td.Classes {
				i, ok := index[task{td.Classes[j], td.Splits[j]}]
				if !ok || td.Chosen[j] < 0 {
					continue
				}
				r := &tempSplit{chosen: td.Chosen[j], oof: pipeline.SamplesFrom(td.OOF[j]), test: pipeline.SamplesFrom(td.Test[j])}
				if len(td.Held[j].Sums) > 0 {
					r.held = pipeline.SamplesFrom(td.Held[j])
				}
				results[i] = r
			}
		}
		return table(), nil
	}
	var dumpErr error
	dump := func() {
		td := tempDump{}
		for i, t := range tasks {
			td.Classes, td.Splits = append(td.Classes, t.class), append(td.Splits, t.split)
			r := results[i]
			var o, te, h pipeline.SamplesData
			c := -1
			if r != nil {
				c = r.chosen
				o, te = r.oof.Data(), r.test.Data()
				if r.held != nil {
					h = r.held.Data()
				}
			}
			td.Chosen, td.OOF, td.Test, td.Held = append(td.Chosen, c), append(td.OOF, o), append(td.Test, te), append(td.Held, h)
		}
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(td); err != nil {
			dumpErr = fmt.Errorf("experiments: temperature study: dump: %w", err)
			return
		}
		opt.Dump(b.Bytes())
	}
	var n atomic.Int32
	err = parallel(ctx, len(tasks), func(i int) error {
		t := tasks[i]
		var res *tempSplit
		var err error
		if t.class < 0 {
			res, err = runSplit(d, t.split, nil)
		} else {
			res, err = runSplit(subs[t.class], t.split, helds[t.class])
		}
		if err != nil {
			return fmt.Errorf("task %d (class %d, split %d): %w", i, t.class, t.split, err)
		}
		mu.Lock()
		results[i] = res
		if opt.Partial != nil {
			opt.Partial(table())
		}
		if opt.Dump != nil {
			dump()
		}
		mu.Unlock()
		if opt.Progress != nil {
			opt.Progress(int(n.Add(1)), len(tasks))
		}
		return nil
	})
	if err == nil {
		err = dumpErr
	}
	if err != nil {
		return "", err
	}
	return table(), nil
}
