package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// wantFigures are the figures the report links.
var wantFigures = []string{
	"xor_spv_clean.png", "xor_spv_noisy.png",
	"synthetic2d_data.png", "synthetic2d_uncertainty.png",
	"iris_ece_splits.png", "iris_uncertainty_boxplots.png", "iris_reliability.png",
	"quant_bits.png",
	"wine_uncertainty.png", "breast_cancer_uncertainty.png",
}

// contractDatasets and contractModels name the keys of issue 10's
// contract (contractKeys).
var (
	contractDatasets = []string{"iris", "wine", "breast_cancer"}
	contractModels   = []string{"ptm", "ptm_plain", "gp", "mlp", "rf"}
)

// contractKeys are the summary keys other code relies on: per data set
// and model the pooled and per-split scores, the out-of-distribution
// AUROCs of Iris and wine, and the 2-D far-outside uncertainty.
func contractKeys() []string {
	var keys []string
	for _, d := range contractDatasets {
		for _, m := range contractModels {
			for _, f := range []string{"auroc_entropy", "auroc_mi", "ece", "identical_samples_fraction"} {
				keys = append(keys, d+".pooled."+m+"."+f)
			}
			for _, f := range []string{"accuracy", "ece", "nll"} {
				keys = append(keys, d+".splits20."+m+"."+f+"_mean", d+".splits20."+m+"."+f+"_sd")
			}
		}
	}
	for _, d := range []string{"iris", "wine"} {
		for _, m := range contractModels {
			keys = append(keys, d+".ood."+m+".auroc_mi", d+".ood."+m+".auroc_entropy")
		}
	}
	for _, m := range []string{"ptm", "ptm_plain", "gp"} {
		keys = append(keys, "synthetic2d."+m+".mi_outside", "synthetic2d."+m+".entropy_outside")
	}
	return keys
}

// wantKeys lists the summary keys every run must have.
func wantKeys() []string {
	keys := []string{
		"meta.mode", "meta.k", "meta.ece_bins", "meta.seconds",
		"xor.clean.accuracy", "xor.noisy.accuracy", "xor.noisy.accuracy_ceiling", "xor.clean.undecided", "xor.noisy.undecided",
		"synthetic2d.n_inside", "synthetic2d.n_near", "synthetic2d.n_outside", "synthetic2d.grid", "synthetic2d.gp.train_rows",
		"synthetic2d.ptm.params", "synthetic2d.ptm.mapping",
		"synthetic2d.ptm.entropy_outside_minus_gp", "synthetic2d.ptm_plain.entropy_outside_minus_gp", "synthetic2d.ptm_range.entropy_outside_minus_gp",
		"synthetic2d.ptm.encoding", "synthetic2d.ptm_plain.mapping",
		"iris.splits20.splits", "iris.test_rows", "iris.ptm.grid",
		"iris.splits20.ptm_softmax_cal.temperature_mean", "iris.splits20.ptm_vote_cal.smoothing_mean",
		"quant.clause_lanes", "quant.literal_lanes", "quant.lfsr_width", "quant.mapping",
		"quant.float_hw_reseed.agreement_mean",
	}
	for _, v := range []string{"clean", "noisy"} {
		for j := 0; j < 4; j++ {
			for _, l := range []string{"x1", "x2", "not_x1", "not_x2"} {
				keys = append(keys, fmt.Sprintf("xor.%s.include.c%d.%s", v, j, l))
			}
		}
	}
	for _, m := range []string{"ptm", "ptm_plain", "ptm_range", "gp", "mlp", "rf"} {
		for _, f := range []string{"accuracy", "ece", "nll"} {
			keys = append(keys, "synthetic2d."+m+"."+f)
		}
		for _, f := range []string{"entropy", "std", "mi"} {
			for _, g := range []string{"inside", "near", "outside"} {
				keys = append(keys, "synthetic2d."+m+"."+f+"_"+g)
			}
		}
	}
	stats := []string{"_mean", "_std", "_min", "_max", "_n"}
	for _, m := range []string{"ptm", "ptm_plain", "ptm_vote", "ptm_vote_cal", "ptm_softmax_cal", "gp", "mlp", "rf"} {
		for _, f := range []string{"accuracy", "ece", "nll", "brier", "auroc_entropy", "entropy_correct", "entropy_incorrect", "mi_correct", "mi_incorrect"} {
			for _, st := range stats {
				keys = append(keys, "iris.splits20."+m+"."+f+st)
			}
		}
		for _, f := range []string{"accuracy", "ece", "nll", "brier", "auroc_entropy"} {
			keys = append(keys, "iris.paper_split."+m+"."+f)
		}
	}
	for _, m := range []string{"ptm", "ptm_vote", "ptm_vote_cal", "ptm_softmax_cal"} {
		keys = append(keys, "iris.splits20."+m+".mapping")
	}
	for _, m := range []string{"ptm", "ptm_plain", "gp", "mlp", "rf"} {
		if m != "ptm_plain" {
			keys = append(keys, "iris.paper_split.paper_ece."+m)
		}
		for _, f := range []string{"n_correct", "n_incorrect", "entropy_correct_median", "entropy_incorrect_median", "mi_correct_median", "mi_incorrect_median", "auroc_entropy", "auroc_mi", "ece"} {
			keys = append(keys, "iris.pooled."+m+"."+f)
		}
	}
	for _, m := range []string{"gp", "mlp", "rf"} {
		for _, f := range []string{"ece", "accuracy", "nll", "brier"} {
			keys = append(keys, "iris.splits20.diff.ptm_minus_"+m+"."+f+"_mean", "iris.splits20.diff.ptm_minus_"+m+"."+f+"_se")
		}
	}
	for _, p := range []string{"float", "float_hw", "float_hw_reseed", "b8", "b10", "b12", "b16"} {
		for _, f := range []string{"accuracy", "ece", "nll", "brier"} {
			for _, st := range stats {
				keys = append(keys, "quant."+p+"."+f+st)
			}
		}
	}
	for _, b := range []int{8, 10, 12, 16} {
		keys = append(keys, fmt.Sprintf("quant.b%d.agreement_mean", b), fmt.Sprintf("quant.b%d.include_err_max", b), fmt.Sprintf("quant.b%d.include_err_mean", b))
	}
	for _, d := range contractDatasets {
		keys = append(keys, d+".splits20.splits", d+".test_rows", d+".ptm.grid", d+".best_baseline", d+".boolean_inputs",
			d+".splits20.ptm.mapping", d+".splits20.ptm.encoding", d+".splits20.ptm_plain.mapping")
	}
	return append(keys, contractKeys()...)
}

// quick holds the one unsharded quick run the tests share.
var quick struct {
	once     sync.Once
	dir      string
	sum      *Summary
	progress []string
	err      error
}

// quickRun runs the quick configuration once per test binary, into a
// directory removed by TestMain, logging progress to stderr.
func quickRun() (string, *Summary, []string, error) {
	quick.once.Do(func() {
		quick.dir, quick.err = os.MkdirTemp("", "ptm-quick-")
		if quick.err != nil {
			return
		}
		var mu sync.Mutex
		quick.sum, quick.err = Run(context.Background(), Options{Out: quick.dir, Quick: true, Only: OnlyTables, Progress: func(stage string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			quick.progress = append(quick.progress, fmt.Sprintf("%s %d/%d", stage, done, total))
		}})
	})
	return quick.dir, quick.sum, quick.progress, quick.err
}

// TestMain removes the shared quick run's directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if quick.dir != "" {
		os.RemoveAll(quick.dir)
	}
	os.Exit(code)
}

// TestQuickRun runs the whole quick configuration and checks its output:
// every figure a valid non-empty PNG, summary.json parseable with the full
// key set, and sane values.
func TestQuickRun(t *testing.T) {
	dir, sum, progressLog, err := quickRun()
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Quick || sum.Elapsed <= 0 {
		t.Errorf("summary Quick=%v Elapsed=%v", sum.Quick, sum.Elapsed)
	}
	t.Logf("quick run took %s", sum.Elapsed)
	for _, f := range wantFigures {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("figure %s: %v", f, err)
			continue
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("figure %s is not a valid PNG: %v", f, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 200 {
			t.Errorf("figure %s is %dx%d pixels", f, b.Dx(), b.Dy())
		}
	}
	if len(sum.Figures) != len(wantFigures) {
		t.Errorf("summary lists figures %v, want %v", sum.Figures, wantFigures)
	}

	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range wantFigures {
		if !bytes.Contains(report, []byte("]("+f+")")) {
			t.Errorf("report.md does not link %s", f)
		}
	}
	for _, s := range []string{"## Findings", "Uncertainty targets", "## 1. Noisy XOR", "## 2. 2-D synthetic", "## 3. Iris", "## 4. Hardware path",
		"## 5. Wine and breast cancer", "## 6. Out of distribution", "quick run", "very noisy"} {
		if !bytes.Contains(report, []byte(s)) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	if bytes.Contains(report, []byte("NaN")) || bytes.Contains(report, []byte("%!")) || bytes.Contains(report, []byte("| -1")) {
		t.Error("report.md contains NaN or a formatting error")
	}

	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]any
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, k := range wantKeys() {
		if _, ok := js[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	if figs, ok := js["figures"].([]any); !ok || len(figs) != len(wantFigures) {
		t.Errorf("summary.json figures = %v", js["figures"])
	}
	// Every JSON number equals the Summary's value.
	for k, v := range js {
		if f, ok := v.(float64); ok {
			if got, _ := sum.Value(k); got != f {
				t.Errorf("%s: json %v, Summary %v", k, f, got)
			}
		}
	}
	if js["meta.mode"] != "quick" || js["iris.splits20.splits"] != 3.0 {
		t.Errorf("mode %v splits %v", js["meta.mode"], js["iris.splits20.splits"])
	}

	// The contract keys are finite numbers. A pooled AUROC of wrong
	// predictions is undefined (null) only when a model made no error on
	// any test row of the quick run's few splits.
	for _, k := range contractKeys() {
		v, ok := js[k].(float64)
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			continue
		}
		if i := strings.Index(k, ".pooled."); i > 0 && strings.Contains(k, ".auroc_") {
			if n, _ := js[k[:strings.LastIndex(k, ".")]+".n_incorrect"].(float64); n == 0 {
				t.Logf("%s undefined: no wrong prediction", k)
				continue
			}
		}
		t.Errorf("contract key %s = %v, want a finite number", k, js[k])
	}
	for _, d := range []string{"iris", "wine"} {
		for _, m := range contractModels {
			for _, f := range []string{"auroc_mi", "auroc_entropy"} {
				if v, _ := js[d+".ood."+m+"."+f].(float64); !(v >= 0 && v <= 1) {
					t.Errorf("%s.ood.%s.%s = %v, want in [0, 1]", d, m, f, v)
				}
			}
		}
	}

	num := func(k string) float64 {
		v, ok := js[k].(float64)
		if !ok {
			t.Errorf("%s = %v, want a number", k, js[k])
			return math.NaN()
		}
		return v
	}
	for k := range js {
		if strings.Contains(k, ".diff.") {
			continue
		}
		switch {
		case strings.Contains(k, "accuracy") && !strings.HasSuffix(k, "_std") && !strings.HasSuffix(k, "_n"),
			strings.Contains(k, "agreement") && !strings.HasSuffix(k, "_std") && !strings.HasSuffix(k, "_n"),
			strings.HasSuffix(k, ".ece") || strings.Contains(k, ".ece_m"):
			if v := num(k); !(v >= 0 && v <= 1) {
				t.Errorf("%s = %v, want in [0, 1]", k, v)
			}
		case strings.HasPrefix(k, "synthetic2d.") && (strings.Contains(k, ".entropy_") || strings.Contains(k, ".mi_")) && !strings.Contains(k, "minus"):
			if v := num(k); !(v >= 0 && v <= 1+1e-12) { // 2 classes: log2 2 = 1 bit
				t.Errorf("%s = %v, want in [0, 1] bits", k, v)
			}
		case (strings.HasPrefix(k, "iris.") || strings.HasPrefix(k, "wine.")) && (strings.Contains(k, ".entropy_") || strings.Contains(k, ".mi_")) && !strings.HasSuffix(k, "_std") && !strings.HasSuffix(k, "_n"):
			if v, ok := js[k].(float64); ok && !(v >= 0 && v <= math.Log2(3)+1e-12) {
				t.Errorf("%s = %v, want in [0, log2 3] bits", k, v)
			}
		}
	}
	if num("xor.clean.accuracy") < 0.99 {
		t.Errorf("noise-free XOR accuracy %v, want about 1", num("xor.clean.accuracy"))
	}
	if a := num("iris.splits20.ptm.accuracy_mean"); a < 0.85 {
		t.Errorf("Iris PTM accuracy %v, want >= 0.85 even in a quick run", a)
	}
	// The GP's entropy grows away from the data; the MLP's does not need to.
	if in, out := num("synthetic2d.gp.entropy_inside"), num("synthetic2d.gp.entropy_outside"); !(out > in) {
		t.Errorf("GP entropy inside %v, far outside %v: want higher outside", in, out)
	}
	if n := num("synthetic2d.n_inside") + num("synthetic2d.n_near") + num("synthetic2d.n_outside"); n != 2000 {
		t.Errorf("regions hold %v test points, want 2000", n)
	}
	// Progress reported every stage and finished each.
	last := map[string]string{}
	for _, l := range progressLog {
		i := strings.LastIndex(l, " ")
		last[l[:i]] = l[i+1:]
	}
	for _, st := range []string{"noisy XOR", "2D synthetic", "data sets"} {
		v, ok := last[st]
		if !ok {
			t.Errorf("no progress for stage %q (log %v)", st, progressLog)
			continue
		}
		if p := strings.Split(v, "/"); p[0] != p[1] {
			t.Errorf("stage %q ended at %s", st, v)
		}
	}
}

func TestRunNeedsOut(t *testing.T) {
	if _, err := Run(context.Background(), Options{}); err == nil {
		t.Fatal("Run without Out succeeded")
	}
}

func TestRunRejectsChooseOn(t *testing.T) {
	_, err := Run(context.Background(), Options{Out: t.TempDir(), Quick: true, ChooseOn: "test"})
	if err == nil || !strings.Contains(err.Error(), `"test"`) {
		t.Fatalf("ChooseOn \"test\": %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{Out: t.TempDir(), Quick: true}); err == nil {
		t.Fatal("cancelled Run succeeded")
	}
}

// The encoding sweep scores every encoding x mapping on validation rows:
// one table row each, with finite accuracies.
func TestEncodingSweep(t *testing.T) {
	p := ptm.DefaultParams()
	p.Epochs = 10
	table, err := EncodingSweep(context.Background(), SweepOptions{Data: "iris", Splits: 1, K: 10, Params: p,
		Encodings: []pipeline.Encoding{pipeline.Plain, {Sets: 2, Bandwidth: 0.2, Margin: 1, WholeRow: true}}})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| plain") || strings.HasPrefix(line, "| 2 threshold sets") {
			rows++
			if strings.Contains(line, "NaN") {
				t.Errorf("row with NaN: %s", line)
			}
		}
	}
	if rows != 2*len(sweepMappings) {
		t.Errorf("%d table rows, want %d:\n%s", rows, 2*len(sweepMappings), table)
	}
}

// The selection study compares the rules on the same splits: one table row
// per rule, each with its choice counted once per split and no NaN (the
// OOD columns are filled when held-out classes are run), and a table after
// every finished split.
func TestSelectionStudy(t *testing.T) {
	grid := []pipeline.Candidate{irisCandidate(10, 5, 2, 10, 4), irisCandidate(20, 10, 3, 10, 4)}
	var partials int
	table, err := SelectionStudy(context.Background(), SelectionOptions{Data: "iris", Splits: 1, OODSplits: 1, K: 10, Grid: grid,
		Partial: func(string) { partials++ }})
	if err != nil {
		t.Fatal(err)
	}
	if partials != 4 { // one in-distribution split, three held-out classes
		t.Errorf("%d partial tables, want 4", partials)
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		for _, r := range pipeline.Selections {
			if strings.HasPrefix(line, "| "+string(r)+" |") {
				rows++
				if strings.Contains(line, "NaN") || strings.Count(line, ": 1") != 1 {
					t.Errorf("bad row: %s", line)
				}
			}
		}
	}
	if rows != len(pipeline.Selections) {
		t.Errorf("%d rule rows, want %d:\n%s", rows, len(pipeline.Selections), table)
	}
	// Base: the first candidate alone, on the same split; it must pick it.
	table, err = SelectionStudy(context.Background(), SelectionOptions{Data: "iris", Splits: 1, First: 2, K: 10, Grid: grid, Base: 1,
		Rules: []pipeline.Selection{pipeline.SelectAccuracy}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "| accuracy, first 1 candidates |") || !strings.Contains(table, "10/5/2: 1, 20/10/3: 0 |") {
		t.Errorf("base rows:\n%s", table)
	}
	if _, err := SelectionStudy(context.Background(), SelectionOptions{Data: "iris", Grid: grid, Base: 3}); err == nil {
		t.Error("base beyond the grid accepted")
	}
	if _, err := SelectionStudy(context.Background(), SelectionOptions{Data: "mnist"}); err == nil {
		t.Error("unknown data set accepted")
	}
}

// The choices-only study runs the validation step alone: one row per split
// and the agreement count.
func TestSelectionChoices(t *testing.T) {
	grid := []pipeline.Candidate{irisCandidate(10, 5, 2, 10, 4), irisCandidate(20, 10, 3, 10, 4)}
	table, err := SelectionStudy(context.Background(), SelectionOptions{Data: "iris", Splits: 2, First: 3, K: 10, Grid: grid, ChoicesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "| 3 |") || !strings.Contains(table, "| 4 |") || !strings.Contains(table, "of 2 splits") {
		t.Errorf("table:\n%s", table)
	}
}
