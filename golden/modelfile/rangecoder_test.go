package modelfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recoded returns f encoded with the given SPV coding.
func recoded(t testing.TB, f *ConvFile, coding string) []byte {
	t.Helper()
	g := *f
	g.SPVCoding = coding
	d, err := EncodeConv(&g)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestConvRangeCoding: at every stored width, the range-coded file (the
// default) decodes to the same SPVs, include masses and bank as the
// DEFLATE-coded one, bit for bit, records its coding, re-encodes to its
// own bytes, and is the smaller of the two on a trained-like model.
func TestConvRangeCoding(t *testing.T) {
	for _, w := range []int{4, 8, 12, 15} {
		f, _ := convSampleAt(t, w)
		rng, def := recoded(t, f, ""), recoded(t, f, SPVCodingDeflate)
		a, err := DecodeConv(rng, "range.ptm")
		if err != nil {
			t.Fatalf("W %d: %v", w, err)
		}
		b, err := DecodeConv(def, "deflate.ptm")
		if err != nil {
			t.Fatalf("W %d: %v", w, err)
		}
		if a.SPVCoding != SPVCodingRange || b.SPVCoding != SPVCodingDeflate {
			t.Errorf("W %d: codings read back %q and %q", w, a.SPVCoding, b.SPVCoding)
		}
		if !slices.Equal(a.SPV, f.SPV) || !slices.Equal(a.SPV, b.SPV) || !slices.Equal(a.Include, b.Include) || !slices.Equal(a.Thresh, b.Thresh) {
			t.Fatalf("W %d: the range-coded file reads back other SPVs, include masses or bank than the DEFLATE-coded one", w)
		}
		if again := recoded(t, a, a.SPVCoding); !bytes.Equal(again, rng) {
			t.Errorf("W %d: re-encoding the range-coded file gives other bytes", w)
		}
		if !strings.Contains(string(rng), `"spv_coding":"range"`) || strings.Contains(string(def), "spv_coding") {
			t.Errorf("W %d: header fields: range file has spv_coding %v, deflate file %v", w, strings.Contains(string(rng), `"spv_coding":"range"`), strings.Contains(string(def), "spv_coding"))
		}
	}
	for _, w := range []int{8, 12} {
		f := convTrainedLike(t, 16, w)
		rng, def := recoded(t, f, SPVCodingRange), recoded(t, f, SPVCodingDeflate)
		back, err := DecodeConv(rng, "range.ptm")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.SPV, f.SPV) {
			t.Fatalf("W %d: trained-like SPVs read back differently", w)
		}
		t.Logf("trained-like, 16 clauses, W %d: range-coded %d bytes, DEFLATE-coded %d", w, len(rng), len(def))
		if len(rng) >= len(def) {
			t.Errorf("W %d: range-coded file %d bytes, not smaller than the DEFLATE-coded %d", w, len(rng), len(def))
		}
	}
	g, _ := convSampleAt(t, 8)
	g.SPVCoding = "lzma"
	if _, err := EncodeConv(g); err == nil || !strings.Contains(err.Error(), `"lzma"`) {
		t.Errorf("EncodeConv with SPV coding lzma: %v", err)
	}
}

// TestConvDeflateFixture: testdata/conv-bars-spv8-deflate.ptm was written
// by EncodeConv at 66be356, before the range coder (convSampleAt(t, 8),
// SPVs DEFLATE-coded, no spv_coding field). It still reads, as
// SPVCodingDeflate, re-encodes byte for byte, holds today's model, and
// range-coded reads back the same content.
func TestConvDeflateFixture(t *testing.T) {
	path := filepath.Join("testdata", "conv-bars-spv8-deflate.ptm")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := DecodeConv(data, path)
	if err != nil {
		t.Fatal(err)
	}
	if old.SPVCoding != SPVCodingDeflate {
		t.Errorf("coding %q, want %q", old.SPVCoding, SPVCodingDeflate)
	}
	if again := recoded(t, old, old.SPVCoding); !bytes.Equal(again, data) {
		t.Errorf("re-encoding the fixture gives %d bytes, the file has %d", len(again), len(data))
	}
	now, _ := convSampleAt(t, 8)
	if !slices.Equal(now.SPV, old.SPV) || !slices.Equal(now.Include, old.Include) || !slices.Equal(now.Thresh, old.Thresh) {
		t.Fatal("the fixture's model is not convSampleAt(t, 8)'s")
	}
	rng := recoded(t, old, SPVCodingRange)
	back, err := DecodeConv(rng, "range.ptm")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.SPV, old.SPV) || !slices.Equal(back.Include, old.Include) || !slices.Equal(back.Thresh, old.Thresh) {
		t.Fatal("range-coded, the fixture reads back other content")
	}
	t.Logf("fixture %d bytes, range-coded %d", len(data), len(rng))
}

// rangeParts splits a range-coded file's payload into the stream's
// length prefix, the stream and the DEFLATE-coded extras.
func rangeParts(t testing.TB, data []byte) (prefix, stream, rest []byte) {
	t.Helper()
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	pl := data[16+hl : len(data)-32]
	n, k := binary.Uvarint(pl)
	if k <= 0 || n > uint64(len(pl)-k) {
		t.Fatal("not a range-coded payload")
	}
	return pl[:k], pl[k : k+int(n)], pl[k+int(n):]
}

// hostileRange returns corruptions of a range-coded file, resealed, each
// with what its error must say.
func hostileRange(t testing.TB, good []byte) []struct {
	name string
	data []byte
	want []string
} {
	_, stream, rest := rangeParts(t, good)
	lay := func(stream, rest []byte) []byte {
		pl := binary.AppendUvarint(nil, uint64(len(stream)))
		pl = append(append(pl, stream...), rest...)
		return withRawPayload(t, good, pl)
	}
	flip := bytes.Clone(stream)
	flip[len(flip)/2] ^= 0x5a
	first := bytes.Clone(stream)
	first[0] = 7
	return []struct {
		name string
		data []byte
		want []string
	}{
		{"stream length past the payload", withRawPayload(t, good, append(binary.AppendUvarint(nil, 1<<40), stream...)), []string{"c.ptm: byte", "payload", "stream length"}},
		{"stream length not a varint", withRawPayload(t, good, bytes.Repeat([]byte{0xff}, 12)), []string{"c.ptm: byte", "payload", "stream length"}},
		{"stream truncated", lay(stream[:len(stream)/2], rest), []string{"c.ptm: byte", "range-coded SPVs", "ends inside the record"}},
		{"stream of 3 bytes", lay(stream[:3], rest), []string{"c.ptm: byte", "range-coded SPVs", "at least 5"}},
		{"stream not starting with 0", lay(first, rest), []string{"c.ptm: byte", "range-coded SPVs", "want 0"}},
		{"byte flipped in the stream", lay(flip, rest), []string{"c.ptm: byte", "payload"}},
		{"bytes after the stream", lay(append(bytes.Clone(stream), 1, 2, 3), rest), []string{"c.ptm: byte", "payload", "3 bytes after the last record"}},
		{"no extras", lay(stream, nil), []string{"c.ptm: byte", "payload"}},
		{"DEFLATE records under spv_coding range", withPayload(t, good, bytes.Repeat([]byte{0, 0}, 40)), []string{"c.ptm: byte", "payload"}},
		{"unknown coding", reseal(t, good, func(h map[string]any) { h["spv_coding"] = "lzma" }), []string{"byte 16", "spv_coding", `"lzma"`}},
	}
}

// TestConvRangeHostile: a corrupt range-coded payload is an error naming
// the file, the byte offset and what is wrong, never a panic.
func TestConvRangeHostile(t *testing.T) {
	f, _ := convSample(t)
	good := recoded(t, f, SPVCodingRange)
	for _, c := range hostileRange(t, good) {
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
}

// TestRangeGammaLimit: a gamma-coded value longer than gammaMax bits is
// refused, not read on.
func TestRangeGammaLimit(t *testing.T) {
	// gammaMax ones in unary, coded with the model's own probabilities.
	var g, h gammaModel
	g.init()
	h.init()
	e := newRangeEncoder()
	for i := range gammaMax {
		e.bit(&g.unary[min(i, gammaMax-1)], 1)
	}
	d, err := newRangeDecoder(e.finish())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.decode(d); err != errGamma {
		t.Errorf("decoding %d unary ones: %v, want %v", gammaMax, err, errGamma)
	}
}
