package experiments

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"math"
	"strings"

	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// EnsembleVariants are the PTM variants the ensemble study compares
// (docs/uncertainty.md section 11): the default model (one PTM, the set
// drawn per training row and epoch), one PTM per threshold set, and one
// PTM per set trained on a bootstrap resample of the rows.
var EnsembleVariants = []string{"shared", "perset", "perset-boot"}

// EnsembleOptions configures EnsembleStudy.
type EnsembleOptions struct {
	// Data is the data set (iris, wine, breast_cancer or breast-cancer).
	Data string
	// First and Splits select the 80/20 splits (split s has seed s+1, as
	// in pipeline.RepeatedSplits).
	First, Splits int
	// Candidate is the one PTM configuration compared (nil: the data
	// set's default, ensembleCandidate); the primary PTM's encoding.
	Candidate *pipeline.Candidate
	// Variants to run (default EnsembleVariants).
	Variants []string
	// Progress, Dump and Load as in TemperatureOptions: Dump receives the
	// samples of every finished split (gob); with Load the study only
	// tabulates the stored splits.
	Progress func(done, total int)
	Dump     func(b []byte)
	Load     [][]byte
}

// ensDump is the stored form of the ensemble study's samples: per split
// and variant, the validation rows' and the test rows' samples.
type ensDump struct {
	Variants []string
	Splits   []int
	Val      [][]pipeline.SamplesData // [split][variant]
	Test     [][]pipeline.SamplesData
}

// ensembleCandidate is the grid point the study uses per data set: for
// Iris the full run's most chosen one, for wine and breast cancer the
// middle one of the full run's grid (chosen on 8 and 6 of 20 splits in
// docs/results; the largest would cost more with eight PTMs).
func ensembleCandidate(key string) pipeline.Candidate {
	switch key {
	case "iris":
		return irisCandidate(60, 30, 2, 100, 6)
	case "wine":
		return irisCandidate(40, 15, 2, 60, 6)
	}
	return irisCandidate(40, 15, 2, 50, 6)
}

// EnsembleStudy compares the shared and the per-set PTMs of one grid
// point on the same splits. For each split the training rows are split
// into fit and validation rows as pipeline.ScoreGrid splits them; every
// variant is trained on the fit rows and sampled on the validation rows
// (K = 100, the protocol's seed), then retrained on all training rows and
// sampled on the test rows (seed + 2000). The softmax temperature of the
// test rows is fitted by NLL on that variant's validation samples, not
// below 0.05 T (the same rule for every variant). It returns markdown
// tables: validation rows (the figures the decision is made on) and test
// rows, pooled over the splits.
func EnsembleStudy(ctx context.Context, opt EnsembleOptions) (string, error) {
	_, spec, err := studySpec("ensemble", opt.Data)
	if err != nil {
		return "", err
	}
	var dump ensDump
	if opt.Load != nil {
		for _, b := range opt.Load {
			var part ensDump
			if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&part); err != nil {
				return "", fmt.Errorf("experiments: ensemble --load: %w", err)
			}
			if dump.Variants != nil && strings.Join(dump.Variants, ",") != strings.Join(part.Variants, ",") {
				return "", fmt.Errorf("experiments: ensemble --load: variants %v and %v differ", dump.Variants, part.Variants)
			}
			dump.Variants = part.Variants
			dump.Splits = append(dump.Splits, part.Splits...)
			dump.Val = append(dump.Val, part.Val...)
			dump.Test = append(dump.Test, part.Test...)
		}
		return ensembleTables(spec.name, dump), nil
	}
	cand := ensembleCandidate(spec.key)
	if opt.Candidate != nil {
		cand = *opt.Candidate
	}
	enc := pipeline.DefaultEncoding
	if cand.Encoding != nil {
		enc = *cand.Encoding
	}
	dump.Variants = opt.Variants
	if dump.Variants == nil {
		dump.Variants = EnsembleVariants
	}
	for _, v := range dump.Variants {
		if !contains(EnsembleVariants, v) {
			return "", fmt.Errorf("experiments: ensemble: unknown variant %q (want %s)", v, strings.Join(EnsembleVariants, ", "))
		}
	}
	d, err := pipeline.LoadData(spec.data, "")
	if err != nil {
		return "", err
	}
	for i := range opt.Splits {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		s := opt.First + i
		val, test, err := ensembleSplit(d, cand, enc, dump.Variants, s)
		if err != nil {
			return "", fmt.Errorf("experiments: ensemble %s, split %d: %w", spec.key, s, err)
		}
		dump.Splits = append(dump.Splits, s)
		dump.Val = append(dump.Val, val)
		dump.Test = append(dump.Test, test)
		if opt.Dump != nil {
			var b bytes.Buffer
			if err := gob.NewEncoder(&b).Encode(dump); err != nil {
				return "", err
			}
			opt.Dump(b.Bytes())
		}
		if opt.Progress != nil {
			opt.Progress(i+1, opt.Splits)
		}
	}
	return ensembleTables(spec.name, dump), nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ensembleSplit runs split s of the study for every variant.
func ensembleSplit(d *pipeline.Data, cand pipeline.Candidate, enc pipeline.Encoding, variants []string, s int) (val, test []pipeline.SamplesData, err error) {
	const K = 100
	seed := uint64(s + 1)
	trainRows, testRows, err := d.Split(testFraction, seed)
	if err != nil {
		return nil, nil, err
	}
	trY := make([]int, len(trainRows))
	for i, r := range trainRows {
		trY[i] = d.Y[r]
	}
	fitIdx, valIdx := dataset.StratifiedSplit(trY, len(d.Classes), 0.25, seed+1000)
	fitRows, valRows := make([]int, len(fitIdx)), make([]int, len(valIdx))
	for i, j := range fitIdx {
		fitRows[i] = trainRows[j]
	}
	for i, j := range valIdx {
		valRows[i] = trainRows[j]
	}
	for _, v := range variants {
		p := cand.Params
		p.Seed = seed
		e := enc
		tc := pipeline.TrainConfig{Params: p, Thresholds: cand.Thresholds, TestFraction: testFraction, SplitSeed: seed, Encoding: &e}
		sample := func(rows, sampled []int, sseed uint64) (*pipeline.Samples, error) {
			c := tc
			c.Rows = rows
			if v == "shared" {
				f, err := pipeline.Train(d, c)
				if err != nil {
					return nil, err
				}
				return pipeline.SampleRows(f, d, sampled, K, sseed)
			}
			en, err := pipeline.TrainEnsemble(d, c, v == "perset-boot")
			if err != nil {
				return nil, err
			}
			return en.SampleRows(d, sampled, K, sseed)
		}
		vs, err := sample(fitRows, valRows, seed)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, validation: %w", v, err)
		}
		ts, err := sample(nil, testRows, seed+2000)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, test: %w", v, err)
		}
		val, test = append(val, vs.Data()), append(test, ts.Data())
	}
	return val, test, nil
}

// ensembleTables tabulates a dump: validation rows mapped at fixed
// temperatures (1 and 0.1 T) and at the temperature fitted on them, test
// rows at the temperature fitted on the validation rows (>= 0.05 T).
func ensembleTables(name string, dump ensDump) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d splits (%s)\n\n", name, len(dump.Splits), splitList(dump.Splits))
	b.WriteString("| rows | variant | mapping | accuracy | pooled ECE | NLL | AUROC(entropy) +- SE | AUROC(MI) | MI right / wrong | identical | errors |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(rows, v, mp string, qs []metrics.QueryStats, labels []int) {
		r := metrics.Evaluate(qs, labels, 10)
		wrong := int(math.Round((1 - r.Accuracy) * float64(r.N)))
		fmt.Fprintf(&b, "| %s | %s | %s | %.4f | %.4f | %.4f | %.4f +- %.3f | %.4f | %.3f / %.3f | %.2f | %d |\n",
			rows, v, mp, r.Accuracy, r.ECE, r.NLL, r.AUROCEntropy, AUROCStdErr(r.AUROCEntropy, wrong, r.N-wrong), r.AUROCMI, r.MICorrect, r.MIIncorrect, r.Identical, wrong)
	}
	for vi, v := range dump.Variants {
		type mapper func(val *pipeline.Samples) ptm.Mapping
		for _, m := range []struct {
			name string
			f    mapper
		}{
			{"softmax 1", func(*pipeline.Samples) ptm.Mapping { return ptm.Mapping{Kind: ptm.Softmax, Temperature: 1} }},
			{"softmax 0.1 T", func(s *pipeline.Samples) ptm.Mapping {
				return ptm.Mapping{Kind: ptm.Softmax, Temperature: 0.1 * float64(s.ClipT())}
			}},
			{"fitted on val (>= 0.05 T)", fitFloor},
		} {
			var qs []metrics.QueryStats
			var labels []int
			for si := range dump.Splits {
				s := pipeline.SamplesFrom(dump.Val[si][vi])
				qs = append(qs, s.Queries(m.f(s))...)
				labels = append(labels, s.Labels()...)
			}
			row("validation", v, m.name, qs, labels)
		}
	}
	var noise []string
	for vi, v := range dump.Variants {
		var qs []metrics.QueryStats
		var labels []int
		var temps []float64
		for si := range dump.Splits {
			mp := fitFloor(pipeline.SamplesFrom(dump.Val[si][vi]))
			temps = append(temps, mp.Temperature)
			s := pipeline.SamplesFrom(dump.Test[si][vi])
			qs = append(qs, s.Queries(mp)...)
			labels = append(labels, s.Labels()...)
		}
		st := Describe(temps)
		row("test", v, fmt.Sprintf("fitted on val, mean %.2f", st.Mean), qs, labels)
		noise = append(noise, fmt.Sprintf("- test, %s: %s", v, RankNoise(qs, labels, 2000)))
	}
	b.WriteString("\n" + strings.Join(noise, "\n") + "\n")
	return b.String()
}

// fitFloor fits the softmax temperature by NLL on s among the grid's
// temperatures >= 0.05 T (pipeline.DefaultTemperatureFloor).
func fitFloor(s *pipeline.Samples) ptm.Mapping {
	mp, err := s.FitAbove(ptm.Softmax, pipeline.DefaultTemperatureFloor*float64(s.ClipT()))
	if err != nil {
		panic(err) // the softmax kind always fits
	}
	return mp
}

func splitList(s []int) string {
	if len(s) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d..%d", s[0], s[len(s)-1])
}

// AUROCStdErr is the Hanley-McNeil (1982) standard error of an AUROC a
// estimated from pos positive (here: wrong) and neg negative rows: with
// few positives it is dominated by their number, e.g. about 0.065 for
// a = 0.9 with 10 wrong rows among 720.
func AUROCStdErr(a float64, pos, neg int) float64 {
	if pos < 1 || neg < 1 || math.IsNaN(a) {
		return math.NaN()
	}
	q1, q2 := a/(2-a), 2*a*a/(1+a)
	v := (a*(1-a) + float64(pos-1)*(q1-a*a) + float64(neg-1)*(q2-a*a)) / float64(pos*neg)
	return math.Sqrt(math.Max(v, 0))
}
