package testmodel

import (
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/fixed"
)

// Bank returns a random bank of the given shape (deterministic in seed).
func Bank(sh fixed.Shape, bits int, seed uint64) *fixed.Bank {
	rng := rand.New(rand.NewPCG(seed, 0x5054))
	b, err := fixed.RandomBank(sh, bits, rng.Uint64)
	if err != nil {
		panic(err)
	}
	return b
}

// Multiclass is a 3-class shape: 3 TMs of 10 clauses over 12 features.
var Multiclass = fixed.Shape{Classes: 3, TMs: 3, Clauses: 10, Features: 12, T: 5}

// Binary is a binary shape: 1 TM of 8 clauses over 6 features.
var Binary = fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 8, Features: 6, T: 4}

// HW is a small lane configuration that fits both shapes (it has padding
// slots for both).
var HW = fixed.HW{Bits: 12, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 5}

// Features returns n random feature vectors of o bits (deterministic).
func Features(n, o int, seed uint64) [][]bool {
	rng := rand.New(rand.NewPCG(seed, 0x66))
	out := make([][]bool, n)
	for i := range out {
		out[i] = make([]bool, o)
		for j := range out[i] {
			out[i][j] = rng.IntN(2) == 1
		}
	}
	return out
}
