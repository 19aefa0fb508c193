package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// tinyIrisModel trains the tests' smallest Iris model (4 clauses, 8
// states, one epoch) into dir/m.ptm and returns its path.
func tinyIrisModel(t *testing.T, dir string) string {
	t.Helper()
	model := filepath.Join(dir, "m.ptm")
	if code, _, errs := runCLI("train", "--data", "iris", "--clauses", "4", "--states", "8", "--epochs", "1", "-o", model); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	return model
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"train", "--data", "iris"}, 2, "--data and -o are required"},
		{[]string{"train", "--data", "iris", "-o", "x", "--clauses", "0"}, 2, "clauses = 0"},
		{[]string{"train", "--data", "iris", "-o", "x", "--feedback", "magic"}, 2, `feedback rule "magic"`},
		{[]string{"train", "--data", "iris", "-o", "x", "--mapping", "linear"}, 2, `unknown probability mapping "linear"`},
		{[]string{"eval", "--model", "m"}, 2, "--model and --data are required"},
		{[]string{"eval", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"inspect"}, 2, "--model is required"},
		{[]string{"train", "--help"}, 0, "Usage: ptm train"},
		{[]string{"train", "--data", "iris", "-o", "x", "--cuts", "trees"}, 2, `--cuts: booleanize: threshold placement "trees", want quantile, supervised or mdl`},
		{[]string{"experiments", "--sweep", "iris", "--cuts", "supervised,x"}, 2, `--cuts: booleanize: threshold placement "x"`},
		{[]string{"experiments", "--sweep", "iris", "--temperatures", "0.1,-1"}, 2, `--temperatures: "-1", want numbers in 0..16`},
		{[]string{"experiments", "--sweep", "iris", "--grid", "20/10/2/10/6,40/10/2/10/6"}, 2, "--sweep --grid takes one candidate, not 2"},
		{[]string{"synth", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--sets-max", "0"}, 2, "--sets-max 0, want 1..255"},
		{[]string{"synth", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--sets-max", "256"}, 2, "--sets-max 256, want 1..255"},
		{[]string{"board", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--sets-max", "0"}, 2, "--sets-max 0, want 1..255"},
		{[]string{"synth", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--core-clock-ratio", "3"}, 2, "--core-clock-ratio 3, want 1"},
		{[]string{"synth", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--lanes", "2", "--core-only", "--core-clock-ratio", "2"}, 2, "core clock ratio 2 is a board top's"},
		{[]string{"board", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--core-clock-ratio", "0"}, 2, "--core-clock-ratio 0, want 1 or 2"},
		{[]string{"synth", "--random-shape", "classes=2,clauses=2,features=2,t=2", "--toolchain", "vivado"}, 2, `--toolchain: synth: bad options: toolchain "vivado": want debian or yowasp`},
		{[]string{"experiments", "--ensemble", "iris", "--splits", "0"}, 2, "--splits 0, --first 0, want 1..1000"},
		{[]string{"experiments", "--out", "x", "--choose-on", "test"}, 2, `--choose-on "test", want carve or cv`},
		{[]string{"experiments", "--out", "x", "--quick", "--shard", "5/4"}, 2, `--shard: shard "5/4": want 1 <= I <= N <= 10000`},
		{[]string{"experiments", "--out", "x", "--quick", "--shard", "0/4"}, 2, `--shard: shard "0/4": want 1 <= I <= N`},
		{[]string{"experiments", "--out", "x", "--quick", "--shard", "2"}, 2, `--shard: shard "2": want I/N, e.g. 2/4`},
		{[]string{"experiments", "--out", "x", "--quick", "--shard", "a/4"}, 2, `--shard: shard "a/4": want I/N`},
		{[]string{"experiments", "--sweep", "iris", "--shard", "1/2"}, 2, "--shard splits the main sweep only"},
		{[]string{"experiments", "merge", "--out", "x"}, 2, "merge: name the shard directories"},
		{[]string{"stream", "--model", "m.ptm", "--data", "iris"}, 2, "--uart or --eth is required (one per board)"},
		{[]string{"stream", "--uart", "/dev/pts/7", "--uart", "/dev/pts/7@115200", "--model", "m.ptm", "--data", "iris"}, 2, "uart:/dev/pts/7 given twice: one link per board"},
		{[]string{"stream", "--uart", "", "--model", "m.ptm", "--data", "iris"}, 2, "empty link"},
		{[]string{"experiments", "merge", "d1", "d2"}, 2, "merge: --out is required"},
		{[]string{"experiments", "merge", "--out", "x", "/nonexistent-shard"}, 1, "merge: stat /nonexistent-shard: no such file"},
		{[]string{"experiments", "merge", "--out", "x", "."}, 1, "holds no unit files (units/*.gob): not a shard's output directory"},
		{[]string{"experiments", "--out", "x", "--only", "pictures"}, 2, `--only "pictures", want images or tables`},
		{[]string{"experiments", "--ensemble", "nosuch"}, 1, `ensemble study: unknown data set "nosuch"`},
		{[]string{"experiments", "--ensemble", "iris", "--variants", "bogus"}, 1, `unknown variant "bogus" (want shared, perset, perset-boot)`},
		{[]string{"experiments", "--ensemble", "iris", "--grid", "20/10/2/10/6,40/10/2/10/6"}, 2, "--ensemble --grid takes one candidate, not 2"},
		{[]string{"synth", "--trainer", "--toolchain", "yosys"}, 2, `--toolchain: synth: bad options: toolchain "yosys": want debian or yowasp`},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("ptm %v: exit %d stderr %q; want exit %d containing %q", c.args, code, stderr, c.code, c.msg)
		}
	}
}

func TestTrainEvalInspect(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "iris.ptm")
	code, out, errs := runCLI("train", "--data", "iris", "--seed", "1", "--epochs", "20", "--clauses", "10", "--no-tune", "-o", model)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "120 training rows, 30 test rows") {
		t.Errorf("train output: %s", out)
	}
	code, out, errs = runCLI("eval", "--model", model, "--data", "iris", "--split", "test", "--samples", "50", "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	for _, k := range []string{"accuracy", "ece", "nll", "brier", "auroc_entropy", "entropy_correct", "entropy_incorrect", "mi_correct", "mi_incorrect", "samples"} {
		if _, ok := got[k]; !ok {
			t.Errorf("eval --json lacks %q", k)
		}
	}
	if got["samples"].(float64) != 50 || got["queries"].(float64) != 30 {
		t.Errorf("samples/queries: %v %v", got["samples"], got["queries"])
	}
	if acc := got["accuracy"].(float64); acc < 0.7 || acc > 1 {
		t.Errorf("accuracy %v", acc)
	}
	// --cuts supervised trains on class-boundary thresholds and says so;
	// the model file records the placement.
	sup := filepath.Join(dir, "iris-sup.ptm")
	code, out, errs = runCLI("train", "--data", "iris", "--seed", "1", "--epochs", "2", "--clauses", "10", "--no-tune", "--cuts", "supervised", "-o", sup)
	if code != 0 || !strings.Contains(out, "whole row, supervised thresholds") {
		t.Fatalf("train --cuts supervised: exit %d: %s%s", code, out, errs)
	}
	if f, _, err := modelfile.Read(sup); err != nil || f.Booleanizer.Cuts != booleanize.Supervised || f.Encoding.Cuts != booleanize.Supervised {
		t.Errorf("model file placement: %v", err)
	}
	code, out, _ = runCLI("inspect", "--model", model, "--tm", "2", "--clause", "0", "--all")
	if code != 0 || !strings.Contains(out, "TM 2 (virginica)") || !strings.Contains(out, "NOT petal_width>=") {
		t.Errorf("inspect: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("inspect", "--model", model, "--spv", "0,1,2")
	if code != 0 || !strings.Contains(out, "state  200 include") {
		t.Errorf("inspect --spv: exit %d\n%s", code, out)
	}
	code, _, errs = runCLI("inspect", "--model", model, "--spv", "0,99,2")
	if code != 2 || !strings.Contains(errs, "outside") {
		t.Errorf("inspect --spv out of range: exit %d %s", code, errs)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "bad.ptm")
	if err := os.WriteFile(corrupt, []byte("PTMMODEL\x01\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("eval", "--model", corrupt, "--data", "iris")
	if code != 1 || !strings.Contains(errs, "bad.ptm") {
		t.Errorf("corrupt model: exit %d %q", code, errs)
	}
	code, _, errs = runCLI("eval", "--model", filepath.Join(dir, "missing.ptm"), "--data", "iris")
	if code != 1 || !strings.Contains(errs, "missing.ptm") {
		t.Errorf("missing model: exit %d %q", code, errs)
	}
	csv := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(csv, []byte("a,b,label\n1,2,x\n3,oops,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI("train", "--data", csv, "-o", filepath.Join(dir, "m.ptm"))
	if code != 1 || !strings.Contains(errs, "d.csv") || !strings.Contains(errs, "d.csv:3:") {
		t.Errorf("bad CSV: exit %d %q", code, errs)
	}
}

func TestGenAndCosim(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI("gen", "--random-shape", "classes=3,clauses=5,features=7,t=3", "--lanes", "7", "--bits", "10", "--out", dir)
	if code != 0 || !strings.Contains(out, "ptm_core") || !strings.Contains(out, "D=") {
		t.Fatalf("gen: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "ptm_core.v")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"gen", "--random-shape", "classes=3,clauses=5,features=7", "--lanes", "1000", "--out", dir}, "1000 lanes cannot be split"},
		{[]string{"gen", "--random-shape", "classes=3,clauses=5,features=7", "--bits", "20", "--out", dir}, "20-bit probabilities, want 4..16"},
		{[]string{"gen", "--random-shape", "classes=40,clauses=5,features=7", "--out", dir}, "40 classes"},
		{[]string{"gen", "--random-shape", "classes=3,clauses=5,features=7", "--max-k", "1000000000", "--out", dir}, "overflows a 32-bit votes word"},
		{[]string{"gen", "--model", filepath.Join(dir, "nope.ptm"), "--out", dir}, "nope.ptm"},
		{[]string{"cosim", "--random-shape", "classes=3,clauses=5,features=7", "--k", "0"}, "--k 0"},
		{[]string{"cosim", "--random-shape", "classes=3,clauses=5,features=7", "--k", "300"}, "want 1..255"},
		{[]string{"cosim", "--random-shape", "colors=3"}, `unknown key "colors"`},
	} {
		code, _, errs := runCLI(c.args...)
		if code == 0 || !strings.Contains(errs, c.msg) {
			t.Errorf("ptm %v: exit %d, stderr %q, want failure naming %q", c.args, code, errs, c.msg)
		}
	}
	if testing.Short() {
		t.Skip("co-simulation builds a Verilator model")
	}
	code, out, errs = runCLI("cosim", "--random-shape", "classes=4,clauses=3,features=5,t=2", "--lanes", "3", "--bits", "9", "--vectors", "200", "--k", "8", "--json")
	if code != 0 {
		t.Fatalf("cosim: exit %d\n%s", code, errs)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res["mismatches"].(float64) != 0 || res["samples_compared"].(float64) != 1600 || res["lanes"].(float64) != 3 || res["bits"].(float64) != 9 {
		t.Errorf("cosim result %v", res)
	}
}

// An unwritable --out fails at once, before the model is read or the
// board is touched (it used to fail only after the whole stream).
func TestStreamOutCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "no-such-dir", "result.json")
	code, _, errs := runCLI("stream", "--uart", filepath.Join(dir, "no-such-port"), "--model", filepath.Join(dir, "missing.ptm"),
		"--data", "iris", "--out", out)
	if code == 0 || !strings.Contains(errs, "--out") || !strings.Contains(errs, "no-such-dir") || strings.Contains(errs, "missing.ptm") {
		t.Errorf("unwritable --out: exit %d %q; want an --out error before the model is read", code, errs)
	}
	// A writable --out that was not there before is removed again when
	// the run fails before any result.
	out = filepath.Join(dir, "result.json")
	code, _, errs = runCLI("stream", "--uart", filepath.Join(dir, "no-such-port"), "--model", filepath.Join(dir, "missing.ptm"),
		"--data", "iris", "--out", out)
	if code == 0 || !strings.Contains(errs, "missing.ptm") {
		t.Errorf("missing model: exit %d %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out file left behind after a failed run: %v", err)
	}
	code, _, errs = runCLI("stream", "--uart", "x", "--model", "m", "--data", "iris", "--deadline", "0s")
	if code != 2 || !strings.Contains(errs, "--deadline") {
		t.Errorf("--deadline 0: exit %d %q", code, errs)
	}
}

// parseGrid reads clauses/T/s/epochs/thresholds lists and rejects bad ones.
func TestParseGrid(t *testing.T) {
	g, err := parseGrid("60/20/2/50/6, 100/25/2.5/40/10")
	if err != nil || len(g) != 2 || g[1].Params.Clauses != 100 || g[1].Params.S != 2.5 || g[1].Params.Epochs != 40 || g[1].Thresholds != 10 {
		t.Fatalf("got %+v, %v", g, err)
	}
	if g, err := parseGrid(""); g != nil || err != nil {
		t.Errorf("empty: %v, %v", g, err)
	}
	g, err = parseGrid("60/20/2/50/6/0.075/4")
	if err != nil || len(g) != 1 || g[0].Encoding == nil || g[0].Encoding.Bandwidth != 0.075 || g[0].Encoding.Sets != 4 ||
		g[0].Encoding.Margin != pipeline.DefaultEncoding.Margin || g[0].Encoding.WholeRow != pipeline.DefaultEncoding.WholeRow {
		t.Fatalf("encoding: got %+v, %v", g, err)
	}
	g, err = parseGrid("60/20/2/50/6/0.15/8/supervised-boot,60/20/2/50/6/0.15/8/quantile")
	if err != nil || len(g) != 2 || g[0].Encoding.Cuts != booleanize.Cuts("supervised-boot") || g[1].Encoding.Cuts != booleanize.Quantile || g[0].Encoding.Sets != 8 {
		t.Fatalf("cuts: got %+v, %v", g, err)
	}
	if _, err := parseGrid("60/20/2/50/6/0.15/8/trees"); err == nil || !strings.Contains(err.Error(), `"trees"`) {
		t.Errorf("bad cuts: %v", err)
	}
	if g, err := parseGrid("60/20/2/50/6"); err != nil || g[0].Encoding != nil {
		t.Errorf("no encoding fields: got %+v, %v", g, err)
	}
	for _, bad := range []string{"60/20/2/50", "60/20/1/50/6", "0/20/2/50/6", "a/b/c/d/e", "60/20/2/50/6/0.1", "60/20/2/50/6/0/8", "60/20/2/50/6/0.1/0", "60/20/2/50/6/0.1/8/1", "60/20/2/50/6/0.1/8/supervised/x", "60/20/2/50/6/0.1/8/"} {
		if _, err := parseGrid(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
