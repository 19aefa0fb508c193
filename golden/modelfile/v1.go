package modelfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// decodeV1 decodes the payload of a format-1 file (doc.go): float64 SPVs,
// quantized SPVs and thresholds, all stored, the bank checked against the
// float SPVs. h has passed checkHeader; data's checksum is verified.
func decodeV1(data []byte, name string, hl int64, h *header, split Split) (*File, error) {
	fail := func(off int64, field string, sentinel error, format string, a ...any) error {
		return errorf(name, off, field, sentinel, format, a...)
	}
	if h.SPVBits != 0 || h.PayloadBytes != 0 {
		return nil, fail(16, "spv_bits/payload_bytes", ErrInvalid, "format %d has no spv_bits or payload_bytes (found %d and %d)", VersionV1, h.SPVBits, h.PayloadBytes)
	}
	want := 16 + hl + 12*int64(h.SPVValues) + 4*int64(h.TAs) + 32
	if int64(len(data)) != want {
		return nil, fail(int64(len(data)), "payload", ErrInvalid, "file is %d bytes, its header describes %d", len(data), want)
	}
	m, err := ptm.New(h.Params, len(h.Classes), h.BoolInputs, h.Binary)
	if err != nil {
		return nil, fail(16, "params", ErrInvalid, "%v", err)
	}
	if m.NumTAs() != h.TAs || len(m.SPV) != h.SPVValues {
		return nil, fail(16, "tas", ErrInvalid, "header shape gives %d TAs and %d SPV values, header says %d and %d", m.NumTAs(), len(m.SPV), h.TAs, h.SPVValues)
	}
	le := binary.LittleEndian
	off := 16 + hl
	for i := range m.SPV {
		m.SPV[i] = math.Float64frombits(le.Uint64(data[off:]))
		off += 8
	}
	m.RefreshInclude()
	bank := &fixed.Bank{Shape: fixed.ShapeOf(m), Bits: h.Bits, N: m.N, SPV: make([]uint32, h.SPVValues), Thresh: make([]uint32, h.TAs)}
	for i := range bank.SPV {
		bank.SPV[i] = le.Uint32(data[off:])
		off += 4
	}
	for i := range bank.Thresh {
		bank.Thresh[i] = le.Uint32(data[off:])
		off += 4
	}
	f := &File{Model: m, Booleanizer: h.Booleanizer, Features: h.Features, Classes: h.Classes, Split: split, Mapping: h.Mapping, Bank: bank,
		DataFingerprint: h.DataFingerprint, Encoding: h.Encoding, Tuning: h.Tuning, FixedTraining: h.FixedTraining, Format: VersionV1}
	if err := f.Validate(); err != nil {
		return nil, &Error{File: name, Offset: -1, Msg: err.Error(), Err: ErrInvalid}
	}
	return f, nil
}

// parseSplitV1 decodes a format-1 split: row index lists.
func parseSplitV1(raw json.RawMessage) (Split, error) {
	var s Split
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Split{}, err
	}
	return s, nil
}
