package traincosim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/testenv"
)

// shapeCase is one random co-simulation: a shape, training settings and
// the number of examples.
type shapeCase struct {
	opts     Options
	examples int
}

func (c shapeCase) String() string {
	o := c.opts
	return fmt.Sprintf("NC%d-bin%v-m%d-o%d-T%d-N%d-B%d-LL%d-s%.2f-%s", o.Shape.Classes, o.Shape.Binary, o.Shape.Clauses,
		o.Shape.Features, o.Shape.T, o.N, o.Bits, o.LiteralLanes, o.S, o.Feedback)
}

// randomCases draws n shapes: binary and multiclass, N 4..32, B 8..15,
// 1..4 literal lanes, both update rules.
func randomCases(n, examples int, seed uint64) []shapeCase {
	rng := rand.New(rand.NewPCG(seed, 0x7472_6169_6e63_6f73)) // "traincos"
	var out []shapeCase
	for k := 0; k < n; k++ {
		binary := k%2 == 0
		classes := 2
		if !binary {
			classes = 2 + rng.IntN(3)
		}
		tms := classes
		if binary {
			tms = 1
		}
		sh := fixed.Shape{Binary: binary, Classes: classes, TMs: tms, Clauses: 2 + rng.IntN(7),
			Features: 1 + rng.IntN(9), T: 1 + rng.IntN(8)}
		fb := ptm.ConsistentFeedback
		if rng.IntN(4) == 0 {
			fb = ptm.PaperFeedback
		}
		out = append(out, shapeCase{opts: Options{Shape: sh, N: 4 + rng.IntN(29), S: 1.5 + 6*rng.Float64(),
			Seed: rng.Uint64(), Feedback: fb, Bits: 8 + rng.IntN(8), LiteralLanes: 1 + rng.IntN(4)}, examples: examples})
	}
	return out
}

// runCase trains c's engine and golden trainer on random examples and
// compares every word after every example.
func runCase(t *testing.T, c shapeCase, rng *rand.Rand) (words int, cycles uint64) {
	t.Helper()
	s, err := Start(c.opts)
	if errors.Is(err, ErrNoVerilator) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	defer s.Close()
	sh := c.opts.Shape
	// Examples with a learnable rule (label from the first features) so
	// that SPVs move far from their initial state, plus noise.
	for e := 0; e < c.examples; e++ {
		x := make([]bool, sh.Features)
		for i := range x {
			x[i] = rng.IntN(2) == 1
		}
		y := 0
		if x[0] {
			y = 1
		}
		if sh.Features > 1 && x[1] && sh.Classes > 2 {
			y = 2
		}
		if rng.IntN(5) == 0 {
			y = rng.IntN(sh.Classes)
		}
		if _, err := s.Train(x, y); err != nil {
			t.Fatalf("%v: example %d: %v", c, e, err)
		}
		w, total, first, err := s.Compare(5)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		words += w
		if total > 0 {
			for _, m := range first {
				t.Errorf("%v: %v", c, m)
			}
			t.Fatalf("%v: %d mismatches after example %d", c, total, e)
		}
	}
	if err := s.Golden().Check(); err != nil {
		t.Fatal(err)
	}
	return words, s.Cycles()
}

// TestRandomShapes: random shapes, binary and multiclass, N 4..32, B 8..15,
// 1..4 literal lanes, both rules; every SPV word and include mass of the
// engine equals the golden trainer's after every example.
func TestRandomShapes(t *testing.T) {
	shapes := testenv.Size(6, 40)
	examples := testenv.Size(30, 100)
	beat := testenv.Heartbeat(t, 30*time.Second)
	rng := rand.New(rand.NewPCG(11, 12))
	var words int
	for k, c := range randomCases(shapes, examples, 3) {
		start := time.Now()
		w, cyc := runCase(t, c, rng)
		words += w
		t.Logf("[progress] shape %d/%d %v: %d examples, %d words compared, 0 mismatches, %.0f cycles/example (%.1fs)",
			k+1, shapes, c, c.examples, w, float64(cyc)/float64(c.examples), time.Since(start).Seconds())
		beat("%d/%d shapes", k+1, shapes)
	}
	t.Logf("%d shapes, %d words compared, 0 mismatches", shapes, words)
}

// TestDetectsMismatch: the comparison is not vacuous: when the golden
// trainer sees one example more than the engine, Compare reports
// mismatches naming TAs and states; and the SPVs have left their initial
// state.
func TestDetectsMismatch(t *testing.T) {
	c := randomCases(2, 0, 3)[1] // a multiclass shape of TestRandomShapes (cached build)
	s, err := Start(c.opts)
	if errors.Is(err, ErrNoVerilator) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := c.opts.Shape
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]bool, sh.Features)
	for e := 0; e < 20; e++ {
		for i := range x {
			x[i] = rng.IntN(2) == 1
		}
		if _, err := s.Train(x, e%sh.Classes); err != nil {
			t.Fatal(err)
		}
	}
	words, total, _, err := s.Compare(3)
	if err != nil || total != 0 {
		t.Fatalf("before: %d mismatches, %v", total, err)
	}
	if want := sh.TAs() * (2*c.opts.N + 1); words != want {
		t.Errorf("%d words compared, want %d", words, want)
	}
	moved := 0
	for ta := 0; ta < sh.TAs(); ta++ {
		if s.Golden().IncludeMass(ta) != 1<<(s.Golden().Bits()-1) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no include mass moved in 20 examples: the comparison would be vacuous")
	}
	for e := 0; e < 3; e++ {
		if err := s.Golden().Update(x, e%sh.Classes); err != nil {
			t.Fatal(err)
		}
	}
	_, total, first, err := s.Compare(3)
	if err != nil {
		t.Fatal(err)
	}
	if total == 0 || len(first) == 0 {
		t.Fatal("golden trained 3 examples more, yet no mismatch was reported")
	}
	t.Logf("%d TAs of %d moved; %d mismatches detected, first: %v", moved, sh.TAs(), total, first[0])
}
