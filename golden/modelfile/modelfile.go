package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Magic opens every model file.
const Magic = "PTMMODEL"

// Version is the format version this package writes and reads.
const Version = 1

// MaxHeader bounds the JSON header length.
const MaxHeader = 16 << 20

// Split records which rows of which data set trained the model, so that
// evaluation can use exactly the held-out rows.
type Split struct {
	Dataset      string  `json:"dataset"`       // "iris", a CSV path, ...
	Rows         int     `json:"rows"`          // rows in the full data set
	Seed         uint64  `json:"seed"`          // seed of the stratified split
	TestFraction float64 `json:"test_fraction"` // fraction held out for test
	Train        []int   `json:"train"`         // training row indices
	Test         []int   `json:"test"`          // held-out row indices
}

// File is the content of a model file.
type File struct {
	Model       *ptm.Model
	Booleanizer *booleanize.Thermometer
	Features    []string // raw feature names, booleanizer input order
	Classes     []string // class names, index = class
	Split       Split
	Mapping     ptm.Mapping // default per-sample probability mapping
	// Encoding, if set, is the sampled input encoding (M threshold sets
	// with Booleanizer's bit layout; docs/uncertainty.md). When nil the
	// model encodes with Booleanizer alone (one set).
	Encoding *booleanize.Sets
	Bank     *fixed.Bank // quantized banks
	// DataFingerprint identifies the data set the model was trained on
	// (dataset.Dataset.Fingerprint: "sha256:" and 64 hex digits), so that
	// evaluating "the test rows" of another data set is refused; empty in
	// files written before it existed.
	DataFingerprint string
	// Tuning, if set, records how the hyper-parameters were chosen
	// (`ptm train` without hyper-parameter flags); nil otherwise.
	Tuning *Tuning
}

// header is the JSON part of the file.
type header struct {
	Params      ptm.Params              `json:"params"`
	Binary      bool                    `json:"binary"`
	Classes     []string                `json:"classes"`
	Features    []string                `json:"features"`
	BoolInputs  int                     `json:"bool_features"`
	Booleanizer *booleanize.Thermometer `json:"booleanizer"`
	Split       Split                   `json:"split"`
	Mapping     ptm.Mapping             `json:"mapping"`
	Encoding    *booleanize.Sets        `json:"encoding,omitempty"`
	Bits        int                     `json:"quant_bits"`
	TAs         int                     `json:"tas"`
	SPVValues   int                     `json:"spv_values"`
	// DataFingerprint is File.DataFingerprint.
	DataFingerprint string `json:"data_fingerprint,omitempty"`
	// Tuning is File.Tuning (optional).
	Tuning *Tuning `json:"tuning,omitempty"`
}

// Error is a model-file error naming the file and what is wrong.
type Error struct {
	File   string
	Offset int64 // byte offset, -1 when not applicable
	Field  string
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	s := e.File
	if s == "" {
		s = "model"
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(": byte %d", e.Offset)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Sentinel errors, matched with errors.Is.
var (
	ErrNotModel  = errors.New("not a PTM model file")
	ErrVersion   = errors.New("unsupported model file version")
	ErrTruncated = errors.New("model file truncated")
	ErrChecksum  = errors.New("model file checksum mismatch")
	ErrInvalid   = errors.New("model file inconsistent")
)

// Validate checks that the parts of f agree with each other.
func (f *File) Validate() error {
	m := f.Model
	if m == nil || f.Booleanizer == nil || f.Bank == nil {
		return fmt.Errorf("%w: model, booleanizer and bank are required", ErrInvalid)
	}
	if err := m.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := f.Booleanizer.Validate(); err != nil {
		return fmt.Errorf("%w: booleanizer: %w", ErrInvalid, err)
	}
	if f.Booleanizer.NumBits() != m.NumFeatures {
		return fmt.Errorf("%w: booleanizer makes %d bits, model has %d Boolean features", ErrInvalid, f.Booleanizer.NumBits(), m.NumFeatures)
	}
	if len(f.Features) != f.Booleanizer.NumFeatures() {
		return fmt.Errorf("%w: %d feature names, booleanizer has %d features", ErrInvalid, len(f.Features), f.Booleanizer.NumFeatures())
	}
	if len(f.Classes) != m.NumClasses {
		return fmt.Errorf("%w: %d class names, model has %d classes", ErrInvalid, len(f.Classes), m.NumClasses)
	}
	if err := checkEncoding(f.Encoding, f.Booleanizer); err != nil {
		return fmt.Errorf("%w: encoding: %w", ErrInvalid, err)
	}
	if err := f.Mapping.Validate(); err != nil {
		return fmt.Errorf("%w: mapping: %w", ErrInvalid, err)
	}
	sets := 1
	if f.Encoding != nil {
		sets = f.Encoding.M()
	}
	if err := checkTuning(f.Tuning, m.Params, sets); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, err := checkMeta(f.Classes, f.Features, &f.Split, f.DataFingerprint); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	b := f.Bank
	if err := b.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if b.Shape != fixed.ShapeOf(m) || b.N != m.N {
		return fmt.Errorf("%w: bank shape %+v does not match the model %+v", ErrInvalid, b.Shape, fixed.ShapeOf(m))
	}
	want, err := fixed.Quantize(m, b.Bits)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i := range want.SPV {
		if want.SPV[i] != b.SPV[i] {
			return fmt.Errorf("%w: quantized SPV value %d is %d, quantizing the float SPVs gives %d", ErrInvalid, i, b.SPV[i], want.SPV[i])
		}
	}
	for i := range want.Thresh {
		if want.Thresh[i] != b.Thresh[i] {
			return fmt.Errorf("%w: threshold of TA %d is %d, quantizing the float SPVs gives %d", ErrInvalid, i, b.Thresh[i], want.Thresh[i])
		}
	}
	return nil
}

// Encode serializes f (validating it first).
func Encode(f *File) ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	m := f.Model
	h := header{
		Params: m.Params, Binary: m.Binary, Classes: f.Classes, Features: f.Features,
		BoolInputs: m.NumFeatures, Booleanizer: f.Booleanizer, Split: f.Split, Mapping: f.Mapping,
		Bits: f.Bank.Bits, TAs: m.NumTAs(), SPVValues: len(m.SPV),
		DataFingerprint: f.DataFingerprint, Encoding: f.Encoding, Tuning: f.Tuning,
	}
	hj, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return nil, fmt.Errorf("modelfile: header: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString(Magic)
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, Version))
	buf.Write(le.AppendUint32(nil, uint32(len(hj))))
	buf.Write(hj)
	b8 := make([]byte, 8)
	for _, v := range m.SPV {
		le.PutUint64(b8, math.Float64bits(v))
		buf.Write(b8)
	}
	for _, v := range f.Bank.SPV {
		buf.Write(le.AppendUint32(b8[:0], v))
	}
	for _, v := range f.Bank.Thresh {
		buf.Write(le.AppendUint32(b8[:0], v))
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// Hash returns the hex SHA-256 stored at the end of an encoded file: the
// model hash quoted in generated Verilog headers.
func Hash(data []byte) string {
	if len(data) < 32 {
		return ""
	}
	return hex.EncodeToString(data[len(data)-32:])
}

// Write encodes f to path and returns the model hash. It writes
// atomically: an exclusively created temporary file with a random name in
// path's directory, synced, then renamed over path (a symlink at path is
// replaced, not followed). path must not be a directory.
func Write(path string, f *File) (string, error) {
	data, err := Encode(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if err := writeFile(path, data); err != nil {
		return "", err
	}
	return Hash(data), nil
}

// Read loads and verifies a model file; it returns the file and its hash.
// It checks the magic before reading further and refuses a file larger
// than MaxFileSize (devices such as /dev/zero included).
func Read(path string) (*File, string, error) {
	fh, err := openModel(path)
	if err != nil {
		return nil, "", err
	}
	defer fh.Close()
	data, err := readModel(fh, path)
	if err != nil {
		return nil, "", err
	}
	f, err := Decode(data, path)
	if err != nil {
		return nil, "", err
	}
	return f, Hash(data), nil
}

// Decode parses and verifies an encoded model; name labels errors.
func Decode(data []byte, name string) (*File, error) {
	fail := func(off int64, field string, sentinel error, format string, a ...any) error {
		return &Error{File: name, Offset: off, Field: field, Msg: fmt.Sprintf(format, a...), Err: sentinel}
	}
	if len(data) < 8 || string(data[:8]) != Magic {
		return nil, fail(0, "magic", ErrNotModel, "not a PTM model file (missing %q magic)", Magic)
	}
	if len(data) < 16 {
		return nil, fail(int64(len(data)), "header", ErrTruncated, "file ends after %d bytes, inside the fixed header", len(data))
	}
	le := binary.LittleEndian
	if v := le.Uint32(data[8:]); v != Version {
		return nil, fail(8, "version", ErrVersion, "format version %d, this program reads version %d", v, Version)
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
		if json.Unmarshal(data[16:16+hl], &h) == nil && h.SPVValues > 0 {
			want := 16 + hl + 12*int64(h.SPVValues) + 4*int64(h.TAs) + 32
			if int64(len(data)) < want {
				return nil, fail(int64(len(data)), "payload", ErrTruncated, "file is %d bytes, its header describes %d", len(data), want)
			}
		}
		return nil, fail(int64(len(data))-32, "checksum", ErrChecksum, "SHA-256 does not match the content: the file is corrupted or was edited")
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(data[16 : 16+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, &Error{File: name, Offset: 16, Field: "header", Msg: err.Error(), Err: ErrInvalid}
	}
	if field, err := checkHeader(&h); err != nil {
		return nil, &Error{File: name, Offset: 16, Field: field, Msg: err.Error(), Err: ErrInvalid}
	}
	if h.TAs < 1 || h.SPVValues < 1 || h.SPVValues%h.TAs != 0 {
		return nil, fail(16, "tas/spv_values", ErrInvalid, "%d TAs with %d SPV values", h.TAs, h.SPVValues)
	}
	want := 16 + hl + 12*int64(h.SPVValues) + 4*int64(h.TAs) + 32
	if int64(len(data)) != want {
		return nil, fail(int64(len(data)), "payload", ErrInvalid, "file is %d bytes, its header describes %d", len(data), want)
	}
	m, err := ptm.New(h.Params, len(h.Classes), h.BoolInputs, h.Binary)
	if err != nil {
		return nil, &Error{File: name, Offset: 16, Field: "params", Msg: err.Error(), Err: ErrInvalid}
	}
	if m.NumTAs() != h.TAs || len(m.SPV) != h.SPVValues {
		return nil, fail(16, "tas", ErrInvalid, "header shape gives %d TAs and %d SPV values, header says %d and %d", m.NumTAs(), len(m.SPV), h.TAs, h.SPVValues)
	}
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
	f := &File{Model: m, Booleanizer: h.Booleanizer, Features: h.Features, Classes: h.Classes, Split: h.Split, Mapping: h.Mapping, Bank: bank,
		DataFingerprint: h.DataFingerprint, Encoding: h.Encoding, Tuning: h.Tuning}
	if err := f.Validate(); err != nil {
		return nil, &Error{File: name, Offset: -1, Msg: err.Error(), Err: ErrInvalid}
	}
	return f, nil
}

// ReadFrom reads a whole model from r (at most MaxFileSize bytes, the
// magic checked first, as Read does).
func ReadFrom(r io.Reader, name string) (*File, string, error) {
	data, err := readModel(r, name)
	if err != nil {
		return nil, "", err
	}
	f, err := Decode(data, name)
	if err != nil {
		return nil, "", err
	}
	return f, Hash(data), nil
}
