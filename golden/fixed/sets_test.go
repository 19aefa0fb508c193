package fixed

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunSets checks a sampled-encoding request against its definition,
// independently of RunSets' loop: set m's samples are those of a plain Run
// of SetK(K, M, m) samples with seed q + m*SetSeedStep, concatenated in set
// order, and the statistics are the sums of the runs'. With one set it is
// Run itself.
func TestRunSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	sh := Shape{Classes: 3, TMs: 3, Clauses: 6, Features: 5, T: 3}
	b, err := RandomBank(sh, 8, rng.Uint64)
	if err != nil {
		t.Fatal(err)
	}
	core, err := NewCore(b, HW{Bits: 8, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 5})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := NewCore(b, HW{Bits: 8, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ M, K int }{{1, 9}, {3, 10}, {8, 100}, {8, 5}, {2, 1}} {
		xs := make([][]bool, c.M)
		for m := range xs {
			xs[m] = make([]bool, sh.Features)
			for i := range xs[m] {
				xs[m][i] = rng.IntN(2) == 1
			}
		}
		q := rng.Uint32()
		got, st, err := core.RunSets(xs, c.K, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []int32
		votes := make([]uint64, sh.Classes)
		for m := range c.M {
			k := c.K/c.M + min(1, max(0, c.K%c.M-m))
			if k == 0 {
				continue
			}
			s, rs, err := ref.Run(xs[m], k, q+uint32(m)*0x9E3779B9, nil)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, s...)
			for i, v := range rs.Votes {
				votes[i] += v
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("M=%d K=%d: sums differ from the per-set runs", c.M, c.K)
		}
		if !slices.Equal(st.Votes, votes) {
			t.Errorf("M=%d K=%d: votes %v, per-set runs add to %v", c.M, c.K, st.Votes, votes)
		}
		var total uint64
		for _, v := range st.Votes {
			total += v
		}
		if total != uint64(c.K)*VoteUnit(sh.Classes) {
			t.Errorf("M=%d K=%d: %d vote units, want K*U = %d", c.M, c.K, total, uint64(c.K)*VoteUnit(sh.Classes))
		}
	}
	if _, _, err := core.RunSets(nil, 5, 1, nil); err == nil {
		t.Error("no sets accepted")
	}
	if _, _, err := core.RunSets([][]bool{make([]bool, 5)}, 0, 1, nil); err == nil {
		t.Error("K = 0 accepted")
	}
}
