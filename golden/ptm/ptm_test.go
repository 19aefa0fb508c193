package ptm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestApplyTPMMatchesDense checks the O(2N) banded update against an
// explicit gonum product with the matrix built from the feedback tables,
// for random SPVs and several N and s.
func TestApplyTPMMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 16, 100} {
		for _, s := range []float64{1, 1.5, 3.9, 10, 27} {
			for _, k := range []TPM{TPM1, TPM2, TPM3, TPM4} {
				for trial := 0; trial < 5; trial++ {
					p := make([]float64, 2*n)
					var sum float64
					for i := range p {
						p[i] = rng.Float64()
						if rng.IntN(4) == 0 {
							p[i] = 0
						}
						sum += p[i]
					}
					if sum == 0 {
						p[0], sum = 1, 1
					}
					for i := range p {
						p[i] /= sum
					}
					var inc0 float64
					for _, v := range p[n:] {
						inc0 += v
					}
					var want mat.VecDense
					want.MulVec(TPMDense(k, n, s), mat.NewVecDense(2*n, append([]float64(nil), p...)))
					d := ApplyTPM(k, p, s)
					var inc1 float64
					for i := range p {
						if math.Abs(p[i]-want.AtVec(i)) > 1e-14 {
							t.Fatalf("TPM%d N=%d s=%v state %d: %v, dense %v", k, n, s, i, p[i], want.AtVec(i))
						}
						if i >= n {
							inc1 += p[i]
						}
					}
					if math.Abs(inc0+d-inc1) > 1e-14 {
						t.Fatalf("TPM%d N=%d s=%v: include change %v, actual %v", k, n, s, d, inc1-inc0)
					}
				}
			}
		}
	}
}

// TestTPMDenseStochastic checks that every table-built matrix is
// column-stochastic.
func TestTPMDenseStochastic(t *testing.T) {
	for _, k := range []TPM{TPM1, TPM2, TPM3, TPM4} {
		m := TPMDense(k, 4, 3.9)
		r, c := m.Dims()
		for j := 0; j < c; j++ {
			var s float64
			for i := 0; i < r; i++ {
				s += m.At(i, j)
			}
			if math.Abs(s-1) > 1e-15 {
				t.Errorf("TPM%d column %d sums to %v", k, j, s)
			}
		}
	}
}

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

func trainXOR(t *testing.T, noise float64, seed uint64) *Model {
	t.Helper()
	p := Params{Clauses: 4, T: 2, S: 3.9, N: 16, Epochs: 200, Seed: seed, Feedback: PaperFeedback}
	m, err := New(p, 2, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	X, y := xorData(1000, noise, seed)
	tr := NewTrainer(m)
	for e := 0; e < p.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestLearnsXOR: with no noise and m=4, the four clauses become the four
// XOR patterns and every P(include) is within 0.01 of 0 or 1.
func TestLearnsXOR(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		m := trainXOR(t, 0, seed)
		patterns := map[string]bool{}
		for j := 0; j < 4; j++ {
			var lits []int
			for i := 0; i < 4; i++ {
				p := m.Include(0, j, i)
				if p > 0.01 && p < 0.99 {
					t.Errorf("seed %d clause %d literal %d: P(include) = %.4f, not within 0.01 of 0 or 1", seed, j, i, p)
				}
				if p >= 0.99 {
					lits = append(lits, i)
				}
			}
			pol := "+"
			if j%2 == 1 {
				pol = "-"
			}
			patterns[fmt.Sprint(pol, lits)] = true
		}
		// Positive clauses: x0 AND NOT x1 (literals 0,3) and NOT x0 AND x1 (1,2);
		// negative: x0 AND x1 (0,1) and NOT x0 AND NOT x1 (2,3).
		for _, want := range []string{"+[0 3]", "+[1 2]", "-[0 1]", "-[2 3]"} {
			if !patterns[want] {
				t.Errorf("seed %d: pattern %s not learned; got %v", seed, want, patterns)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	a := trainXOR(t, 0.3, 7)
	b := trainXOR(t, 0.3, 7)
	for i := range a.SPV {
		if a.SPV[i] != b.SPV[i] {
			t.Fatalf("SPV[%d]: %v vs %v", i, a.SPV[i], b.SPV[i])
		}
	}
	c := trainXOR(t, 0.3, 8)
	same := true
	for i := range a.SPV {
		if a.SPV[i] != c.SPV[i] {
			same = false
		}
	}
	if same {
		t.Error("different seeds gave identical models")
	}
}

// TestConsistentLearnsXOR: the consistent rule also learns the paper's XOR
// exactly.
func TestConsistentLearnsXOR(t *testing.T) {
	p := Params{Clauses: 4, T: 2, S: 3.9, N: 16, Epochs: 200, Seed: 1, Feedback: ConsistentFeedback}
	m, _ := New(p, 2, 2, true)
	X, y := xorData(1000, 0, 1)
	tr := NewTrainer(m)
	for e := 0; e < p.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
	}
	for j := 0; j < 4; j++ {
		for i := 0; i < 4; i++ {
			if q := m.Include(0, j, i); q > 0.01 && q < 0.99 {
				t.Errorf("clause %d literal %d: P(include) = %.4f", j, i, q)
			}
		}
	}
}

func classicXOR(n int, noise float64, rng *rand.Rand) ([][]bool, []int) {
	X := make([][]bool, n)
	y := make([]int, n)
	for r := range X {
		X[r] = make([]bool, 12)
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

func accuracy(m *Model, X [][]bool, y []int, K int) float64 {
	s := NewSampler(m, 11)
	right := 0
	for r, x := range X {
		sums, _ := s.Sample(x, K, nil)
		mean := make([]float64, m.NumClasses)
		for _, p := range m.SumsToProbs(sums, K, Mapping{Kind: Vote}) {
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

// TestClassicNoisyXOR: 12 features, 2 informative, 40% label noise on the
// training set. The consistent rule reaches >= 0.99 clean-test accuracy as
// mature TMs do; the paper's rule as printed stays near chance.
func TestClassicNoisyXOR(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for several seconds")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	X, y := classicXOR(5000, 0.4, rng)
	Xt, yt := classicXOR(2000, 0, rng)
	for _, fb := range []Feedback{ConsistentFeedback, PaperFeedback} {
		p := Params{Clauses: 10, T: 15, S: 3.9, N: 100, Epochs: 40, Seed: 3, Feedback: fb}
		m, _ := New(p, 2, 12, false)
		tr := NewTrainer(m)
		for e := 0; e < p.Epochs; e++ {
			if err := tr.RunEpoch(X, y); err != nil {
				t.Fatal(err)
			}
		}
		acc := accuracy(m, Xt, yt, 20)
		t.Logf("%s feedback: clean-test accuracy %.4f", fb, acc)
		if fb == ConsistentFeedback && acc < 0.99 {
			t.Errorf("consistent feedback: accuracy %.4f, want >= 0.99", acc)
		}
		if fb == PaperFeedback && acc > 0.75 {
			t.Errorf("paper feedback reached %.4f: update docs/ptm-rule.md, the finding no longer holds", acc)
		}
	}
}

// TestUpdateMatchesFull checks the support-restricted update against the
// full one, bit for bit, on SPVs whose mass lies in a random window.
func TestUpdateMatchesFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for trial := 0; trial < 20000; trial++ {
		n := 1 + rng.IntN(12)
		n2 := 2 * n
		lo := rng.IntN(n2)
		hi := lo + rng.IntN(n2-lo)
		p := make([]float64, n2)
		for i := lo; i <= hi; i++ {
			p[i] = rng.Float64()
		}
		q := append([]float64(nil), p...)
		k := TPM(1 + rng.IntN(4))
		s := 1 + 9*rng.Float64()
		d1 := ApplyTPM(k, p, s)
		d2, a, b := update(k, q, newMoves(s), lo, hi)
		if math.Float64bits(d1) != math.Float64bits(d2) {
			t.Fatalf("TPM%d n=%d [%d,%d]: include change %v vs %v", k, n, lo, hi, d1, d2)
		}
		for i := range p {
			if math.Float64bits(p[i]) != math.Float64bits(q[i]) {
				t.Fatalf("TPM%d n=%d [%d,%d]: state %d: %v vs %v", k, n, lo, hi, i, p[i], q[i])
			}
			if (i < a || i > b) && p[i] != 0 {
				t.Fatalf("TPM%d n=%d [%d,%d]: state %d outside the returned %d..%d holds %v", k, n, lo, hi, i, a, b, p[i])
			}
		}
	}
}
