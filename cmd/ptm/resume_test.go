package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestTrainResume: on 400 MNIST training images, `ptm train --resume`
// of a 1-epoch model for 1 more epoch writes, with --spv-bits 15, the
// file of 2 epochs in one run byte for byte; from SPVs at the default 8
// bits and at 12 it trains on (2 more epochs), keeping the width, to no
// lower test accuracy than the start's; and it
// refuses flags that would change the model, another data set, a tabular
// model and a file without its lane record (unless --reseed-lanes).
func TestTrainResume(t *testing.T) {
	dir := mnistSubset(t, 400, 200)
	tmp := t.TempDir()
	at := func(name string) string { return filepath.Join(tmp, name) }
	base := []string{"train", "--data", dir, "--clauses", "32", "-T", "100", "--val-rows", "40", "--workers", "2"}
	run := func(args ...string) string { return runOK(t, args...) }
	run(append(base, "--epochs", "1", "--spv-bits", "15", "-o", at("e1.ptm"))...)
	out := run("train", "--resume", at("e1.ptm"), "--data", dir, "--epochs", "1", "-o", at("e1+1.ptm"))
	t.Logf("[progress] resumed: %s", out)
	if !strings.Contains(out, "1 + 1 = 2 epochs") || !strings.Contains(out, "exactly") {
		t.Errorf("resume output:\n%s", out)
	}
	run(append(base, "--epochs", "2", "--spv-bits", "15", "-o", at("e2.ptm"))...)
	a, _ := os.ReadFile(at("e2.ptm"))
	b, _ := os.ReadFile(at("e1+1.ptm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("1 + 1 epochs (%d bytes, %.16s) differ from 2 in one run (%d bytes, %.16s)", len(b), modelfile.Hash(b), len(a), modelfile.Hash(a))
	}

	// From SPVs at the default width (8 bits) and at 12 (the default
	// before): allowed, not exact, still learning.
	for _, w := range []string{"", "12"} {
		bits := fmt.Sprint(modelfile.DefaultConvSPVBits)
		args := append(base, "--epochs", "1", "-o", at("r1.ptm"))
		if w != "" {
			bits, args = w, append(args, "--spv-bits", w)
		}
		run(args...)
		out = run("train", "--resume", at("r1.ptm"), "--data", dir, "--epochs", "2", "-o", at("r3.ptm"))
		if !strings.Contains(out, "rounded to "+bits+" bits") {
			t.Errorf("resume from %s bits does not say it is not exact:\n%s", bits, out)
		}
		if f, _, err := modelfile.ReadConv(at("r3.ptm")); err != nil {
			t.Error(err)
		} else if fmt.Sprint(f.SPVBits) != bits {
			t.Errorf("resumed file: spv_bits %d, want %s (the start's)", f.SPVBits, bits)
		}
		r1, _ := evalJSONOf(t, "--model", at("r1.ptm"), "--data", dir, "--split", "test")
		r3, _ := evalJSONOf(t, "--model", at("r3.ptm"), "--data", dir, "--split", "test")
		t.Logf("[progress] test accuracy: 1 epoch %.4f, resumed from %s-bit SPVs to 3 epochs %.4f", r1.Accuracy, bits, r3.Accuracy)
		if r3.Accuracy < r1.Accuracy {
			t.Errorf("resumed from %s bits: accuracy %.4f below the start's %.4f", bits, r3.Accuracy, r1.Accuracy)
		}
	}

	// Refusals.
	other := mnistSubset(t, 300, 200)
	f, _, err := modelfile.ReadConv(at("e1.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	f.Lanes = nil
	if _, err := modelfile.WriteConv(at("old.ptm"), f); err != nil {
		t.Fatal(err)
	}
	run("train", "--data", "iris", "--epochs", "5", "--clauses", "10", "--no-tune", "--calibrate=false", "-o", at("iris.ptm"))
	resume := []string{"train", "--resume", at("e1.ptm"), "--data", dir, "-o", at("x.ptm")}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"clauses", append(resume, "--epochs", "1", "--clauses", "8"), []string{"--clauses would change", "--resume keeps"}},
		{"seed", append(resume, "--epochs", "1", "--seed", "2"), []string{"--seed"}},
		{"no epochs", resume, []string{"needs --epochs"}},
		{"other data", []string{"train", "--resume", at("e1.ptm"), "--data", other, "--epochs", "1", "-o", at("x.ptm")}, []string{"split.rows", "500"}},
		{"float tabular", []string{"train", "--resume", at("iris.ptm"), "--data", "iris", "--epochs", "1", "-o", at("x.ptm")}, []string{"no fixed-point training record", "float-trained"}},
		{"no lanes", []string{"train", "--resume", at("old.ptm"), "--data", dir, "--epochs", "1", "-o", at("x.ptm")}, []string{"no lane record", "--reseed-lanes"}},
		{"reseed with lanes", append(resume, "--epochs", "1", "--reseed-lanes"), []string{"records its lanes"}},
		{"reseed alone", []string{"train", "--data", dir, "--reseed-lanes", "-o", at("x.ptm")}, []string{"goes with --resume"}},
		{"same file", []string{"train", "--resume", at("e1.ptm"), "--data", dir, "--epochs", "1", "-o", at("e1.ptm")}, []string{"-o"}},
	}
	for _, c := range cases {
		code, _, errs := runCLI(c.args...)
		if code == 0 {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: %q lacks %q", c.name, errs, w)
			}
		}
	}
	if _, err := os.Stat(at("x.ptm")); err == nil {
		t.Error("a refused resume wrote its output")
	}
	out = run("train", "--resume", at("old.ptm"), "--data", dir, "--epochs", "1", "--reseed-lanes", "-o", at("old+1.ptm"))
	if !strings.Contains(out, "reseeded lanes") {
		t.Errorf("resume with --reseed-lanes:\n%s", out)
	}
}

// TestTrainResumeTabular: `ptm train --resume` of an iris model of the
// fixed-point trainer (sampled encoding, calibrated) for 2 more epochs
// writes the file --epochs 5 writes in one run, byte for byte; the conv
// flags are refused for it.
func TestTrainResumeTabular(t *testing.T) {
	tmp := t.TempDir()
	at := func(name string) string { return filepath.Join(tmp, name) }
	base := []string{"train", "--data", "iris", "--fixed", "--no-tune", "--clauses", "10", "--seed", "3"}
	for _, args := range [][]string{
		append(base, "--epochs", "3", "-o", at("e3.ptm")),
		{"train", "--resume", at("e3.ptm"), "--data", "iris", "--epochs", "2", "-o", at("e3+2.ptm")},
		append(base, "--epochs", "5", "-o", at("e5.ptm")),
	} {
		if code, _, errs := runCLI(args...); code != 0 {
			t.Fatalf("ptm %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
	a, _ := os.ReadFile(at("e5.ptm"))
	b, _ := os.ReadFile(at("e3+2.ptm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("3 + 2 epochs (%.16s) differ from 5 in one run (%.16s)", modelfile.Hash(b), modelfile.Hash(a))
	}
	code, _, errs := runCLI("train", "--resume", at("e3.ptm"), "--data", "iris", "--epochs", "2", "--spv-bits", "12", "-o", at("x.ptm"))
	if code == 0 || !strings.Contains(errs, "--spv-bits applies to convolutional models") {
		t.Errorf("--spv-bits on a tabular resume: exit %d: %s", code, errs)
	}
}

// TestTrainRefitFixedMapping: `ptm train` fits a convolutional model's
// fixed-point mapping (fixed_mapping, calibration.fixed at the bank's
// width) and `ptm inspect` prints it; `ptm train --resume FILE --epochs 0`
// of the file without it (as written before the field) writes the
// trained file again byte for byte (the same rows, seed and core);
// `ptm eval --fixed` maps the core's class sums with the fixed mapping at
// the bank's width only (float, another --bits and a file without one use
// the mapping; --temperature overrides); --epochs 0 is refused for a
// tabular model and with --spv-bits.
func TestTrainRefitFixedMapping(t *testing.T) {
	dir := mnistSubset(t, 400, 100)
	tmp := t.TempDir()
	at := func(name string) string { return filepath.Join(tmp, name) }
	run := func(args ...string) string { return runOK(t, args...) }
	out := run("train", "--data", dir, "--clauses", "32", "-T", "100", "--val-rows", "40", "--workers", "2", "--epochs", "1", "-o", at("m.ptm"))
	if !strings.Contains(out, "fixed-point mapping softmax") {
		t.Errorf("train output lacks the fixed-point mapping:\n%s", out)
	}
	f, _, err := modelfile.ReadConv(at("m.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	x := f.Calibration.Fixed
	if f.FixedMapping == nil || x == nil || x.Bits != f.BankBits || x.ClauseLanes != 8 || x.LiteralLanes != 8 || f.FixedMapping.Kind != f.Mapping.Kind {
		t.Fatalf("fixed mapping %+v, calibration %+v, bank %d bits", f.FixedMapping, x, f.BankBits)
	}
	t.Logf("[progress] trained: float temperature %.4g (NLL %.4f), %d-bit core's %.4g (NLL %.4f)", f.Mapping.Temperature, f.Calibration.NLL, x.Bits, f.FixedMapping.Temperature, x.NLL)
	if out := run("inspect", "--model", at("m.ptm")); !strings.Contains(out, "fixed-point mapping") {
		t.Errorf("inspect lacks the fixed-point mapping:\n%s", out)
	}
	// The file as written before the field: refitted to the trained file.
	g := *f
	cal := *f.Calibration
	cal.Fixed, g.FixedMapping, g.Calibration = nil, nil, &cal
	if _, err := modelfile.WriteConv(at("old.ptm"), &g); err != nil {
		t.Fatal(err)
	}
	out = run("train", "--resume", at("old.ptm"), "--data", dir, "--epochs", "0", "-o", at("refit.ptm"))
	if !strings.Contains(out, "refitted the fixed-point mapping") || !strings.Contains(out, "before: fixed-point mapping none") {
		t.Errorf("refit output:\n%s", out)
	}
	a, _ := os.ReadFile(at("m.ptm"))
	b, _ := os.ReadFile(at("refit.ptm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("refitted file (%d bytes, %.16s) differs from the trained one (%d bytes, %.16s)", len(b), modelfile.Hash(b), len(a), modelfile.Hash(a))
	}
	// eval: a fixed mapping set apart from the float one is used by
	// --fixed at the bank's width only.
	fm := *f.FixedMapping
	fm.Temperature = 3 * f.Mapping.Temperature
	g.FixedMapping, cal.Fixed = &fm, x
	if _, err := modelfile.WriteConv(at("apart.ptm"), &g); err != nil {
		t.Fatal(err)
	}
	evalArgs := []string{"--data", dir, "--split", "test", "--samples", "4"}
	for _, c := range []struct {
		name  string
		args  []string
		want  float64
		fixed bool
	}{
		{"fixed", []string{"--model", at("apart.ptm"), "--fixed"}, fm.Temperature, true},
		{"float", []string{"--model", at("apart.ptm")}, f.Mapping.Temperature, false},
		{"fixed at 8 bits", []string{"--model", at("apart.ptm"), "--fixed", "--bits", "8"}, f.Mapping.Temperature, true},
		{"fixed, --temperature", []string{"--model", at("apart.ptm"), "--fixed", "--temperature", "2"}, 2, true},
		{"fixed, old file", []string{"--model", at("old.ptm"), "--fixed"}, f.Mapping.Temperature, true},
	} {
		r, _ := evalJSONOf(t, append(c.args, evalArgs...)...)
		if r.Temperature != c.want {
			t.Errorf("%s: temperature %v, want %v", c.name, r.Temperature, c.want)
		}
	}
	run("train", "--data", "iris", "--epochs", "5", "--clauses", "10", "--no-tune", "--calibrate=false", "-o", at("iris.ptm"))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"tabular", []string{"train", "--resume", at("iris.ptm"), "--data", "iris", "--epochs", "0", "-o", at("x.ptm")}, "tabular"},
		{"spv-bits", []string{"train", "--resume", at("old.ptm"), "--data", dir, "--epochs", "0", "--spv-bits", "15", "-o", at("x.ptm")}, "--spv-bits"},
		{"negative", []string{"train", "--resume", at("old.ptm"), "--data", dir, "--epochs", "-1", "-o", at("x.ptm")}, "--epochs -1"},
	} {
		code, _, errs := runCLI(c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q; want an error naming %q", c.name, code, errs, c.want)
		}
	}
	if _, err := os.Stat(at("x.ptm")); err == nil {
		t.Error("a refused refit wrote its output")
	}
}

// runOK runs ptm with args and returns its standard output; a non-zero
// exit fails the test with the command and its standard error.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(args...)
	if code != 0 {
		t.Fatalf("ptm %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}
