package ptm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"
)

// spvHash returns the SHA-256 of the bits of every SPV value and include
// mass of m, little-endian, in flat order.
func spvHash(m *Model) string {
	h := sha256.New()
	var b [8]byte
	for _, vs := range [][]float64{m.SPV, m.pinc} {
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// randomData returns n rows of f random features with labels 0..nc-1, a
// deterministic function of seed.
func randomData(n, f, nc int, seed uint64) ([][]bool, []int) {
	rng := rand.New(rand.NewPCG(seed, 17))
	X := make([][]bool, n)
	y := make([]int, n)
	for r := range X {
		X[r] = make([]bool, f)
		for i := range X[r] {
			X[r][i] = rng.IntN(3) != 0
		}
		y[r] = rng.IntN(nc)
		if X[r][0] && X[r][1] {
			y[r] = 0
		}
	}
	return X, y
}

// TestTrainingBitExact guards the training contract that the reference
// designs in hw/refmodel and rtl/generated depend on: the same seed gives
// the same model, every float64 of every SPV, as the code that recorded
// these hashes (on amd64). A change here is a change of the golden model,
// not a refactoring; it must be deliberate and the downstream designs
// regenerated. It runs on every path of the assembly loops.
func TestTrainingBitExact(t *testing.T) {
	withKernelPaths(t, testTrainingBitExact)
}

func testTrainingBitExact(t *testing.T) {
	xr := rand.New(rand.NewPCG(1, 1))
	xorX, xorY := classicXOR(5000, 0.4, xr)
	rndX, rndY := randomData(600, 7, 4, 5)
	binX, binY := randomData(400, 5, 2, 6)
	cases := []struct {
		name   string
		p      Params
		nc     int
		binary bool
		X      [][]bool
		y      []int
		epochs int
		want   string
	}{
		{"classic-xor-N100", Params{Clauses: 10, T: 15, S: 3.9, N: 100, Seed: 3, Feedback: ConsistentFeedback}, 2, false, xorX, xorY, 12, "3f6b37e34e68da871bf147fd9f9fd584321ff0e5e84dd4ae52e5795d9149c1a2"},
		{"classic-xor-N16-paper", Params{Clauses: 10, T: 15, S: 3.9, N: 16, Seed: 3, Feedback: PaperFeedback}, 2, false, xorX, xorY, 3, "bf87a4f0b02fefa7cfe14770ff7e7b4fcd64c751f8daf435b4df98804e3b0c98"},
		{"random-4class-N5", Params{Clauses: 6, T: 4, S: 1.7, N: 5, Seed: 9, Feedback: ConsistentFeedback}, 4, false, rndX, rndY, 20, "638dc3dc47a8483020f027c2c0ba42045e6838f9edce31991aeb1862453846c6"},
		{"random-4class-N37-paper", Params{Clauses: 8, T: 6, S: 6.5, N: 37, Seed: 10, Feedback: PaperFeedback}, 4, false, rndX, rndY, 10, "de10b8b61df059d5059767ddf6752a9aded83235754ab7e373d6ce2a28f9c9be"},
		{"random-binary-N1-s1", Params{Clauses: 4, T: 2, S: 1, N: 1, Seed: 11, Feedback: ConsistentFeedback}, 2, true, binX, binY, 10, "83ccdf962ef9fc5562a5062cbe21ab08a5bbc1192686c53f73c10251ee5df591"},
		{"random-binary-N2-paper", Params{Clauses: 4, T: 3, S: 2.5, N: 2, Seed: 12, Feedback: PaperFeedback}, 2, true, binX, binY, 10, "b158657d147c29409db0fe3ea055f2ced64cc7189dd18e1ea0256c625aaae771"},
		{"random-binary-N300-s1", Params{Clauses: 6, T: 5, S: 1, N: 300, Seed: 13, Feedback: ConsistentFeedback}, 2, true, binX, binY, 5, "a56fa8a8c7630481145738255d6413c6fc68d49f06a34ebc882d96f6f97c9935"},
	}
	for _, c := range cases {
		m, err := New(c.p, c.nc, len(c.X[0]), c.binary)
		if err != nil {
			t.Fatal(err)
		}
		tr := NewTrainer(m)
		for e := 0; e < c.epochs; e++ {
			if err := tr.RunEpoch(c.X, c.y); err != nil {
				t.Fatal(err)
			}
		}
		if got := spvHash(m); got != c.want {
			t.Errorf("%s: SPV hash %s, want %s", c.name, got, c.want)
		}
	}
}
