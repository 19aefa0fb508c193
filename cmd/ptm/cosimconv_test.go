package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCosimConv trains a small convolutional model on 300 MNIST training
// images and co-simulates its core through `ptm cosim` on 6 test images
// at K = 3 and on 2 random images: every class-sum word equal to the
// golden model's, the cycles per sample at least the schedule's fixed
// part. A second model has two bit-planes and two threshold sets (each
// query two requests); `ptm gen` writes the core of the first.
func TestCosimConv(t *testing.T) {
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not on PATH")
	}
	dir := mnistSubset(t, 300, 20)
	model := filepath.Join(t.TempDir(), "m.ptm")
	code, out, errs := runCLI("train", "--data", dir, "--clauses", "16", "-T", "128", "--epochs", "1", "--val-rows", "30", "-o", model)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	t.Logf("[progress] trained: %s", strings.TrimSpace(out))
	for _, args := range [][]string{
		{"--data", dir, "--vectors", "6", "--k", "3"},
		{"--vectors", "2", "--k", "2", "--seed", "5", "--scan", "full"},
	} {
		code, out, errs = runCLI(append([]string{"cosim", "--model", model, "--clause-lanes", "4", "--literal-lanes", "8", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("cosim %v: exit %d: %s", args, code, errs)
		}
		var r struct {
			Samples    int     `json:"samples_compared"`
			Words      int     `json:"words_compared"`
			Mismatches int     `json:"mismatches"`
			Cycles     float64 `json:"cycles_per_sample"`
			Images     int     `json:"images"`
			Scan       string  `json:"scan"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("cosim --json: %v\n%s", err, out)
		}
		t.Logf("cosim %v: %+v", args, r)
		K := 3
		if args[0] != "--data" {
			K = 2
		}
		// 16 clauses on 4 clause lanes: 4 groups, each of BT = 272/8 = 34
		// beats, a drain cycle, at least one patch and LC+1 = 5 cycles of
		// weights.
		if r.Mismatches != 0 || r.Samples != r.Images*K || r.Words != 10*r.Samples || r.Cycles < 4*(34+1+1+5) {
			t.Errorf("cosim %v: %+v", args, r)
		}
		// The range scan is the default; --scan full chooses the other.
		if want := map[bool]string{true: "range", false: "full"}[K == 3]; r.Scan != want {
			t.Errorf("cosim %v: scan %q, want %q", args, r.Scan, want)
		}
	}
	if code, _, errs := runCLI("cosim", "--model", model, "--mode", "stats"); code == 0 || !strings.Contains(errs, "--mode") {
		t.Errorf("cosim --mode stats on a conv model: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI("cosim", "--model", model, "--scan", "sideways"); code != 2 || !strings.Contains(errs, `--scan "sideways"`) {
		t.Errorf("cosim --scan sideways: exit %d, %s", code, errs)
	}

	out2 := filepath.Join(t.TempDir(), "rtl")
	if code, out, errs := runCLI("gen", "--model", model, "--out", out2, "--clause-lanes", "4", "--literal-lanes", "8"); code != 0 || !strings.Contains(out, "ptm_conv_core") {
		t.Fatalf("gen: exit %d: %s %s", code, out, errs)
	}
	src, err := os.ReadFile(filepath.Join(out2, "ptm_conv_core.v"))
	if err != nil || !strings.Contains(string(src), "window 10x10") || !strings.Contains(string(src), "range scan, PN=1") || !strings.Contains(string(src), "`default_nettype none") {
		t.Errorf("gen: ptm_conv_core.v: %v\n%.600s", err, src)
	}

	model2 := filepath.Join(t.TempDir(), "m2.ptm")
	code, _, errs = runCLI("train", "--data", dir, "--clauses", "8", "-T", "64", "--epochs", "1", "--val-rows", "30",
		"--pixel-thresholds", "50,150", "--jitter-sets", "2", "--jitter-spread", "20", "--window", "8", "-o", model2)
	if code != 0 {
		t.Fatalf("train (2 planes, 2 sets): exit %d: %s", code, errs)
	}
	code, out, errs = runCLI("cosim", "--model", model2, "--data", dir, "--vectors", "3", "--k", "3", "--clause-lanes", "2", "--literal-lanes", "16", "--patch-lanes", "3", "--json")
	if code != 0 {
		t.Fatalf("cosim (2 planes, 2 sets): exit %d: %s", code, errs)
	}
	var r2 struct {
		Samples    int `json:"samples_compared"`
		Requests   int `json:"requests"`
		Mismatches int `json:"mismatches"`
	}
	if err := json.Unmarshal([]byte(out), &r2); err != nil {
		t.Fatal(err)
	}
	if r2.Samples != 9 || r2.Requests != 6 || r2.Mismatches != 0 {
		t.Errorf("cosim (2 planes, 2 sets): %+v, want 9 samples in 6 requests, 0 mismatches", r2)
	}
}

// TestScanTabular: --scan is the convolutional core's; a tabular design
// refuses it with a usage error.
func TestScanTabular(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rtl")
	code, _, errs := runCLI("gen", "--random-shape", "classes=2,clauses=4,features=4,t=10", "--out", out, "--scan", "full")
	if code != 2 || !strings.Contains(errs, "--scan are for a convolutional model") {
		t.Errorf("gen --random-shape --scan full: exit %d, %s", code, errs)
	}
}
