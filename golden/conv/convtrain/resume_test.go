package convtrain

import (
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// stateOf copies tr's State.
func stateOf(tr *Trainer) State {
	cl := tr.Clauses()
	var spv []uint16
	for ta := 0; ta < tr.Head().TAs(); ta++ {
		spv = append(spv, cl.SPV(ta)...)
	}
	ctl, lanes := tr.Lanes()
	return State{SPV: spv, Weights: slices.Clone(tr.Head().Weights), Control: ctl, Lanes: lanes, Epochs: tr.Epochs}
}

// TestResumeIdentity: training 1 epoch, then resuming a new trainer from
// its State for 2 more, ends in the state (SPVs, include masses, weights,
// lanes) of 3 epochs in one run, for both class structures.
func TestResumeIdentity(t *testing.T) {
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	X, y := strokes(200, 10, 5)
	B := booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X)
	for _, st := range []conv.Structure{conv.PerClass, conv.Coalesced} {
		cfg := Config{Shape: sh, Structure: st, Classes: 3, Clauses: 12, T: 6, S: 3, N: 20, Bits: 12, Seed: 9, Workers: 2}
		run := func(tr *Trainer, epochs int) {
			for e := 0; e < epochs; e++ {
				if err := tr.RunEpoch(B, y); err != nil {
					t.Fatal(err)
				}
			}
		}
		one, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		run(one, 3)
		first, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		run(first, 1)
		mid := stateOf(first)
		first.Close()
		cfg.Workers = 1 // the result does not depend on it
		second, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := second.Resume(mid); err != nil {
			t.Fatal(err)
		}
		run(second, 2)
		a, b := stateOf(one), stateOf(second)
		if hash(one) != hash(second) || a.Control != b.Control || !slices.Equal(a.Lanes, b.Lanes) || b.Epochs != 3 {
			t.Errorf("%s: 1 + 2 epochs differ from 3 in one run (hash %s vs %s, epochs %d)", st, hash(second), hash(one), b.Epochs)
		}
		if hash(second) == hashOf(t, cfg, mid) {
			t.Errorf("%s: the resumed epochs changed nothing", st)
		}
		one.Close()
		second.Close()
	}
}

// hashOf is hash of a trainer resumed from st without training.
func hashOf(t *testing.T, cfg Config, st State) string {
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Resume(st); err != nil {
		t.Fatal(err)
	}
	return hash(tr)
}

// TestResumeRefuses: a State that does not fit the configuration is
// refused, naming what is wrong.
func TestResumeRefuses(t *testing.T) {
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	cfg := Config{Shape: sh, Structure: conv.PerClass, Classes: 3, Clauses: 6, T: 6, S: 3, N: 8, Bits: 12, Seed: 9, Workers: 1}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	good := stateOf(tr)
	cases := []struct {
		name, want string
		edit       func(s *State)
	}{
		{"lanes", "clause lanes", func(s *State) { s.Lanes = s.Lanes[1:] }},
		{"zero lane", "clause 2's lane state 0", func(s *State) { s.Lanes[2] = 0 }},
		{"zero control", "control lane state 0", func(s *State) { s.Control = 0 }},
		{"weights", "weights, want", func(s *State) { s.Weights = s.Weights[1:] }},
		{"per-class weight", "per-class structure", func(s *State) { s.Weights[0] = 5 }},
		{"spv", "SPV words", func(s *State) { s.SPV = s.SPV[1:] }},
		{"spv mass", "TA 0", func(s *State) { s.SPV[0]++ }},
	}
	for _, c := range cases {
		s := good
		s.SPV, s.Weights, s.Lanes = slices.Clone(good.SPV), slices.Clone(good.Weights), slices.Clone(good.Lanes)
		c.edit(&s)
		if err := tr.Resume(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
