package fixedtrain

import (
	"math/rand/v2"
	"testing"
)

// TypeIBoost is ApplyTPM's reference form with TPM1 at Up = 2^16 on the
// 1-literals of a firing clause and TPM3 (the clause's own moves) on the
// others, with TypeI's rounding draws; it leaves the lane where TypeI
// does, and without firing it is TypeI.
func TestTypeIBoostReference(t *testing.T) {
	defer func(v bool) { useChunked = v }(useChunked)
	for _, on := range []bool{false, chunkKernels} {
		useChunked = on
		t.Run(map[bool]string{false: "go", true: "chunked"}[on], testTypeIBoostReference)
	}
}

func testTypeIBoostReference(t *testing.T) {
	const m, nl, n, bits = 3, 21, 6, 10
	cl, err := NewClauses(m, nl, n, bits, 3.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := NewClauses(m, nl, n, bits, 3.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	boost := Moves{Up: 1 << 16, Down: cl.mv.Down}
	rng := rand.New(rand.NewPCG(3, 4))
	lit := make([]bool, nl)
	tops, shifted := 0, 0
	for step := 0; step < 4000; step++ {
		for i := range lit {
			lit[i] = rng.IntN(2) == 0
		}
		c := rng.IntN(m)
		fires := rng.IntN(3) != 0
		if rng.IntN(4) == 0 { // Type II moves mass up too, so the top fills
			cl.tpm4(c*nl + step%nl)
			q := ref.SPV(c*nl + step%nl)
			ref.inc[c*nl+step%nl] = uint16(int32(ref.inc[c*nl+step%nl]) + ApplyTPM(TPM4, q, ref.mv, 0))
		}
		lane := ref.lanes[c]
		for i := 0; i < nl; i++ {
			r := lane.draw16()
			q := ref.SPV(c*nl + i)
			var dI int32
			switch {
			case fires && lit[i]:
				dI = ApplyTPM(TPM1, q, boost, r)
				shifted++
			default:
				dI = ApplyTPM(TPM3, q, ref.mv, r)
			}
			ref.inc[c*nl+i] = uint16(int32(ref.inc[c*nl+i]) + dI)
		}
		ref.lanes[c] = lane
		cl.TypeIBoost(c, lit, fires)
		if cl.Lane(c) != ref.Lane(c) {
			t.Fatalf("step %d: lane %x, want %x", step, cl.Lane(c), ref.Lane(c))
		}
		for ta := c * nl; ta < (c+1)*nl; ta++ {
			got, want := cl.SPV(ta), ref.SPV(ta)
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("step %d TA %d: SPV %v, want %v", step, ta, got, want)
				}
			}
			if cl.inc[ta] != ref.inc[ta] {
				t.Fatalf("step %d TA %d: include mass %d, want %d", step, ta, cl.inc[ta], ref.inc[ta])
			}
			if want[2*n-1] != 0 {
				tops++
			}
		}
		if err := cl.check(bits); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if shifted < 10000 || tops < 1000 {
		t.Fatalf("%d boosted moves, %d TAs seen with mass in the top state: the test does not reach the top", shifted, tops)
	}
}

// The boosted move is exact: a TA with all its mass in state N-1 moves it
// all to state N (include mass 0 -> 2^B) in one boosted Type I.
func TestTypeIBoostMovesAll(t *testing.T) {
	const n, bits = 4, 8
	cl, err := NewClauses(1, 1, n, bits, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	cl.tpm4(0) // N-1 and N hold 128 each; TPM4 moves N-1's into N: 0,0,0,0,256,0,0,0
	if got := cl.IncludeMass(0); got != 256 {
		t.Fatalf("after TPM4: include mass %d, want 256", got)
	}
	cl.TypeIBoost(0, []bool{true}, true)
	want := []uint16{0, 0, 0, 0, 0, 256, 0, 0}
	for i, v := range cl.SPV(0) {
		if v != want[i] {
			t.Fatalf("SPV %v, want %v", cl.SPV(0), want)
		}
	}
	for k := 0; k < 3; k++ {
		cl.TypeIBoost(0, []bool{true}, true)
	}
	if got := cl.SPV(0)[2*n-1]; got != 256 {
		t.Fatalf("after 4 boosts: top state %d, want 256 (SPV %v)", got, cl.SPV(0))
	}
}
