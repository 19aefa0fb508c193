package modelfile

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// testdata/v1-iris-tiny.ptm was written by the format-1 writer (main at
// 571ba67): ptm train --data iris --clauses 2 --states 3 --epochs 5
// --sets 2 -o v1-iris-tiny.ptm.
const v1Fixture = "testdata/v1-iris-tiny.ptm"

func TestReadV1(t *testing.T) {
	raw, err := os.ReadFile(v1Fixture)
	if err != nil {
		t.Fatal(err)
	}
	f, hash, err := Read(v1Fixture)
	if err != nil {
		t.Fatalf("format-1 file refused: %v", err)
	}
	sum := sha256.Sum256(raw[:len(raw)-32])
	if hash != hex.EncodeToString(sum[:]) || f.SPVBits != 0 || f.Bank.Bits != 16 || f.Model.NumTAs() != 3*2*48 || f.Model.N != 3 {
		t.Fatalf("hash %s, SPV bits %d, bank bits %d, %d TAs, N %d", hash, f.SPVBits, f.Bank.Bits, f.Model.NumTAs(), f.Model.N)
	}
	if len(f.Split.Train) != 120 || len(f.Split.Test) != 30 || f.Encoding == nil || len(f.Encoding.Set) != 2 {
		t.Fatalf("split %d/%d, encoding %v", len(f.Split.Train), len(f.Split.Test), f.Encoding)
	}
	// Converting: Canonicalize rounds to 16 bits, Write writes format 2,
	// and Read gives back exactly the canonical model.
	before := append([]float64(nil), f.Model.IncludeAll()...)
	r, err := f.Canonicalize()
	if err != nil {
		t.Fatal(err)
	}
	// Each state moves by less than one unit of 2^-16, the include mass
	// by less than N units.
	if r.Bits != 16 || r.MaxInclude > 3*0x1p-16 || r.MaxSPV > 0x1p-16 {
		t.Fatalf("rounding %+v", r)
	}
	path := filepath.Join(t.TempDir(), "v2.ptm")
	if _, err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	g, _, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	t.Logf("format 1: %d bytes, format 2: %d bytes; %d of %d TAs rounded, P(include) moved by at most %.3g", len(raw), fi.Size(), r.TAs, f.Model.NumTAs(), r.MaxInclude)
	if fi.Size()*4 > int64(len(raw)) {
		t.Errorf("format 2 is %d bytes, format 1 %d", fi.Size(), len(raw))
	}
	for i, p := range g.Model.IncludeAll() {
		if p != f.Model.IncludeAll()[i] || math.Abs(p-before[i]) > 3*0x1p-16 {
			t.Fatalf("TA %d: P(include) %v read back, %v canonical, %v in format 1", i, p, f.Model.IncludeAll()[i], before[i])
		}
	}
	for i, v := range g.Model.SPV {
		if v != f.Model.SPV[i] {
			t.Fatalf("SPV value %d: %v read back, %v canonical", i, v, f.Model.SPV[i])
		}
	}
	for i, v := range g.Bank.Thresh {
		if v != f.Bank.Thresh[i] {
			t.Fatalf("threshold %d: %d read back, %d canonical", i, v, f.Bank.Thresh[i])
		}
	}
	if len(g.Split.Test) != 30 || g.Split.Test[29] != f.Split.Test[29] || g.Mapping != f.Mapping || g.DataFingerprint != f.DataFingerprint {
		t.Fatalf("metadata changed: %+v", g.Split)
	}
	// A format-1 header with format-2 fields is refused.
	if _, err := Decode(reseal(t, raw, func(h map[string]any) { h["spv_bits"] = 16 }), "old.ptm"); err == nil {
		t.Error("format-1 file with spv_bits accepted")
	}
}

func TestEncodeRounds(t *testing.T) {
	raw := sampleRaw(t)
	data, err := Encode(raw) // not canonical: rounded on the way out
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(data, "m.ptm")
	if err != nil {
		t.Fatal(err)
	}
	c := sampleRaw(t)
	r, err := c.Canonicalize()
	if err != nil {
		t.Fatal(err)
	}
	if r.TAs == 0 || r.Bits != 16 {
		t.Fatalf("rounding %+v: the float model should need rounding", r)
	}
	for i, v := range g.Model.SPV {
		if v != c.Model.SPV[i] {
			t.Fatalf("SPV value %d: %v read back, Canonicalize gives %v", i, v, c.Model.SPV[i])
		}
	}
	// Canonicalizing again changes nothing, and the bytes are the same.
	if r, err := c.Canonicalize(); err != nil || r.TAs != 0 {
		t.Fatalf("second Canonicalize: %+v %v", r, err)
	}
	d2, _ := Encode(c)
	if string(d2) != string(data) {
		t.Error("Encode of the canonical model differs from Encode of the raw one")
	}
}

// TestSPVBits: a model exact at its bank's width is stored at that width,
// an explicit SPVBits is kept, and a model stored narrower than its bank
// reads back with the bank it had.
func TestSPVBits(t *testing.T) {
	f := sample(t)
	f.SPVBits = 0
	f.Bank.Bits = 12
	if _, err := f.Canonicalize(); err != nil {
		t.Fatal(err)
	}
	if f.SPVBits != 16 {
		t.Fatalf("SPV bits %d, want 16 (the float model is not exact at 12)", f.SPVBits)
	}
	for _, w := range []int{12, 8, 4} {
		f.SPVBits = w
		if _, err := f.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		g, err := Decode(mustEncode(t, f), "m.ptm")
		if err != nil {
			t.Fatalf("W %d: %v", w, err)
		}
		if g.SPVBits != w {
			t.Fatalf("SPV bits %d read back, want %d", g.SPVBits, w)
		}
		for i, v := range g.Bank.SPV {
			if v != f.Bank.SPV[i] {
				t.Fatalf("W %d: bank SPV value %d: %d read back, %d written", w, i, v, f.Bank.SPV[i])
			}
		}
		// Auto width: exact at the bank's 12 bits once W <= 12.
		f.SPVBits = 0
		if got, _ := f.spvBits(); got != 12 {
			t.Fatalf("W %d: automatic width %d, want 12", w, got)
		}
	}
	f.SPVBits = 17
	if _, err := Encode(f); err == nil {
		t.Error("17-bit SPVs encoded")
	}
}

func mustEncode(t testing.TB, f *File) []byte {
	t.Helper()
	d, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
