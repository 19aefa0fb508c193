package modelfile

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the model-file decoder: it must
// never panic or allocate beyond the limits, and whatever it accepts must
// validate and re-encode to the same bytes. The seeds (a valid file,
// truncations, bit flips and header edits re-sealed with a valid checksum)
// run in plain `go test`; fuzz longer by hand or with PTM_LONG_TESTS=1
// scripts/fuzz.sh:
//
//	go test ./golden/modelfile -run '^$' -fuzz '^FuzzDecode$' -fuzztime 10m
func FuzzDecode(f *testing.F) {
	good, err := Encode(sample(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:16])
	f.Add(good[:len(good)-1])
	flip := bytes.Clone(good)
	flip[20] ^= 4
	f.Add(flip)
	for _, edit := range []func(h map[string]any){
		func(h map[string]any) { h["bool_features"] = 1e12 },
		func(h map[string]any) { h["params"].(map[string]any)["clauses"] = 1e9 },
		func(h map[string]any) { h["split"].(map[string]any)["test"] = []int{99} },
		func(h map[string]any) { h["classes"] = []string{"a", "a", "b"} },
	} {
		f.Add(reseal(f, good, edit))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fuzzer rarely finds a valid checksum by itself: also try
		// the input re-sealed, so that the header checks are exercised.
		for _, d := range [][]byte{data, sealed(data)} {
			g, err := Decode(d, "fuzz.ptm")
			if err != nil {
				continue
			}
			if err := g.Validate(); err != nil {
				t.Fatalf("decoded file does not validate: %v", err)
			}
			b, err := Encode(g)
			if err != nil {
				t.Fatalf("decoded file does not encode: %v", err)
			}
			if g2, err := Decode(b, "re.ptm"); err != nil || len(g2.Model.SPV) != len(g.Model.SPV) {
				t.Fatalf("re-encoded file: %v", err)
			}
		}
	})
}

// sealed returns data with its last 32 bytes replaced by the SHA-256 of
// the rest and the header length clamped to the data (nil if too short).
func sealed(data []byte) []byte {
	if len(data) < 16+32 {
		return nil
	}
	d := bytes.Clone(data)
	copy(d, Magic)
	binary.LittleEndian.PutUint32(d[8:], Version)
	if hl := binary.LittleEndian.Uint32(d[12:]); int64(hl) > int64(len(d)-48) {
		binary.LittleEndian.PutUint32(d[12:], uint32(len(d)-48))
	}
	sum := sha256Sum(d[:len(d)-32])
	copy(d[len(d)-32:], sum[:])
	return d
}
