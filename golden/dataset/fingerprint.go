package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Fingerprint identifies the content of d: "sha256:" and the hex SHA-256
// of its feature names and, row by row, the bits of every feature value
// and the row's class name. Name, the order of Classes and where the data
// came from do not enter it, so the same rows read from a renamed file
// give the same fingerprint; any changed, added, removed or reordered row
// gives another. Model files record it (modelfile.File.DataFingerprint)
// so that evaluating the held-out rows of different data is refused.
func (d *Dataset) Fingerprint() string {
	h := sha256.New()
	var b []byte
	str := func(s string) {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(s)))
		h.Write(b)
		h.Write([]byte(s))
	}
	str("ptm-dataset-v1")
	b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(d.Features)))
	h.Write(b)
	for _, f := range d.Features {
		str(f)
	}
	b = binary.LittleEndian.AppendUint64(b[:0], uint64(len(d.Y)))
	h.Write(b)
	for i, row := range d.X {
		b = b[:0]
		for _, v := range row {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		h.Write(b)
		str(d.Classes[d.Y[i]])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
