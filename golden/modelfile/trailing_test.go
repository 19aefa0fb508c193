package modelfile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// appendToHeader returns data with extra after the header's JSON value
// and a valid checksum.
func appendToHeader(data []byte, extra string) []byte {
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	var out []byte
	out = append(out, data[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(hl+len(extra)))
	out = append(out, data[16:16+hl]...)
	out = append(out, extra...)
	out = append(out, data[16+hl:len(data)-32]...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

// TestHeaderTrailingData: anything but white space after the header's
// JSON value is refused, in a tabular and a convolutional file, at its
// byte offset; a trailing '}' or ']' too (json.Decoder.More does not see
// them, so they used to be accepted).
func TestHeaderTrailingData(t *testing.T) {
	tab, err := Encode(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	cv, err := os.ReadFile(filepath.Join("testdata", "conv-bars-spv8-deflate.ptm"))
	if err != nil {
		t.Fatal(err)
	}
	decoders := map[string]struct {
		data   []byte
		decode func([]byte) error
	}{
		"tabular": {tab, func(b []byte) error { _, err := Decode(b, "m.ptm"); return err }},
		"conv":    {cv, func(b []byte) error { _, err := DecodeConv(b, "m.ptm"); return err }},
	}
	for kind, d := range decoders {
		hl := int(binary.LittleEndian.Uint32(d.data[12:]))
		if err := d.decode(appendToHeader(d.data, " \n\t")); err != nil {
			t.Errorf("%s: trailing white space refused: %v", kind, err)
		}
		for _, extra := range []string{"}", "]", " {}", "\x00", "\n,1"} {
			err := d.decode(appendToHeader(d.data, extra))
			skip := len(extra) - len(strings.TrimLeft(extra, " \n\t"))
			var me *Error
			want := fmt.Sprintf("%d bytes into the header", hl+skip)
			if err == nil || !errors.As(err, &me) || me.Offset != int64(16+hl+skip) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s + %q: %v, want offset %d and %q", kind, extra, err, 16+hl+skip, want)
			}
		}
	}
}
