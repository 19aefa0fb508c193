package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestTrainTunesXORClassic: `ptm train --data xor-classic` without
// hyper-parameter flags (at a reduced budget: 8 s of nominal work admits
// the four 10-clause candidates of the general grid) tunes, records the
// choice in the model file, and reaches >= 0.99 test accuracy, where the
// untuned defaults give 0.711.
func TestTrainTunesXORClassic(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.ptm")
	t.Log("[progress] tuning and training xor-classic (about 10 s of CPU)")
	code, out, errs := runCLI("train", "--data", "xor-classic", "--tune", "8s", "-o", model)
	if code != 0 {
		t.Fatalf("train: exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{"tuned in", "4 of 8 candidates scored by accuracy (ties: NLL), inner 4-fold CV", "chosen: clauses 10,", "validation accuracy 0.", "tuning: candidate 4/4"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("output lacks %q:\n%s%s", want, out, errs)
		}
	}
	f, _, err := modelfile.Read(model)
	if err != nil {
		t.Fatal(err)
	}
	tu := f.Tuning
	if tu == nil || tu.Candidates != 8 || tu.Scored != 4 || tu.Score == nil || tu.Score.Rows != 5000 || tu.Chosen.Clauses != 10 || len(tu.Fixed) != 0 {
		t.Fatalf("tuning record %+v", tu)
	}
	// 40% label noise: out-of-fold accuracy on noisy labels is at most about 0.6.
	if tu.Score.Accuracy < 0.55 || tu.Score.Accuracy > 0.62 {
		t.Errorf("validation accuracy %.4f on 40%%-noisy labels, want 0.55..0.62", tu.Score.Accuracy)
	}
	code, out, errs = runCLI("eval", "--model", model, "--data", "xor-classic", "--split", "test", "--samples", "20", "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errs)
	}
	var r struct {
		Accuracy float64 `json:"accuracy"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	t.Logf("chosen %+v, test accuracy %.4f", tu.Chosen, r.Accuracy)
	if r.Accuracy < 0.99 {
		t.Errorf("test accuracy %.4f, want >= 0.99", r.Accuracy)
	}
	code, out, _ = runCLI("inspect", "--model", model, "--tm", "0", "--clause", "0")
	if code != 0 || !strings.Contains(out, "tuned: clauses 10,") || !strings.Contains(out, "chosen among 4 scored of 8 candidates") {
		t.Errorf("inspect: exit %d:\n%s", code, out)
	}
}

// TestTrainTuneKeepsFlags: flags given are kept (only the rest is tuned)
// and recorded as such; --no-tune writes no tuning record; bad budget
// flags are usage errors.
func TestTrainTuneKeepsFlags(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.ptm")
	code, out, errs := runCLI("train", "--data", "iris", "--seed", "2", "--clauses", "6", "--epochs", "3", "--thresholds", "4", "-o", model)
	if code != 0 {
		t.Fatalf("train: exit %d: %s%s", code, out, errs)
	}
	f, _, err := modelfile.Read(model)
	if err != nil {
		t.Fatal(err)
	}
	m, tu := f.Model, f.Tuning
	if tu == nil || m.Clauses != 6 || m.Epochs != 3 || f.Booleanizer.NumBits() != 16 || !reflect.DeepEqual(tu.Fixed, []string{"clauses", "epochs", "thresholds"}) {
		t.Fatalf("model clauses %d epochs %d, %d Boolean features; tuning %+v", m.Clauses, m.Epochs, f.Booleanizer.NumBits(), tu)
	}
	// Iris's grid (the experiments'): T/s 30/2, 10/2, 30/3, 10/5.
	if tu.Candidates != 4 || tu.Scored != 4 || !strings.Contains(errs, "tuning: kept as given: clauses, epochs, thresholds") {
		t.Errorf("tuning %+v\n%s", tu, errs)
	}
	code, _, errs = runCLI("train", "--data", "iris", "--seed", "2", "--clauses", "6", "--epochs", "3", "--no-tune", "-o", model)
	if code != 0 {
		t.Fatalf("train --no-tune: exit %d: %s", code, errs)
	}
	if f, _, err = modelfile.Read(model); err != nil || f.Tuning != nil || f.Model.T != 10 || f.Model.S != 2 {
		t.Errorf("--no-tune: %v, tuning %+v, T %d s %g (want the defaults 10, 2)", err, f.Tuning, f.Model.T, f.Model.S)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--tune", "0s"}, "--tune 0s, want a positive duration"},
		{[]string{"--tune", "1m", "--no-tune"}, "--tune and --no-tune: give one"},
		{[]string{"--tune", "soon"}, "invalid value"},
		{[]string{"--tune", "1m", "--board", "/dev/null"}, "--tune with --board"},
	} {
		code, _, errs := runCLI(append([]string{"train", "--data", "iris", "-o", model}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", c.args, code, c.msg, errs)
		}
	}
}
