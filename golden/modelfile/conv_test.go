package modelfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/ptm"
)

// convSample trains a small convolutional model (8x8 images of a bar,
// vertical for class 0, horizontal for class 1, diagonal for class 2) and
// returns its file and the trainer (closed).
func convSample(t testing.TB) (*ConvFile, *convtrain.Trainer) { return convSampleAt(t, 10) }

// convSampleAt is convSample with the SPVs stored at spvBits.
func convSampleAt(t testing.TB, spvBits int) (*ConvFile, *convtrain.Trainer) {
	t.Helper()
	sh := conv.Shape{H: 8, W: 8, Planes: 1, WY: 3, WX: 3}
	cfg := convtrain.Config{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: 12, T: 20, S: 3, N: 16, Seed: 5, Workers: 1}
	tr, err := convtrain.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var X [][]bool
	var y []int
	enc := conv.Encoder{Thresholds: []int{100}}
	for i := 0; i < 60; i++ {
		img := make([]uint8, 64)
		k, pos := i%3, (i/3)%8
		for j := 0; j < 8; j++ {
			switch k {
			case 0:
				img[j*8+pos] = 200
			case 1:
				img[pos*8+j] = 200
			case 2:
				img[j*8+j] = 200
			}
		}
		b, err := enc.Booleanize(sh, img, nil)
		if err != nil {
			t.Fatal(err)
		}
		X, y = append(X, b), append(y, k)
	}
	for e := 0; e < 3; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
	}
	cl := tr.Clauses()
	f := &ConvFile{Head: *tr.Head(), Classes: []string{"vertical", "horizontal", "diagonal"}, Encoder: enc, JitterSets: 3, JitterSpread: 20,
		Trainer: ConvTrainer{S: 3, N: 16, Bits: cl.Bits(), Seed: 5, Epochs: tr.Epochs}, SPVBits: spvBits,
		BankBits: 4, K: 16, Mapping: ptm.Mapping{Kind: ptm.Vote, Smoothing: 0.05},
		Split:           Split{Dataset: "bars", Rows: 80, Seed: 5, Train: seq(0, 60), Test: seq(60, 80)},
		DataFingerprint: FingerprintPrefix + strings.Repeat("ab", 32),
		Calibration:     &ConvCalibration{Rows: 6, Seed: 5, K: 16, NLL: 0.4, Accuracy: 0.9},
		Recipe:          &ConvRecipe{Source: "test", Overridden: []string{"clauses"}}}
	f.Head.Weights = slices.Clone(f.Head.Weights)
	ctl, lanes := tr.Lanes()
	f.Lanes = &Lanes{Control: ctl, Clauses: lanes}
	if err := f.SetSPVs(cl.SPV); err != nil {
		t.Fatal(err)
	}
	b, err := tr.Bank(4)
	if err != nil {
		t.Fatal(err)
	}
	f.Thresh = b.Thresh
	return f, tr
}

func seq(a, b int) []int {
	var s []int
	for i := a; i < b; i++ {
		s = append(s, i)
	}
	return s
}

// TestConvRoundTrip: a convolutional model written and read back has the
// same head, SPVs and records; its float model and 4-bit bank equal the
// trainer's bit for bit; a tabular reader refuses it with ErrConv, and the
// conv reader refuses a tabular file.
func TestConvRoundTrip(t *testing.T) {
	for _, w := range []int{DefaultConvSPVBits, 10, 15} {
		testConvRoundTrip(t, w)
	}
}

func testConvRoundTrip(t *testing.T, spvBits int) {
	f, tr := convSampleAt(t, spvBits)
	path := filepath.Join(t.TempDir(), "c.ptm")
	hash, err := WriteConv(path, f)
	if err != nil {
		t.Fatal(err)
	}
	tab, g, hash2, err := ReadAny(path)
	if err != nil || tab != nil || g == nil || hash2 != hash {
		t.Fatalf("ReadAny: tabular %v, conv %v, hash %s vs %s, %v", tab != nil, g != nil, hash2, hash, err)
	}
	if !slices.Equal(g.SPV, f.SPV) || !slices.Equal(g.Include, f.Include) || !slices.Equal(g.Thresh, f.Thresh) || g.SPVBits != spvBits || !slices.Equal(g.Head.Weights, f.Head.Weights) || g.Head.Shape != f.Head.Shape || g.Head.T != f.Head.T {
		t.Fatal("SPVs, weights or head differ after a round trip")
	}
	if *g.Calibration != *f.Calibration || g.Recipe.Source != "test" || g.Mapping != f.Mapping || g.JitterSets != 3 || g.JitterSpread != 20 || g.Trainer != f.Trainer {
		t.Fatalf("records differ: %+v %+v", g.Calibration, g.Trainer)
	}
	if !slices.Equal(g.Split.Train, f.Split.Train) || !slices.Equal(g.Split.Test, f.Split.Test) || g.DataFingerprint != f.DataFingerprint {
		t.Fatal("split or fingerprint differ")
	}
	if ctl, lanes := tr.Lanes(); g.Lanes == nil || g.Lanes.Control != ctl || !slices.Equal(g.Lanes.Clauses, lanes) {
		t.Fatalf("lanes %+v, the trainer's %x %x", g.Lanes, ctl, lanes)
	}
	want := tr.Model()
	if got := g.Model(); !slices.Equal(got.Include, want.Include) {
		t.Fatal("float include probabilities differ from the trainer's")
	}
	wb, err := tr.Bank(4)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := g.Bank(4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gb.Thresh, wb.Thresh) || gb.Bits != 4 {
		t.Fatal("4-bit bank differs from the trainer's")
	}
	// Another width is quantized from the stored SPVs: at 15 bits (the
	// trainer's) the trainer's 6-bit bank exactly.
	g6, err := g.Bank(6)
	if err != nil {
		t.Fatal(err)
	}
	w6, _ := tr.Bank(6)
	if spvBits == 15 && !slices.Equal(g6.Thresh, w6.Thresh) {
		t.Fatal("6-bit bank of an exact file differs from the trainer's")
	}
	// Stored at W < 15 bits, every P(include) of the SPVs stays within
	// N / 2^W of the trainer's.
	for ta := 0; ta < g.TAs(); ta++ {
		var inc float64
		for _, v := range g.SPV[ta*32+16 : (ta+1)*32] {
			inc += float64(v) / float64(uint(1)<<uint(spvBits))
		}
		if d := inc - want.Include[ta]; d > 16.0/float64(uint(1)<<uint(spvBits)) || d < -16.0/float64(uint(1)<<uint(spvBits)) {
			t.Fatalf("TA %d: stored SPV's P(include) %v, trainer's %v", ta, inc, want.Include[ta])
		}
	}
	zero := 0
	for _, q := range gb.Thresh {
		if q == 0 {
			zero++
		}
	}
	if zero == 0 || zero == len(gb.Thresh) {
		t.Fatalf("%d of %d thresholds at 0: the trained sample should exclude some literals and include others", zero, len(gb.Thresh))
	}
	data, err := EncodeConv(g)
	if err != nil {
		t.Fatal(err)
	}
	if Hash(data) != hash {
		t.Fatal("re-encoding the read file gives other bytes")
	}
	if _, err := Decode(data, "c.ptm"); !errors.Is(err, ErrConv) || !strings.Contains(err.Error(), "convolutional") {
		t.Fatalf("tabular Decode of a conv file: %v, want ErrConv", err)
	}
	tdata, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if IsConv(tdata) {
		t.Fatal("IsConv on a tabular file")
	}
	if _, err := DecodeConv(tdata, "t.ptm"); err == nil || !strings.Contains(err.Error(), "kind") {
		t.Fatalf("DecodeConv of a tabular file: %v", err)
	}
}

// TestConvCorrupt: damaged or inconsistent convolutional files are refused
// with errors naming the file, the field and the byte offset.
func TestConvCorrupt(t *testing.T) {
	f, _ := convSample(t)
	good, err := EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	hl := int(binary.LittleEndian.Uint32(good[12:]))
	flip := bytes.Clone(good)
	flip[16+hl+3] ^= 0x10
	pl := bytes.Clone(good[16+hl : len(good)-32])
	pl[len(pl)/2] ^= 0x21
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated", good[:len(good)-100], []string{"c.ptm: byte", "payload", "header describes"}},
		{"bit flip", flip, []string{"checksum", "corrupted"}},
		{"payload edited and resealed", withRawPayload(t, good, pl), []string{"c.ptm: byte", "payload"}},
		{"window too large", reseal(t, good, func(h map[string]any) { h["shape"].(map[string]any)["wy"] = 9 }), []string{"byte 16", "shape", "window"}},
		{"weights short", reseal(t, good, func(h map[string]any) { h["weights"] = []int{1, 2} }), []string{"byte 16", "shape", "weights"}},
		{"spv bits", reseal(t, good, func(h map[string]any) { h["spv_bits"] = 16 }), []string{"byte 16", "spv_bits"}},
		{"trainer bits", reseal(t, good, func(h map[string]any) { h["trainer"].(map[string]any)["bits"] = 16 }), []string{"byte 16", "trainer.bits"}},
		{"tas", reseal(t, good, func(h map[string]any) { h["tas"] = 7 }), []string{"byte 16", "tas"}},
		{"class names", reseal(t, good, func(h map[string]any) { h["classes"] = []string{"a", "a", "b"} }), []string{"byte 16", "classes"}},
		{"pixel threshold", reseal(t, good, func(h map[string]any) { h["pixel_thresholds"] = []int{300} }), []string{"byte 16", "pixel_thresholds"}},
		{"unknown field", reseal(t, good, func(h map[string]any) { h["bogus"] = 1 }), []string{"byte 16", "header", "bogus"}},
		{"payload bytes", reseal(t, good, func(h map[string]any) { h["payload_bytes"] = 3 }), []string{"c.ptm: byte", "payload", "header describes"}},
		{"split", reseal(t, good, func(h map[string]any) { h["split"].(map[string]any)["test"] = [][]int{{90, 95}} }), []string{"byte 16", "split"}},
		{"lanes short", reseal(t, good, func(h map[string]any) { l := h["lanes"].(map[string]any); l["clauses"] = l["clauses"].([]any)[1:] }), []string{"byte 16", "lanes", "11 clause lanes for 12 clauses"}},
		{"lane zero", reseal(t, good, func(h map[string]any) { h["lanes"].(map[string]any)["clauses"].([]any)[3] = 0 }), []string{"byte 16", "lanes", "clauses[3]: lane state 0"}},
		{"control zero", reseal(t, good, func(h map[string]any) { h["lanes"].(map[string]any)["control"] = 0 }), []string{"byte 16", "lanes", "control lane state 0"}},
		{"weight clip", reseal(t, good, func(h map[string]any) { h["trainer"].(map[string]any)["weight_clip"] = 40000 }), []string{"byte 16", "trainer.weight_clip", "40000"}},
		{"weight over clip", reseal(t, good, func(h map[string]any) { h["trainer"].(map[string]any)["weight_clip"] = 1 }), []string{"byte 16", "weights", "outside trainer.weight_clip +-1"}},
		{"literal budget", reseal(t, good, func(h map[string]any) { h["trainer"].(map[string]any)["literal_budget"] = 39 }), []string{"byte 16", "trainer.literal_budget", "want 1..38"}},
		{"lane not a number", reseal(t, good, func(h map[string]any) { h["lanes"].(map[string]any)["control"] = "x" }), []string{"byte 16", "header", "control"}},
	}
	for _, c := range cases {
		_, err := DecodeConv(c.data, "c.ptm")
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q in it", c.name, err, w)
			}
		}
	}
	// A TA whose SPV does not sum to 2^W cannot be encoded.
	g := *f
	g.SPV = slices.Clone(f.SPV)
	g.SPV[5]++
	if _, err := EncodeConv(&g); err == nil || !strings.Contains(err.Error(), "TA 0 (clause 0, literal 0)") {
		t.Errorf("EncodeConv of an SPV off its mass: %v", err)
	}
}

// FuzzDecodeConv feeds arbitrary bytes to the convolutional decoder: it
// must never panic, and what it accepts must re-encode to the same bytes.
//
//	go test ./golden/modelfile -run '^$' -fuzz '^FuzzDecodeConv$' -fuzztime 10m
func FuzzDecodeConv(f *testing.F) {
	cf, _ := convSample(f)
	good, err := EncodeConv(cf)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:40])
	hl := int(binary.LittleEndian.Uint32(good[12:]))
	pl := bytes.Clone(good[16+hl : len(good)-32])
	pl[len(pl)/3] ^= 0x44
	f.Add(withRawPayload(f, good, pl))
	f.Add(withPayload(f, good, bytes.Repeat([]byte{0, 0}, cf.TAs())))
	f.Add(reseal(f, good, func(h map[string]any) { h["clauses"] = 1e9 }))
	f.Add(reseal(f, good, func(h map[string]any) { h["trainer"].(map[string]any)["N"] = 1 << 20 }))
	f.Add(reseal(f, good, func(h map[string]any) { delete(h, "lanes") }))
	f.Add(reseal(f, good, func(h map[string]any) { h["lanes"].(map[string]any)["clauses"].([]any)[0] = 0 }))
	f.Add(reseal(f, good, func(h map[string]any) { h["lanes"].(map[string]any)["control"] = uint64(1) << 63 }))
	// The range-coded payload's corruptions, and the DEFLATE coding.
	for _, c := range hostileRange(f, good) {
		f.Add(c.data)
	}
	f.Add(recoded(f, cf, SPVCodingDeflate))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range [][]byte{data, sealed(data)} {
			g, err := DecodeConv(d, "fuzz.ptm")
			if err != nil {
				continue
			}
			b, err := EncodeConv(g)
			if err != nil {
				t.Fatalf("decoded file does not encode: %v", err)
			}
			g2, err := DecodeConv(b, "re.ptm")
			if err != nil || !slices.Equal(g2.SPV, g.SPV) {
				t.Fatalf("re-encoded file: %v", err)
			}
			if (g.Lanes == nil) != (g2.Lanes == nil) || g.Lanes != nil && (g.Lanes.Control != g2.Lanes.Control || !slices.Equal(g.Lanes.Clauses, g2.Lanes.Clauses)) {
				t.Fatalf("lanes %+v re-read as %+v", g.Lanes, g2.Lanes)
			}
			if b2, err := EncodeConv(g2); err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("encoding the re-read file gave other bytes: %v", err)
			}
		}
	})
}

// TestConvNoLanes: a file without the lane record (written before it
// existed) still loads, with Lanes nil, and re-encodes to itself.
func TestConvNoLanes(t *testing.T) {
	f, _ := convSample(t)
	f.Lanes = nil
	data, err := EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"lanes"`)) {
		t.Fatal("a file without lanes has a lanes field")
	}
	g, err := DecodeConv(data, "old.ptm")
	if err != nil {
		t.Fatal(err)
	}
	if g.Lanes != nil {
		t.Fatalf("lanes %+v read from a file without them", g.Lanes)
	}
	b, err := EncodeConv(g)
	if err != nil || !bytes.Equal(b, data) {
		t.Fatalf("re-encoding: %v", err)
	}
}

// TestConvAdaptiveRoundTrip: an encoder with the adaptive plane is
// recorded in the header (adaptive_threshold) and read back; a file
// without one has no such key, so older files and their hashes are
// unchanged.
func TestConvAdaptiveRoundTrip(t *testing.T) {
	f, _ := convSample(t)
	b, err := EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("adaptive_threshold")) {
		t.Error("a file without the adaptive plane names it")
	}
	f.Encoder = conv.Encoder{Adaptive: &conv.AdaptiveThreshold{Block: 11, C: 2}}
	path := filepath.Join(t.TempDir(), "a.ptm")
	if _, err := WriteConv(path, f); err != nil {
		t.Fatal(err)
	}
	g, _, err := ReadConv(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Encoder.Thresholds) != 0 || g.Encoder.Adaptive == nil || *g.Encoder.Adaptive != *f.Encoder.Adaptive {
		t.Errorf("encoder read back %+v, want %+v", g.Encoder, f.Encoder)
	}
	f.Encoder = conv.Encoder{Thresholds: []int{100}, Adaptive: &conv.AdaptiveThreshold{Block: 11, C: 2}}
	if _, err := EncodeConv(f); err == nil {
		t.Error("2 encoder planes on a 1-plane shape accepted")
	}
}

// TestConvKnobsRoundTrip: a file of a model trained with a weight clip and
// a literal budget records them (trainer.weight_clip, .literal_budget) and
// reads them back; a file without them has neither key, so older files and
// their hashes are unchanged.
func TestConvKnobsRoundTrip(t *testing.T) {
	f, _ := convSample(t)
	data, err := EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("weight_clip")) || bytes.Contains(data, []byte("literal_budget")) {
		t.Fatal("a file trained without the knobs names them")
	}
	var m int32
	for _, w := range f.Head.Weights {
		m = max(m, w, -w)
	}
	f.Trainer.WeightClip, f.Trainer.LiteralBudget = int(m), 7
	data, err = EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := DecodeConv(data, "k.ptm")
	if err != nil {
		t.Fatal(err)
	}
	if g.Trainer.WeightClip != int(m) || g.Trainer.LiteralBudget != 7 {
		t.Errorf("read back weight_clip %d, literal_budget %d, want %d and 7", g.Trainer.WeightClip, g.Trainer.LiteralBudget, m)
	}
	f.Trainer.WeightClip = int(m) - 1
	if _, err := EncodeConv(f); err == nil || !strings.Contains(err.Error(), "weight_clip") {
		t.Errorf("EncodeConv of a weight past the clip: %v", err)
	}
}

// TestConvFixedMapping: the fixed-point mapping (fixed_mapping and
// calibration.fixed) is written and read back, and MappingAt returns it
// for the bank's width only; a file without it (every file written
// before the field, as the committed fixture) has neither key, loads
// with FixedMapping nil, re-encodes to its own bytes and maps every width
// with the mapping; inconsistent records are refused, naming the field.
func TestConvFixedMapping(t *testing.T) {
	f, _ := convSample(t)
	f.Mapping = ptm.Mapping{Kind: ptm.Softmax, Temperature: 5}
	old, err := EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old, []byte("fixed_mapping")) || bytes.Contains(old, []byte(`"fixed"`)) {
		t.Fatal("a file without a fixed mapping names it")
	}
	fm := ptm.Mapping{Kind: ptm.Softmax, Temperature: 7.5}
	f.FixedMapping = &fm
	f.Calibration.Fixed = &ConvFixedCalibration{Bits: 4, LFSRWidth: 32, ClauseLanes: 8, LiteralLanes: 8, NLL: 0.35, Accuracy: 0.92}
	data, err := EncodeConv(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := DecodeConv(data, "fixed.ptm")
	if err != nil {
		t.Fatal(err)
	}
	if g.FixedMapping == nil || *g.FixedMapping != fm || g.Calibration.Fixed == nil || *g.Calibration.Fixed != *f.Calibration.Fixed {
		t.Fatalf("read back fixed mapping %+v, calibration %+v; want %+v, %+v", g.FixedMapping, g.Calibration.Fixed, fm, f.Calibration.Fixed)
	}
	for _, c := range []struct {
		bits int
		want ptm.Mapping
	}{{0, f.Mapping}, {4, fm}, {8, f.Mapping}} {
		if got := g.MappingAt(c.bits); got != c.want {
			t.Errorf("MappingAt(%d) = %+v, want %+v", c.bits, got, c.want)
		}
	}
	if b, err := EncodeConv(g); err != nil || !bytes.Equal(b, data) {
		t.Errorf("re-encoding the file with a fixed mapping: %v", err)
	}
	// A file without one: MappingAt is the mapping at every width.
	h, err := DecodeConv(old, "old.ptm")
	if err != nil {
		t.Fatal(err)
	}
	if h.FixedMapping != nil || h.Calibration.Fixed != nil || h.MappingAt(4) != f.Mapping {
		t.Fatalf("old file: fixed mapping %+v, calibration %+v, MappingAt(4) %+v", h.FixedMapping, h.Calibration.Fixed, h.MappingAt(4))
	}
	if b, err := EncodeConv(h); err != nil || !bytes.Equal(b, old) {
		t.Errorf("re-encoding the old file: %v", err)
	}
	fx, _, err := ReadConv(filepath.Join("testdata", "conv-bars-spv8-deflate.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	if fx.FixedMapping != nil || fx.MappingAt(fx.BankBits) != fx.Mapping {
		t.Errorf("fixture: fixed mapping %+v, MappingAt(%d) %+v, mapping %+v", fx.FixedMapping, fx.BankBits, fx.MappingAt(fx.BankBits), fx.Mapping)
	}
	// Inconsistent records.
	for _, c := range []struct {
		name, field string
		edit        func(f *ConvFile)
	}{
		{"other kind", "fixed_mapping", func(f *ConvFile) { f.FixedMapping = &ptm.Mapping{Kind: ptm.Vote, Smoothing: 0.05} }},
		{"bad temperature", "fixed_mapping", func(f *ConvFile) { f.FixedMapping = &ptm.Mapping{Kind: ptm.Softmax, Temperature: -1} }},
		{"record without mapping", "calibration.fixed", func(f *ConvFile) { f.FixedMapping = nil }},
		{"other width", "calibration.fixed", func(f *ConvFile) { f.Calibration.Fixed.Bits = 8 }},
		{"bad lanes", "calibration.fixed", func(f *ConvFile) { f.Calibration.Fixed.ClauseLanes = 0 }},
		{"bad nll", "calibration.fixed", func(f *ConvFile) { f.Calibration.Fixed.NLL = -1 }},
	} {
		e := *f
		cal := *f.Calibration
		x := *cal.Fixed
		cal.Fixed = &x
		e.Calibration = &cal
		c.edit(&e)
		if field, err := e.check(); err == nil || field != c.field {
			t.Errorf("%s: field %q, error %v; want field %q", c.name, field, err, c.field)
		}
	}
}
