package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestConvert: a format-1 file converts to format 2, evaluates the same
// (this model's rounding moves no sample), and converting again changes
// nothing.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join("..", "..", "golden", "modelfile", "testdata", "v1-iris-tiny.ptm")
	code, out, errs := runCLI("inspect", "--model", old, "--tm", "0", "--clause", "0")
	if code != 0 || !strings.Contains(out, "format 1, float64 SPVs: `ptm convert` rewrites it in format 2") {
		t.Fatalf("inspect of a format-1 file: exit %d\n%s%s", code, out, errs)
	}
	v2 := filepath.Join(dir, "v2.ptm")
	code, out, errs = runCLI("convert", "--model", old, "-o", v2)
	if code != 0 || !strings.Contains(out, "read "+old+": format 1, 26084 bytes") || !strings.Contains(out, "format 2, SPVs at 16 bits, ") ||
		!strings.Contains(out, "rounded 272 of 288 TAs to 16 bits") {
		t.Fatalf("convert: exit %d\n%s%s", code, out, errs)
	}
	f, _, err := modelfile.Read(v2)
	if err != nil || f.Format != modelfile.Version || f.SPVBits != 16 {
		t.Fatalf("converted file: %v", err)
	}
	evals := make([]string, 2)
	for i, m := range []string{old, v2} {
		code, out, errs := runCLI("eval", "--model", m, "--data", "iris", "--samples", "30", "--json")
		if code != 0 {
			t.Fatalf("eval %s: exit %d %s", m, code, errs)
		}
		evals[i] = strings.Replace(out, m, "MODEL", 1)
	}
	if evals[0] != evals[1] {
		t.Errorf("eval before conversion:\n%s\nafter:\n%s", evals[0], evals[1])
	}
	again := filepath.Join(dir, "again.ptm")
	code, out, errs = runCLI("convert", "--model", v2, "-o", again)
	if code != 0 || !strings.Contains(out, "exact at 16 bits: the model is unchanged") {
		t.Fatalf("convert of a format-2 file: exit %d\n%s%s", code, out, errs)
	}
	a, _ := os.ReadFile(v2)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) {
		t.Error("converting a format-2 file changed its bytes")
	}
	if code, _, errs := runCLI("convert", "--model", old); code != 2 || !strings.Contains(errs, "-o are required") {
		t.Errorf("convert without -o: exit %d %s", code, errs)
	}
	if code, _, errs := runCLI("convert", "--model", filepath.Join(dir, "none.ptm"), "-o", again); code != 1 || !strings.Contains(errs, "none.ptm") {
		t.Errorf("convert of a missing file: exit %d %s", code, errs)
	}
}
