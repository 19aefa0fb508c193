package convtrain

import (
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// boostRun trains the strokes as knobRun does (WeightClip 8), with the
// structure and boosted true-positive feedback given, and returns the
// trainer (closed).
func boostRun(t *testing.T, st conv.Structure, boost bool, workers int) *Trainer {
	t.Helper()
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	X, y := strokes(300, 10, 3)
	B := booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X)
	cfg := Config{Shape: sh, Structure: st, Classes: 3, Clauses: 12, T: 40, S: 3, N: 20, Bits: 12, Seed: 11,
		Workers: workers, BoostTruePositive: boost}
	if st == conv.Coalesced {
		cfg.WeightClip = 8
	}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for e := 0; e < 2; e++ {
		if err := tr.RunEpoch(B, y); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Clauses().Check(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestBoostTruePositive: boosted true-positive feedback pushes the
// patches' 1-literals towards include with probability 1, so the clauses
// end with more included literals than under (s-1)/s, and a different
// state; off, it is the rule before the knob (knobRun's state, word for
// word).
func TestBoostTruePositive(t *testing.T) {
	off, on := boostRun(t, conv.Coalesced, false, 2), boostRun(t, conv.Coalesced, true, 2)
	if a, b := hash(off), hash(knobRun(t, 8, 0, 2)); a != b {
		t.Errorf("BoostTruePositive false: state %.16s, without the knob %.16s", a, b)
	}
	nf, nb := meanIncluded(off), meanIncluded(on)
	t.Logf("expected included literals per clause: %.2f without boost, %.2f with", nf, nb)
	if !(nb > nf) {
		t.Errorf("boost: %.2f included literals per clause, without %.2f: want more", nb, nf)
	}
	if hash(off) == hash(on) {
		t.Error("BoostTruePositive trained the same state as without")
	}
}

// TestBoostWorkersBitExact: with boosted true-positive feedback the state
// does not depend on the worker count, coalesced and per-class, and is
// pinned (update only with a deliberate change of the rule).
func TestBoostWorkersBitExact(t *testing.T) {
	for _, c := range []struct {
		st   conv.Structure
		want string
	}{
		{conv.Coalesced, "6e74a01e4876c3fafd8c9483d2b4ec69a5e01133f198e9be51969880b5dba73f"},
		{conv.PerClass, "1ae2d351a99d6024394b5dbe2e89087fc43a86df36a19a851019aedbcafa4e8f"},
	} {
		for _, w := range []int{1, 2, 5} {
			if got := hash(boostRun(t, c.st, true, w)); got != c.want {
				t.Errorf("%s, workers=%d: state hash %s, want %s", c.st, w, got, c.want)
			}
		}
	}
}

// The float trainer's boost moves the same way: more included literals
// than without, every SPV still a probability vector.
func TestFloatBoost(t *testing.T) {
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	X, y := strokes(300, 10, 3)
	B := booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X)
	inc := map[bool]float64{}
	for _, boost := range []bool{false, true} {
		f, err := NewFloat(Config{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: 12, T: 40, S: 3, N: 20, Seed: 11,
			WeightClip: 8, BoostTruePositive: boost})
		if err != nil {
			t.Fatal(err)
		}
		for e := 0; e < 2; e++ {
			if err := f.RunEpoch(B, y); err != nil {
				t.Fatal(err)
			}
		}
		m := f.Model()
		inc[boost] = sumOf(m.Include) / float64(m.Clauses)
		for ta := 0; ta < m.TAs(); ta++ {
			s := sumOf(f.SPV(ta))
			if s < 1-1e-9 || s > 1+1e-9 {
				t.Fatalf("boost %v: TA %d: SPV mass %v, want 1", boost, ta, s)
			}
		}
	}
	t.Logf("float: expected included literals per clause: %.2f without boost, %.2f with", inc[false], inc[true])
	if !(inc[true] > inc[false]) {
		t.Errorf("float boost: %.2f included literals per clause, without %.2f: want more", inc[true], inc[false])
	}
}
