package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestTrainFixed: `ptm train --fixed` writes a model file that `ptm eval`
// reads, with 15-bit banks by default, byte for byte the same for any
// number of workers; --bits 16 is refused with --fixed.
func TestTrainFixed(t *testing.T) {
	dir := t.TempDir()
	var files [][]byte
	for _, w := range []string{"1", "3"} {
		model := filepath.Join(dir, "iris"+w+".ptm")
		code, _, errs := runCLI("train", "--data", "iris", "--seed", "1", "--epochs", "10", "--clauses", "10", "--fixed", "--workers", w, "--no-tune", "--calibrate=false", "-o", model)
		if code != 0 {
			t.Fatalf("train --fixed --workers %s: exit %d: %s", w, code, errs)
		}
		b, err := os.ReadFile(model)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("train --fixed: --workers 1 and --workers 3 wrote different model files")
	}
	f, err := modelfile.Decode(files[0], "iris1.ptm")
	if err != nil {
		t.Fatal(err)
	}
	if f.Bank.Bits != 15 {
		t.Errorf("bank width %d, want 15", f.Bank.Bits)
	}
	code, out, errs := runCLI("eval", "--model", filepath.Join(dir, "iris1.ptm"), "--data", "iris", "--samples", "20")
	if code != 0 || !strings.Contains(out, "accuracy") {
		t.Errorf("eval: exit %d: %s%s", code, out, errs)
	}
	code, _, errs = runCLI("train", "--data", "iris", "--fixed", "--bits", "16", "-o", filepath.Join(dir, "x.ptm"))
	if code != 2 || !strings.Contains(errs, "at most 15-bit") {
		t.Errorf("train --fixed --bits 16: exit %d: %s", code, errs)
	}
}
