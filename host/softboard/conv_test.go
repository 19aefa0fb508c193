package softboard_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/softboard"
)

// randomConvBank is a coalesced 3-class bank of 9 clauses on 7 x 6 images
// of 2 planes with a 3 x 4 window, random thresholds and weights.
func randomConvBank(t testing.TB, rng *rand.Rand) *conv.Bank {
	t.Helper()
	h := conv.Head{Shape: conv.Shape{H: 7, W: 6, Planes: 2, WY: 3, WX: 4}, Structure: conv.Coalesced, Classes: 3, Clauses: 9, T: 200}
	for range h.Classes * h.Clauses {
		h.Weights = append(h.Weights, int32(rng.IntN(81)-40))
	}
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	for k := range b.Thresh {
		b.Thresh[k] = uint32([]int{0, 0, 0, 15, 14, 3, 8}[rng.IntN(7)])
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConvBoard: a blank convolutional board (protocol version 7) reports
// its kind and image shape in INFO, takes the L*D thresholds and NC*C
// weights by LOAD_*, and answers INFER and INFER_WINDOW queries of two
// booleanized images (two threshold sets) in every mode with exactly the
// golden conv.Core's items; a version-6 convolutional board is refused.
func TestConvBoard(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	bank := randomConvBank(t, rng)
	hw := fixed.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 7}
	head := bank.Head
	head.Weights = nil
	b, err := softboard.New(softboard.Config{Conv: &head, HW: hw})
	if err != nil {
		t.Fatal(err)
	}
	typ, p := exec(t, b, frame.TypeInfo, 1, nil)
	var in frame.Info
	if typ != frame.TypeInfo.Response() || in.DecodeFromBytes(p) != nil || in.Check() != nil {
		t.Fatalf("INFO: %v %d bytes %+v", typ, len(p), in)
	}
	sh := bank.Shape
	if !in.IsConv() || in.Version != 7 || in.ConvShape() != sh || in.NT != 3 || in.NC != 3 || in.M != 9 || int(in.O) != 2*7*6 || in.Loaded != 0 ||
		int(in.D) != conv.LayoutOf(&bank.Head, hw).Depth || int(in.KMax) != softboard.DefaultConvKMax(3, 200) {
		t.Fatalf("INFO %v", &in)
	}
	words := frame.ConvBankWords(bank, hw)
	if len(words) != in.BankWords() {
		t.Fatalf("%d upload words, INFO says %d", len(words), in.BankWords())
	}
	exec(t, b, frame.TypeLoadBegin, 2, (&frame.LoadBegin{Words: uint32(len(words))}).AppendTo(nil))
	for off := 0; off < len(words); off += 200 {
		end := min(off+200, len(words))
		if typ, _ := exec(t, b, frame.TypeLoadData, 3, frame.AppendLoadData(nil, uint32(off), words[off:end])); typ != frame.TypeLoadData.Response() {
			t.Fatalf("LOAD_DATA at %d: %v", off, typ)
		}
	}
	crc := frame.WordsCRC(words)
	if typ, _ := exec(t, b, frame.TypeLoadCommit, 4, (&frame.LoadCommit{Words: uint32(len(words)), CRC: crc}).AppendTo(nil)); typ != frame.TypeLoadCommit.Response() {
		t.Fatalf("LOAD_COMMIT: %v", typ)
	}
	if in2 := b.Info(); in2.Loaded != 1 || in2.ModelCRC != crc {
		t.Fatalf("after the upload: %v", &in2)
	}
	core, err := conv.NewCore(bank, hw)
	if err != nil {
		t.Fatal(err)
	}
	fb := in.FeatureBytes()
	const queries, K, seed = 3, 13, 77
	var feats []byte
	var imgs [][]*conv.Patches
	for range queries {
		var pts []*conv.Patches
		for range 2 {
			x := make([]bool, 2*7*6)
			for k := range x {
				x[k] = rng.IntN(3) == 0
			}
			feats = frame.PackFeatures(feats, x)
			pt := conv.NewPatches(sh)
			if err := pt.Fill(x); err != nil {
				t.Fatal(err)
			}
			pts = append(pts, pt)
		}
		imgs = append(imgs, pts)
	}
	if len(feats) != queries*2*fb {
		t.Fatalf("%d feature bytes", len(feats))
	}
	for _, mode := range []frame.Mode{frame.ModeSamples, frame.ModeStats, frame.ModeVotes, frame.ModeSums} {
		var want []uint32
		for q, pts := range imgs {
			sums, st, err := core.RunSets(pts, K, seed+uint32(q), nil)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, frame.ResultWords(mode, bank.T, sums, st)...)
		}
		req := (&frame.InferRequest{Mode: mode, Sets: 2, K: K, Seed: seed, Count: queries, Features: feats}).AppendTo(nil)
		typ, p := exec(t, b, frame.TypeInfer, 5, req)
		ib := in.ItemBytes(mode, K)
		got, err := frame.Items(nil, p, mode, ib)
		if typ != frame.TypeInfer.Response() || err != nil || !slices.Equal(got, want) {
			t.Fatalf("%v: %v %v, %d items, want %d", mode, typ, err, len(got), len(want))
		}
		w := frame.Window{First: 5, Count: 7}
		typ, p = exec(t, b, frame.TypeInferWindow, 6, frame.AppendInferWindow(nil, req, w))
		got, err = frame.Items(nil, p, mode, ib)
		if e := min(w.End(), len(want)); typ != frame.TypeInferWindow.Response() || err != nil || !slices.Equal(got, want[min(5, e):e]) {
			t.Fatalf("%v window: %v %v %v", mode, typ, err, got)
		}
	}
	if _, err := softboard.New(softboard.Config{Conv: &head, HW: hw, Version: 6}); err == nil {
		t.Fatal("a version-6 convolutional board was built")
	}
	// A blank per-class board (weights fixed by the structure).
	pc := conv.Head{Shape: head.Shape, Structure: conv.PerClass, Classes: 3, Clauses: 9, T: 200}
	if _, err := softboard.New(softboard.Config{Conv: &pc, HW: hw}); err != nil {
		t.Fatalf("blank per-class board: %v", err)
	}
	// Preloaded: loaded from power-up with the same CRC.
	pb, err := softboard.New(softboard.Config{ConvBank: bank, HW: hw})
	if err != nil {
		t.Fatal(err)
	}
	if in := pb.Info(); in.Loaded != 1 || in.ModelCRC != crc || !in.IsConv() {
		t.Fatalf("preloaded: %v", &in)
	}
}
