package modelfile

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reseal decodes the JSON header of an encoded model, lets edit change it,
// and returns the file with the new header and a valid checksum: the
// "valid SHA-256 but edited fields" case.
func reseal(t testing.TB, data []byte, edit func(h map[string]any)) []byte {
	t.Helper()
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	var h map[string]any
	dec := json.NewDecoder(bytes.NewReader(data[16 : 16+hl]))
	dec.UseNumber()
	if err := dec.Decode(&h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	hj, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	out = append(out, data[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	out = append(out, data[16+hl:len(data)-32]...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

func TestHostileHeaders(t *testing.T) {
	data, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(reseal(t, data, func(map[string]any) {}), "m.ptm"); err != nil {
		t.Fatalf("unedited resealed file refused: %v", err)
	}
	params := func(h map[string]any) map[string]any { return h["params"].(map[string]any) }
	split := func(h map[string]any) map[string]any { return h["split"].(map[string]any) }
	cases := []struct {
		name  string
		edit  func(h map[string]any)
		field string
	}{
		{"split-test-out-of-range", func(h map[string]any) { split(h)["test"] = [][2]int{{4000, 4000}} }, "split.test[0]: run 4000..4000 is not within the 3 rows"},
		{"split-train-negative", func(h map[string]any) { split(h)["train"] = [][2]int{{-1, 0}} }, "split.train[0]: run -1..0"},
		{"split-reversed", func(h map[string]any) { split(h)["train"] = [][2]int{{1, 0}} }, "split.train[0]: run 1..0"},
		{"split-duplicate", func(h map[string]any) { split(h)["train"] = [][2]int{{0, 0}, {0, 1}} }, "runs must be ascending, apart and maximal"},
		{"split-not-maximal", func(h map[string]any) { split(h)["train"] = [][2]int{{0, 0}, {1, 1}} }, "split.train[1]: run 1..1 after run 0..0"},
		{"split-overlap", func(h map[string]any) { split(h)["test"] = [][2]int{{1, 1}} }, "also a training row"},
		{"split-list", func(h map[string]any) { split(h)["test"] = []int{2} }, "split: json: cannot unmarshal"},
		{"split-huge", func(h map[string]any) { split(h)["rows"] = MaxRows; split(h)["test"] = [][2]int{{2, MaxRows - 1}} }, "more than 8388608 row indices"},
		{"split-unknown-field", func(h map[string]any) { split(h)["folds"] = 3 }, `unknown field "folds"`},
		{"spv-bits", func(h map[string]any) { h["spv_bits"] = 17 }, "spv_bits: 17-bit stored SPVs, want 4..16"},
		{"spv-bits-missing", func(h map[string]any) { delete(h, "spv_bits") }, "spv_bits"},
		{"payload-bytes-huge", func(h map[string]any) { h["payload_bytes"] = 1e9 }, "payload_bytes: 1000000000 bytes for 96 TAs of 16 states"},
		{"payload-bytes-zero", func(h map[string]any) { h["payload_bytes"] = 0 }, "payload_bytes: 0 bytes"},
		{"payload-bytes-negative", func(h map[string]any) { h["payload_bytes"] = -5 }, "payload_bytes: -5 bytes"},
		{"unknown-field", func(h map[string]any) { h["comment"] = 1 }, `unknown field "comment"`},
		{"split-rows-huge", func(h map[string]any) { split(h)["rows"] = 1e15 }, "split.rows"},
		{"bool-features-1e12", func(h map[string]any) { h["bool_features"] = 1e12 }, "bool_features: 1000000000000 Boolean features, want 1.."},
		{"clauses-1e9", func(h map[string]any) { params(h)["clauses"] = 1e9 }, "params.clauses: 1000000000 clauses, limit"},
		{"clauses-consistent", func(h map[string]any) { params(h)["clauses"] = 8 }, "tas: 96, the shape gives 192"},
		{"states-huge", func(h map[string]any) { params(h)["states"] = 30000; params(h)["N"] = 30000 }, ""},
		{"spv-values", func(h map[string]any) { h["spv_values"] = 1e18 }, "spv_values"},
		{"classes-duplicate", func(h map[string]any) { h["classes"] = []string{"x", "y", "x"} }, `classes[2]: duplicate name "x"`},
		{"feature-empty", func(h map[string]any) { h["features"] = []string{"a", " "} }, "features[1]: empty name"},
		{"classes-one", func(h map[string]any) { h["classes"] = []string{"x"} }, "classes"},
		{"classes-many", func(h map[string]any) {
			c := make([]string, MaxClasses+1)
			for i := range c {
				c[i] = strings.Repeat("c", 1+i%7) + string(rune('A'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
			}
			h["classes"] = c
		}, "limit 1024"},
		{"bits", func(h map[string]any) { h["quant_bits"] = 0 }, "quant_bits"},
		{"booleanizer-null", func(h map[string]any) { h["booleanizer"] = nil }, "booleanizer: missing"},
		{"mapping", func(h map[string]any) { h["mapping"] = map[string]any{"kind": "vote", "smoothing": 5} }, "mapping"},
		{"fingerprint", func(h map[string]any) { h["data_fingerprint"] = "md5:abc" }, "data_fingerprint"},
	}
	for _, c := range cases {
		d := reseal(t, data, c.edit)
		_, err := Decode(d, "m.ptm")
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "m.ptm: byte 16: ") || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %q, want ErrInvalid at byte 16 naming %q", c.name, err, c.field)
		}
	}
}

func TestFingerprintRoundTrip(t *testing.T) {
	f := sample(t)
	f.DataFingerprint = FingerprintPrefix + strings.Repeat("ab", 32)
	data, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(data, "m.ptm")
	if err != nil || g.DataFingerprint != f.DataFingerprint {
		t.Fatalf("fingerprint %q, %v", g.DataFingerprint, err)
	}
	f.DataFingerprint = "sha256:xyz"
	if _, err := Encode(f); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("bad fingerprint encoded: %v", err)
	}
}

func TestWriteIgnoresPlantedTmp(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.ptm")
	if err := os.Symlink(victim, out+".tmp"); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(out, sample(t)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the symlinked victim was overwritten: %q", b)
	}
	if _, _, err := Read(out); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("directory holds %v, want victim, m.ptm and the planted link only", ents)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode of the written file: %v %v", fi.Mode(), err)
	}
}

func TestWriteToDirectory(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Write(target, sample(t))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("Write to a directory: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	// A failing rename (the target directory is not empty) cleans up too.
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(target+string(filepath.Separator), []byte("x")); err == nil {
		t.Error("wrote over a directory")
	}
	ents, _ = os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

func TestReadDevices(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skip(err)
		}
		_, _, err := Read(dev)
		if !errors.Is(err, ErrNotModel) || !strings.Contains(err.Error(), dev+": byte 0: magic") {
			t.Errorf("%s: %v", dev, err)
		}
		fh, _ := os.Open(dev)
		_, _, err = ReadFrom(fh, dev)
		fh.Close()
		if !errors.Is(err, ErrNotModel) {
			t.Errorf("ReadFrom %s: %v", dev, err)
		}
	}
	if _, _, err := Read(t.TempDir()); !errors.Is(err, ErrNotModel) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestReadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.ptm")
	data, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:16], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, MaxFileSize+1); err != nil { // sparse
		t.Fatal(err)
	}
	_, _, err = Read(path)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.ptm") {
		t.Errorf("oversized file: %v", err)
	}
}

// withPayload returns the encoded model data with its SPV records replaced
// by records (deflated; payload_bytes edited to match) and a valid
// checksum.
func withPayload(t testing.TB, data, records []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := flate.NewWriter(&b, flate.BestCompression)
	zw.Write(records)
	zw.Close()
	return withRawPayload(t, data, b.Bytes())
}

// withRawPayload is withPayload with the payload's bytes as given.
func withRawPayload(t testing.TB, data, payload []byte) []byte {
	t.Helper()
	d := reseal(t, data, func(h map[string]any) { h["payload_bytes"] = len(payload) })
	hl := int(binary.LittleEndian.Uint32(d[12:]))
	out := append(append([]byte(nil), d[:16+hl]...), payload...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

// zigzag is the signed varint coding of the payload's second differences.
func zigzag(v int64) []byte { return binary.AppendVarint(nil, v) }

func TestHostilePayload(t *testing.T) {
	f := sample(t)
	data, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	tas := f.Model.NumTAs() // 96 TAs of 16 states
	// A valid payload: every SPV wholly in state 0 (lo 0, width 0).
	rest := bytes.Repeat([]byte{0, 0}, tas-1)
	g, err := Decode(withPayload(t, data, append([]byte{0, 0}, rest...)), "m.ptm")
	if err != nil {
		t.Fatalf("all-excluded payload refused: %v", err)
	}
	for ta := 0; ta < tas; ta++ {
		if g.Bank.Thresh[ta] != 0 || g.Model.SPV[ta*16] != 1 || g.Model.IncludeAll()[ta] != 0 {
			t.Fatalf("TA %d: threshold %d, p(state 0) %v", ta, g.Bank.Thresh[ta], g.Model.SPV[ta*16])
		}
	}
	// A valid two-state support: 40000 in state 3, the rest (25536) in 4.
	two := append([]byte{3, 1}, zigzag(40000)...)
	if g, err := Decode(withPayload(t, data, append(two, rest...)), "m.ptm"); err != nil {
		t.Fatalf("two-state support refused: %v", err)
	} else if sp := g.Model.SPV[:16]; sp[3] != 40000.0/65536 || sp[4] != 25536.0/65536 || sp[5] != 0 {
		t.Fatalf("two-state support decoded as %v", sp)
	}
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	cases := []struct {
		name  string
		first []byte // the first TA's record
		tail  []byte // the other TAs' records
		msg   string
	}{
		{"zero-first", []byte{0, 1, 0}, rest, "TA 0 (TM 0, clause 0, literal 0): record at byte 0 of the inflated records: state 0: the support starts with zero mass"},
		{"lo-beyond", []byte{16, 0}, rest, "support 16..16+0 outside the 16 states"},
		{"hi-beyond", []byte{5, 11}, rest, "support 5..5+11 outside the 16 states"},
		{"overlong", []byte{0x80, 0, 0}, rest, "support start: varint not minimally encoded"},
		{"long", []byte{0x80, 0x80, 0x80, 1, 0}, rest, "support start: varint of more than 3 bytes"},
		{"mass-full", append([]byte{0, 1}, zigzag(65536)...), rest, "state 0: mass 65536 outside 0..65535"},
		{"mass-negative", append(append([]byte{0, 2}, zigzag(100)...), zigzag(-300)...), rest, "state 1: mass -100 outside"},
		{"mass-sum", append(append([]byte{0, 2}, zigzag(40000)...), zigzag(-40000)...), rest, "state 1: masses reach 80000 before the support's last state 2"},
		{"d2-range", append([]byte{0, 1}, zigzag(1<<17)...), rest, "second difference 131072 outside"},
		{"second-record", []byte{0, 0, 3, 0x80, 0}, rest[2:], "TA 1 (TM 0, clause 0, literal 1): record at byte 2 of the inflated records: support width: varint not minimally"},
		{"trailing", []byte{0, 0}, append(append([]byte(nil), rest...), 0), "payload: after the last TA's record (byte 192 of the inflated records): data"},
		{"truncated", []byte{0, 1, 2}, append(append([]byte(nil), rest[:len(rest)-2]...), 0), "TA 95 (TM 2, clause 3, literal 7): record at byte 191 of the inflated records: support width: the records end inside a varint"},
	}
	for _, c := range cases {
		payload := append(append([]byte(nil), c.first...), c.tail...)
		_, err := Decode(withPayload(t, data, payload), "m.ptm")
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		d := withPayload(t, data, payload)
		hl = int(binary.LittleEndian.Uint32(d[12:]))
		at := fmt.Sprintf("m.ptm: byte %d: ", 16+hl)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), at) {
			t.Errorf("%s: error %q, want ErrInvalid %q naming %q", c.name, err, at, c.msg)
		}
	}
	// The DEFLATE stream itself: garbage, cut short, or followed by bytes.
	var z bytes.Buffer
	zw, _ := flate.NewWriter(&z, flate.BestCompression)
	zw.Write(bytes.Repeat([]byte{0, 0}, tas))
	zw.Close()
	good := z.Bytes()
	if _, err := Decode(withRawPayload(t, data, good), "m.ptm"); err != nil {
		t.Fatalf("valid stream refused: %v", err)
	}
	var stored bytes.Buffer // any valid DEFLATE stream: stored blocks too
	zs, _ := flate.NewWriter(&stored, flate.NoCompression)
	zs.Write(bytes.Repeat([]byte{0, 0}, tas))
	zs.Close()
	if _, err := Decode(withRawPayload(t, data, stored.Bytes()), "m.ptm"); err != nil {
		t.Fatalf("stored stream refused: %v", err)
	}
	for _, c := range []struct {
		name, msg string
		payload   []byte
	}{
		{"garbage", "TA 0 (TM 0, clause 0, literal 0): record at byte 0 of the inflated records: support start: DEFLATE stream: flate: corrupt input", bytes.Repeat([]byte{0xff}, 40)},
		{"cut", "unexpected EOF", good[:len(good)-1]},
		{"after", "payload: 2 bytes after the end of the DEFLATE stream", append(append([]byte(nil), good...), 1, 2)},
	} {
		_, err := Decode(withRawPayload(t, data, c.payload), "m.ptm")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want ErrInvalid naming %q", c.name, err, c.msg)
		}
	}
}

// TestReadModelSizes: a file that grew or shrank between its Stat and its
// read is read as it is now (Decode then judges it).
func TestReadModelSizes(t *testing.T) {
	data, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{-1, int64(len(data)), int64(len(data)) - 10, 17, int64(len(data)) + 10} {
		got, err := readModel(bytes.NewReader(data), "m.ptm", size)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("size hint %d: %d bytes read, %v", size, len(got), err)
		}
	}
	if _, err := Decode(data[:len(data)-5], "m.ptm"); !errors.Is(err, ErrTruncated) {
		t.Errorf("a shrunk file: %v", err)
	}
}
