package frame

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
)

// convInfo is the version-7 INFO of a convolutional MNIST-shaped board.
func convInfo() Info {
	return Info{Magic: Magic, Version: 7, Generator: 0x000203, NT: 10, NC: 10, M: 128, O: 784, T: 8000, B: 4, W: 32, LC: 8, LL: 8,
		D: 16 * 34, KMax: 67, Hash32: 0xfeedface, Loaded: 1, ModelCRC: 0x0badf00d, BitRate: 3000000, RxBuffer: 31, MMax: 8,
		Kind: KindConv, ImgH: 28, ImgW: 28, Planes: 1, WinY: 10, WinX: 10}
}

// TestInfoVersions: a version-7 INFO is 26 words (104 bytes) and round
// trips with its kind and image words; a version-6 or -5 INFO is 20
// words (80 bytes) as before, its image words 0; a length that does not
// match the version word is refused; Check refuses inconsistent image
// words.
func TestInfoVersions(t *testing.T) {
	in := convInfo()
	p := in.AppendTo(nil)
	var got Info
	if len(p) != 4*InfoWords || got.DecodeFromBytes(p) != nil || got != in {
		t.Fatalf("version-7 INFO: %d bytes, decoded %+v", len(p), got)
	}
	if err := got.Check(); err != nil {
		t.Fatal(err)
	}
	if !got.IsConv() || got.ConvShape() != (conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}) || got.FeatureBytes() != 98 ||
		got.BankWords() != 64*16*34+10*128 || got.ResultBytes(ModeSums, 16) != 320 || got.ResultBytes(ModeVotes, 16) != 20 || got.ResultBytes(ModeStats, 16) != 120 {
		t.Fatalf("derived: conv %v shape %+v FB %d bank %d sums %d votes %d stats %d", got.IsConv(), got.ConvShape(), got.FeatureBytes(), got.BankWords(),
			got.ResultBytes(ModeSums, 16), got.ResultBytes(ModeVotes, 16), got.ResultBytes(ModeStats, 16))
	}
	if !strings.Contains(got.String(), "conv image=28x28 planes=1 window=10x10") {
		t.Errorf("String: %s", got.String())
	}
	if err := got.DecodeFromBytes(p[:4*InfoWordsV6]); err == nil {
		t.Error("a 20-word INFO claiming version 7 decoded")
	}
	for _, v := range []uint32{5, 6} {
		old := Info{Magic: Magic, Version: v, NT: 3, NC: 3, M: 20, O: 16, T: 10, B: 4, W: 32, LC: 4, LL: 8, D: 10, KMax: 100, MMax: 1}
		q := old.AppendTo(nil)
		var o2 Info
		if len(q) != 4*InfoWordsV6 || o2.DecodeFromBytes(q) != nil || o2 != old || o2.Check() != nil || o2.IsConv() {
			t.Fatalf("version-%d INFO: %d bytes, %+v", v, len(q), o2)
		}
		if err := o2.DecodeFromBytes(append(q, make([]byte, 24)...)); err == nil {
			t.Errorf("a 26-word INFO claiming version %d decoded", v)
		}
		// A version-6 INFO never reads as convolutional, whatever follows.
		o2.Kind = KindConv
		if o2.IsConv() {
			t.Errorf("version %d with kind 1 reads as convolutional", v)
		}
	}
	for _, c := range []struct {
		name string
		mod  func(*Info)
		want string
	}{
		{"kind", func(i *Info) { i.Kind = 2 }, "model kind 2"},
		{"o", func(i *Info) { i.O = 785 }, "o = 785"},
		{"NT", func(i *Info) { i.NT = 1 }, "NT = 1"},
		{"window", func(i *Info) { i.WinX = 29 }, "window"},
		{"tabular with image words", func(i *Info) { i.Kind = KindTabular }, "image words"},
	} {
		i := convInfo()
		c.mod(&i)
		if err := i.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestConvBankWords: the upload words of a convolutional bank hold every
// threshold at addr*L + lane of its beat (checked against
// conv.LayoutOf's schedule by hand) and the weights as i16 after them;
// ConvBankFrom inverts them (keeping the low B bits), and a word count
// other than L*D + NC*C is refused.
func TestConvBankWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sh := conv.Shape{H: 6, W: 5, Planes: 2, WY: 3, WX: 2}
	h := conv.Head{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: 7, T: 50}
	for range h.Classes * h.Clauses {
		h.Weights = append(h.Weights, int32(rng.IntN(2*conv.MaxWeight+1)-conv.MaxWeight))
	}
	bank := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	for k := range bank.Thresh {
		bank.Thresh[k] = uint32(rng.IntN(16))
	}
	if err := bank.Check(); err != nil {
		t.Fatal(err)
	}
	hw := fixed.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 3, LiteralLanes: 5}
	w := ConvBankWords(bank, hw)
	lay := conv.LayoutOf(&h, hw)
	L, nl := hw.Lanes(), sh.Literals()
	if len(w) != L*lay.Depth+h.Classes*h.Clauses {
		t.Fatalf("%d words, want %d*%d + %d", len(w), L, lay.Depth, h.Classes*h.Clauses)
	}
	seen := 0
	for c := range h.Clauses {
		for i := range nl {
			addr := (c/hw.ClauseLanes)*lay.Beats + i/hw.LiteralLanes
			lane := (c%hw.ClauseLanes)*hw.LiteralLanes + i%hw.LiteralLanes
			if got := w[addr*L+lane]; uint32(got) != bank.Thresh[c*nl+i] {
				t.Fatalf("TA (%d, %d) at word %d: %d, want %d", c, i, addr*L+lane, got, bank.Thresh[c*nl+i])
			}
			seen++
		}
	}
	for k, v := range h.Weights {
		if int32(int16(w[L*lay.Depth+k])) != v {
			t.Fatalf("weight %d: word %d, want %d", k, w[L*lay.Depth+k], v)
		}
	}
	t.Logf("%d thresholds in %d x %d words, %d weights", seen, L, lay.Depth, len(h.Weights))
	// High bits above B are dropped, like the core's B-bit bank.
	w2 := slices.Clone(w)
	for k := range L * lay.Depth {
		w2[k] |= 0xfff0
	}
	back, err := ConvBankFrom(conv.Head{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: 7, T: 50}, hw, w2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Thresh, bank.Thresh) || !slices.Equal(back.Weights, bank.Weights) || back.Check() != nil {
		t.Fatal("ConvBankFrom does not invert ConvBankWords")
	}
	if _, err := ConvBankFrom(h, hw, w[1:]); err == nil {
		t.Fatal("a short upload accepted")
	}
}
