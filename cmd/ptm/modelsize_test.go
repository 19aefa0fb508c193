package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ptmhw/ptm/golden/modelfile"
)

// TestTrainIrisFileSize: the model the tuner chooses for Iris by default
// (60 clauses per class, T 10, s 5, 100 epochs, 6 thresholds; given here
// as flags so that the test need not tune) is written with its float SPVs
// at modelfile.FloatSPVBits and fits the 200 KB; trained with
// --fixed its SPVs stay exact at the trainer's 15 bits.
func TestTrainIrisFileSize(t *testing.T) {
	dir := t.TempDir()
	base := []string{"train", "--data", "iris", "--clauses", "60", "-T", "10", "-s", "5", "--epochs", "100", "--thresholds", "6", "--no-tune"}
	for _, c := range []struct {
		name  string
		args  []string
		bits  int
		limit int64
	}{
		{"float", nil, modelfile.FloatSPVBits, 200_000},
		{"fixed", []string{"--fixed"}, 15, 1 << 30},
	} {
		path := filepath.Join(dir, c.name+".ptm")
		code, _, errs := runCLI(append(append(base, c.args...), "-o", path)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errs)
		}
		f, _, err := modelfile.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d TAs, SPVs at %d bits, %d bytes", c.name, f.Model.NumTAs(), f.SPVBits, st.Size())
		if f.SPVBits != c.bits || st.Size() > c.limit || f.Model.NumTAs() != 8640 {
			t.Errorf("%s: SPVs at %d bits (want %d), %d bytes (limit %d), %d TAs (want 8640)", c.name, f.SPVBits, c.bits, st.Size(), c.limit, f.Model.NumTAs())
		}
	}
}
