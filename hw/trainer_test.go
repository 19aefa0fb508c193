package hw

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestTrainerLint: the generated trainer (rtl/train and its top) is lint
// clean under verilator --lint-only -Wall for binary and multiclass
// shapes, 1..4 literal lanes, both rules.
func TestTrainerLint(t *testing.T) {
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not on PATH")
	}
	for _, c := range []struct {
		sh fixed.Shape
		ll int
		tp TrainParams
	}{
		{fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 24, T: 10}, 4, TrainParams{N: 8, S: 2, Feedback: ptm.ConsistentFeedback}},
		{fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 5, Features: 3, T: 2}, 1, TrainParams{N: 4, S: 3.9, Feedback: ptm.PaperFeedback}},
		{fixed.Shape{Classes: 4, TMs: 4, Clauses: 7, Features: 70, T: 30}, 3, TrainParams{N: 32, S: 1, Feedback: ptm.ConsistentFeedback}},
	} {
		d, err := GenerateTrainer(Config{Bits: 12, LiteralLanes: c.ll}, c.sh, c.tp)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := (&Design{Files: d.Files}).Write(dir); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--lint-only", "-Wall", "--top-module", d.Top()}, d.VerilogFiles()...)
		cmd := exec.Command("verilator", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%+v LL=%d: lint: %v\n%s", c.sh, c.ll, err, out)
		}
	}
}

// TestGenerateTrainerErrors: settings the trainer cannot take are
// configuration errors naming the setting.
func TestGenerateTrainerErrors(t *testing.T) {
	sh := fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 24, T: 10}
	good := TrainParams{N: 8, S: 2, Feedback: ptm.ConsistentFeedback}
	for _, c := range []struct {
		cfg  Config
		tp   TrainParams
		want string
	}{
		{Config{Bits: 16}, good, "B = 16"},
		{Config{Bits: 12, LiteralLanes: 5}, good, "5 trainer literal lanes"},
		{Config{Bits: 12}, TrainParams{N: 0, S: 2, Feedback: ptm.ConsistentFeedback}, "N = 0"},
		{Config{Bits: 12}, TrainParams{N: 8, S: 0.5, Feedback: ptm.ConsistentFeedback}, "s = 0.5"},
		{Config{Bits: 12}, TrainParams{N: 8, S: 2, Feedback: "x"}, "update rule"},
		{Config{Bits: 12}, TrainParams{N: 12, S: 2, Feedback: ptm.ConsistentFeedback, SPRAM: true}, "do not fit one SPRAM"},
		{Config{Bits: 12, Prefix: "9x"}, good, "prefix"},
	} {
		_, err := GenerateTrainer(c.cfg, sh, c.tp)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v %+v: %v, want ErrConfig naming %q", c.cfg, c.tp, err, c.want)
		}
	}
	d, err := GenerateTrainer(Config{Bits: 15}, sh, TrainParams{N: 8, S: 2, Feedback: ptm.ConsistentFeedback, SPRAM: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Params; p.SPVDepth != 11520 || p.IncDepth != 720 || p.LL != 4 || p.Up != 32768 || p.Down != 32768 {
		t.Errorf("Iris trainer params %+v, want 11,520 SPV words and 720 include masses per lane, 4 lanes, UP = DOWN = 32768", p)
	}
}
