package fixedtrain

import (
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

func xorData(n int, noise float64, seed uint64) ([][]bool, []int) {
	rng := rand.New(rand.NewPCG(seed, 99))
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

// classicXOR is the classic noisy-XOR task: features random bits, the
// label x0 XOR x1, flipped with probability noise.
func classicXOR(n, features int, noise float64, rng *rand.Rand) ([][]bool, []int) {
	X := make([][]bool, n)
	y := make([]int, n)
	for r := range X {
		X[r] = make([]bool, features)
		for i := range X[r] {
			X[r][i] = rng.IntN(2) == 1
		}
		if X[r][0] != X[r][1] {
			y[r] = 1
		}
		if rng.Float64() < noise {
			y[r] ^= 1
		}
	}
	return X, y
}

// accuracy is the K-sample vote accuracy of model m on X, y.
func accuracy(m *ptm.Model, X [][]bool, y []int, K int) float64 {
	s := ptm.NewSampler(m, 11)
	right := 0
	for r, x := range X {
		sums, _ := s.Sample(x, K, nil)
		mean := make([]float64, m.NumClasses)
		for _, p := range m.SumsToProbs(sums, K, ptm.Mapping{Kind: ptm.Vote}) {
			for c := range p {
				mean[c] += p[c]
			}
		}
		best := 0
		for c := range mean {
			if mean[c] > mean[best] {
				best = c
			}
		}
		if best == y[r] {
			right++
		}
	}
	return float64(right) / float64(len(X))
}

func train(t testing.TB, cfg Config, classes, features int, binary bool, X [][]bool, y []int) *Trainer {
	t.Helper()
	tr, err := New(cfg, classes, features, binary)
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < cfg.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func model(t testing.TB, tr *Trainer) *ptm.Model {
	t.Helper()
	m, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLearnsXOR: the paper's noise-free 2-feature XOR with m = 4 under both
// rules: every P(include) ends exactly 0 or exactly 1 (the integer SPVs
// converge to a single state).
func TestLearnsXOR(t *testing.T) {
	for _, fb := range []ptm.Feedback{ptm.ConsistentFeedback, ptm.PaperFeedback} {
		for _, seed := range []uint64{1, 2, 3} {
			cfg := Config{Params: ptm.Params{Clauses: 4, T: 2, S: 3.9, N: 16, Epochs: 200, Seed: seed, Feedback: fb}}
			X, y := xorData(1000, 0, seed)
			tr := train(t, cfg, 2, 2, true, X, y)
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
			for ta := 0; ta < tr.NumTAs(); ta++ {
				if q := tr.IncludeMass(ta); q != 0 && q != 1<<DefaultBits {
					t.Errorf("%s seed %d TA %d: include mass %d, want 0 or 2^%d", fb, seed, ta, q, DefaultBits)
				}
			}
			if acc := accuracy(model(t, tr), X, y, 5); acc != 1 {
				t.Errorf("%s seed %d: accuracy %.4f, want 1", fb, seed, acc)
			}
		}
	}
}

// TestClassicNoisyXORFixed: 12 features, 40% training label noise, 10
// clauses per class, T = 15, s = 3.9, N = 100: the fixed trainer reaches
// the float trainer's clean-test accuracy (>= 0.99 after 40 epochs).
func TestClassicNoisyXORFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	X, y := classicXOR(5000, 12, 0.4, rng)
	Xt, yt := classicXOR(2000, 12, 0, rng)
	cfg := Config{Params: ptm.Params{Clauses: 10, T: 15, S: 3.9, N: 100, Epochs: 40, Seed: 3, Feedback: ptm.ConsistentFeedback}}
	tr := train(t, cfg, 2, 12, false, X, y)
	acc := accuracy(model(t, tr), Xt, yt, 20)
	t.Logf("fixed trainer: clean-test accuracy %.4f", acc)
	if acc < 0.99 {
		t.Errorf("accuracy %.4f, want >= 0.99", acc)
	}
}
