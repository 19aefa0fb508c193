package board

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
)

// TestTrainBoardLint: the training board (train_board_top, train_proto,
// the shell blocks it uses and the generated trainer) is lint clean under
// verilator --lint-only -Wall, for a multiclass shape with 4 literal lanes
// and 3 feature bytes and a binary one with 1 lane and one feature byte.
func TestTrainBoardLint(t *testing.T) {
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not on PATH")
	}
	for _, c := range []struct {
		sh fixed.Shape
		ll int
		tp hw.TrainParams
	}{
		{fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 24, T: 10}, 4, hw.TrainParams{N: 8, S: 2, Feedback: ptm.ConsistentFeedback}},
		{fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 5, Features: 3, T: 2}, 1, hw.TrainParams{N: 4, S: 3.9, Feedback: ptm.PaperFeedback}},
	} {
		d, err := hw.GenerateTrainer(hw.Config{Bits: 12, LiteralLanes: c.ll}, c.sh, c.tp)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := (&hw.Design{Files: d.Files}).Write(dir); err != nil {
			t.Fatal(err)
		}
		srcs := rtl.TrainBoardSources()
		if _, err := rtl.Write(filepath.Join(dir, "rtl"), srcs); err != nil {
			t.Fatal(err)
		}
		args := []string{"--lint-only", "-Wall", "--top-module", "train_board_top", "+define+PTM_TRAINER=" + d.Top(),
			"-I" + filepath.Join("rtl", rtl.IncludeDir)}
		for k, v := range TrainerBoardParams(d, 8, 115200) {
			args = append(args, "-G"+k+"="+v)
		}
		for _, s := range srcs {
			args = append(args, filepath.Join("rtl", filepath.FromSlash(s)))
		}
		args = append(args, d.VerilogFiles()...)
		cmd := exec.Command("verilator", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%+v LL=%d: lint: %v\n%s", c.sh, c.ll, err, out)
		}
	}
}
