package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthConvRefusals: `ptm synth` on a convolutional model refuses,
// before any tool runs, what its board cannot be: the HX8K for a
// 128-clause MNIST-geometry model (136 kbit of thresholds and 20 kbit of
// class weights against 32 x 4 kbit of block RAM and no SPRAM; exit 1,
// the numbers in the message), the tabular board's options (exit 2), and
// the convolutional flags on a tabular shape (exit 2).
func TestSynthConvRefusals(t *testing.T) {
	dir := mnistSubset(t, 200, 10)
	model := filepath.Join(t.TempDir(), "m128.ptm")
	code, _, errs := runCLI("train", "--data", dir, "--clauses", "128", "-T", "128", "--epochs", "1", "--val-rows", "20", "-o", model)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	out := t.TempDir()
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--device", "hx8k"}, 1, "the threshold memory (136.0 kbit) and class weights (20.0 kbit) need 156.0 kbit of block RAM; the hx8k has 32 x 4 kbit = 128 kbit and no SPRAM"},
		{[]string{"--device", "hx8k", "--clause-lanes", "2", "--literal-lanes", "8"}, 1, "128 kbit and no SPRAM"},
		{[]string{"--core-only"}, 2, "--core-only: not available for a convolutional model"},
		{[]string{"--lanes", "16"}, 2, "--lanes: a convolutional core takes --clause-lanes"},
		{[]string{"--sets-max", "1"}, 2, "has the set loop"},
		{[]string{"--scan", "diagonal"}, 2, `--scan "diagonal"`},
		{[]string{"--clause-lanes", "3"}, 1, "(not in SPRAM: its rows of 48 lanes x 4 bits are wider than the 4 SPRAMs' 64; at most 16 lanes)"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(append([]string{"synth", "--model", model, "--out", out, "--no-cache"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("synth %v: exit %d stderr %q; want exit %d containing %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	code, _, stderr := runCLI("synth", "--random-shape", "classes=3,clauses=4,features=4,t=5", "--patch-lanes", "2")
	if code != 2 || !strings.Contains(stderr, "are for a convolutional model") {
		t.Errorf("synth --random-shape --patch-lanes: exit %d: %s", code, stderr)
	}
}
