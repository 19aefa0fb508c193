package hw

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw/refmodel"
)

var update = flag.Bool("update", false, "rewrite hw/testdata/golden and rtl/generated from the generator")

// tinyShape and tinyConfig are the golden-text design: small enough to
// read, with clause and literal padding, two clause slots per group and a
// K range check.
var (
	tinyShape  = fixed.Shape{Classes: 3, TMs: 3, Clauses: 3, Features: 3, T: 2}
	tinyConfig = Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 2, LiteralLanes: 4, MaxK: 10, Prefix: "tiny"}
)

func tinyBank(t *testing.T) *fixed.Bank {
	t.Helper()
	x := uint64(42)
	b, err := fixed.RandomBank(tinyShape, tinyConfig.Bits, func() uint64 {
		x = x*6364136223846793005 + 1442695040888963407
		return x ^ x>>31
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compareDir compares a design's files with dir, or rewrites dir under
// -update.
func compareDir(t *testing.T, d *Design, dir string) {
	t.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := d.Write(dir); err != nil {
			t.Fatal(err)
		}
		return
	}
	names := map[string]bool{}
	for _, f := range d.Files {
		names[f.Name] = true
		want, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Errorf("%v (regenerate with go test ./hw -update)", err)
			continue
		}
		if !bytes.Equal(want, f.Data) {
			t.Errorf("%s differs from %s (regenerate with go test ./hw -update and review the diff)", f.Name, dir)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !names[e.Name()] && e.Name() != "README.md" {
			t.Errorf("%s/%s is not generated any more", dir, e.Name())
		}
	}
}

func TestGoldenText(t *testing.T) {
	d, err := Generate(tinyConfig, tinyShape, tinyBank(t), "c0ffee0123456789")
	if err != nil {
		t.Fatal(err)
	}
	// InitBanks off and on differ only in the bank, lane and core files.
	cfg := tinyConfig
	cfg.InitBanks = true
	di, err := Generate(cfg, tinyShape, tinyBank(t), "c0ffee0123456789")
	if err != nil {
		t.Fatal(err)
	}
	compareDir(t, d, filepath.Join("testdata", "golden", "tiny"))
	compareDir(t, di, filepath.Join("testdata", "golden", "tiny_init"))
	// Generation is deterministic.
	again, _ := Generate(tinyConfig, tinyShape, tinyBank(t), "c0ffee0123456789")
	for i := range d.Files {
		if !bytes.Equal(d.Files[i].Data, again.Files[i].Data) {
			t.Fatalf("%s differs between two generations", d.Files[i].Name)
		}
	}
}

// referenceConfigs are the configurations of the committed reference
// designs, by model name.
var referenceConfigs = map[string]Config{
	"iris": {Bits: 8, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 8, MaxK: 255, InitBanks: true},
	"xor":  {Bits: 12, LFSRWidth: 24, ClauseLanes: 2, LiteralLanes: 8, MaxK: 255, InitBanks: true},
}

func referenceDesigns(t *testing.T) map[string]*Design {
	t.Helper()
	models, err := refmodel.Models()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Design{}
	for _, m := range models {
		cfg, ok := referenceConfigs[m.Name]
		if !ok {
			t.Fatalf("no reference configuration for model %q", m.Name)
		}
		d, err := Generate(cfg, m.Bank.Shape, m.Bank, m.Hash)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		out[m.Name] = d
	}
	return out
}

// TestReferenceDesigns: rtl/generated/<model>/ is exactly what the
// generator makes of the reference models.
func TestReferenceDesigns(t *testing.T) {
	for name, d := range referenceDesigns(t) {
		compareDir(t, d, filepath.Join("..", "rtl", "generated", name))
	}
}

func TestHeaders(t *testing.T) {
	d, err := Generate(tinyConfig, tinyShape, nil, "c0ffee0123456789")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Files {
		s := string(f.Data)
		for _, want := range []string{"hw " + Version, "Model hash : c0ffee0123456789", "`default_nettype none", "B=8 W=16 LC=2 LL=4 L=8 MaxK=10",
			"module tiny_" + strings.TrimSuffix(strings.TrimPrefix(f.Name, "tiny_"), ".v") + " "} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q", f.Name, want)
			}
		}
		if strings.Count(s, "\nmodule ") != 1 {
			t.Errorf("%s holds %d modules, want 1", f.Name, strings.Count(s, "\nmodule "))
		}
	}
	info := d.InfoWords()
	want := []uint32{versionWord, 3, 3, 3, 3, 2, 8, 16, 2, 4, 10, 10, 0xc0ffee01, 0, 6, 5<<16 | 2}
	if fmt.Sprint(info) != fmt.Sprint(want) {
		t.Errorf("info words %v, want %v", info, want)
	}
}

// TestLFSREquations: draw bit k (the generate loop over k) is the XOR of
// state[e+k] over the taps (the bit-exactness of the draws is checked by
// sim/cosim).
func TestLFSREquations(t *testing.T) {
	for _, w := range []int{16, 24, 32, 64} {
		d, err := Generate(Config{Bits: 8, LFSRWidth: w, ClauseLanes: 1, LiteralLanes: 1, MaxK: 1, Prefix: "x"}, tinyShape, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		src := string(d.File("x_lfsr_lane.v"))
		m := regexp.MustCompile(`for \(k = 0; k < B; k = k \+ 1\) begin : g_bit\s+assign next\[k\] = (.*);`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("W=%d: no draw equation in\n%s", w, src)
		}
		var idx []string
		for _, tap := range d.Params.Taps {
			if tap == 0 {
				idx = append(idx, "state[k]")
			} else {
				idx = append(idx, fmt.Sprintf("state[k + %d]", tap))
			}
		}
		if m[1] != strings.Join(idx, " ^ ") {
			t.Errorf("W=%d: next[k] = %s, taps %v", w, m[1], d.Params.Taps)
		}
		if !strings.Contains(src, fmt.Sprintf("parameter integer W = %d,", w)) || !strings.Contains(src, "parameter integer B = 8 ") {
			t.Errorf("W=%d: parameters W, B not declared", w)
		}
	}
}

func TestMisuse(t *testing.T) {
	good := fixed.Shape{Classes: 3, TMs: 3, Clauses: 4, Features: 5, T: 4}
	base := Config{Bits: 8, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 2, MaxK: 16}
	bank, err := fixed.RandomBank(good, 8, func() uint64 { return 12345 })
	if err != nil {
		t.Fatal(err)
	}
	mod := func(f func(*Config)) Config { c := base; f(&c); return c }
	cases := []struct {
		name  string
		cfg   Config
		shape fixed.Shape
		bank  *fixed.Bank
		hash  string
		want  string
	}{
		{"bad shape", base, fixed.Shape{Classes: 3, TMs: 2, Clauses: 4, Features: 5, T: 4}, nil, "", "TMs"},
		{"too many classes", base, fixed.Shape{Classes: 17, TMs: 17, Clauses: 4, Features: 5, T: 4}, nil, "", "classes"},
		{"literal lanes exceed 2o", mod(func(c *Config) { c.LiteralLanes = 11 }), good, nil, "", "literal lanes"},
		{"clause lanes exceed NT*m", mod(func(c *Config) { c.ClauseLanes = 13 }), good, nil, "", "clause lanes"},
		{"no lanes", mod(func(c *Config) { c.ClauseLanes, c.LiteralLanes = 0, 0 }), good, nil, "", "no lanes"},
		{"lanes do not split", mod(func(c *Config) { c.ClauseLanes, c.LiteralLanes, c.Lanes = 0, 0, 1000 }), good, nil, "", "lanes"},
		{"bits too small", mod(func(c *Config) { c.Bits = 3 }), good, nil, "", "fixed: 3-bit probabilities"},
		{"bits too large", mod(func(c *Config) { c.Bits = 17 }), good, nil, "", "fixed: 17-bit"},
		{"unsupported LFSR", mod(func(c *Config) { c.LFSRWidth = 31 }), good, nil, "", "width 31"},
		{"B too wide for W=16", mod(func(c *Config) { c.LFSRWidth, c.Bits = 16, 12 }), good, nil, "", "does not fit a 16-bit LFSR"},
		{"MaxK 0", mod(func(c *Config) { c.MaxK = 0 }), good, nil, "", "MaxK"},
		{"votes overflow", mod(func(c *Config) { c.MaxK = 6000 }), fixed.Shape{Classes: 16, TMs: 16, Clauses: 2, Features: 2, T: 1}, nil, "", "votes word"},
		{"sumsq overflow", mod(func(c *Config) { c.MaxK = 1 << 20 }), fixed.Shape{Classes: 2, TMs: 2, Clauses: 2, Features: 2, T: 100}, nil, "", "sumsq"},
		{"bad prefix", mod(func(c *Config) { c.Prefix = "9lives" }), good, nil, "", "prefix"},
		{"bank shape differs", base, fixed.Shape{Classes: 3, TMs: 3, Clauses: 4, Features: 6, T: 4}, bank, "", "bank shape"},
		{"bank bits differ", mod(func(c *Config) { c.Bits = 9 }), good, bank, "", "thresholds"},
		{"init banks without bank", mod(func(c *Config) { c.InitBanks = true }), good, nil, "", "InitBanks"},
		{"short hash", base, good, nil, "abc", "hash"},
		{"hash not hex", base, good, nil, "xyz0123456", "hash"},
	}
	for _, c := range cases {
		_, err := Generate(c.cfg, c.shape, c.bank, c.hash)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v does not wrap ErrConfig", c.name, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v does not mention %q", c.name, err, c.want)
		}
	}
	// The largest legal values pass.
	if _, err := Generate(mod(func(c *Config) { c.MaxK = 5959 }), fixed.Shape{Classes: 16, TMs: 16, Clauses: 2, Features: 2, T: 1}, nil, ""); err != nil {
		t.Errorf("MaxK*720720 < 2^32 refused: %v", err)
	}
	if _, err := Generate(mod(func(c *Config) { c.ClauseLanes, c.LiteralLanes, c.Lanes = 0, 0, 6 }), good, nil, ""); err != nil {
		t.Errorf("Lanes = 6: %v", err)
	}
}

// lintConfigs are extra corner cases for the lint sweep.
var lintConfigs = []struct {
	sh  fixed.Shape
	cfg Config
}{
	{fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 1, Features: 1, T: 1}, Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 1, LiteralLanes: 1, MaxK: 1}},
	{fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 3, Features: 3, T: 2}, Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 3, LiteralLanes: 6, MaxK: 15}},
	{fixed.Shape{Classes: 10, TMs: 10, Clauses: 5, Features: 7, T: 4}, Config{Bits: 12, LFSRWidth: 24, ClauseLanes: 7, LiteralLanes: 5, MaxK: 255}},
	{fixed.Shape{Classes: 2, TMs: 2, Clauses: 4, Features: 3, T: 3}, Config{Bits: 16, LFSRWidth: 64, ClauseLanes: 8, LiteralLanes: 1, MaxK: 9}},
	{fixed.Shape{Classes: 4, TMs: 4, Clauses: 9, Features: 5, T: 300}, Config{Bits: 9, LFSRWidth: 40, ClauseLanes: 20, LiteralLanes: 3, MaxK: 33}},
	{fixed.Shape{Classes: 16, TMs: 16, Clauses: 3, Features: 40, T: 1}, Config{Bits: 8, LFSRWidth: 20, ClauseLanes: 48, LiteralLanes: 2, MaxK: 1}},
	{fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 16, T: 10}, Config{Bits: 10, LFSRWidth: 48, ClauseLanes: 1, LiteralLanes: 32, MaxK: 4095}},
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s runs skipped under -short", name)
	}
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s not found: run scripts/install-deps.sh", name)
	}
}

// lint runs verilator --lint-only -Wall on a design and wants no output.
func lint(t *testing.T, d *Design) {
	t.Helper()
	dir := t.TempDir()
	if err := d.Write(dir); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--lint-only", "-Wall", "--top-module", d.Top()}, d.VerilogFiles()...)
	cmd := exec.Command("verilator", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("verilator --lint-only -Wall %s (%+v): %v\n%s", d.Top(), d.Params, err, out)
	}
}

func TestLint(t *testing.T) {
	needTool(t, "verilator")
	var designs []*Design
	d, err := Generate(tinyConfig, tinyShape, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	designs = append(designs, d)
	cfg := tinyConfig
	cfg.InitBanks = true
	if d, err = Generate(cfg, tinyShape, tinyBank(t), ""); err != nil {
		t.Fatal(err)
	}
	designs = append(designs, d)
	for _, d := range referenceDesigns(t) {
		designs = append(designs, d)
	}
	for _, c := range lintConfigs {
		d, err := Generate(c.cfg, c.sh, nil, "")
		if err != nil {
			t.Fatalf("%+v %+v: %v", c.sh, c.cfg, err)
		}
		designs = append(designs, d)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, d := range designs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			lint(t, d)
		}()
	}
	wg.Wait()
}
