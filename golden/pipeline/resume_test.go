package pipeline

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// encodeConv is modelfile.EncodeConv, failing the test on error.
func encodeConv(t *testing.T, f *modelfile.ConvFile) []byte {
	t.Helper()
	b, err := modelfile.EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestResumeConvIdentity: with the SPVs stored exactly (--spv-bits 15),
// training 2 epochs and resuming 3 more gives the model file of 5 epochs
// in one run, byte for byte, for both class structures and for an
// encoding with the adaptive plane next to the threshold plane (resume
// once rebuilt the trainer without the adaptive plane and refused such a
// file: "N SPV words, want M"); the resumed file records 5 epochs and
// "epochs" among the overridden fields.
func TestResumeConvIdentity(t *testing.T) {
	d, err := LoadData(stripes(t, 200, 40), "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		st       conv.Structure
		adaptive *conv.AdaptiveThreshold
	}{{conv.Coalesced, nil}, {conv.PerClass, nil}, {conv.Coalesced, &conv.AdaptiveThreshold{Block: 3, C: 2}}}
	for _, c := range cases {
		st := c.st
		rc := stripesRecipe(t)
		rc.Structure, rc.Adaptive = st, c.adaptive
		train := func(epochs int) *modelfile.ConvFile {
			rc.Epochs = epochs
			f, err := TrainConv(d, ConvConfig{Recipe: rc, Overridden: []string{"clauses", "epochs"}, Seed: 3, ValRows: 20, Workers: 2, SPVBits: 15})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		one := train(5)
		start := train(2)
		got, err := ResumeConv(d, start, ResumeConfig{Epochs: 3, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got.Trainer.Epochs != 5 || !slices.Equal(got.Recipe.Overridden, []string{"clauses", "epochs"}) {
			t.Fatalf("%s: epochs %d, overridden %v", st, got.Trainer.Epochs, got.Recipe.Overridden)
		}
		a, b := encodeConv(t, one), encodeConv(t, got)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: 2 + 3 epochs: %d bytes, hash %.16s; 5 in one run: %d bytes, hash %.16s", st, len(b), modelfile.Hash(b), len(a), modelfile.Hash(a))
		}
		if bytes.Equal(b, encodeConv(t, start)) {
			t.Errorf("%s: the resumed file equals the start's", st)
		}
	}
}

// TestResumeConvRounded: from SPVs stored at 12 bits and at the default
// width (modelfile.DefaultConvSPVBits, 8), resuming trains from the
// rounded SPVs and keeps the width: the model differs from one run's but
// is no less accurate on the test rows than the start.
func TestResumeConvRounded(t *testing.T) {
	for _, w := range []int{12, 0} {
		testResumeConvRounded(t, w)
	}
}

func testResumeConvRounded(t *testing.T, w int) {
	d, err := LoadData(stripes(t, 200, 40), "")
	if err != nil {
		t.Fatal(err)
	}
	rc := stripesRecipe(t)
	rc.Epochs = 1
	start, err := TrainConv(d, ConvConfig{Recipe: rc, Seed: 3, ValRows: 20, Workers: 2, SPVBits: w})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResumeConv(d, start, ResumeConfig{Epochs: 4, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := w
	if w == 0 {
		want = modelfile.DefaultConvSPVBits
	}
	if start.SPVBits != want || got.SPVBits != want || got.Trainer.Epochs != 5 {
		t.Fatalf("spv_bits %d then %d, want %d; epochs %d", start.SPVBits, got.SPVBits, want, got.Trainer.Epochs)
	}
	acc := func(f *modelfile.ConvFile) float64 {
		rows, err := ConvRows(f, d, "test")
		if err != nil {
			t.Fatal(err)
		}
		labels, err := ConvLabels(f, d, rows)
		if err != nil {
			t.Fatal(err)
		}
		sums, err := SampleConv(f, d, rows, ConvSampling{K: 16, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		right := 0
		for i, q := range ConvQueries(&f.Head, sums, 16, f.Mapping) {
			if q.Pred == labels[i] {
				right++
			}
		}
		return float64(right) / float64(len(rows))
	}
	a0, a1 := acc(start), acc(got)
	t.Logf("test accuracy after 1 epoch %.3f, resumed to 5 from %d-bit SPVs %.3f", a0, want, a1)
	if a1 < a0 {
		t.Errorf("resumed accuracy %.3f below the start's %.3f", a1, a0)
	}
}

// TestResumeConvRefuses: resuming on other data, from a file without the
// lane record, or for no epochs is refused, naming what differs.
func TestResumeConvRefuses(t *testing.T) {
	d, err := LoadData(stripes(t, 200, 40), "")
	if err != nil {
		t.Fatal(err)
	}
	rc := stripesRecipe(t)
	rc.Epochs = 1
	f, err := TrainConv(d, ConvConfig{Recipe: rc, Seed: 3, ValRows: 20, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	other, err := LoadData(stripes(t, 200, 41), "")
	if err != nil {
		t.Fatal(err)
	}
	noLanes := *f
	noLanes.Lanes = nil
	shifted := *f
	shifted.Split.Train = slices.Clone(f.Split.Train[1:])
	otherFP := *f
	otherFP.DataFingerprint = modelfile.FingerprintPrefix + strings.Repeat("0", 64)
	cases := []struct {
		name string
		d    *Data
		f    *modelfile.ConvFile
		cfg  ResumeConfig
		want string
	}{
		{"other data", other, f, ResumeConfig{Epochs: 1}, "split.rows"},
		{"fingerprint", d, &otherFP, ResumeConfig{Epochs: 1}, "data_fingerprint"},
		{"no epochs", d, f, ResumeConfig{}, "0 epochs"},
		{"no lanes", d, &noLanes, ResumeConfig{Epochs: 1}, "no lane record"},
		{"training rows", d, &shifted, ResumeConfig{Epochs: 1}, "split.train"},
	}
	for _, c := range cases {
		_, err := ResumeConv(c.d, c.f, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
		if c.name == "no lanes" && !errors.Is(err, ErrNoLanes) {
			t.Errorf("no lanes: %v does not wrap ErrNoLanes", err)
		}
	}
	// Reseeded lanes resume the file without its record, deterministically.
	var hashes []string
	for i := 0; i < 2; i++ {
		g, err := ResumeConv(d, &noLanes, ResumeConfig{Epochs: 1, ReseedLanes: true})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, modelfile.Hash(encodeConv(t, g)))
	}
	if hashes[0] != hashes[1] {
		t.Errorf("reseeded resumes differ: %v", hashes)
	}
}

// TestResumeTabularIdentity: a tabular model of the fixed-point trainer
// (sampled encoding, calibrated), trained 3 epochs and resumed 2 more,
// is the file of 5 epochs in one run, byte for byte, on iris (3 TMs) and
// on noisy XOR (binary: 1 TM); a float model and a host-shuffled one have
// no record and are refused.
func TestResumeTabularIdentity(t *testing.T) {
	for _, name := range []string{"iris", "xor-noisy"} {
		d, err := LoadData(name, "")
		if err != nil {
			t.Fatal(err)
		}
		train := func(epochs int, fixed, host bool) *modelfile.File {
			cfg := TrainConfig{Params: ptmParams(epochs), SplitSeed: 1, Fixed: fixed, HostShuffle: host, Workers: 2}
			f, err := TrainAndCalibrate(d, cfg, true)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		enc := func(f *modelfile.File) []byte {
			b, err := modelfile.Encode(f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		one := train(5, true, false)
		start := train(3, true, false)
		if start.FixedTraining == nil || !start.FixedTraining.Calibrate {
			t.Fatalf("%s: record %+v", name, start.FixedTraining)
		}
		got, err := ResumeTabular(d, start, ResumeConfig{Epochs: 2, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, b := enc(one), enc(got)
		if got.Model.Epochs != 5 || !bytes.Equal(a, b) {
			t.Errorf("%s: 3 + 2 epochs (%d recorded, hash %.16s) differ from 5 in one run (hash %.16s)", name, got.Model.Epochs, modelfile.Hash(b), modelfile.Hash(a))
		}
		if bytes.Equal(b, enc(start)) {
			t.Errorf("%s: the resumed file equals the start's", name)
		}
		for _, c := range []struct {
			what        string
			fixed, host bool
		}{{"float", false, false}, {"host-shuffled", true, true}} {
			f := train(2, c.fixed, c.host)
			if _, err := ResumeTabular(d, f, ResumeConfig{Epochs: 1}); f.FixedTraining != nil || err == nil || !strings.Contains(err.Error(), "no fixed-point training record") {
				t.Errorf("%s: %s model: record %v, %v", name, c.what, f.FixedTraining != nil, err)
			}
		}
		other, err := LoadData("wine", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ResumeTabular(other, start, ResumeConfig{Epochs: 1}); err == nil || !strings.Contains(err.Error(), "features") {
			t.Errorf("%s: resumed on wine: %v", name, err)
		}
	}
}

// ptmParams is a small model's parameters for epochs epochs.
func ptmParams(epochs int) ptm.Params {
	p := ptm.DefaultParams()
	p.Clauses, p.Epochs, p.Seed = 10, epochs, 4
	return p
}
