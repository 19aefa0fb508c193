package fixedtrain

import (
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

// TestWideHashPinned pins the SPV words after training at shapes that run
// the fast paths the speed work touches (docs/fixed-point-training.md
// 10.1): 784 features and N 100 as BenchmarkEpoch's widest row (2N = 200
// states: a partial last chunk; Type I on 1,568 literals; sampling of both
// classes' clauses), three classes (the negative class's clauses not next
// to the label's), a binary model, and N 16 (2N = 32, one whole chunk).
// The hashes were taken before any of that work (at 8ff771c); a change of
// any word fails here. Each shape runs at 1 and 2 workers (the parallel
// schedule forced), which must agree.
func TestWideHashPinned(t *testing.T) {
	for _, c := range []struct {
		name                       string
		classes, features, clauses int
		binary                     bool
		n, bits, rows, epochs      int
		want                       string
	}{
		{"f784-m10-N100", 2, 784, 10, false, 100, 15, 300, 2, "3fd25c7e762d2e9c8ec6a741c46450ee2d1e67dd6473fc1d013a13314a717b38"},
		{"f200-m9-N100-3class", 3, 200, 9, false, 100, 12, 300, 2, "ba1df6357215eb5a5146702d19f9ec250097c01ef14777a2fdbc9aa2af3ae0aa"},
		{"f100-m8-N16-binary", 2, 100, 8, true, 16, 15, 300, 3, "4bd6aaf7e567642f8d0921cb0eb0235a598d79502317bf57019dc79c650e8ba9"},
		{"f12-m100-N100", 2, 12, 100, false, 100, 15, 500, 3, "797bc88464a9c5f142d104ca2cb43e309e295974a616224bcf79433f70f568cb"},
	} {
		X, y := classicXOR(c.rows, c.features, 0.3, rand.New(rand.NewPCG(7, uint64(c.features))))
		for r := range y {
			y[r] = (y[r] + r%2*(r%c.classes)) % c.classes
		}
		for _, w := range []int{1, 2} {
			cfg := Config{Params: ptm.Params{Clauses: c.clauses, T: 15, S: 3.9, N: c.n, Seed: 11, Feedback: ptm.ConsistentFeedback}, Bits: c.bits, Workers: w}
			tr, err := New(cfg, c.classes, c.features, c.binary)
			if err != nil {
				t.Fatal(err)
			}
			if w > 1 {
				tr.parallelMin = 0
			}
			for e := 0; e < c.epochs; e++ {
				if err := tr.RunEpoch(X, y); err != nil {
					t.Fatal(err)
				}
			}
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
			if got := spvHash(tr); got != c.want {
				t.Errorf("%s, %d workers: SPV hash %s, want %s", c.name, w, got, c.want)
			}
		}
	}
}
