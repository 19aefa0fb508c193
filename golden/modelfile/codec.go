package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// errorf returns an *Error naming the file, offset and field.
func errorf(name string, off int64, field string, sentinel error, format string, a ...any) error {
	return &Error{File: name, Offset: off, Field: field, Msg: fmt.Sprintf(format, a...), Err: sentinel}
}

// Encode serializes f in the current format (Version, doc.go), validating
// it first. The SPVs are stored at f.SPVBits bits (0: the default, see
// File.SPVBits); a model that is not exact at that width is written
// rounded to it (largest-remainder, as fixed.QuantizeSPV): call
// Canonicalize first to keep the in-memory model equal to the file's.
func Encode(f *File) ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	w, err := f.spvBits()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	payload, err := encodePayload(f.Model, w)
	if err != nil {
		return nil, err
	}
	split, err := json.Marshal(runsOfSplit(&f.Split))
	if err != nil {
		return nil, fmt.Errorf("modelfile: split: %w", err)
	}
	m := f.Model
	h := header{
		Params: m.Params, Binary: m.Binary, Classes: f.Classes, Features: f.Features,
		BoolInputs: m.NumFeatures, Booleanizer: f.Booleanizer, Split: split, Mapping: f.Mapping,
		Bits: f.Bank.Bits, TAs: m.NumTAs(), SPVValues: len(m.SPV),
		DataFingerprint: f.DataFingerprint, Encoding: f.Encoding, Tuning: f.Tuning, FixedTraining: f.FixedTraining,
		SPVBits: w, PayloadBytes: int64(len(payload)),
	}
	return frame(h, payload)
}

// frame lays out a format-2 file of either kind: magic, version, the
// header's JSON length and JSON, the payload and the SHA-256 of all
// before it, within MaxHeader and MaxFileSize.
func frame(h any, payload []byte) ([]byte, error) {
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("modelfile: header: %w", err)
	}
	if len(hj) > MaxHeader {
		return nil, fmt.Errorf("%w: header of %d bytes exceeds %d", ErrInvalid, len(hj), MaxHeader)
	}
	size := int64(16) + int64(len(hj)) + int64(len(payload)) + 32
	if size > MaxFileSize {
		return nil, fmt.Errorf("%w: the file would have %d bytes, the limit is %d", ErrInvalid, size, MaxFileSize)
	}
	le := binary.LittleEndian
	out := make([]byte, 0, size)
	out = append(out, Magic...)
	out = le.AppendUint32(out, Version)
	out = le.AppendUint32(out, uint32(len(hj)))
	out = append(out, hj...)
	out = append(out, payload...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...), nil
}

// Decode parses and verifies an encoded model of either format version;
// name labels errors.
func Decode(data []byte, name string) (*File, error) {
	return decode(data, name, nil)
}

// decode is Decode; with quote not nil, names with control characters are
// escaped and listed in *quote instead of refused (quoteNames).
func decode(data []byte, name string, quote *[]string) (*File, error) {
	fail := func(off int64, field string, sentinel error, format string, a ...any) error {
		return errorf(name, off, field, sentinel, format, a...)
	}
	if len(data) < 8 || string(data[:8]) != Magic {
		return nil, fail(0, "magic", ErrNotModel, "not a PTM model file (missing %q magic)", Magic)
	}
	if len(data) < 16 {
		return nil, fail(int64(len(data)), "header", ErrTruncated, "file ends after %d bytes, inside the fixed header", len(data))
	}
	le := binary.LittleEndian
	version := le.Uint32(data[8:])
	if version != Version && version != VersionV1 {
		return nil, fail(8, "version", ErrVersion, "format version %d, this program reads versions %d and %d", version, VersionV1, Version)
	}
	hl := int64(le.Uint32(data[12:]))
	if hl > MaxHeader {
		return nil, fail(12, "header length", ErrInvalid, "header length %d exceeds %d", hl, MaxHeader)
	}
	if int64(len(data)) < 16+hl+32 {
		return nil, fail(int64(len(data)), "header", ErrTruncated, "file is %d bytes, the %d-byte header alone needs %d", len(data), hl, 16+hl+32)
	}
	body := data[:len(data)-32]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(data)-32:]) {
		// Distinguish a short file from a corrupted one when the header says
		// how long the payload is.
		var h header
		if json.Unmarshal(data[16:16+hl], &h) == nil {
			want := int64(-1)
			switch {
			case version == VersionV1 && h.SPVValues > 0 && h.SPVValues <= MaxSPVValues && h.TAs > 0 && h.TAs <= MaxSPVValues:
				want = 16 + hl + 12*int64(h.SPVValues) + 4*int64(h.TAs) + 32
			case version == Version && h.PayloadBytes > 0 && h.PayloadBytes <= MaxFileSize:
				want = 16 + hl + h.PayloadBytes + 32
			}
			if int64(len(data)) < want {
				return nil, fail(int64(len(data)), "payload", ErrTruncated, "file is %d bytes, its header describes %d", len(data), want)
			}
		}
		return nil, fail(int64(len(data))-32, "checksum", ErrChecksum, "SHA-256 does not match the content: the file is corrupted or was edited")
	}
	if version == Version && kindOf(data[16:16+hl]) == KindConv {
		return nil, fail(16, "kind", ErrConv, "a convolutional model: this command reads tabular models (ptm train, eval, inspect, gen, cosim, stream and board --soft read convolutional ones; docs/howto-image-data.md)")
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(data[16 : 16+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fail(16, "header", ErrInvalid, "%v", err)
	}
	if off, ok := trailingJSON(data, hl, dec); ok {
		return nil, fail(off, "header", ErrInvalid, "data after the header's JSON object, %d bytes into the header", off-16)
	}
	quoteNames(quote, "classes", h.Classes)
	quoteNames(quote, "features", h.Features)
	var split Split
	var err error
	if version == VersionV1 {
		split, err = parseSplitV1(h.Split)
	} else {
		split, err = parseSplitRuns(h.Split)
	}
	if err != nil {
		return nil, fail(16, "split", ErrInvalid, "%v", err)
	}
	if field, err := checkHeader(&h, &split); err != nil {
		return nil, fail(16, field, ErrInvalid, "%v", err)
	}
	if h.TAs < 1 || h.SPVValues < 1 || h.SPVValues%h.TAs != 0 {
		return nil, fail(16, "tas/spv_values", ErrInvalid, "%d TAs with %d SPV values", h.TAs, h.SPVValues)
	}
	if version == VersionV1 {
		return decodeV1(data, name, hl, &h, split)
	}
	return decodeV2(data, name, hl, &h, split)
}
