package traincosim

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptmhw/ptm/internal/testenv"
)

// shapeSeed draws the random shapes; its first four cover binary and
// 3-class models, N 6..32, B 8..14, 1, 2 and 4 literal lanes and both
// rules (the first two are also TestCosimTrainIris's, so builds are shared).
const shapeSeed = 19

// TestRandomShapes: random shapes (4; 40 under PTM_LONG_TESTS), binary and
// multiclass, N 4..32, B 8..15, 1..4 literal lanes, both rules; every SPV word and include mass of the
// engine equals the golden trainer's after every example.
func TestRandomShapes(t *testing.T) {
	shapes := testenv.Size(4, 40)
	examples := testenv.Size(30, 100)
	beat := testenv.Heartbeat(t, 30*time.Second)
	var words int
	for k, o := range RandomShapes(shapes, shapeSeed) {
		start := time.Now()
		res, err := RunRandom(o, examples, uint64(k))
		if errors.Is(err, ErrNoVerilator) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatalf("%s: %v", o.Describe(), err)
		}
		if res.Mismatches > 0 {
			for _, m := range res.First {
				t.Errorf("%s: %v", o.Describe(), m)
			}
			t.Fatalf("%s: %d mismatches", o.Describe(), res.Mismatches)
		}
		if want := examples * o.Shape.TAs() * (2*o.N + 2); res.WordsCompared != want || res.Examples != examples {
			t.Errorf("%s: %d examples, %d words compared, want %d and %d", o.Describe(), res.Examples, res.WordsCompared, examples, want)
		}
		words += res.WordsCompared
		t.Logf("[progress] shape %d/%d %s: %d examples, %d words compared, 0 mismatches, %.0f cycles/example (%.1fs)",
			k+1, shapes, o.Describe(), res.Examples, res.WordsCompared, res.CyclesPerEx, time.Since(start).Seconds())
		beat("%d/%d shapes", k+1, shapes)
	}
	t.Logf("%d shapes, %d words compared, 0 mismatches", shapes, words)
}

// TestDetectsMismatch: the comparison is not vacuous: when the golden
// trainer sees one example more than the engine, Compare reports
// mismatches naming TAs and states; and the SPVs have left their initial
// state.
func TestDetectsMismatch(t *testing.T) {
	o := RandomShapes(2, shapeSeed)[1] // a multiclass shape of TestRandomShapes (cached build)
	s, err := Start(o)
	if errors.Is(err, ErrNoVerilator) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := o.Shape
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
	if want := sh.TAs() * (2*o.N + 2); words != want {
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
