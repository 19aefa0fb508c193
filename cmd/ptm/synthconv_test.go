package main

import (
	"encoding/json"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// TestSynthConvRefusals: `ptm synth` on a convolutional model refuses,
// before any tool runs, what its board cannot be: the HX8K for a
// 128-clause MNIST-geometry model (136 kbit of thresholds and 20 kbit of
// class weights against 32 x 4 kbit of block RAM and no SPRAM; exit 1,
// the numbers in the message), the tabular board's options (exit 2), and
// the convolutional flags on a tabular shape (exit 2), --pack-only
// without a configuration (exit 2).
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
		{[]string{"--sets-max", "0"}, 2, "--sets-max 0, want 1..255"},
		{[]string{"--scan", "diagonal"}, 2, `--scan "diagonal"`},
		{[]string{"--pack-only"}, 2, "--pack-only: give the configuration"},
		{[]string{"--clause-lanes", "3"}, 1, "(not in SPRAM: its rows of 48 lanes x 4 bits are wider than the 4 SPRAMs' 64; at most 16 lanes)"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(append([]string{"synth", "--model", model, "--out", out, "--no-cache"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("synth %v: exit %d stderr %q; want exit %d containing %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	for _, flag := range []string{"--patch-lanes", "--pack-only"} {
		args := []string{"synth", "--random-shape", "classes=3,clauses=4,features=4,t=5", flag}
		if flag == "--patch-lanes" {
			args = append(args, "2")
		}
		code, _, stderr := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, "are for a convolutional model") {
			t.Errorf("synth --random-shape %s: exit %d: %s", flag, code, stderr)
		}
	}
}

// TestSynthConvPackOnly: `ptm synth --pack-only` on a convolutional model
// with its configuration runs yosys and nextpnr-ice40 --pack-only and
// reports the packed logic cells (at least the LUT4s and the flip-flops
// yosys counted, at most their sum with the carries), no Fmax and no
// bitstream; the text form says the cells are packed, not placed.
//
//	PTM_LONG_TESTS=1 go test ./cmd/ptm -run TestSynthConvPackOnly -v
func TestSynthConvPackOnly(t *testing.T) {
	testenv.SkipUnlessLong(t, "yosys and nextpnr-ice40 --pack-only on a convolutional board")
	for _, tool := range []string{"yosys", "nextpnr-ice40"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := mnistSubset(t, 200, 10)
	model := filepath.Join(t.TempDir(), "m16.ptm")
	if code, _, errs := runCLI("train", "--data", dir, "--clauses", "16", "-T", "16", "--epochs", "1", "--val-rows", "20", "-o", model); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	args := []string{"synth", "--model", model, "--device", "up5k", "--clause-lanes", "1", "--literal-lanes", "16", "--patch-lanes", "2",
		"--sets-max", "2", "--freq", "30", "--pack-only", "--no-cache", "--out", t.TempDir()}
	code, out, errs := runCLI(append(args, "--json")...)
	if code != 0 {
		t.Fatalf("synth --pack-only: exit %d: %s", code, errs)
	}
	var r struct {
		SynthOnly bool    `json:"synth_only"`
		LUTs      int     `json:"luts"`
		LUT4      int     `json:"lut4"`
		FFs       int     `json:"ffs"`
		Carry     int     `json:"carry"`
		Fmax      float64 `json:"fmax_mhz"`
		Bitstream string  `json:"bitstream"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !r.SynthOnly || r.LUTs < max(r.LUT4, r.FFs) || r.LUTs > r.LUT4+r.FFs+r.Carry || r.Fmax != 0 || r.Bitstream != "" {
		t.Errorf("pack-only result %+v", r)
	}
	code, out, errs = runCLI(args...)
	if code != 0 || !strings.Contains(out, "packed (nextpnr-ice40 --pack-only; not placed)") || strings.Contains(out, "Fmax") {
		t.Errorf("text form: exit %d: %s%s", code, out, errs)
	}
	t.Logf("packed %d logic cells (%d LUT4, %d FF, %d carry)", r.LUTs, r.LUT4, r.FFs, r.Carry)
}

// TestConvSetsMax: a convolutional board's SETS_MAX is the model's
// threshold sets unless --sets-max is given (then the flag, even when it
// equals the tabular default).
func TestConvSetsMax(t *testing.T) {
	for _, c := range []struct {
		sets int
		args []string
		want int
	}{
		{1, nil, 1},
		{3, nil, 3},
		{1, []string{"--sets-max", "8"}, 8},
		{3, []string{"--sets-max", "2"}, 2},
	} {
		fs := flag.NewFlagSet("synth", flag.ContinueOnError)
		v := fs.Int("sets-max", hw.DefaultSetsMax, "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		f := &modelfile.ConvFile{JitterSets: c.sets}
		if got := convSetsMax(fs, *v, f); got != c.want {
			t.Errorf("%d sets, %v: SETS_MAX %d, want %d", c.sets, c.args, got, c.want)
		}
	}
}
