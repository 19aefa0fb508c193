package modelfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the model-file decoder: it must
// never panic or allocate beyond the limits, and whatever it accepts must
// validate and re-encode to a file that decodes to the same model (a
// format-2 payload to the same bytes). The seeds (valid files of both
// formats, truncations, bit flips, payload edits and header edits
// re-sealed with a valid checksum)
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
	if ft, err := Encode(withFixedTraining(f)); err == nil { // the optional fixed_training record
		f.Add(ft)
		f.Add(reseal(f, ft, func(h map[string]any) { delete(h["fixed_training"].(map[string]any), "lanes") }))
	}
	f.Add(good[:16])
	f.Add(good[:len(good)-1])
	flip := bytes.Clone(good)
	flip[20] ^= 4
	f.Add(flip)
	if old, err := os.ReadFile(v1Fixture); err == nil { // format 1
		f.Add(old)
		f.Add(old[:len(old)/2])
	}
	// Format-2 payloads: the file's own with a byte changed, one TA
	// widened, and every SPV wholly in state 0.
	hl := int(binary.LittleEndian.Uint32(good[12:]))
	pl := bytes.Clone(good[16+hl : len(good)-32])
	pl[len(pl)/2] ^= 0x21
	f.Add(withRawPayload(f, good, pl))
	f.Add(withPayload(f, good, append([]byte{0, 2, 4, 0x80, 1}, bytes.Repeat([]byte{0, 0}, 95)...)))
	f.Add(withPayload(f, good, bytes.Repeat([]byte{0, 0}, 96)))
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
			g2, err := Decode(b, "re.ptm")
			if err != nil || len(g2.Model.SPV) != len(g.Model.SPV) {
				t.Fatalf("re-encoded file: %v", err)
			}
			// A format-2 file is canonical: it reads back as it was, and
			// encoding is then a fixed point.
			if binary.LittleEndian.Uint32(d[8:]) == Version {
				for i, v := range g2.Model.SPV {
					if v != g.Model.SPV[i] {
						t.Fatalf("SPV value %d: %v, re-encoded %v", i, g.Model.SPV[i], v)
					}
				}
				if b2, err := Encode(g2); err != nil || !bytes.Equal(b, b2) {
					t.Fatalf("encoding the re-read file gave other bytes: %v", err)
				}
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
	if binary.LittleEndian.Uint32(d[8:]) != VersionV1 {
		binary.LittleEndian.PutUint32(d[8:], Version)
	}
	if hl := binary.LittleEndian.Uint32(d[12:]); int64(hl) > int64(len(d)-48) {
		binary.LittleEndian.PutUint32(d[12:], uint32(len(d)-48))
	}
	sum := sha256Sum(d[:len(d)-32])
	copy(d[len(d)-32:], sum[:])
	return d
}
