package fixed

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/ptm"
)

func TestQuantizeSPVConservesMass(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bits := range []int{8, 10, 12, 16} {
		for trial := 0; trial < 500; trial++ {
			n2 := 2 * (1 + rng.IntN(40))
			p := make([]float64, n2)
			for i := range p {
				switch rng.IntN(3) {
				case 0:
					p[i] = 0
				case 1:
					p[i] = rng.Float64() * 1e-9
				default:
					p[i] = rng.Float64()
				}
			}
			p[rng.IntN(n2)] += 0.1
			q := make([]uint32, n2)
			if err := QuantizeSPV(p, bits, q); err != nil {
				t.Fatal(err)
			}
			var s uint64
			var ps float64
			for _, v := range p {
				ps += v
			}
			for i, v := range q {
				s += uint64(v)
				if p[i] == 0 && v != 0 {
					t.Fatalf("zero state %d got mass %d", i, v)
				}
				if math.Abs(float64(v)-p[i]/ps*float64(uint64(1)<<bits)) >= 1 {
					t.Fatalf("state %d: %d is not within one unit of %v", i, v, p[i]/ps*float64(uint64(1)<<bits))
				}
			}
			if s != 1<<bits {
				t.Fatalf("B=%d: mass %d, want %d", bits, s, 1<<bits)
			}
		}
	}
}

func TestThresholdEndsDeterministic(t *testing.T) {
	for _, bits := range []int{8, 16} {
		max := uint32(1)<<bits - 1
		excl := []float64{0.3, 0.7, 0, 0}
		incl := []float64{0, 0, 0.999, 0.001}
		q := make([]uint32, 4)
		if err := QuantizeSPV(excl, bits, q); err != nil {
			t.Fatal(err)
		}
		if th := ThresholdOf(q, bits); th != 0 {
			t.Errorf("B=%d: P(include)=0 gives threshold %d", bits, th)
		}
		if err := QuantizeSPV(incl, bits, q); err != nil {
			t.Fatal(err)
		}
		if th := ThresholdOf(q, bits); th != max {
			t.Errorf("B=%d: P(include)=1 gives threshold %d, want %d", bits, th, max)
		}
	}
}

// refRun is an independent formulation of docs/fixed-point.md 4-5: it
// draws each lane's whole random stream first, then evaluates every TA in
// model order, locating its draw by the formula
// draw = (k*G + c/LC)*Bt + i/LL on lane (c mod LC)*LL + (i mod LL).
func refRun(b *Bank, h HW, x []bool, K int, q uint32) []int32 {
	lay := h.LayoutOf(b.Shape)
	L := h.Lanes()
	streams := make([][]uint64, L)
	for l := range streams {
		g, _ := lfsr.New(h.LFSRWidth, h.Bits, lfsr.LaneSeed(q, l, h.LFSRWidth))
		streams[l] = make([]uint64, K*lay.Depth)
		for d := range streams[l] {
			streams[l][d] = g.Next()
		}
	}
	o, nl := b.Features, b.Literals()
	max := uint64(1)<<h.Bits - 1
	out := make([]int32, K*b.TMs)
	for k := 0; k < K; k++ {
		for c := 0; c < b.TotalClauses(); c++ {
			ok, any := true, false
			for i := 0; i < nl; i++ {
				lane := (c%h.ClauseLanes)*h.LiteralLanes + i%h.LiteralLanes
				r := streams[lane][(k*lay.Groups+c/h.ClauseLanes)*lay.Beats+i/h.LiteralLanes]
				th := uint64(b.Thresh[c*nl+i])
				if th == max || r < th {
					any = true
					lit := x[i%o]
					if i >= o {
						lit = !lit
					}
					if !lit {
						ok = false
					}
				}
			}
			if ok && any {
				if c%b.Clauses%2 == 0 {
					out[k*b.TMs+c/b.Clauses]++
				} else {
					out[k*b.TMs+c/b.Clauses]--
				}
			}
		}
	}
	return out
}

func TestCoreMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := []Shape{
		{Binary: true, Classes: 2, TMs: 1, Clauses: 4, Features: 2, T: 2},
		{Classes: 3, TMs: 3, Clauses: 7, Features: 5, T: 4},
		{Classes: 10, TMs: 10, Clauses: 3, Features: 9, T: 2},
	}
	for _, sh := range shapes {
		for _, bits := range []int{8, 13, 16} {
			b, err := RandomBank(sh, bits, rng.Uint64)
			if err != nil {
				t.Fatal(err)
			}
			for _, lanes := range [][2]int{{1, 1}, {1, 3}, {2, 2}, {sh.TotalClauses(), sh.Literals()}, {3, 1}} {
				h := HW{Bits: bits, LFSRWidth: 32, ClauseLanes: lanes[0], LiteralLanes: lanes[1]}
				core, err := NewCore(b, h)
				if err != nil {
					t.Fatal(err)
				}
				for trial := 0; trial < 5; trial++ {
					x := make([]bool, sh.Features)
					for i := range x {
						x[i] = rng.IntN(2) == 1
					}
					seed := rng.Uint32()
					got, _, err := core.Run(x, 7, seed, nil)
					if err != nil {
						t.Fatal(err)
					}
					want := refRun(b, h, x, 7, seed)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("shape %+v B=%d lanes %v: sum %d = %d, reference %d", sh, bits, lanes, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestStatsFromSums recomputes the accumulated statistics from the
// per-sample sums, independently of Core.accumulate.
func TestStatsFromSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, sh := range []Shape{
		{Binary: true, Classes: 2, TMs: 1, Clauses: 9, Features: 3, T: 3},
		{Classes: 4, TMs: 4, Clauses: 6, Features: 4, T: 2},
	} {
		b, _ := RandomBank(sh, 12, rng.Uint64)
		core, err := NewCore(b, HW{Bits: 12, LFSRWidth: 24, ClauseLanes: 2, LiteralLanes: 3})
		if err != nil {
			t.Fatal(err)
		}
		x := []bool{true, false, true, true}[:sh.Features]
		const K = 300
		sums, st, err := core.Run(x, K, 77, nil)
		if err != nil {
			t.Fatal(err)
		}
		U := VoteUnit(sh.Classes)
		votes := make([]float64, sh.Classes)
		for k := 0; k < K; k++ {
			sc := make([]int, sh.Classes)
			for tm := 0; tm < sh.TMs; tm++ {
				u := int(sums[k*sh.TMs+tm])
				u = min(max(u, -sh.T), sh.T)
				if sh.Binary {
					sc[0], sc[1] = -u, u
				} else {
					sc[tm] = u
				}
			}
			best := sc[0]
			for _, s := range sc {
				best = max(best, s)
			}
			var tied []int
			for c, s := range sc {
				if s == best {
					tied = append(tied, c)
				}
			}
			for _, c := range tied {
				votes[c] += 1 / float64(len(tied))
			}
		}
		var total uint64
		for c := range votes {
			total += st.Votes[c]
			if math.Abs(float64(st.Votes[c])/float64(U)-votes[c]) > 1e-9 {
				t.Errorf("class %d: %d units = %v votes, want %v", c, st.Votes[c], float64(st.Votes[c])/float64(U), votes[c])
			}
		}
		if total != K*U {
			t.Errorf("total vote units %d, want %d", total, K*U)
		}
	}
	if VoteUnit(10) != 2520 || VoteUnit(16) != 720720 || VoteUnit(2) != 2 {
		t.Error("VoteUnit")
	}
}

// TestIncludeFrequency checks that a TA with threshold q is included with
// frequency q/2^B, for every lane position and several widths.
func TestIncludeFrequency(t *testing.T) {
	sh := Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 1, Features: 1, T: 1}
	for _, bits := range []int{8, 16} {
		for _, p := range []float64{0.05, 0.3, 0.5, 0.9} {
			b := &Bank{Shape: sh, Bits: bits, Thresh: make([]uint32, 2)}
			// literal 0 (x) included with p, literal 1 (NOT x) never: with
			// x = 1 the clause fires exactly when literal 0 is included.
			q := uint32(math.Round(p * float64(uint64(1)<<bits)))
			b.Thresh[0] = q
			core, err := NewCore(b, HW{Bits: bits, LFSRWidth: 32, ClauseLanes: 1, LiteralLanes: 2})
			if err != nil {
				t.Fatal(err)
			}
			const K = 200000
			sums, _, err := core.Run([]bool{true}, K, 12345, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, v := range sums {
				n += int(v)
			}
			want := float64(q) / float64(uint64(1)<<bits)
			got := float64(n) / K
			sd := math.Sqrt(want * (1 - want) / K)
			if math.Abs(got-want) > 5*sd {
				t.Errorf("B=%d p=%v: frequency %.5f, want %.5f (5 sd = %.5f)", bits, p, got, want, 5*sd)
			}
		}
	}
}

// TestFixedAgreesWithFloat trains the float PTM on noisy XOR and checks that
// the 16-bit fixed-point core agrees with it on at least 99% of predictions.
func TestFixedAgreesWithFloat(t *testing.T) {
	p := ptm.Params{Clauses: 10, T: 15, S: 3.9, N: 100, Epochs: 30, Seed: 3, Feedback: ptm.ConsistentFeedback}
	m, err := ptm.New(p, 2, 12, false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	mk := func(n int, noise float64) ([][]bool, []int) {
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
	X, y := mk(2000, 0.4)
	tr := ptm.NewTrainer(m)
	for e := 0; e < p.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
	}
	bank, err := Quantize(m, 16)
	if err != nil {
		t.Fatal(err)
	}
	core, err := NewCore(bank, HW{Bits: 16, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 8})
	if err != nil {
		t.Fatal(err)
	}
	Xt, _ := mk(500, 0)
	s := ptm.NewSampler(m, 9)
	agree := 0
	const K = 200
	for r, x := range Xt {
		fs, err := s.Sample(x, K, nil)
		if err != nil {
			t.Fatal(err)
		}
		fp := meanVotePred(m, fs, K)
		_, st, err := core.Run(x, K, uint32(r), nil)
		if err != nil {
			t.Fatal(err)
		}
		hp := 0
		for c, v := range st.Votes {
			if v > st.Votes[hp] {
				hp = c
			}
		}
		if fp == hp {
			agree++
		}
	}
	if frac := float64(agree) / float64(len(Xt)); frac < 0.99 {
		t.Errorf("fixed vs float agreement %.4f, want >= 0.99", frac)
	}
}

func meanVotePred(m *ptm.Model, sums []int, K int) int {
	probs := m.SumsToProbs(sums, K, ptm.Mapping{Kind: ptm.Vote})
	mean := make([]float64, m.NumClasses)
	for _, p := range probs {
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
	return best
}

func TestSplitLanes(t *testing.T) {
	sh := Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 16, T: 10}
	for _, c := range []struct{ l, lc, ll int }{{1, 1, 1}, {32, 1, 32}, {64, 2, 32}, {1920, 60, 32}, {7, 7, 1}} {
		lc, ll, err := SplitLanes(c.l, sh)
		if err != nil || lc != c.lc || ll != c.ll {
			t.Errorf("SplitLanes(%d) = %d,%d,%v want %d,%d", c.l, lc, ll, err, c.lc, c.ll)
		}
	}
	if _, _, err := SplitLanes(1921, sh); err == nil {
		t.Error("1921 lanes accepted")
	}
}

func BenchmarkCoreRun(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	sh := Shape{Classes: 2, TMs: 2, Clauses: 10, Features: 12, T: 15}
	bank, _ := RandomBank(sh, 16, rng.Uint64)
	core, _ := NewCore(bank, HW{Bits: 16, LFSRWidth: 32, ClauseLanes: 1, LiteralLanes: 24})
	x := make([]bool, 12)
	var sums []int32
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sums, _, _ = core.Run(x, 100, uint32(i), sums)
	}
	b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "samples/s")
}
