package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptmhw/ptm/experiments"
	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/outfile"
)

func init() {
	register("experiments", "run the paper's experiments: report.md, figures and summary.json", cmdExperiments)
}

func cmdExperiments(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return cmdExperimentsMerge(args[1:], stdout, stderr)
	}
	fs := newFlags("experiments", "--out DIR [--quick] [--only images|tables] [--select RULE] [--shard I/N] | merge --out DIR [--partial] SHARD_DIR... | --sweep DATA [--splits N] [--first N] [--grid G] [--cuts C1,C2 | --train-jitter J1,J2] [--temperatures T1,T2] | --selection DATA [--splits N] [--ood-splits N] [--rules R1,R2] [--cv | --cv-only] [--base N] | --temperature DATA [--splits N] [--first N] [--ood-splits N] | --ensemble DATA [--splits N] [--first N] [--variants V1,V2]", stderr)
	out := fs.String("out", "", "output `directory` for report.md, summary.json and the PNG figures (created if missing)")
	only := fs.String("only", "", "run a part: images (the MNIST and Fashion-MNIST section alone) or tables (every section but the images)")
	quick := fs.Bool("quick", false, "small settings for CI: fewer splits, K = 20, fewer epochs, coarser grids (a smoke test)")
	wide := fs.Bool("wide-grids", false, "full run: add the encoding and epoch candidates of docs/uncertainty.md section 10 to the Iris, wine and breast-cancer grids")
	sweep := fs.String("sweep", "", "instead: the input-encoding design sweep on validation rows of this data set (docs/uncertainty.md), a markdown table on stdout")
	splits := fs.Int("splits", 20, "splits of --sweep or --selection (--selection: 0 = only the out-of-distribution splits)")
	selection := fs.String("selection", "", "instead: compare model-selection rules for the PTM on this data set (iris, wine, breast-cancer) under the 20-split protocol, a markdown table on stdout")
	oodSplits := fs.Int("ood-splits", 0, "with --selection: also hold out each class in turn, this many splits each (0 = no out-of-distribution rows)")
	temp := fs.String("temperature", "", "instead: compare ways of fitting the softmax temperature of the primary PTM on this data set's out-of-fold training predictions (docs/uncertainty.md section 9), a markdown table on stdout")
	ens := fs.String("ensemble", "", "instead: compare the shared PTM with one PTM per threshold set (docs/uncertainty.md section 11) on validation and test rows of this data set, a markdown table on stdout")
	variants := fs.String("variants", "", "with --ensemble: comma-separated variants (default all: shared,perset,perset-boot)")
	dumpF := fs.String("dump", "", "with --temperature or --ensemble: store every finished split's samples in this `file` (gob)")
	loadF := fs.String("load", "", "with --temperature or --ensemble: re-map the samples of these comma-separated --dump `files` (their splits within --first/--splits/--ood-splits) instead of training")
	partial := fs.String("partial", "", "with --selection or --temperature: rewrite this `file` with the table after every finished split")
	choices := fs.Bool("choices", false, "with --selection: the validation step only, each rule's choice per split (no test rows)")
	first := fs.Int("first", 0, "with --sweep, --selection --choices, --temperature or --ensemble: the first split")
	grid := fs.String("grid", "", "with --selection or --temperature (--ensemble, --sweep: one candidate): the PTM grid instead of the full run's, comma-separated clauses/T/s/epochs/thresholds[/bandwidth/sets[/cuts]] (e.g. 60/20/2/50/6,100/25/2/50/10,60/20/2/50/6/0.15/8/supervised)")
	base := fs.Int("base", 0, "with --selection: also choose among the first N grid candidates only (a grid against a widened grid, same splits)")
	cv := fs.Bool("cv", false, "with --selection: also choose by inner 4-fold cross-validation on the training rows (a row per rule, and a training-rows-only comparison of a one-fold carve with the pooled folds)")
	cvOnly := fs.Bool("cv-only", false, "with --selection: choose by inner cross-validation only (implies --cv, skips the single carve); with --base also among the first N candidates alone and among the others alone")
	rules := fs.String("rules", "", "with --selection: comma-separated rules (default all: accuracy,nll,nll-fit,auroc)")
	trainJitter := fs.String("train-jitter", "", "with --sweep: compare these comma-separated training jitters (feature sd; 0 = train on the plain thermometer; docs/uncertainty.md section 14) in the default encoding (or --grid's), inference keeping its bandwidth")
	cutsList := fs.String("cuts", "", "with --sweep: compare these comma-separated threshold placements (quantile, supervised, mdl, each optionally -boot; docs/uncertainty.md section 13) in the default encoding (or --grid's)")
	temps := fs.String("temperatures", "", "with --sweep: score the vote and the softmax at these comma-separated temperatures in units of T (default: vote, softmax 0.5, 1, 2)")
	chooseOn := fs.String("choose-on", "", "the rows the PTM grid point is chosen on: carve (one 25% validation carve of the training rows) or cv (inner 4-fold cross-validation on the training rows; default: pipeline.DefaultCV)")
	shard := fs.String("shard", "", "run only part `I/N` of the sweep's units (I-th of N disjoint parts, 1-based) and write their results to --out/units for `ptm experiments merge`, not the report")
	sel := fs.String("select", "", "the rule that picks the PTM grid point on validation rows: accuracy, nll, nll-fit or auroc (default: pipeline.DefaultSelection)")
	if err := parse(fs, args); err != nil {
		return err
	}
	// The outputs are checked before hours of work (internal/outfile):
	// --out's folder, and --partial and --dump, rewritten after every
	// finished split.
	if err := checkDirOutput(pathFlag{"--out", *out}); err != nil {
		return err
	}
	for _, o := range []pathFlag{{"--partial", *partial}, {"--dump", *dumpF}} {
		if err := checkFileOutput(o); err != nil {
			return err
		}
	}
	var sh experiments.Shard
	if *shard != "" {
		if *sweep != "" || *ens != "" || *temp != "" || *selection != "" {
			return fmt.Errorf("%w: --shard splits the main sweep only, not --sweep, --selection, --temperature or --ensemble", errUsage)
		}
		var err error
		if sh, err = experiments.ParseShard(*shard); err != nil {
			return fmt.Errorf("%w: --shard: %v", errUsage, err)
		}
	}
	if *sweep != "" {
		if *splits < 1 || *splits > 1000 {
			return fmt.Errorf("%w: --splits %d, want 1..1000", errUsage, *splits)
		}
		pr := newProgress(stderr, "sweep "+*sweep)
		if *first < 0 || *first > 1000 {
			return fmt.Errorf("%w: --first %d, want 0..1000", errUsage, *first)
		}
		opt := experiments.SweepOptions{Data: *sweep, Splits: *splits, First: *first, Progress: pr.update}
		g, err := parseGrid(*grid)
		if err != nil {
			return fmt.Errorf("%w: --grid: %v", errUsage, err)
		}
		if len(g) > 1 {
			return fmt.Errorf("%w: --sweep --grid takes one candidate, not %d", errUsage, len(g))
		}
		if len(g) == 1 {
			opt.Params, opt.Thresholds = g[0].Params, g[0].Thresholds
		}
		// --cuts and --train-jitter vary the default encoding, or --grid's.
		base := pipeline.DefaultEncoding
		if len(g) == 1 && g[0].Encoding != nil {
			base = *g[0].Encoding
		}
		if *cutsList != "" {
			for _, name := range strings.Split(*cutsList, ",") {
				c, err := booleanize.ParseCuts(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("%w: --cuts: %v", errUsage, err)
				}
				e := base
				e.Cuts = c
				opt.Encodings = append(opt.Encodings, e)
			}
		}
		if *trainJitter != "" {
			if *cutsList != "" {
				return fmt.Errorf("%w: --sweep takes --cuts or --train-jitter, not both", errUsage)
			}
			for _, v := range strings.Split(*trainJitter, ",") {
				var tb float64
				if n, err := fmt.Sscanf(strings.TrimSpace(v), "%g", &tb); err != nil || n != 1 || !(tb >= 0 && tb <= 10) {
					return fmt.Errorf("%w: --train-jitter: %q, want numbers in 0..10 (feature sd)", errUsage, v)
				}
				e := base
				e.TrainBandwidth = &tb
				opt.Encodings = append(opt.Encodings, e)
			}
		}
		if *temps != "" {
			for _, v := range strings.Split(*temps, ",") {
				var t float64
				if n, err := fmt.Sscanf(strings.TrimSpace(v), "%g", &t); err != nil || n != 1 || !(t > 0 && t <= 16) {
					return fmt.Errorf("%w: --temperatures: %q, want numbers in 0..16 (units of T)", errUsage, v)
				}
				opt.Temperatures = append(opt.Temperatures, t)
			}
		}
		table, err := experiments.EncodingSweep(context.Background(), opt)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, table)
		return nil
	}
	if *ens != "" {
		if *splits < 1 || *splits > 1000 || *first < 0 || *first > 1000 {
			return fmt.Errorf("%w: --splits %d, --first %d, want 1..1000 and 0..1000", errUsage, *splits, *first)
		}
		g, err := parseGrid(*grid)
		if err != nil {
			return fmt.Errorf("%w: --grid: %v", errUsage, err)
		}
		if len(g) > 1 {
			return fmt.Errorf("%w: --ensemble --grid takes one candidate, not %d", errUsage, len(g))
		}
		pr := newProgress(stderr, "ensemble "+*ens)
		opt := experiments.EnsembleOptions{Data: *ens, Splits: *splits, First: *first, Progress: pr.update}
		if len(g) == 1 {
			opt.Candidate = &g[0]
		}
		if *variants != "" {
			opt.Variants = strings.Split(*variants, ",")
		}
		opt.Dump = dumpTo(*dumpF, stderr)
		if opt.Load, err = loadDumps(*loadF); err != nil {
			return err
		}
		table, err := experiments.EnsembleStudy(context.Background(), opt)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, table)
		return nil
	}
	if *temp != "" {
		if *splits < 0 || *splits > 1000 || *oodSplits < 0 || *oodSplits > 1000 || *splits+*oodSplits == 0 || *first < 0 || *first > 1000 {
			return fmt.Errorf("%w: --splits %d, --ood-splits %d, --first %d, want 0..1000 each, splits not both 0", errUsage, *splits, *oodSplits, *first)
		}
		pr := newProgress(stderr, "temperature "+*temp)
		g, err := parseGrid(*grid)
		if err != nil {
			return fmt.Errorf("%w: --grid: %v", errUsage, err)
		}
		opt := experiments.TemperatureOptions{Data: *temp, Splits: *splits, First: *first, OODSplits: *oodSplits, Progress: pr.update, Grid: g}
		if *partial != "" {
			opt.Partial = func(table string) {
				if err := outfile.WriteFile(*partial, []byte(table)); err != nil {
					fmt.Fprintln(stderr, "ptm experiments:", err)
				}
			}
		}
		opt.Dump = dumpTo(*dumpF, stderr)
		if opt.Load, err = loadDumps(*loadF); err != nil {
			return err
		}
		table, err := experiments.TemperatureStudy(context.Background(), opt)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, table)
		return nil
	}
	if *selection != "" {
		if *splits < 0 || *splits > 1000 || *oodSplits < 0 || *oodSplits > 1000 || *splits+*oodSplits == 0 || *first < 0 || *first > 1000 {
			return fmt.Errorf("%w: --splits %d, --ood-splits %d, --first %d, want 0..1000 each, splits not both 0", errUsage, *splits, *oodSplits, *first)
		}
		var rs []pipeline.Selection
		if *rules != "" {
			for _, name := range strings.Split(*rules, ",") {
				r, err := pipeline.ParseSelection(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("%w: --rules: %v", errUsage, err)
				}
				rs = append(rs, r)
			}
		}
		g, err := parseGrid(*grid)
		if err != nil {
			return fmt.Errorf("%w: --grid: %v", errUsage, err)
		}
		pr := newProgress(stderr, "selection "+*selection)
		opt := experiments.SelectionOptions{Data: *selection, Splits: *splits, OODSplits: *oodSplits, Rules: rs, Progress: pr.update,
			ChoicesOnly: *choices, First: *first, Grid: g, Base: *base, CV: *cv, CVOnly: *cvOnly}
		if *partial != "" {
			opt.Partial = func(table string) {
				if err := outfile.WriteFile(*partial, []byte(table)); err != nil {
					fmt.Fprintln(stderr, "ptm experiments:", err)
				}
			}
		}
		table, err := experiments.SelectionStudy(context.Background(), opt)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, table)
		return nil
	}
	rule, err := pipeline.ParseSelection(*sel)
	if err != nil {
		return fmt.Errorf("%w: --select: %v", errUsage, err)
	}
	if *chooseOn != "" && *chooseOn != "carve" && *chooseOn != "cv" {
		return fmt.Errorf("%w: --choose-on %q, want carve or cv", errUsage, *chooseOn)
	}
	if *only != "" && *only != experiments.OnlyImages && *only != experiments.OnlyTables {
		return fmt.Errorf("%w: --only %q, want %s or %s", errUsage, *only, experiments.OnlyImages, experiments.OnlyTables)
	}
	if *out == "" {
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	pr := newProgress(stderr, "")
	opt := experiments.Options{Out: *out, Quick: *quick, Only: *only, WideGrids: *wide, Select: rule, ChooseOn: *chooseOn, Progress: stageProgress(stderr, pr.on, start), Shard: sh}
	if sh.N > 0 {
		names, err := experiments.ShardUnits(opt, sh)
		if err != nil {
			return err
		}
		if _, err := experiments.Run(ctx, opt); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "shard %s: wrote %d units to %s in %s\n", sh, len(names), filepath.Join(*out, "units"), time.Since(start).Round(time.Second))
		return nil
	}
	sum, err := experiments.Run(ctx, opt)
	if err != nil {
		return err
	}
	printSummary(stdout, *out, sum)
	return nil
}

// cmdExperimentsMerge is `ptm experiments merge`: the report of the
// shards' unit results.
func cmdExperimentsMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiments merge", "--out DIR [--partial] SHARD_DIR...", stderr)
	out := fs.String("out", "", "output `directory` for report.md, summary.json and the PNG figures (created if missing)")
	partial := fs.Bool("partial", false, "write the report and summary of the complete sections when units are missing (summary key meta.missing_units) instead of failing")
	var dirs []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *out == "" {
		return fmt.Errorf("%w: merge: --out is required", errUsage)
	}
	if err := checkDirOutput(pathFlag{"--out", *out}); err != nil {
		return err
	}
	if len(dirs) == 0 {
		return fmt.Errorf("%w: merge: name the shard directories (the --out of each `ptm experiments --shard I/N` run)", errUsage)
	}
	start := time.Now()
	pr := newProgress(stderr, "")
	sum, err := experiments.Merge(context.Background(), experiments.MergeOptions{Dirs: dirs, Out: *out, Partial: *partial, Progress: stageProgress(stderr, pr.on, start)})
	if err != nil {
		return err
	}
	if m := sum.Labels["meta.missing_units"]; m != "" {
		fmt.Fprintf(stderr, "ptm experiments merge: partial: units missing: %s\n", m)
	}
	printSummary(stdout, *out, sum)
	return nil
}

// printSummary prints where the report went and its key numbers.
func printSummary(stdout io.Writer, out string, sum *experiments.Summary) {
	fmt.Fprintf(stdout, "wrote %s, %s and %d figures in %s\n", filepath.Join(out, "report.md"), filepath.Join(out, "summary.json"),
		len(sum.Figures), sum.Elapsed.Round(time.Second))
	for _, k := range []string{"iris.splits20.ptm.accuracy_mean", "iris.splits20.ptm.ece_mean", "iris.splits20.gp.ece_mean",
		"iris.splits20.mlp.ece_mean", "iris.splits20.rf.ece_mean", "synthetic2d.ptm.entropy_outside",
		"synthetic2d.ptm_range.entropy_outside", "synthetic2d.gp.entropy_outside", "quant.b8.ece_mean", "quant.b8.agreement_mean",
		"mnist.test.ptm.accuracy", "mnist.test.ptm.ece", "mnist.test.ptm.auroc_entropy", "fashion_mnist.test.ptm.accuracy",
		"mnist.ood_fashion.ptm.auroc_entropy", "mnist.ood_fashion.ptm.auroc_mi"} {
		if v, ok := sum.Value(k); ok {
			fmt.Fprintf(stdout, "  %-40s %.4f\n", k, v)
		}
	}
}

// stageProgress reports experiment progress on w: on a terminal one line
// rewritten in place, otherwise one line per step, each with the elapsed
// time.
func stageProgress(w io.Writer, terminal bool, start time.Time) func(stage string, done, total int) {
	return func(stage string, done, total int) {
		el := time.Since(start).Round(time.Second)
		switch {
		case !terminal:
			fmt.Fprintf(w, "[%s] %s: %d/%d\n", el, stage, done, total)
		case done == total:
			fmt.Fprintf(w, "\r\033[K[%s] %s: %d/%d\n", el, stage, done, total)
		default:
			fmt.Fprintf(w, "\r\033[K[%s] %s: %d/%d", el, stage, done, total)
		}
	}
}

// parseGrid reads a comma-separated list of
// clauses/T/s/epochs/thresholds[/bandwidth/sets[/cuts]] (N = 100 states,
// consistent feedback; without bandwidth/sets the default encoding, with
// them pipeline.DefaultEncoding with that jitter, number of sets and
// threshold placement (booleanize.Cuts; default quantile)); "" = nil.
func parseGrid(s string) ([]pipeline.Candidate, error) {
	if s == "" {
		return nil, nil
	}
	const want = "want clauses/T/s/epochs/thresholds[/bandwidth/sets[/cuts]]"
	var out []pipeline.Candidate
	for _, item := range strings.Split(s, ",") {
		var c, t, e, th, m int
		var sp, h float64
		item = strings.TrimSpace(item)
		var enc *pipeline.Encoding
		parts := strings.Split(item, "/")
		switch len(parts) {
		case 5:
			if n, err := fmt.Sscanf(item, "%d/%d/%g/%d/%d", &c, &t, &sp, &e, &th); err != nil || n != 5 {
				return nil, fmt.Errorf("%q: %s", item, want)
			}
		case 7, 8:
			if n, err := fmt.Sscanf(strings.Join(parts[:7], "/"), "%d/%d/%g/%d/%d/%g/%d", &c, &t, &sp, &e, &th, &h, &m); err != nil || n != 7 {
				return nil, fmt.Errorf("%q: %s", item, want)
			}
			if !(h > 0 && h <= 2) || m < 1 || m > 64 {
				return nil, fmt.Errorf("%q: bandwidth %g or sets %d out of range (0..2, 1..64)", item, h, m)
			}
			en := pipeline.DefaultEncoding
			en.Bandwidth, en.Sets = h, m
			if len(parts) == 8 {
				if parts[7] == "" {
					return nil, fmt.Errorf("%q: empty threshold placement (%s)", item, want)
				}
				cuts, err := booleanize.ParseCuts(parts[7])
				if err != nil {
					return nil, fmt.Errorf("%q: %w", item, err)
				}
				en.Cuts = cuts
			}
			enc = &en
		default:
			return nil, fmt.Errorf("%q: %s", item, want)
		}
		if c < 1 || c > 10000 || t < 1 || sp <= 1 || e < 1 || e > 10000 || th < 1 || th > 64 {
			return nil, fmt.Errorf("%q out of range", item)
		}
		out = append(out, pipeline.Candidate{Params: ptm.Params{Clauses: c, T: t, S: sp, N: 100, Epochs: e, Feedback: ptm.ConsistentFeedback}, Thresholds: th, Encoding: enc})
	}
	return out, nil
}

// dumpTo returns a study's Dump callback writing to the file name (nil
// when name is empty); a write error is reported on stderr, the study
// goes on.
func dumpTo(name string, stderr io.Writer) func([]byte) {
	if name == "" {
		return nil
	}
	return func(b []byte) {
		if err := outfile.WriteFile(name, b); err != nil {
			fmt.Fprintln(stderr, "ptm experiments:", err)
		}
	}
}

// loadDumps reads the comma-separated dump files of --load (none when
// list is empty).
func loadDumps(list string) ([][]byte, error) {
	if list == "" {
		return nil, nil
	}
	var out [][]byte
	for _, name := range strings.Split(list, ",") {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("--load: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}
