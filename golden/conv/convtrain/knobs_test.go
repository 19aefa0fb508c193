package convtrain

import (
	"fmt"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// knobRun trains a coalesced 10 x 10 / 4 x 4 model on the strokes for two
// epochs with the given weight clip and literal budget and returns it
// (closed).
func knobRun(t *testing.T, clip, budget, workers int) *Trainer {
	t.Helper()
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	X, y := strokes(300, 10, 3)
	B := booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X)
	tr, err := New(Config{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: 12, T: 40, S: 3, N: 20, Bits: 12, Seed: 11,
		Workers: workers, WeightClip: clip, LiteralBudget: budget})
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

// maxAbsWeight is the largest |w| of the trainer's class weights.
func maxAbsWeight(tr *Trainer) int32 {
	var m int32
	for _, w := range tr.Head().Weights {
		m = max(m, w, -w)
	}
	return m
}

// meanIncluded is the expected number of included literals per clause
// (the sum of the include probabilities over the clause's literals).
func meanIncluded(tr *Trainer) float64 {
	m := tr.Model()
	return sumOf(m.Include) / float64(m.Clauses)
}

func sumOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// TestWeightClip: without a clip the strokes' weights grow past 8; with
// WeightClip 8 every weight stays within +-8 and some reach it, and the
// trained state differs from the unclipped one.
func TestWeightClip(t *testing.T) {
	free := knobRun(t, 0, 0, 2)
	if m := maxAbsWeight(free); m <= 8 {
		t.Fatalf("unclipped max |w| = %d, want > 8 (the clip below would not bind)", m)
	}
	clipped := knobRun(t, 8, 0, 2)
	if m := maxAbsWeight(clipped); m != 8 {
		t.Errorf("WeightClip 8: max |w| = %d, want 8", m)
	}
	if hash(free) == hash(clipped) {
		t.Error("WeightClip 8 trained the same state as no clip")
	}
	// The default (0) is conv.MaxWeight: the same words.
	if a, b := hash(free), hash(knobRun(t, conv.MaxWeight, 0, 1)); a != b {
		t.Errorf("WeightClip %d gives state %.16s, the default %.16s", conv.MaxWeight, b, a)
	}
}

// TestLiteralBudget: a budget of 2 literals leaves the clauses fewer
// included literals than no budget, and a budget of every literal (56)
// is the rule without one, word for word (a clause that includes every
// literal never fires on the strokes).
func TestLiteralBudget(t *testing.T) {
	free := knobRun(t, 0, 0, 2)
	tight := knobRun(t, 0, 2, 2)
	nf, nt := meanIncluded(free), meanIncluded(tight)
	t.Logf("expected included literals per clause: %.2f without a budget, %.2f with budget 2", nf, nt)
	if !(nt < nf) {
		t.Errorf("budget 2: %.2f included literals per clause, no budget %.2f: want fewer", nt, nf)
	}
	if a, b := hash(free), hash(knobRun(t, 0, 56, 1)); a != b {
		t.Errorf("budget 56 (every literal) gives state %.16s, no budget %.16s", b, a)
	}
}

// TestKnobsWorkersBitExact: with both knobs on, the state does not
// depend on the worker count, and it is pinned (update only with a
// deliberate change of the rule, as TestGoldenHash).
func TestKnobsWorkersBitExact(t *testing.T) {
	const want = "124bd8337266ef8089c497a2f469a9b34ae5982fec9fc273aa42adf132a23d8d"
	for _, w := range []int{1, 2, 5} {
		tr := knobRun(t, 6, 4, w)
		if got := hash(tr); got != want {
			t.Errorf("workers=%d: WeightClip 6, LiteralBudget 4: state hash %s, want %s", w, got, want)
		}
	}
}

// TestKnobErrors: a clip outside 1..conv.MaxWeight (or any with the
// per-class structure) and a budget outside 0..literals are refused.
func TestKnobErrors(t *testing.T) {
	sh := conv.Shape{H: 6, W: 6, Planes: 1, WY: 3, WX: 3}
	good := Config{Shape: sh, Structure: conv.Coalesced, Classes: 2, Clauses: 4, T: 4, S: 3, N: 20, Seed: 1}
	for _, c := range []struct {
		clip, budget int
		st           conv.Structure
	}{
		{-1, 0, conv.Coalesced}, {conv.MaxWeight + 1, 0, conv.Coalesced}, {8, 0, conv.PerClass},
		{0, -1, conv.Coalesced}, {0, 31, conv.Coalesced},
	} {
		cfg := good
		cfg.WeightClip, cfg.LiteralBudget, cfg.Structure = c.clip, c.budget, c.st
		name := fmt.Sprintf("clip %d budget %d %s", c.clip, c.budget, c.st)
		if tr, err := New(cfg); err == nil {
			tr.Close()
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	cfg := good
	cfg.WeightClip, cfg.LiteralBudget = 1, 30
	tr, err := New(cfg)
	if err != nil {
		t.Fatalf("clip 1, budget 30 (every literal): %v", err)
	}
	tr.Close()
}
