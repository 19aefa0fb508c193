package main

import (
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Default lanes of the convolutional fixed-point core in `ptm eval
// --fixed` (pipeline's: 8 clause lanes x 8 literal lanes).
const (
	convClauseLanes  = pipeline.DefaultConvClauseLanes
	convLiteralLanes = pipeline.DefaultConvLiteralLanes
)

// oodSeedOffset is added to --seed for the OOD rows' queries, so that an
// OOD row and the in-distribution row of the same index draw differently.
const oodSeedOffset = 0x5bd1e995

// oodJSON is the "ood" object of `ptm eval --json --ood`.
type oodJSON struct {
	Data         string `json:"data"`
	Split        string `json:"split"`
	Rows         int    `json:"rows"`
	InRows       int    `json:"in_rows"`
	AUROCEntropy num    `json:"auroc_entropy"`
	AUROCMI      num    `json:"auroc_mi"`
	EntropyIn    num    `json:"entropy_in"`
	EntropyOOD   num    `json:"entropy_ood"`
	MIIn         num    `json:"mi_in"`
	MIOOD        num    `json:"mi_ood"`
	ConfIn       num    `json:"conf_in"`
	ConfOOD      num    `json:"conf_ood"`
}

func oodOf(name, split string, r pipeline.OODReport) *oodJSON {
	return &oodJSON{Data: name, Split: split, Rows: r.Rows, InRows: r.InRows, AUROCEntropy: num(r.AUROCEntropy), AUROCMI: num(r.AUROCMI),
		EntropyIn: num(r.EntropyIn), EntropyOOD: num(r.EntropyOOD), MIIn: num(r.MIIn), MIOOD: num(r.MIOOD),
		ConfIn: num(r.MeanConfIn), ConfOOD: num(r.MeanConfOOD)}
}

// printOOD prints the OOD lines of eval's text report.
func printOOD(w io.Writer, o *oodJSON) {
	fmt.Fprintf(w, "  OOD: %d rows of %s (%s split) against the %d rows above\n", o.Rows, o.Data, o.Split, o.InRows)
	fmt.Fprintf(w, "    AUROC(entropy)  %s\n", fmtNum(float64(o.AUROCEntropy)))
	fmt.Fprintf(w, "    AUROC(MI)       %s\n", fmtNum(float64(o.AUROCMI)))
	fmt.Fprintf(w, "    entropy  in %s  OOD %s bits\n", fmtNum(float64(o.EntropyIn)), fmtNum(float64(o.EntropyOOD)))
	fmt.Fprintf(w, "    MI       in %s  OOD %s bits\n", fmtNum(float64(o.MIIn)), fmtNum(float64(o.MIOOD)))
}

// oodRows returns the rows of an OOD data set that split names: test or
// train (its predefined split; a data set without one has only all), or
// all.
func oodRows(d *pipeline.Data, split string) ([]int, error) {
	switch split {
	case "test", "train":
		if d.FixedTrain == nil {
			return nil, fmt.Errorf("%w: --ood-split %s: %q has no predefined split; use --ood-split all", errUsage, split, d.Name)
		}
		if split == "test" {
			return d.FixedTest, nil
		}
		return d.FixedTrain, nil
	case "all":
		rows := make([]int, d.Len())
		for i := range rows {
			rows[i] = i
		}
		return rows, nil
	}
	return nil, fmt.Errorf("%w: --ood-split %q, want test, train or all", errUsage, split)
}

// evalOpts are eval's settings that apply to both model kinds.
type evalOpts struct {
	model, data, testData, split string
	K                            int
	seed                         uint64
	bins                         int
	asJSON                       bool
	perQuery                     string
	fixed                        bool
	workers                      int
	ood, oodSplit                string
	limit, oodLimit              int
}

// evalConv is `ptm eval` for a convolutional model.
func evalConv(fs *flag.FlagSet, o evalOpts, f *modelfile.ConvFile, hf *hwFlags, mf *mappingFlags, stdout, stderr io.Writer) error {
	K := f.K
	if isSet(fs, "samples") {
		K = o.K
	}
	// The fixed-point core at the bank's width maps its class sums with
	// the mapping fitted on them (the file's fixed mapping, if any).
	var hwc conv.HW
	base := f.Mapping
	if o.fixed {
		var err error
		if hwc, err = convHW(fs, f, hf); err != nil {
			return err
		}
		base = f.MappingAt(hwc.Bits)
	}
	mp, err := mf.resolve(fs, base)
	if err != nil {
		return err
	}
	name, split := o.data, o.split
	if o.testData != "" {
		name, split = o.testData, "all"
	}
	d, err := pipeline.LoadDataProgress(name, "", newProgress(stderr, "loading "+name).bytes)
	if err != nil {
		return err
	}
	rows, err := pipeline.ConvRows(f, d, split)
	if err != nil {
		return err
	}
	rows = firstRows(rows, o.limit)
	labels, err := pipeline.ConvLabels(f, d, rows)
	if err != nil {
		return err
	}
	s := pipeline.ConvSampling{K: K, Seed: o.seed, Workers: o.workers}
	if o.fixed {
		if o.seed > math.MaxUint32 {
			return fmt.Errorf("%w: --seed %d: the fixed-point model takes a 32-bit seed", errUsage, o.seed)
		}
		h := hwc
		s.Fixed = &h
		if s.Bank, err = f.Bank(h.Bits); err != nil {
			return err
		}
	} else if hwFlagsSet(fs) {
		return fmt.Errorf("%w: --bits and the lane flags apply to --fixed only", errUsage)
	}
	bar := newProgress(stderr, "sampling")
	s.Progress = bar.update
	sums, err := pipeline.SampleConv(f, d, rows, s)
	if err != nil {
		return err
	}
	queries := pipeline.ConvQueries(&f.Head, sums, K, mp)
	r := metrics.Evaluate(queries, labels, o.bins)
	// The evaluated data's pixels are not needed any more: let the
	// collector have them before an OOD data set loads (MNIST and
	// Fashion-MNIST together peaked at 1.95 GB resident, 1.1 GB apart).
	dname := d.Name
	d = nil
	var ood *oodJSON
	if o.ood != "" {
		od, err := pipeline.LoadDataProgress(o.ood, "", newProgress(stderr, "loading "+o.ood).bytes)
		if err != nil {
			return err
		}
		orows, err := oodRows(od, o.oodSplit)
		if err != nil {
			return err
		}
		orows = firstRows(orows, o.oodLimit)
		s.Seed = o.seed + oodSeedOffset
		if o.fixed {
			s.Seed = uint64(uint32(s.Seed))
		}
		s.Progress = newProgress(stderr, "sampling OOD rows").update
		osums, err := pipeline.SampleConv(f, od, orows, s)
		if err != nil {
			return fmt.Errorf("--ood %s: %w", o.ood, err)
		}
		ood = oodOf(od.Name, o.oodSplit, pipeline.ScoreOOD(queries, pipeline.ConvQueries(&f.Head, osums, K, mp)))
	}
	if o.perQuery != "" {
		if err := writePerQuery(o.perQuery, f.Classes, &pipeline.EvalResult{Report: r, Queries: queries, Labels: labels, Rows: rows}); err != nil {
			return err
		}
	}
	model := "float"
	if o.fixed {
		model = fmt.Sprintf("fixed point, %d-bit bank, %dx%d lanes", s.Fixed.Bits, s.Fixed.ClauseLanes, s.Fixed.LiteralLanes)
		if f.FixedMapping != nil && s.Fixed.Bits == f.BankBits && mp == *f.FixedMapping {
			model += ", the mapping fitted on this core's class sums"
		}
	}
	if o.asJSON {
		return writeJSON(stdout, evalJSON{
			Model: o.model, Kind: "conv", Fixed: o.fixed, Data: dname, Split: split, Queries: r.N, Samples: K,
			Mapping: string(mp.Kind), Temperature: num(mp.Temperature), Smoothing: num(mp.Smoothing),
			Accuracy: num(r.Accuracy), ECE: num(r.ECE), Bins: o.bins, NLL: num(r.NLL), Brier: num(r.Brier),
			AUROCEntropy: num(r.AUROCEntropy), AUROCMI: num(r.AUROCMI), Identical: num(r.Identical), Sets: f.JitterSets,
			EntropyCorrect: num(r.EntropyCorrect), EntropyIncorrect: num(r.EntropyIncorrect),
			MICorrect: num(r.MICorrect), MIIncorrect: num(r.MIIncorrect), OOD: ood,
		})
	}
	fmt.Fprintf(stdout, "%s (convolutional, %s) on %s (%s split): %d queries x %d samples, mapping %s\n", o.model, model, dname, split, r.N, K, describeMapping(mp))
	printReport(stdout, r, o.bins, f.JitterSets)
	if ood != nil {
		printOOD(stdout, ood)
	}
	return nil
}

// printReport prints eval's metric lines.
func printReport(w io.Writer, r metrics.Report, bins, sets int) {
	fmt.Fprintf(w, "  accuracy          %.4f\n", r.Accuracy)
	fmt.Fprintf(w, "  ECE (%d bins)      %.4f\n", bins, r.ECE)
	fmt.Fprintf(w, "  NLL               %.4f nats\n", r.NLL)
	fmt.Fprintf(w, "  Brier             %.4f\n", r.Brier)
	fmt.Fprintf(w, "  AUROC(entropy)    %s\n", fmtNum(r.AUROCEntropy))
	fmt.Fprintf(w, "  AUROC(MI)         %s\n", fmtNum(r.AUROCMI))
	fmt.Fprintf(w, "  identical samples %.4f of queries (input encoding: %d sets)\n", r.Identical, sets)
	fmt.Fprintf(w, "  entropy  right %s  wrong %s bits\n", fmtNum(r.EntropyCorrect), fmtNum(r.EntropyIncorrect))
	fmt.Fprintf(w, "  MI       right %s  wrong %s bits\n", fmtNum(r.MICorrect), fmtNum(r.MIIncorrect))
}

// oodTabular scores the rows of an OOD data set against the evaluated
// rows' queries for a tabular model: the OOD data must have the model's
// features; its labels are not used.
func oodTabular(f *modelfile.File, in []metrics.QueryStats, name, split string, limit, K int, seed uint64, mp ptm.Mapping, stderr io.Writer) (*oodJSON, error) {
	od, err := pipeline.LoadDataProgress(name, "", newProgress(stderr, "loading "+name).bytes)
	if err != nil {
		return nil, err
	}
	if err := od.CheckFeatures(f.Features); err != nil {
		return nil, fmt.Errorf("--ood %s: %w", name, err)
	}
	rows, err := oodRows(od, split)
	if err != nil {
		return nil, err
	}
	rows = firstRows(rows, limit)
	X := make([][]float64, len(rows))
	for i, r := range rows {
		X[i] = od.X[r]
	}
	smp, err := pipeline.SampleInputs(f, X, K, seed+oodSeedOffset)
	if err != nil {
		return nil, fmt.Errorf("--ood %s: %w", name, err)
	}
	return oodOf(od.Name, split, pipeline.ScoreOOD(in, smp.Queries(mp))), nil
}
