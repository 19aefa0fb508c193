package fixedtrain

import (
	"testing"

	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestShufflerMatchesLFSR: the shuffle lane is lfsr.LFSR at W = 64 with
// 32-bit draws from ShuffleSeed, shuffled as 5.1 step 1.
func TestShufflerMatchesLFSR(t *testing.T) {
	s := NewShuffler(7, 60)
	l, err := lfsr.New(LaneWidth, 32, ShuffleSeed(7, 60))
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < 3; e++ {
		got := s.Order(17)
		want := make([]int, 17)
		for i := range want {
			want[i] = i
		}
		for i := 16; i >= 1; i-- {
			j := int(l.Next() * uint64(i+1) >> 32)
			want[i], want[j] = want[j], want[i]
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("epoch %d: order %v, want %v", e, got, want)
			}
		}
	}
}

// TestRestore: a trainer restored from another's SPVs and include masses
// exports the same model and bank; a broken SPV is refused.
func TestRestore(t *testing.T) {
	cfg := Config{Params: ptm.Params{Clauses: 4, T: 3, S: 3, N: 6, Epochs: 1, Seed: 5, Feedback: ptm.ConsistentFeedback}, Bits: 10}
	a, err := New(cfg, 3, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 40; r++ {
		x := []bool{r%2 == 0, r%3 == 0, r%5 == 0, r%7 == 0, r%4 == 0}
		if err := a.Update(x, r%3); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := New(cfg, 3, 5, false)
	inc := make([]uint16, a.NumTAs())
	for ta := range inc {
		inc[ta] = uint16(a.IncludeMass(ta))
	}
	if err := b.Restore(a.SPVs(), inc); err != nil {
		t.Fatal(err)
	}
	ba, _ := a.Bank()
	bb, err := b.Bank()
	if err != nil {
		t.Fatal(err)
	}
	for i := range ba.SPV {
		if ba.SPV[i] != bb.SPV[i] {
			t.Fatalf("SPV word %d: %d, want %d", i, bb.SPV[i], ba.SPV[i])
		}
	}
	for i := range ba.Thresh {
		if ba.Thresh[i] != bb.Thresh[i] {
			t.Fatalf("threshold %d: %d, want %d", i, bb.Thresh[i], ba.Thresh[i])
		}
	}
	spv := a.SPVs()
	spv[3]++
	if err := b.Restore(spv, inc); err == nil {
		t.Fatal("an SPV of mass 2^B+1 was restored")
	}
	inc[0]++
	if err := b.Restore(a.SPVs(), inc); err == nil {
		t.Fatal("a wrong include mass was restored")
	}
}
