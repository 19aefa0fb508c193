package traincosim

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// RandomShapes draws n co-simulation settings from seed: binary (even k)
// and multiclass (2..4 classes, odd k) shapes of 2..8 clauses, 1..9
// features and T 1..8; N 4..32, B 8..15, 1..4 literal lanes, s 1.5..7.5,
// the paper rule one time in four; each with its own training seed.
func RandomShapes(n int, seed uint64) []Options {
	rng := rand.New(rand.NewPCG(seed, 0x7472_6169_6e63_6f73)) // "traincos"
	out := make([]Options, 0, n)
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
		out = append(out, Options{Shape: sh, N: 4 + rng.IntN(29), S: 1.5 + 6*rng.Float64(),
			Seed: rng.Uint64(), Feedback: fb, Bits: 8 + rng.IntN(8), LiteralLanes: 1 + rng.IntN(4)})
	}
	return out
}

// Describe names o's shape and settings in one token.
func (o Options) Describe() string {
	ll := o.LiteralLanes
	if ll == 0 {
		ll = 4
	}
	return fmt.Sprintf("NC%d-bin%v-m%d-o%d-T%d-N%d-B%d-LL%d-s%.2f-%s", o.Shape.Classes, o.Shape.Binary, o.Shape.Clauses,
		o.Shape.Features, o.Shape.T, o.N, o.Bits, ll, o.S, o.Feedback)
}

// RandomResult is the outcome of RunRandom.
type RandomResult struct {
	Shape         string     `json:"shape"`
	Examples      int        `json:"examples"`
	WordsCompared int        `json:"words_compared"`
	Mismatches    int        `json:"mismatches"`
	First         []Mismatch `json:"first_mismatches,omitempty"`
	Cycles        uint64     `json:"cycles"`
	CyclesPerEx   float64    `json:"cycles_per_example"`
	BuildCached   bool       `json:"build_cached"`
}

// RunRandom trains o's engine and golden trainer on examples random
// examples (drawn from seed; labels follow the first features with 20%
// noise, so the SPVs move) and compares every SPV word and include mass
// after every example. It stops at the first example with mismatches.
func RunRandom(o Options, examples int, seed uint64) (*RandomResult, error) {
	s, err := Start(o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &RandomResult{Shape: o.Describe(), BuildCached: s.Cached}
	rng := rand.New(rand.NewPCG(seed, 0x6578_616d_706c_6573)) // "examples"
	sh := o.Shape
	x := make([]bool, sh.Features)
	for e := 0; e < examples; e++ {
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
			return nil, err
		}
		w, total, first, err := s.Compare(10)
		if err != nil {
			return nil, err
		}
		res.Examples++
		res.WordsCompared += w
		res.Mismatches += total
		res.First = append(res.First, first...)
		if total > 0 {
			break
		}
	}
	res.Cycles = s.Cycles()
	if res.Examples > 0 {
		res.CyclesPerEx = float64(res.Cycles) / float64(res.Examples)
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return res, nil
}
