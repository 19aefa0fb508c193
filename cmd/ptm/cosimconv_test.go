package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCosimConv trains a small convolutional model on 300 MNIST training
// images and co-simulates its core through `ptm cosim` on 6 test images
// at K = 3 and on 2 random images: every class-sum word equal to the
// golden model's, the cycles per sample at least one scan of every patch
// per clause group.
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
		{"--vectors", "2", "--k", "2", "--seed", "5"},
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
	}
	if code, _, errs := runCLI("cosim", "--model", model, "--mode", "stats"); code == 0 || !strings.Contains(errs, "--mode") {
		t.Errorf("cosim --mode stats on a conv model: exit %d, %s", code, errs)
	}
}
