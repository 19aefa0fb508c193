// Package refmodel builds the small trained models behind the committed
// reference designs (rtl/generated/) and the trained-model co-simulation
// tests. Training is deterministic: golden/ptm with fixed seeds on data
// drawn here from fixed seeds, then fixed.Quantize.
//
// The models are a stand-in until the shipped Iris and noisy-XOR model
// files exist: replace the bodies of IrisLike and NoisyXOR (or the Models
// list) with loaders of those files, and regenerate with
// `go test ./hw -run TestReferenceDesigns -update`.
package refmodel

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Model is a quantized trained model and its identity.
type Model struct {
	Name string      // short name, used for directories and module prefixes
	Bank *fixed.Bank // quantized model
	Hash string      // hex SHA-256 of the quantized thresholds and shape
	// Test are held-out inputs for co-simulation.
	Test [][]bool
}

// Models returns every reference model. It is the one place to change the
// model source.
func Models() ([]Model, error) {
	iris, err := IrisLike()
	if err != nil {
		return nil, err
	}
	xor, err := NoisyXOR()
	if err != nil {
		return nil, err
	}
	return []Model{iris, xor}, nil
}

// Hash returns the hex SHA-256 of a bank's shape, bits and thresholds.
func Hash(b *fixed.Bank) string {
	h := sha256.New()
	fmt.Fprintf(h, "%+v bits=%d\n", b.Shape, b.Bits)
	var w [4]byte
	for _, v := range b.Thresh {
		binary.LittleEndian.PutUint32(w[:], v)
		h.Write(w[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// irisMeans and irisSD are per-class means and standard deviations of the
// four Iris measurements (sepal length/width, petal length/width, cm).
var (
	irisMeans = [3][4]float64{{5.0, 3.4, 1.5, 0.2}, {5.9, 2.8, 4.3, 1.3}, {6.6, 3.0, 5.6, 2.0}}
	irisSD    = [3][4]float64{{0.35, 0.38, 0.17, 0.1}, {0.52, 0.31, 0.47, 0.2}, {0.64, 0.32, 0.55, 0.27}}
	irisTh    = [4][4]float64{{5.1, 5.6, 6.1, 6.6}, {2.8, 3.0, 3.2, 3.4}, {2.0, 3.5, 4.5, 5.2}, {0.5, 1.0, 1.5, 1.9}}
)

// irisData draws n Iris-like samples: Gaussian measurements per class,
// thermometer-coded with four thresholds each (16 Boolean features).
func irisData(n int, seed uint64) ([][]bool, []int) {
	rng := rand.New(rand.NewPCG(seed, 0x7265_666d_2f69_7269)) // "refm/iri"
	X := make([][]bool, n)
	y := make([]int, n)
	for r := range X {
		c := r % 3
		x := make([]bool, 16)
		for f := 0; f < 4; f++ {
			v := irisMeans[c][f] + irisSD[c][f]*rng.NormFloat64()
			for k, th := range irisTh[f] {
				x[4*f+k] = v >= th
			}
		}
		X[r], y[r] = x, c
	}
	return X, y
}

// IrisLike is a 3-class model of 20 clauses per class on 16 thermometer-
// coded features, trained on Iris-like synthetic data, quantized to 8 bits.
func IrisLike() (Model, error) {
	p := ptm.Params{Clauses: 20, T: 10, S: 3.0, N: 16, Epochs: 15, Seed: 7, Feedback: ptm.ConsistentFeedback}
	X, y := irisData(150, 11)
	b, err := train(p, 3, 16, false, X, y, 8)
	if err != nil {
		return Model{}, fmt.Errorf("refmodel: iris: %w", err)
	}
	test, _ := irisData(60, 12)
	return Model{Name: "iris", Bank: b, Hash: Hash(b), Test: test}, nil
}

// xorData draws the paper's noisy XOR: two fair bits, label their XOR
// flipped with probability noise.
func xorData(n int, noise float64, seed uint64) ([][]bool, []int) {
	rng := rand.New(rand.NewPCG(seed, 0x7265_666d_2f78_6f72)) // "refm/xor"
	X := make([][]bool, n)
	y := make([]int, n)
	for r := range X {
		a, b := rng.IntN(2) == 1, rng.IntN(2) == 1
		X[r] = []bool{a, b}
		if a != b {
			y[r] = 1
		}
		if rng.Float64() < noise {
			y[r] ^= 1
		}
	}
	return X, y
}

// NoisyXOR is a binary model of 10 clauses on the 2-feature XOR with 30%
// label noise, quantized to 12 bits.
func NoisyXOR() (Model, error) {
	p := ptm.Params{Clauses: 10, T: 5, S: 3.9, N: 16, Epochs: 40, Seed: 3, Feedback: ptm.ConsistentFeedback}
	X, y := xorData(1000, 0.3, 5)
	b, err := train(p, 2, 2, true, X, y, 12)
	if err != nil {
		return Model{}, fmt.Errorf("refmodel: xor: %w", err)
	}
	test := [][]bool{{false, false}, {false, true}, {true, false}, {true, true}}
	return Model{Name: "xor", Bank: b, Hash: Hash(b), Test: test}, nil
}

func train(p ptm.Params, classes, features int, binary bool, X [][]bool, y []int, bits int) (*fixed.Bank, error) {
	m, err := ptm.New(p, classes, features, binary)
	if err != nil {
		return nil, err
	}
	tr := ptm.NewTrainer(m)
	for e := 0; e < p.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			return nil, err
		}
	}
	return fixed.Quantize(m, bits)
}
