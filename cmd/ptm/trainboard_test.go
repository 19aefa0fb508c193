package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/board"
)

// TestTrainBoardCLI: `ptm train --board` on the Verilated training board
// (Iris, m = 6, N = 8, 2 epochs, calibrated: 5 models trained on the
// board) writes the model file `ptm train --fixed --host-shuffle` writes,
// byte for byte, and reports the board's progress; --host-shuffle without
// --fixed and --board with --fixed=false are usage errors.
func TestTrainBoardCLI(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI("train", "--data", "iris", "--host-shuffle", "-o", filepath.Join(dir, "x.ptm"))
	if code != 2 || !strings.Contains(errs, "--host-shuffle needs --fixed") {
		t.Errorf("train --host-shuffle: exit %d: %s", code, errs)
	}
	code, _, errs = runCLI("train", "--data", "iris", "--board", "/dev/null", "--fixed=false", "-o", filepath.Join(dir, "x.ptm"))
	if code != 2 || !strings.Contains(errs, "--board trains with the fixed-point trainer") {
		t.Errorf("train --board --fixed=false: exit %d: %s", code, errs)
	}
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not on PATH")
	}
	o := board.TrainerOptions{Shape: fixed.Shape{Classes: 3, TMs: 3, Clauses: 6, Features: 24, T: 10}, Bits: 15, LiteralLanes: 4,
		Train: hw.TrainParams{N: 8, S: 2, Feedback: ptm.ConsistentFeedback}, StartTimeout: 20 * time.Minute}
	p, err := board.StartTrainer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	args := []string{"train", "--data", "iris", "--seed", "3", "--clauses", "6", "--states", "8", "--epochs", "2", "--no-tune"}
	code, out, errs := runCLI(append(args, "--board", p.UART, "-o", filepath.Join(dir, "board.ptm"))...)
	if code != 0 || !strings.Contains(out, "trained on the board: 5 models") || !strings.Contains(errs, "board: model 1 trained: 240 examples") {
		t.Fatalf("train --board: exit %d: %s%s", code, out, errs)
	}
	code, _, errs = runCLI(append(args, "--fixed", "--host-shuffle", "-o", filepath.Join(dir, "fixed.ptm"))...)
	if code != 0 {
		t.Fatalf("train --fixed --host-shuffle: exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "board.ptm"))
	b, _ := os.ReadFile(filepath.Join(dir, "fixed.ptm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the board's model file (%d bytes) differs from --fixed --host-shuffle's (%d bytes)", len(a), len(b))
	}
	// a board of another shape is refused with both shapes named
	code, _, errs = runCLI("train", "--data", "iris", "--seed", "3", "--clauses", "7", "--states", "8", "--epochs", "1", "--board", p.UART, "-o", filepath.Join(dir, "y.ptm"))
	if code == 0 || !strings.Contains(errs, "m=6") || !strings.Contains(errs, "m=7") {
		t.Errorf("train --board with another shape: exit %d: %s", code, errs)
	}
}
