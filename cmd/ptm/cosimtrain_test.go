package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestCosimTrainIris: `ptm cosim --train --data iris` at reduced size (2
// epochs, m = 6, compared after every example) reports every SPV word
// compared and 0 mismatches; the random-shape mode likewise.
func TestCosimTrainIris(t *testing.T) {
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not on PATH")
	}
	code, out, errOut := runCLI("cosim", "--train", "--data", "iris", "--seed", "1", "--epochs", "2", "--clauses", "6",
		"--every-example", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res trainCosimResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Iris: 120 training rows, 4 features x 6 thresholds = 24 Boolean
	// features; 3 TMs x 6 clauses x 48 literals = 864 TAs of 16 words, I and
	// the threshold.
	if res.Rows != 120 || res.Shape.Features != 24 || res.Shape.TMs != 3 || res.N != 8 {
		t.Fatalf("unexpected setup: %+v", res)
	}
	perCmp := 864 * (16 + 2)
	if res.SPVWordsPerCmp != perCmp || len(res.Epochs) != 2 {
		t.Fatalf("%d words per comparison, %d epochs; want %d and 2", res.SPVWordsPerCmp, len(res.Epochs), perCmp)
	}
	for _, ep := range res.Epochs {
		if ep.Examples != 120 || ep.WordsCompared != 120*perCmp || ep.Mismatches != 0 || ep.CyclesPerEx <= 0 {
			t.Errorf("epoch %+v: want 120 examples, %d words, 0 mismatches", ep, 120*perCmp)
		}
	}
	if res.Mismatches != 0 || res.WordsCompared != 240*perCmp {
		t.Errorf("%d mismatches, %d words compared", res.Mismatches, res.WordsCompared)
	}
	code, out, errOut = runCLI("cosim", "--train", "--shapes", "2", "--examples", "5", "--seed", "19")
	if code != 0 || !strings.Contains(out, "2 random shapes:") || !strings.Contains(out, " 0 mismatches") {
		t.Fatalf("--shapes: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI("cosim", "--train", "--data", "iris", "--shapes", "2")
	if code != 2 || !strings.Contains(errOut, "exactly one of --data or --shapes") {
		t.Errorf("--data with --shapes: exit %d, %s", code, errOut)
	}
	code, _, errOut = runCLI("cosim", "--train", "--data", "iris", "--states", "12", "--lanes", "0")
	if code != 2 || !strings.Contains(errOut, "--lanes 0") {
		t.Errorf("--lanes 0: exit %d, %s", code, errOut)
	}
}

// TestSynthTrainerUsage: `ptm synth --trainer` refuses bad settings with a
// usage error before any tool runs (a model whose SPVs overflow the SPRAM
// among them).
func TestSynthTrainerUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lanes", "0"}, "--lanes 0"},
		{[]string{"--cycles", "-1"}, "--cycles -1"},
		{[]string{"--freq", "0"}, "--freq 0"},
		{[]string{"--device", "ecp5"}, "--device"},
		{[]string{"--states", "12", "--cycles", "4000"}, "do not fit one SPRAM"},
	} {
		code, _, errOut := runCLI(append([]string{"synth", "--trainer"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and a message naming %q", c.args, code, errOut, c.want)
		}
	}
}
