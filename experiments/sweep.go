package experiments

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// SweepOptions configures EncodingSweep.
type SweepOptions struct {
	Data      string              // built-in data set name or CSV path
	Splits    int                 // stratified 80/20 splits (default 20)
	First     int                 // the first split (splits First..First+Splits-1)
	Encodings []pipeline.Encoding // default: plain and a few sampled encodings
	Params    ptm.Params          // default: ptm.DefaultParams()
	K         int                 // samples per query (default 100)
	// Thresholds per feature (default 6).
	Thresholds int
	// Temperatures, if set, replaces the mappings by the softmax at these
	// temperatures in units of T (e.g. 0.1 = 0.1 T), besides the vote.
	Temperatures []float64
	Progress     func(done, total int)
}

// DefaultSweepEncodings are the encodings the design study compared
// (docs/uncertainty.md).
var DefaultSweepEncodings = []pipeline.Encoding{
	pipeline.Plain,
	{Sets: 4, Bandwidth: 0.1}, {Sets: 4, Bandwidth: 0.15}, {Sets: 4, Bandwidth: 0.2},
	{Sets: 8, Bandwidth: 0.15},
	{Sets: 8, Bandwidth: 0.15, Margin: 1},
	{Sets: 8, Bandwidth: 0.15, Margin: 1, WholeRow: true},
}

// sweepMappings are the per-sample mappings every encoding is scored with:
// the plain vote and softmax at three temperatures.
var sweepMappings = []ptm.Mapping{{Kind: ptm.Vote}, {Kind: ptm.Softmax, Temperature: 0.5},
	{Kind: ptm.Softmax, Temperature: 1}, {Kind: ptm.Softmax, Temperature: 2}}

// EncodingSweep scores input encodings and mappings on validation rows
// only: for each split (seed s+1) the training rows are split again 75/25
// (seed s+1001, as pipeline.RepeatedSplits does), a PTM with opt.Params is
// trained on the 75% and its K-sample predictions on the 25% are pooled over
// the splits. The test rows are never touched, so the table can choose
// defaults. It returns a markdown table, one row per encoding and mapping.
func EncodingSweep(ctx context.Context, opt SweepOptions) (string, error) {
	if opt.Splits == 0 {
		opt.Splits = 20
	}
	if opt.Encodings == nil {
		opt.Encodings = DefaultSweepEncodings
	}
	if opt.Params.Clauses == 0 {
		opt.Params = ptm.DefaultParams()
	}
	if opt.K == 0 {
		opt.K = 100
	}
	if opt.Thresholds == 0 {
		opt.Thresholds = 6
	}
	mappings := sweepMappings
	if opt.Temperatures != nil {
		mappings = []ptm.Mapping{{Kind: ptm.Vote}}
		for _, t := range opt.Temperatures {
			mappings = append(mappings, ptm.Mapping{Kind: ptm.Softmax, Temperature: t * float64(opt.Params.T)})
		}
	}
	d, err := pipeline.LoadData(opt.Data, "")
	if err != nil {
		return "", err
	}
	ne, ns, nm := len(opt.Encodings), opt.Splits, len(mappings)
	// queries[e][m][s] and labels[s]
	queries := make([][][][]metrics.QueryStats, ne)
	for e := range queries {
		queries[e] = make([][][]metrics.QueryStats, nm)
		for m := range queries[e] {
			queries[e][m] = make([][]metrics.QueryStats, ns)
		}
	}
	labels := make([][]int, ns)
	vals := make([][]int, ns)
	fits := make([][]int, ns)
	for s := range ns {
		seed := splitSeed(opt.First + s)
		train, _, err := d.Split(testFraction, seed)
		if err != nil {
			return "", err
		}
		y := make([]int, len(train))
		for i, r := range train {
			y[i] = d.Y[r]
		}
		fi, vi := dataset.StratifiedSplit(y, len(d.Classes), 0.25, seed+1000)
		for _, i := range fi {
			fits[s] = append(fits[s], train[i])
		}
		for _, i := range vi {
			vals[s] = append(vals[s], train[i])
			labels[s] = append(labels[s], d.Y[train[i]])
		}
	}
	var done atomic.Int32
	err = parallel(ctx, ne*ns, func(j int) error {
		e, s := j/ns, j%ns
		enc := opt.Encodings[e]
		p := opt.Params
		p.Seed = splitSeed(opt.First + s)
		f, err := pipeline.Train(d, pipeline.TrainConfig{Params: p, Thresholds: opt.Thresholds, SplitSeed: p.Seed, Rows: fits[s], Encoding: &enc})
		if err != nil {
			return err
		}
		smp := ptm.NewSampler(f.Model, p.Seed+7)
		for _, r := range vals[s] {
			sums, err := pipeline.SampleRow(f, smp, d.X[r], opt.K, nil)
			if err != nil {
				return err
			}
			for m, mp := range mappings {
				queries[e][m][s] = append(queries[e][m][s], metrics.Query(f.Model.SumsToProbs(sums, opt.K, mp)))
			}
		}
		if opt.Progress != nil {
			opt.Progress(int(done.Add(1)), ne*ns)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, validation rows (25%% of each split's training rows), %d splits from split %d, K = %d, %d clauses, T = %d, s = %g, %d epochs, %d thresholds per feature\n\n",
		d.Name, ns, opt.First, opt.K, opt.Params.Clauses, opt.Params.T, opt.Params.S, opt.Params.Epochs, opt.Thresholds)
	b.WriteString("| encoding | mapping | accuracy | AUROC(entropy) | AUROC(MI) | pooled ECE | per-split ECE | NLL | MI right / wrong | identical |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for e, enc := range opt.Encodings {
		for m, mp := range mappings {
			var all []metrics.QueryStats
			var allY []int
			var ece, acc float64
			for s := range ns {
				r := metrics.Evaluate(queries[e][m][s], labels[s], 10)
				ece += r.ECE
				acc += r.Accuracy
				all = append(all, queries[e][m][s]...)
				allY = append(allY, labels[s]...)
			}
			r := metrics.Evaluate(all, allY, 10)
			fmt.Fprintf(&b, "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f / %.3f | %.2f |\n",
				encodingName(enc), mappingName(mp), acc/float64(ns), r.AUROCEntropy, r.AUROCMI, r.ECE, ece/float64(ns), r.NLL,
				r.MICorrect, r.MIIncorrect, r.Identical)
		}
	}
	return b.String(), nil
}
