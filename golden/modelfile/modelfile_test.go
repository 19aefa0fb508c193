package modelfile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// sample is a small trained float model, canonical (rounded to its stored
// width, as pipeline.Train returns models).
func sample(t testing.TB) *File {
	t.Helper()
	f := sampleRaw(t)
	if _, err := f.Canonicalize(); err != nil {
		t.Fatal(err)
	}
	return f
}

// sampleRaw is sample before Canonicalize: float SPVs as the trainer left
// them.
func sampleRaw(t testing.TB) *File {
	t.Helper()
	p := ptm.Params{Clauses: 4, T: 3, S: 3.9, N: 8, Epochs: 5, Seed: 2, Feedback: ptm.ConsistentFeedback}
	m, err := ptm.New(p, 3, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	tr := ptm.NewTrainer(m)
	X := [][]bool{{true, false, true, false}, {false, true, true, true}, {true, true, false, false}}
	for e := 0; e < 20; e++ {
		if err := tr.RunEpoch(X, []int{0, 1, 2}); err != nil {
			t.Fatal(err)
		}
	}
	th := &booleanize.Thermometer{Thresholds: [][]float64{{1, 2}, {0.5, 3}}}
	bank, err := fixed.Quantize(m, 12)
	if err != nil {
		t.Fatal(err)
	}
	return &File{Model: m, Booleanizer: th, Features: []string{"a", "b"}, Classes: []string{"x", "y", "z"},
		Split:   Split{Dataset: "toy", Rows: 3, Seed: 1, TestFraction: 0.2, Train: []int{0, 1}, Test: []int{2}},
		Mapping: ptm.Mapping{Kind: ptm.Softmax, Temperature: 1.5}, Bank: bank}
}

func TestRoundTrip(t *testing.T) {
	f := sample(t)
	path := filepath.Join(t.TempDir(), "m.ptm")
	hash, err := Write(path, f)
	if err != nil {
		t.Fatal(err)
	}
	g, hash2, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if hash != hash2 || len(hash) != 64 {
		t.Fatalf("hash %q vs %q", hash, hash2)
	}
	for i := range f.Model.SPV {
		if f.Model.SPV[i] != g.Model.SPV[i] {
			t.Fatalf("SPV[%d] %v != %v", i, f.Model.SPV[i], g.Model.SPV[i])
		}
	}
	if g.Model.Params != f.Model.Params || g.Mapping != f.Mapping || g.Classes[2] != "z" || g.Split.Test[0] != 2 || g.Bank.Bits != 12 || g.SPVBits != 16 {
		t.Fatalf("decoded %+v", g)
	}
	for i := range f.Model.IncludeAll() {
		if f.Model.IncludeAll()[i] != g.Model.IncludeAll()[i] {
			t.Fatalf("include %d differs", i)
		}
	}
	for i := range f.Bank.SPV {
		if f.Bank.SPV[i] != g.Bank.SPV[i] {
			t.Fatalf("bank SPV %d: %d, read back %d", i, f.Bank.SPV[i], g.Bank.SPV[i])
		}
	}
	for i := range f.Bank.Thresh {
		if f.Bank.Thresh[i] != g.Bank.Thresh[i] {
			t.Fatalf("threshold %d: %d, read back %d", i, f.Bank.Thresh[i], g.Bank.Thresh[i])
		}
	}
	// Same content, same bytes.
	a, _ := Encode(f)
	b, _ := Encode(g)
	if string(a) != string(b) {
		t.Error("re-encoding changed the bytes")
	}
}

func TestRejects(t *testing.T) {
	f := sample(t)
	data, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	resum := func(d []byte) []byte { // re-seal after a deliberate edit
		body := d[:len(d)-32]
		out, _ := Encode(f)
		_ = out
		s := sha256Sum(body)
		return append(append([]byte(nil), body...), s[:]...)
	}
	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrNotModel, "magic"},
		{"text", []byte("hello world, not a model"), ErrNotModel, "magic"},
		{"short", data[:12], ErrTruncated, "fixed header"},
		{"truncated-header", data[:20], ErrTruncated, "header"},
		{"truncated-payload", data[:len(data)-100], ErrTruncated, "header describes"},
		{"version", func() []byte { d := append([]byte(nil), data...); d[8] = 9; return d }(), ErrVersion, "version 9"},
		{"bitflip", func() []byte { d := append([]byte(nil), data...); d[16+hl+40] ^= 1; return d }(), ErrChecksum, "checksum"},
		{"extra-payload-byte", func() []byte {
			d := append([]byte(nil), data[:len(data)-32]...)
			return resum(append(append(d, 0), make([]byte, 32)...)) // one byte more, re-sealed
		}(), ErrInvalid, "payload: file is"},
		{"edited-header", func() []byte {
			d := append([]byte(nil), data...)
			s := string(d)
			if !strings.Contains(s, `"bool_features":4`) {
				t.Fatal("no bool_features in the header")
			}
			s = strings.Replace(s, `"bool_features":4`, `"bool_features":5`, 1)
			return resum([]byte(s))
		}(), ErrInvalid, ""},
	}
	for _, c := range cases {
		_, err := Decode(c.data, "m.ptm")
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
		if !strings.Contains(err.Error(), "m.ptm") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: message %q lacks file name or %q", c.name, err, c.msg)
		}
	}
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
