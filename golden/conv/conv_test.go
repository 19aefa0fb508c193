package conv

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/ptm"
)

func TestShapeConvCoTM(t *testing.T) {
	s := Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// ConvCoTM: 361 patches, 100 window bits + 18 + 18 thermometer bits, 272 literals.
	if s.Patches() != 361 || s.Features() != 136 || s.Literals() != 272 || s.Words() != 5 {
		t.Fatalf("patches %d features %d literals %d words %d, want 361 136 272 5", s.Patches(), s.Features(), s.Literals(), s.Words())
	}
	for _, bad := range []Shape{{H: 0, W: 5, Planes: 1, WY: 1, WX: 1}, {H: 5, W: 5, Planes: 0, WY: 1, WX: 1}, {H: 5, W: 5, Planes: 1, WY: 6, WX: 1}, {H: 5, W: 5, Planes: 17, WY: 1, WX: 1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// literalRef is literal i of the patch at (y, x) by the definition in
// Shape's documentation.
func literalRef(s Shape, planes []bool, y, x, i int) bool {
	f := s.Features()
	neg := i >= f
	if neg {
		i -= f
	}
	var v bool
	switch wb := s.WindowBits(); {
	case i < wb:
		p, r := i/(s.WY*s.WX), i%(s.WY*s.WX)
		dy, dx := r/s.WX, r%s.WX
		v = planes[(p*s.H+y+dy)*s.W+x+dx]
	case i < wb+s.H-s.WY:
		v = y > i-wb
	default:
		v = x > i-wb-(s.H-s.WY)
	}
	return v != neg
}

func randomPlanes(s Shape, rng *rand.Rand) []bool {
	b := make([]bool, s.Planes*s.Pixels())
	for i := range b {
		b[i] = rng.IntN(3) == 0
	}
	return b
}

func TestFillMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []Shape{{H: 7, W: 9, Planes: 2, WY: 3, WX: 4}, {H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, {H: 5, W: 5, Planes: 3, WY: 5, WX: 5}, {H: 12, W: 4, Planes: 1, WY: 1, WX: 1}, {H: 4, W: 70, Planes: 2, WY: 2, WX: 5}, {H: 66, W: 3, Planes: 1, WY: 1, WX: 2}, {H: 30, W: 63, Planes: 1, WY: 1, WX: 63}} {
		planes := randomPlanes(s, rng)
		pt := NewPatches(s)
		if err := pt.Fill(planes); err != nil {
			t.Fatal(err)
		}
		lit := make([]bool, s.Literals())
		for y := 0; y < s.PY(); y++ {
			for x := 0; x < s.PX(); x++ {
				p := y*s.PX() + x
				pt.Unpack(p, lit)
				for i := range lit {
					if want := literalRef(s, planes, y, x, i); lit[i] != want || pt.Literal(p, i) != want {
						t.Fatalf("%+v patch (%d,%d) literal %d = %v, want %v", s, y, x, i, lit[i], want)
					}
				}
				// Bits past the literals stay 0.
				w := pt.Patch(p)
				if r := s.Literals() % 64; r != 0 && w[len(w)-1]>>uint(r) != 0 {
					t.Fatalf("%+v patch %d: padding bits set", s, p)
				}
			}
		}
	}
	s := Shape{H: 4, W: 4, Planes: 1, WY: 2, WX: 2}
	if err := NewPatches(s).Fill(make([]bool, 15)); err == nil {
		t.Error("short image accepted")
	}
}

func TestFiringMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []Shape{{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}, {H: 9, W: 8, Planes: 2, WY: 3, WX: 3}} {
		planes := randomPlanes(s, rng)
		for i := range planes {
			planes[i] = rng.IntN(2) == 0
		}
		pt := NewPatches(s)
		if err := pt.Fill(planes); err != nil {
			t.Fatal(err)
		}
		nl := s.Literals()
		inc := make([]uint64, s.Words())
		lit := make([]bool, nl)
		fired := 0
		for trial := 0; trial < 300; trial++ {
			clear(inc)
			n := rng.IntN(4)
			for k := 0; k < n; k++ {
				i := rng.IntN(nl)
				inc[i/64] |= 1 << uint(i%64)
			}
			var want []int32
			for p := 0; p < s.Patches(); p++ {
				pt.Unpack(p, lit)
				ok := true
				for i := 0; i < nl; i++ {
					if inc[i/64]>>uint(i%64)&1 == 1 && !lit[i] {
						ok = false
					}
				}
				if ok {
					want = append(want, int32(p))
				}
			}
			got := pt.Firing(inc, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%+v: firing patches %v, want %v", s, got, want)
			}
			if pt.FiresAnywhere(inc) != (len(want) > 0) {
				t.Fatalf("%+v: FiresAnywhere %v with %d firing patches", s, !(len(want) > 0), len(want))
			}
			if len(want) > 0 {
				fired++
			}
		}
		if fired == 0 || fired == 300 {
			t.Fatalf("%+v: %d of 300 random clauses fired: the test does not discriminate", s, fired)
		}
	}
}

func TestJitter(t *testing.T) {
	sets, err := Jitter(Encoder{Thresholds: []int{75, 250}}, 5, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{55, 230}, {65, 240}, {75, 250}, {85, 255}, {95, 255}}
	for j, e := range sets {
		if !slices.Equal(e.Thresholds, want[j]) {
			t.Errorf("set %d thresholds %v, want %v", j, e.Thresholds, want[j])
		}
	}
	one, _ := Jitter(Encoder{Thresholds: []int{75}}, 1, 20)
	if one[0].Thresholds[0] != 75 {
		t.Errorf("one set: %v, want the base", one[0].Thresholds)
	}
	if _, err := Jitter(Encoder{Thresholds: []int{75}}, 0, 20); err == nil {
		t.Error("0 sets accepted")
	}
	if got := []int{SetSamples(10, 3, 0), SetSamples(10, 3, 1), SetSamples(10, 3, 2)}; !slices.Equal(got, []int{4, 3, 3}) {
		t.Errorf("SetSamples(10, 3) = %v, want [4 3 3]", got)
	}
}

func TestBooleanize(t *testing.T) {
	s := Shape{H: 1, W: 4, Planes: 2, WY: 1, WX: 1}
	b, err := Encoder{Thresholds: []int{10, 200}}.Booleanize(s, []uint8{0, 11, 10, 255}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true, false, true, false, false, false, true}; !slices.Equal(b, want) {
		t.Errorf("planes %v, want %v", b, want)
	}
	if _, err := (Encoder{Thresholds: []int{10}}).Booleanize(s, []uint8{0, 1, 2, 3}, nil); err == nil {
		t.Error("1 threshold for 2 planes accepted")
	}
	if _, err := (Encoder{Thresholds: []int{10, 20}}).Booleanize(s, []uint8{0, 1, 2}, nil); err == nil {
		t.Error("short image accepted")
	}
}

// randomBank returns a bank with thresholds mixing exact 0, always and
// uniform values.
func randomBank(h Head, bits int, rng *rand.Rand) *Bank {
	b := &Bank{Head: h, Bits: bits, Thresh: make([]uint32, h.TAs())}
	max := uint32(1)<<uint(bits) - 1
	for i := range b.Thresh {
		switch rng.IntN(10) {
		case 0, 1, 2, 3, 4, 5, 6:
			b.Thresh[i] = 0
		case 7:
			b.Thresh[i] = max
		default:
			b.Thresh[i] = rng.Uint32N(max + 1)
		}
	}
	return b
}

// With the window the size of the image there is one patch and no
// position features: a per-class conv core must give golden/fixed's class
// sums exactly, which checks that its sampling stream is fixed.Core's.
func TestCoreEqualsFixedCoreOnOnePatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		classes, m, h, w, bits int
		hw                     HW
	}{
		{3, 4, 2, 3, 4, HW{Bits: 4, LFSRWidth: 16, ClauseLanes: 2, LiteralLanes: 3}},
		{4, 6, 4, 4, 4, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 5, LiteralLanes: 7}},
		{2, 10, 3, 5, 8, HW{Bits: 8, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 30}},
	} {
		sh := Shape{H: tc.h, W: tc.w, Planes: 1, WY: tc.h, WX: tc.w}
		h := Head{Shape: sh, Structure: PerClass, Classes: tc.classes, Clauses: tc.classes * tc.m, T: 3, Weights: PerClassWeights(tc.classes, tc.m)}
		b := randomBank(h, tc.bits, rng)
		fb := &fixed.Bank{Shape: fixed.Shape{Classes: tc.classes, TMs: tc.classes, Clauses: tc.m, Features: sh.Features(), T: 3}, Bits: tc.bits, Thresh: b.Thresh}
		cc, err := NewCore(b, tc.hw)
		if err != nil {
			t.Fatal(err)
		}
		fc, err := fixed.NewCore(fb, tc.hw)
		if err != nil {
			t.Fatal(err)
		}
		pt := NewPatches(sh)
		differ := 0
		for q := uint32(0); q < 20; q++ {
			planes := randomPlanes(sh, rng)
			if err := pt.Fill(planes); err != nil {
				t.Fatal(err)
			}
			got, gst, err := cc.Run(pt, 7, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, wst, err := fc.Run(planes, 7, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%+v seed %d: sums %v, fixed.Core %v", tc, q, got, want)
			}
			if !slices.Equal(gst.Votes, wst.Votes) || !slices.Equal(gst.Sum, wst.Sum) || !slices.Equal(gst.SumSq, wst.SumSq) {
				t.Fatalf("%+v seed %d: stats %+v, fixed.Core %+v", tc, q, gst, wst)
			}
			for k := 1; k < 7; k++ {
				if !slices.Equal(got[:tc.classes], got[k*tc.classes:(k+1)*tc.classes]) {
					differ++
				}
			}
		}
		if differ == 0 {
			t.Fatalf("%+v: every sample equal: the random stream is not exercised", tc)
		}
	}
}

func coalescedHead(sh Shape, classes, clauses, T int, rng *rand.Rand) Head {
	w := make([]int32, classes*clauses)
	for i := range w {
		w[i] = int32(rng.IntN(7)) - 3
	}
	return Head{Shape: sh, Structure: Coalesced, Classes: classes, Clauses: clauses, T: T, Weights: w}
}

// The core's samples have the distribution of the float sampler on
// Bank.Float: per-class vote fractions within 4.5 standard errors.
func TestCoreDistributionMatchesSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sh := Shape{H: 8, W: 8, Planes: 1, WY: 3, WX: 3}
	h := coalescedHead(sh, 3, 12, 6, rng)
	b := randomBank(h, 4, rng)
	// Fewer includes, so that clauses fire on some patches.
	for i := range b.Thresh {
		if rng.IntN(4) != 0 {
			b.Thresh[i] = 0
		}
	}
	core, err := NewCore(b, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 8})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := NewSampler(b.Float(), 9)
	if err != nil {
		t.Fatal(err)
	}
	pt := NewPatches(sh)
	const K = 4000
	for img := 0; img < 3; img++ {
		if err := pt.Fill(randomPlanes(sh, rng)); err != nil {
			t.Fatal(err)
		}
		cs, _, err := core.Run(pt, K, uint32(img), nil)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := smp.Run(pt, K, nil)
		if err != nil {
			t.Fatal(err)
		}
		cst, fst := b.Stats(cs, K), b.Stats(fs, K)
		u := float64(fixed.VoteUnit(3))
		for c := 0; c < 3; c++ {
			pc, pf := float64(cst.Votes[c])/u/K, float64(fst.Votes[c])/u/K
			se := math.Sqrt((pc*(1-pc) + pf*(1-pf)) / K)
			if math.Abs(pc-pf) > 4.5*se+1e-9 {
				t.Errorf("image %d class %d: core vote fraction %.4f, sampler %.4f (se %.4f)", img, c, pc, pf, se)
			}
		}
	}
}

func TestRunSetsConcatenatesRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sh := Shape{H: 6, W: 6, Planes: 1, WY: 3, WX: 3}
	h := coalescedHead(sh, 3, 8, 4, rng)
	b := randomBank(h, 4, rng)
	core, err := NewCore(b, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 4})
	if err != nil {
		t.Fatal(err)
	}
	img := make([]uint8, 36)
	for i := range img {
		img[i] = uint8(rng.IntN(256))
	}
	sets, _ := Jitter(Encoder{Thresholds: []int{100}}, 3, 40)
	var pts []*Patches
	for _, e := range sets {
		pt := NewPatches(sh)
		if _, err := e.Encode(img, pt, nil); err != nil {
			t.Fatal(err)
		}
		pts = append(pts, pt)
	}
	const K = 8
	got, st, err := core.RunSets(pts, K, 77, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	for m, pt := range pts {
		s, _, err := core.Run(pt, SetSamples(K, 3, m), SetSeed(77, m), nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, s...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("RunSets %v, runs %v", got, want)
	}
	if ws := b.Stats(want, K); !slices.Equal(ws.Votes, st.Votes) || !slices.Equal(ws.Sum, st.Sum) {
		t.Fatalf("stats %+v, want %+v", st, ws)
	}
	if SetSeed(77, 0) != 77 || SetSeed(0, 1) != 0x9E3779B9 {
		t.Error("SetSeed is not q + m*0x9E3779B9")
	}
}

func TestHeadStatsAndProbs(t *testing.T) {
	h := Head{Classes: 3, T: 2}
	// Two samples: (5, 2, -1) clips to (2, 2, -1): a tie of 0 and 1; (0, 1, 1): tie of 1 and 2.
	st := h.Stats([]int32{5, 2, -1, 0, 1, 1}, 2)
	if want := []uint64{3, 6, 3}; !slices.Equal(st.Votes, want) {
		t.Errorf("votes %v, want %v", st.Votes, want)
	}
	if want := []int64{2, 3, 0}; !slices.Equal(st.Sum, want) {
		t.Errorf("sums %v, want %v", st.Sum, want)
	}
	if want := []uint64{4, 5, 2}; !slices.Equal(st.SumSq, want) {
		t.Errorf("sums of squares %v, want %v", st.SumSq, want)
	}
	p := h.Probs([]int32{5, 2, -1}, 1, ptm.Mapping{Kind: ptm.Vote})
	if !slices.Equal(p[0], []float64{0.5, 0.5, 0}) {
		t.Errorf("vote probabilities %v, want [0.5 0.5 0]", p[0])
	}
}

func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	sh := Shape{H: 6, W: 6, Planes: 1, WY: 3, WX: 3}
	h := coalescedHead(sh, 3, 8, 4, rng)
	b := randomBank(h, 4, rng)
	if _, err := NewCore(b, HW{Bits: 5, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 4}); err == nil {
		t.Error("hardware bits != bank bits accepted")
	}
	if _, err := NewCore(b, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 9, LiteralLanes: 4}); err == nil {
		t.Error("more clause lanes than clauses accepted")
	}
	core, err := NewCore(b, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := core.Run(NewPatches(Shape{H: 6, W: 6, Planes: 1, WY: 2, WX: 2}), 4, 1, nil); err == nil {
		t.Error("patches of another shape accepted")
	}
	if _, _, err := core.Run(NewPatches(sh), 0, 1, nil); err == nil {
		t.Error("K = 0 accepted")
	}
	bad := *b
	bad.Thresh = append([]uint32(nil), b.Thresh...)
	bad.Thresh[3] = 16
	if _, err := NewCore(&bad, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 4}); err == nil {
		t.Error("a 5-bit threshold in a 4-bit bank accepted")
	}
	pc := Head{Shape: sh, Structure: PerClass, Classes: 2, Clauses: 4, T: 2, Weights: []int32{1, -1, 0, 0, 0, 0, 1, 1}}
	if err := pc.Validate(); err == nil {
		t.Error("per-class head with a wrong weight accepted")
	}
	m := &Model{Head: h, Include: make([]float64, h.TAs())}
	m.Include[5] = math.NaN()
	if _, err := NewSampler(m, 1); err == nil {
		t.Error("NaN include probability accepted")
	}
}

func TestLaneMatchesLFSR(t *testing.T) {
	for _, w := range lfsr.Widths() {
		for _, b := range []int{1, 4, 8, lfsr.MaxLeap(w)} {
			g, err := lfsr.New(w, b, lfsr.LaneSeed(123, 4, w))
			if err != nil {
				t.Fatal(err)
			}
			l := newLane(w, b, lfsr.LaneSeed(123, 4, w))
			for k := 0; k < 500; k++ {
				if got, want := l.next(), uint32(g.Next()); got != want {
					t.Fatalf("W %d B %d draw %d: %d, lfsr.LFSR %d", w, b, k, got, want)
				}
			}
		}
	}
}

func TestFirstFiringAndPatchEvals(t *testing.T) {
	sh := Shape{H: 4, W: 4, Planes: 1, WY: 2, WX: 2}
	h := Head{Shape: sh, Structure: Coalesced, Classes: 2, Clauses: 2, T: 1, Weights: []int32{-1, 0, 1, 0}}
	b := &Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	b.Thresh[0] = 15 // clause 0: window pixel (0, 0) on; clause 1 includes nothing
	core, err := NewCore(b, HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 4})
	if err != nil {
		t.Fatal(err)
	}
	pt := NewPatches(sh)
	img := make([]uint8, 16)
	img[1*4+2] = 200 // pixel (1, 2): patch (1, 2) = 5 is the first whose top-left is on
	if _, err := (Encoder{Thresholds: []int{127}}).Encode(img, pt, nil); err != nil {
		t.Fatal(err)
	}
	inc := make([]uint64, sh.Words())
	inc[0] = 1
	if f := pt.FirstFiring(inc); f != 5 {
		t.Fatalf("first firing patch %d, want 5", f)
	}
	if _, _, err := core.Run(pt, 3, 1, nil); err != nil {
		t.Fatal(err)
	}
	// 3 samples x 6 patches for clause 0; clause 1 is never scanned.
	if core.PatchEvals() != 18 {
		t.Fatalf("patch evaluations %d, want 18", core.PatchEvals())
	}
}

// adaptiveFloat is OpenCV's adaptive Gaussian threshold in float64 with
// the kernel normalized to sum 1: the reference the integer plane must
// match wherever the comparison is not within rounding of a tie.
func adaptiveFloat(a AdaptiveThreshold, h, w int, img []uint8) (bit []bool, margin []float64) {
	r := a.Block / 2
	sigma := 0.3*(float64(a.Block-1)*0.5-1) + 0.8
	g := make([]float64, a.Block)
	var sum float64
	for i := range g {
		d := float64(i - r)
		g[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += g[i]
	}
	for i := range g {
		g[i] /= sum
	}
	bit, margin = make([]bool, h*w), make([]float64, h*w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var m float64
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					yy, xx := max(0, min(h-1, y+dy)), max(0, min(w-1, x+dx))
					m += g[dy+r] * g[dx+r] * float64(img[yy*w+xx])
				}
			}
			v := float64(img[y*w+x]) + float64(a.C) - m
			bit[y*w+x], margin[y*w+x] = v > 0, math.Abs(v)
		}
	}
	return bit, margin
}

func TestAdaptivePlane(t *testing.T) {
	// A flat image: every pixel equals its weighted mean, so the bit is
	// C > 0.
	s := Shape{H: 5, W: 6, Planes: 2, WY: 2, WX: 2}
	flat := make([]uint8, 30)
	for i := range flat {
		flat[i] = 90
	}
	for _, c := range []int{0, 2, -1} {
		e := Encoder{Thresholds: []int{89}, Adaptive: &AdaptiveThreshold{Block: 3, C: c}}
		b, err := e.Booleanize(s, flat, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 30; i++ {
			if !b[i] || b[30+i] != (c > 0) {
				t.Fatalf("C %d: pixel %d planes %v %v, want true %v", c, i, b[i], b[30+i], c > 0)
			}
		}
	}
	// Random images against the float reference, away from ties.
	rng := rand.New(rand.NewPCG(5, 6))
	sh := Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	checked := 0
	for _, a := range []AdaptiveThreshold{{Block: 11, C: 2}, {Block: 5, C: -3}, {Block: 3, C: 0}} {
		e := Encoder{Adaptive: &a}
		for n := 0; n < 20; n++ {
			img := make([]uint8, sh.Pixels())
			for i := range img {
				img[i] = uint8(rng.IntN(256))
				if n%2 == 1 && i%3 != 0 {
					img[i] = 0 // sparse, MNIST-like
				}
			}
			b, err := e.Booleanize(sh, img, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, margin := adaptiveFloat(a, sh.H, sh.W, img)
			for i := range want {
				if margin[i] > 0.5 {
					checked++
					if b[i] != want[i] {
						t.Fatalf("block %d C %d image %d pixel %d: %v, float reference %v (margin %.3f)", a.Block, a.C, n, i, b[i], want[i], margin[i])
					}
				}
			}
		}
	}
	if checked < 20000 {
		t.Errorf("only %d pixels away from ties", checked)
	}
	sets, err := Jitter(Encoder{Thresholds: []int{75}, Adaptive: &AdaptiveThreshold{Block: 11, C: 2}}, 3, 10)
	if err != nil || sets[2].Adaptive == nil || sets[2].Adaptive.C != 2 || sets[2].Thresholds[0] != 85 {
		t.Errorf("Jitter with an adaptive plane: %+v, %v", sets, err)
	}
	for _, bad := range []AdaptiveThreshold{{Block: 4, C: 2}, {Block: 1}, {Block: 33}, {Block: 11, C: 256}} {
		if err := (Encoder{Adaptive: &bad}).Validate(sh); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := (Encoder{Thresholds: []int{75}, Adaptive: &AdaptiveThreshold{Block: 11, C: 2}}).Validate(sh); err == nil {
		t.Error("2 planes on a 1-plane shape accepted")
	}
}
