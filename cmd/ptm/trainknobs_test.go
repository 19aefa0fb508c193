package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestTrainKnobs: `ptm train --weight-clip 4 --literal-budget 20` on 400
// MNIST training images records both in the model file, keeps every class
// weight within +-4 (and some at it), trains a different model than
// without them, and `--resume` keeps them: 1 + 1 epochs give the file of
// 2 epochs in one run byte for byte. Out-of-range values are refused.
func TestTrainKnobs(t *testing.T) {
	dir := mnistSubset(t, 400, 100)
	tmp := t.TempDir()
	at := func(name string) string { return filepath.Join(tmp, name) }
	base := []string{"train", "--data", dir, "--clauses", "16", "-T", "40", "--val-rows", "40", "--workers", "2", "--spv-bits", "15"}
	knobs := []string{"--weight-clip", "4", "--literal-budget", "20"}
	run := func(args ...string) {
		t.Helper()
		if code, _, errs := runCLI(args...); code != 0 {
			t.Fatalf("ptm %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
	run(append(append(base, knobs...), "--epochs", "1", "-o", at("k1.ptm"))...)
	f, _, err := modelfile.ReadConv(at("k1.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Trainer.WeightClip != 4 || f.Trainer.LiteralBudget != 20 {
		t.Errorf("file records weight_clip %d, literal_budget %d, want 4 and 20", f.Trainer.WeightClip, f.Trainer.LiteralBudget)
	}
	var m int32
	for _, w := range f.Head.Weights {
		m = max(m, w, -w)
	}
	if m != 4 {
		t.Errorf("max |w| = %d with --weight-clip 4, want 4", m)
	}
	run(append(base, "--epochs", "1", "-o", at("free.ptm"))...)
	g, _, err := modelfile.ReadConv(at("free.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Trainer.WeightClip != 0 || g.Trainer.LiteralBudget != 0 {
		t.Errorf("file without the flags records weight_clip %d, literal_budget %d, want 0 and 0", g.Trainer.WeightClip, g.Trainer.LiteralBudget)
	}
	t.Logf("[progress] expected included literals: %.0f with the knobs, %.0f without", sum64(f.Model().Include), sum64(g.Model().Include))

	run("train", "--resume", at("k1.ptm"), "--data", dir, "--epochs", "1", "-o", at("k1+1.ptm"))
	run(append(append(base, knobs...), "--epochs", "2", "-o", at("k2.ptm"))...)
	a, _ := os.ReadFile(at("k2.ptm"))
	b, _ := os.ReadFile(at("k1+1.ptm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("with the knobs, 1 + 1 epochs (%.16s) differ from 2 in one run (%.16s)", modelfile.Hash(b), modelfile.Hash(a))
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--weight-clip", "-1"}, "--weight-clip -1, want 1..32767"},
		{[]string{"--weight-clip", "32768"}, "--weight-clip 32768"},
		{[]string{"--weight-clip", "9", "--structure", "per-class"}, "per-class"},
		{[]string{"--literal-budget", "273"}, "--literal-budget 273, want 1..272"},
		{[]string{"--literal-budget", "-2"}, "--literal-budget -2"},
	} {
		args := append(append(base, c.args...), "-o", at("bad.ptm"))
		code, _, errs := runCLI(args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("ptm %s: exit %d, %q; want exit 2 naming %q", strings.Join(args, " "), code, errs, c.want)
		}
	}
	if code, _, errs := runCLI("train", "--resume", at("k1.ptm"), "--data", dir, "--epochs", "1", "--weight-clip", "8", "-o", at("x.ptm")); code != 2 || !strings.Contains(errs, "--weight-clip") {
		t.Errorf("--resume with --weight-clip: exit %d, %q; want exit 2 naming --weight-clip", code, errs)
	}
}

func sum64(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// TestTrainBoost: `ptm train --boost-true-positive` records
// trainer.boost_true_positive in the model file (absent without the
// flag), trains a model with more included literals than without, `ptm
// inspect` names it, and `--resume` keeps it: 1 + 1 epochs give the file
// of 2 epochs in one run byte for byte; `--resume` refuses the flag.
func TestTrainBoost(t *testing.T) {
	dir := mnistSubset(t, 400, 100)
	tmp := t.TempDir()
	at := func(name string) string { return filepath.Join(tmp, name) }
	base := []string{"train", "--data", dir, "--clauses", "16", "-T", "40", "--val-rows", "40", "--workers", "2", "--spv-bits", "15"}
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(args...)
		if code != 0 {
			t.Fatalf("ptm %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	run(append(base, "--boost-true-positive", "--epochs", "1", "-o", at("b1.ptm"))...)
	run(append(base, "--epochs", "1", "-o", at("free.ptm"))...)
	f, _, err := modelfile.ReadConv(at("b1.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := modelfile.ReadConv(at("free.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Trainer.BoostTruePositive || g.Trainer.BoostTruePositive {
		t.Errorf("files record boost_true_positive %v with the flag and %v without, want true and false", f.Trainer.BoostTruePositive, g.Trainer.BoostTruePositive)
	}
	if raw, _ := os.ReadFile(at("free.ptm")); bytes.Contains(raw, []byte("boost_true_positive")) {
		t.Error("a file trained without --boost-true-positive names boost_true_positive")
	}
	nb, nf := sum64(f.Model().Include), sum64(g.Model().Include)
	t.Logf("[progress] expected included literals: %.0f with boost, %.0f without", nb, nf)
	if !(nb > nf) {
		t.Errorf("expected included literals %.0f with boost, %.0f without: want more", nb, nf)
	}
	if out := run("inspect", "--model", at("b1.ptm")); !strings.Contains(out, "boosted true-positive feedback") {
		t.Errorf("inspect does not name the boost:\n%s", out)
	}
	run("train", "--resume", at("b1.ptm"), "--data", dir, "--epochs", "1", "-o", at("b1+1.ptm"))
	run(append(base, "--boost-true-positive", "--epochs", "2", "-o", at("b2.ptm"))...)
	a, _ := os.ReadFile(at("b2.ptm"))
	b, _ := os.ReadFile(at("b1+1.ptm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("with boost, 1 + 1 epochs (%.16s) differ from 2 in one run (%.16s)", modelfile.Hash(b), modelfile.Hash(a))
	}
	if code, _, errs := runCLI("train", "--resume", at("b1.ptm"), "--data", dir, "--epochs", "1", "--boost-true-positive=false", "-o", at("x.ptm")); code != 2 || !strings.Contains(errs, "--boost-true-positive") {
		t.Errorf("--resume with --boost-true-positive: exit %d, %q; want exit 2 naming the flag", code, errs)
	}
}
