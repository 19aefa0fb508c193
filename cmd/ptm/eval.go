package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/internal/outfile"
)

func init() {
	register("eval", "evaluate a model with K samples per query: accuracy and uncertainty metrics", cmdEval)
}

// evalJSON is the `ptm eval --json` object.
type evalJSON struct {
	Model            string   `json:"model"`
	Kind             string   `json:"kind,omitempty"`
	Fixed            bool     `json:"fixed,omitempty"` // the fixed-point model a board runs (--fixed), else the float model
	Data             string   `json:"data"`
	Split            string   `json:"split"`
	Queries          int      `json:"queries"`
	Samples          int      `json:"samples"`
	Mapping          string   `json:"mapping"`
	Temperature      num      `json:"temperature,omitempty"`
	Smoothing        num      `json:"smoothing,omitempty"`
	Accuracy         num      `json:"accuracy"`
	ECE              num      `json:"ece"`
	Bins             int      `json:"ece_bins"`
	NLL              num      `json:"nll"`
	Brier            num      `json:"brier"`
	AUROCEntropy     num      `json:"auroc_entropy"`
	AUROCMI          num      `json:"auroc_mi"`
	Identical        num      `json:"identical_samples_fraction"`
	Sets             int      `json:"encoding_sets"`
	EntropyCorrect   num      `json:"entropy_correct"`
	EntropyIncorrect num      `json:"entropy_incorrect"`
	MICorrect        num      `json:"mi_correct"`
	MIIncorrect      num      `json:"mi_incorrect"`
	OOD              *oodJSON `json:"ood,omitempty"`
}

func cmdEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", "--model MODEL --data DATA [--split test] [--samples K] [--fixed] [--ood DATA] [--json]", stderr)
	model := fs.String("model", "", "model `file`")
	data := fs.String("data", "", "data set: iris, wine, breast-cancer, xor, xor-noisy, xor-classic, mnist, fashion-mnist, a CSV file, or a folder of IDX files (docs/howto-image-data.md)")
	label := fs.String("label", "", "label column of a CSV file (default: the last column)")
	split := fs.String("split", "test", "rows to evaluate: test, train (as recorded in the model) or all")
	K := fs.Int("samples", 100, "samples K drawn per query (a convolutional model: default the K its file records)")
	seed := fs.Uint64("seed", 1, "seed of the inference sampler")
	bins := fs.Int("bins", metrics.DefaultBins, "equal-width ECE bins")
	asJSON := fs.Bool("json", false, "print one JSON object")
	perQuery := fs.String("per-query", "", "also write per-query results to this CSV `file`")
	testData := fs.String("test-data", "", "evaluate every row of this separate test `file` (CSV or built-in name) instead of --data and --split")
	fixedModel := fs.Bool("fixed", false, "evaluate the fixed-point model a board runs (bit-exact with it) instead of the float model: row r is queried with seed --seed + r as `ptm stream` does; --bits and the lane flags must be the board's")
	workers := fs.Int("workers", 0, "convolutional models: goroutines sampling the rows (0: GOMAXPROCS); the results do not depend on it")
	ood := fs.String("ood", "", "also score the rows of this out-of-distribution data set (its labels ignored) against the evaluated rows: AUROC of entropy and of MI for telling them apart")
	oodSplit := fs.String("ood-split", "test", "rows of --ood: test or train (its predefined split) or all")
	limit := fs.Int("limit", 0, "evaluate only the first `N` rows of the split (0: all), the rows `ptm stream --limit N` streams")
	oodLimit := fs.Int("ood-limit", 0, "score only the first `M` rows of --ood-split (0: all), the rows `ptm stream --ood DATA --limit M` streams")
	var hf hwFlags
	hf.addLanes(fs)
	var mf mappingFlags
	mf.add(fs, "", 2, 0)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *workers < 0 {
		return fmt.Errorf("%w: --workers %d, want >= 0", errUsage, *workers)
	}
	for _, n := range []string{"ood-split", "ood-limit"} {
		if isSet(fs, n) && *ood == "" {
			return fmt.Errorf("%w: --%s needs --ood", errUsage, n)
		}
	}
	if *limit < 0 || *oodLimit < 0 {
		return fmt.Errorf("%w: --limit %d, --ood-limit %d: want >= 0 (0: all rows)", errUsage, *limit, *oodLimit)
	}
	if *model == "" || (*data == "" && *testData == "") {
		return fmt.Errorf("%w: --model and --data are required", errUsage)
	}
	if err := checkTestData(fs, *data, *testData); err != nil {
		return err
	}
	if *K < 1 {
		return fmt.Errorf("%w: --samples %d, want >= 1", errUsage, *K)
	}
	if err := checkFileOutput(pathFlag{"--per-query", *perQuery}, pathFlag{"--model", *model}, pathFlag{"--data", *data}, pathFlag{"--test-data", *testData}); err != nil {
		return err
	}
	if err := metrics.CheckBins(*bins); err != nil {
		return fmt.Errorf("%w: --bins %d, want 1..%d", errUsage, *bins, metrics.MaxBins)
	}
	f, cv, _, err := modelfile.ReadAny(*model)
	if err != nil {
		return err
	}
	if cv != nil {
		o := evalOpts{model: *model, data: *data, testData: *testData, split: *split, K: *K, seed: *seed, bins: *bins, asJSON: *asJSON,
			perQuery: *perQuery, fixed: *fixedModel, workers: *workers, ood: *ood, oodSplit: *oodSplit, limit: *limit, oodLimit: *oodLimit}
		return evalConv(fs, o, cv, &hf, &mf, stdout, stderr)
	}
	if isSet(fs, "workers") {
		return fmt.Errorf("%w: --workers applies to convolutional models (a tabular model is sampled on one goroutine)", errUsage)
	}
	mp, err := mf.resolve(fs, f.Mapping)
	if err != nil {
		return err
	}
	if err := pipeline.CheckSamples(f, *K); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	d, rows, err := evalRows(f, *data, *testData, *label, split, stderr)
	if err != nil {
		return err
	}
	rows = firstRows(rows, *limit)
	var res *pipeline.EvalResult
	if *fixedModel {
		if *seed > math.MaxUint32 {
			return fmt.Errorf("%w: --seed %d: the fixed-point model takes a 32-bit seed", errUsage, *seed)
		}
		c, err := hf.config(f.Bank.Shape)
		if err != nil {
			return err
		}
		_, bank, _, err := loadBank(*model, hf.bits)
		if err != nil {
			return err
		}
		res, err = pipeline.EvaluateFixed(f, bank, c.HW(), d, rows, *K, uint32(*seed), mp, *bins)
		if err != nil {
			return err
		}
	} else if res, err = pipeline.Evaluate(f, d, rows, *K, *seed, mp, *bins); err != nil {
		return err
	} else if hwFlagsSet(fs) {
		return fmt.Errorf("%w: --bits and the lane flags apply to --fixed only", errUsage)
	}
	if *perQuery != "" {
		if err := writePerQuery(*perQuery, f.Classes, res); err != nil {
			return err
		}
	}
	r := res.Report
	var oodRep *oodJSON
	if *ood != "" {
		if oodRep, err = oodTabular(f, res.Queries, *ood, *oodSplit, *oodLimit, *K, *seed, mp, stderr); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, evalJSON{
			Model: *model, Fixed: *fixedModel, Data: d.Name, Split: *split, Queries: r.N, Samples: *K,
			Mapping: string(mp.Kind), Temperature: num(mp.Temperature), Smoothing: num(mp.Smoothing),
			Accuracy: num(r.Accuracy), ECE: num(r.ECE), Bins: *bins, NLL: num(r.NLL), Brier: num(r.Brier),
			AUROCEntropy: num(r.AUROCEntropy), AUROCMI: num(r.AUROCMI), Identical: num(r.Identical), Sets: f.Sets().M(),
			EntropyCorrect: num(r.EntropyCorrect), EntropyIncorrect: num(r.EntropyIncorrect),
			MICorrect: num(r.MICorrect), MIIncorrect: num(r.MIIncorrect), OOD: oodRep,
		})
	}
	fmt.Fprintf(stdout, "%s on %s (%s split): %d queries x %d samples, mapping %s\n", *model, d.Name, *split, r.N, *K, describeMapping(mp))
	printReport(stdout, r, *bins, f.Sets().M())
	if oodRep != nil {
		printOOD(stdout, oodRep)
	}
	return nil
}

func fmtNum(v float64) string {
	if v != v {
		return "  n/a "
	}
	return fmt.Sprintf("%.4f", v)
}

func writePerQuery(path string, classes []string, res *pipeline.EvalResult) error {
	fh, err := outfile.Create(path)
	if err != nil {
		return fmt.Errorf("--per-query: %w", err)
	}
	w := csv.NewWriter(fh)
	head := []string{"row", "label", "pred", "conf", "entropy", "mutual_info", "std_mean"}
	for _, c := range classes {
		head = append(head, "p_"+c)
	}
	_ = w.Write(head)
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for i, q := range res.Queries {
		rec := []string{strconv.Itoa(res.Rows[i] + 1), classes[res.Labels[i]], classes[q.Pred], ff(q.Conf), ff(q.Entropy), ff(q.MutualInfo), ff(q.StdMean)}
		for _, p := range q.Mean {
			rec = append(rec, ff(p))
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fh.Abort()
		return fmt.Errorf("--per-query %s: %w", path, err)
	}
	if err := fh.Commit(); err != nil {
		return fmt.Errorf("--per-query: %w", err)
	}
	return nil
}

// checkTestData refuses --test-data together with --data or --split.
func checkTestData(fs *flag.FlagSet, data, testData string) error {
	if testData == "" {
		return nil
	}
	if data != "" || isSet(fs, "split") {
		return fmt.Errorf("%w: --test-data replaces --data and --split (it evaluates every row of its file)", errUsage)
	}
	return nil
}

// evalRows loads the data to evaluate: every row of testData, or the
// rows of data that split names (as recorded in the model). With
// testData, *split becomes "all".
func evalRows(f *modelfile.File, data, testData, label string, split *string, stderr io.Writer) (*pipeline.Data, []int, error) {
	name := data
	if testData != "" {
		name, *split = testData, "all"
	}
	if label != "" && slices.Contains(pipeline.BuiltinNames, name) {
		return nil, nil, fmt.Errorf("%w: --label names a column of a CSV file; %q is a built-in data set with its own labels", errUsage, name)
	}
	d, err := pipeline.LoadDataProgress(name, label, newProgress(stderr, "loading "+name).bytes)
	if err != nil {
		return nil, nil, err
	}
	rows, err := pipeline.Rows(f, d, *split)
	if err != nil {
		return nil, nil, err
	}
	return d, rows, nil
}
