package fixedtrain

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/ptm"
)

// Clauses' feedback is the Trainer's: the same lanes, literals and
// sampled includes give the same SPVs, include masses and lanes, through
// whichever kernels this CPU runs, under random sequences of Sample, Type I
// and Type II.
func TestClausesEqualTrainer(t *testing.T) {
	defer func(v bool) { useChunked = v }(useChunked)
	for _, on := range []bool{false, chunkKernels} {
		useChunked = on
		t.Run(map[bool]string{false: "go", true: "chunked"}[on], testClausesEqualTrainer)
	}
}

func testClausesEqualTrainer(t *testing.T) {
	const features, m, n, bits = 9, 6, 40, 12
	p := ptm.Params{Clauses: m, T: 5, S: 3.5, N: n, Epochs: 1, Seed: 99, Feedback: ptm.ConsistentFeedback}
	tr, err := New(Config{Params: p, Bits: bits, Workers: 1}, 2, features, true)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClauses(m, 2*features, n, bits, p.S, p.Seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	nl := 2 * features
	lit := make([]bool, nl)
	inc := make([]uint64, 1)
	typeIs, typeIIs, included := 0, 0, 0
	for step := 0; step < 3000; step++ {
		for i := 0; i < features; i++ {
			v := rng.IntN(2) == 0
			lit[i], lit[features+i] = v, !v
		}
		c := rng.IntN(m)
		// Sample: every literal drawn from the lane, in order.
		ref := tr.clane[c]
		var want uint64
		for i := 0; i < nl; i++ {
			if ref.draw16() < uint32(tr.inc[c*nl+i])<<(16-bits) {
				want |= 1 << uint(i)
			}
		}
		tr.clane[c] = ref
		if k := cl.Sample(c, inc); inc[0] != want || k != popcount64(want) {
			t.Fatalf("step %d clause %d: sampled %b (%d), want %b", step, c, inc[0], k, want)
		}
		included += popcount64(want)
		// The trainer's view of the sample: included 0-literals.
		z, who := 0, int32(0)
		for i := 0; i < nl; i++ {
			if want>>uint(i)&1 == 1 && !lit[i] {
				z++
				who = int32(i)
			}
		}
		copy(tr.lit, lit)
		tr.lit0 = tr.lit0[:0]
		for i := 0; i < nl; i++ {
			if !lit[i] {
				tr.lit0 = append(tr.lit0, int32(i))
			}
		}
		tr.zeros[c], tr.who[c] = uint8(min(z, 2)), who
		if rng.IntN(2) == 0 {
			tr.typeI(c)
			cl.TypeI(c, lit, z == 0)
			typeIs++
		} else {
			tr.typeII(c)
			cl.TypeII(c, lit, inc)
			typeIIs++
		}
		if tr.clane[c] != cl.lanes[c] {
			t.Fatalf("step %d clause %d: lanes differ", step, c)
		}
	}
	if !slices.Equal(tr.spv, cl.spv) || !slices.Equal(tr.inc, cl.inc) {
		t.Fatal("SPVs or include masses differ")
	}
	if err := cl.Check(); err != nil {
		t.Fatal(err)
	}
	// The sequence moved mass: not every TA still at the initial half.
	moved := 0
	for _, v := range cl.inc {
		if v != 1<<(bits-1) {
			moved++
		}
	}
	if moved < len(cl.inc)/2 || included == 0 || typeIs == 0 || typeIIs == 0 {
		t.Fatalf("only %d of %d include masses moved, %d includes sampled: the test does not discriminate", moved, len(cl.inc), included)
	}
}

func popcount64(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestNewClausesBadInput(t *testing.T) {
	for _, a := range [][4]int{{0, 4, 10, 12}, {2, 0, 10, 12}, {2, 4, 0, 12}, {2, 4, 10, 7}, {2, 4, 10, 16}} {
		if _, err := NewClauses(a[0], a[1], a[2], a[3], 3, 1); err == nil {
			t.Errorf("NewClauses%v accepted", a)
		}
	}
	if _, err := NewClauses(2, 4, 10, 12, 0.5, 1); err == nil {
		t.Error("s = 0.5 accepted")
	}
}

// TestSampleDraws: Sample makes one 16-bit draw per literal from the
// clause's lane, in literal order (a draw-by-draw reference), includes a
// literal when its draw is below include mass * 2^(16-B), and leaves the
// lane where SkipSample leaves it, for literal counts that are and are
// not multiples of 4 and 64 and include masses anywhere in 0..2^B.
func TestSampleDraws(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, nl := range []int{1, 3, 4, 7, 64, 66, 130, 272, 1568} {
		for _, bits := range []int{8, 12, 15} {
			cl, err := NewClauses(3, nl, 10, bits, 3, uint64(nl*31+bits))
			if err != nil {
				t.Fatal(err)
			}
			for i := range cl.inc {
				cl.inc[i] = uint16(rng.IntN(1<<uint(bits) + 1))
				switch i % 7 { // the extremes: always and never included
				case 2:
					cl.inc[i] = 1 << uint(bits)
				case 5:
					cl.inc[i] = 0
				}
			}
			skip, err := NewClauses(3, nl, 10, bits, 3, uint64(nl*31+bits))
			if err != nil {
				t.Fatal(err)
			}
			words := (nl + 63) / 64
			for c := 0; c < cl.Count(); c++ {
				ref := cl.lanes[c]
				want := make([]uint64, words)
				nwant := 0
				for i := 0; i < nl; i++ {
					if ref.draw16() < uint32(cl.inc[c*nl+i])<<uint(16-bits) {
						want[i/64] |= 1 << uint(i%64)
						nwant++
					}
				}
				skip.SkipSample(c)
				got := make([]uint64, words)
				for i := range got {
					got[i] = ^uint64(0)
				}
				if n := cl.Sample(c, got); n != nwant || !slices.Equal(got, want) {
					t.Fatalf("%d literals, B = %d, clause %d: Sample gives %d included %x, the draws %d %x", nl, bits, c, n, got, nwant, want)
				}
				if cl.lanes[c] != ref || skip.lanes[c] != ref {
					t.Fatalf("%d literals, B = %d, clause %d: lane after Sample %x, SkipSample %x, %d draws %x", nl, bits, c, cl.lanes[c].s, skip.lanes[c].s, nl, ref.s)
				}
			}
		}
	}
}

// TestBelow4: the four-lane compare equals draw < q << shift lane by lane
// for every shift (B = 15..8), random draws and masses with the extremes
// 0 and 2^B.
func TestBelow4(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	for shift := uint(1); shift <= 8; shift++ {
		top := 1 << (16 - shift)
		for k := 0; k < 20000; k++ {
			draws := rng.Uint64()
			var q [4]uint16
			for j := range q {
				switch rng.IntN(4) {
				case 0:
					q[j] = 0
				case 1:
					q[j] = uint16(top)
				default:
					q[j] = uint16(rng.IntN(top + 1))
				}
				if rng.IntN(8) == 0 { // a draw at the threshold
					draws = draws&^(0xFFFF<<(16*j)) | uint64(q[j])<<shift&0xFFFF<<(16*j)
				}
			}
			var want uint64
			for j := range q {
				if draws>>(16*j)&0xFFFF < uint64(q[j])<<shift {
					want |= 1 << j
				}
			}
			if got := below4(draws, inc4(q[:], 0), shift); got != want {
				t.Fatalf("shift %d draws %x q %v: below4 %04b, want %04b", shift, draws, q, got, want)
			}
		}
	}
}
