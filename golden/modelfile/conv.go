package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// KindConv is the header "kind" of a convolutional model file (doc.go,
// "Convolutional models"); a tabular file has no kind.
const KindConv = "conv"

// ErrConv is wrapped by the error Decode and Read return for a
// convolutional model file: they read tabular models (DecodeConv, ReadConv
// and ReadAny read convolutional ones).
var ErrConv = errors.New("convolutional model file")

// Limits of a convolutional file's fields besides the shape's (conv.Shape).
const (
	// MaxConvSPVBits bounds the stored SPV width W of a convolutional
	// model: masses up to 2^W are kept as uint16.
	MaxConvSPVBits = 15
	// MaxJitterSets bounds the threshold sets of the sampled encoding.
	MaxJitterSets = 255
	// MaxConvStates bounds N (an SPV has 2N states), as golden/fixedtrain.
	MaxConvStates = 1 << 14
	// MaxConvK bounds the default samples per query a file may record.
	MaxConvK = 1 << 16
)

// ConvTrainer is the trainer's part of a convolutional model: what
// resumed training needs besides the SPVs and weights.
type ConvTrainer struct {
	S float64 `json:"s"`
	N int     `json:"N"`
	// SPVBits is W, the width of the stored SPVs (the trainer's B).
	SPVBits int    `json:"spv_bits"`
	Seed    uint64 `json:"seed"`
	Epochs  int    `json:"epochs"`
}

// ConvCalibration records how the mapping parameter was fitted: on Rows
// validation rows carved (stratified, seeded) from the training rows,
// scored with K samples each; NLL and Accuracy are those of the fitted
// mapping on them. FinalOnCarve says whether the stored model was then
// trained on the carved rows too (false: the model the parameter was
// fitted for is the stored one).
type ConvCalibration struct {
	Rows         int     `json:"rows"`
	Seed         uint64  `json:"seed"`
	K            int     `json:"K"`
	NLL          float64 `json:"nll"`
	Accuracy     float64 `json:"accuracy"`
	FinalOnCarve bool    `json:"final_on_carve"`
}

// ConvRecipe records where the hyper-parameters came from: Source names
// the recipe (e.g. "convtrain.ImageDefaults"), Overridden the fields the
// user set by flags.
type ConvRecipe struct {
	Source     string   `json:"source"`
	Overridden []string `json:"overridden,omitempty"`
}

// ConvFile is the content of a convolutional model file.
type ConvFile struct {
	// Head is the shape, structure, classes, clauses, T and weights.
	Head    conv.Head
	Classes []string // class names, index = class
	// Encoder holds the base pixel thresholds; JitterSets and
	// JitterSpread make the sampled encoding's sets (conv.Jitter).
	Encoder                  conv.Encoder
	JitterSets, JitterSpread int
	Trainer                  ConvTrainer
	// BankBits is B of the quantized bank inference in fixed point runs.
	BankBits int
	// K is the default samples per query.
	K       int
	Mapping ptm.Mapping
	Split   Split
	// DataFingerprint is as File.DataFingerprint.
	DataFingerprint string
	Calibration     *ConvCalibration
	Recipe          *ConvRecipe
	// SPV holds every TA's SPV, TA (c, i) = c*Literals + i, 2N states each
	// (state n < N excludes), as integer masses summing to 2^SPVBits.
	SPV []uint16
}

// convHeader is the JSON header of a convolutional file.
type convHeader struct {
	Kind         string           `json:"kind"`
	Shape        conv.Shape       `json:"shape"`
	Structure    conv.Structure   `json:"structure"`
	Classes      []string         `json:"classes"`
	Clauses      int              `json:"clauses"`
	T            int              `json:"T"`
	Weights      []int32          `json:"weights"`
	Thresholds   []int            `json:"pixel_thresholds"`
	JitterSets   int              `json:"jitter_sets"`
	JitterSpread int              `json:"jitter_spread"`
	Trainer      ConvTrainer      `json:"trainer"`
	BankBits     int              `json:"bank_bits"`
	K            int              `json:"K"`
	Mapping      ptm.Mapping      `json:"mapping"`
	Split        json.RawMessage  `json:"split"`
	Fingerprint  string           `json:"data_fingerprint,omitempty"`
	Calibration  *ConvCalibration `json:"calibration,omitempty"`
	Recipe       *ConvRecipe      `json:"recipe,omitempty"`
	TAs          int              `json:"tas"`
	SPVValues    int              `json:"spv_values"`
	PayloadBytes int64            `json:"payload_bytes"`
}

// Sets returns the encoders of the sampled encoding (conv.Jitter).
func (f *ConvFile) Sets() ([]conv.Encoder, error) {
	return conv.Jitter(f.Encoder, f.JitterSets, f.JitterSpread)
}

// TAs is the number of automata.
func (f *ConvFile) TAs() int { return f.Head.TAs() }

// Validate checks that the parts of f agree with each other.
func (f *ConvFile) Validate() error {
	if _, err := f.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	n2 := 2 * f.Trainer.N
	full := uint32(1) << uint(f.Trainer.SPVBits)
	for ta := 0; ta < f.TAs(); ta++ {
		var sum uint32
		for _, v := range f.SPV[ta*n2 : (ta+1)*n2] {
			sum += uint32(v)
		}
		if sum != full {
			c, i := ta/f.Head.Shape.Literals(), ta%f.Head.Shape.Literals()
			return fmt.Errorf("%w: SPV of TA %d (clause %d, literal %d) holds %d, want 2^%d", ErrInvalid, ta, c, i, sum, f.Trainer.SPVBits)
		}
	}
	return nil
}

// check validates everything but the SPVs' contents and returns the
// failing header field's name.
func (f *ConvFile) check() (string, error) {
	h := &f.Head
	if err := h.Validate(); err != nil {
		return "shape", err
	}
	if len(f.Classes) != h.Classes {
		return "classes", fmt.Errorf("%d class names, the head has %d classes", len(f.Classes), h.Classes)
	}
	if err := checkNames("classes", f.Classes, MaxClasses); err != nil {
		return "classes", err
	}
	if err := f.Encoder.Validate(h.Shape); err != nil {
		return "pixel_thresholds", err
	}
	if f.JitterSets < 1 || f.JitterSets > MaxJitterSets || f.JitterSpread < 0 || f.JitterSpread > 255 {
		return "jitter_sets", fmt.Errorf("%d sets, spread %d: want 1..%d sets, spread 0..255", f.JitterSets, f.JitterSpread, MaxJitterSets)
	}
	t := f.Trainer
	switch {
	case !(t.S >= 1) || t.S > 1e300:
		return "trainer.s", fmt.Errorf("s = %v, want a finite value >= 1", t.S)
	case t.N < 1 || t.N > MaxConvStates:
		return "trainer.N", fmt.Errorf("N = %d, want 1..%d", t.N, MaxConvStates)
	case t.SPVBits < MinSPVBits || t.SPVBits > MaxConvSPVBits:
		return "trainer.spv_bits", fmt.Errorf("%d-bit SPVs, want %d..%d", t.SPVBits, MinSPVBits, MaxConvSPVBits)
	case t.Epochs < 0 || t.Epochs > 1<<20:
		return "trainer.epochs", fmt.Errorf("%d epochs, want 0..%d", t.Epochs, 1<<20)
	}
	if err := fixed.CheckBits(f.BankBits); err != nil {
		return "bank_bits", err
	}
	if f.K < 1 || f.K > MaxConvK {
		return "K", fmt.Errorf("K = %d, want 1..%d", f.K, MaxConvK)
	}
	if err := f.Mapping.Validate(); err != nil {
		return "mapping", err
	}
	if err := f.Split.Check(); err != nil {
		return "split", err
	}
	if err := checkFingerprint(f.DataFingerprint); err != nil {
		return "data_fingerprint", err
	}
	if c := f.Calibration; c != nil {
		if c.Rows < 1 || c.K < 1 || !(c.Accuracy >= 0 && c.Accuracy <= 1) || !(c.NLL >= 0) || math.IsInf(c.NLL, 0) {
			return "calibration", fmt.Errorf("rows %d, K %d, accuracy %v, nll %v: want rows, K >= 1, accuracy 0..1, a finite nll >= 0", c.Rows, c.K, c.Accuracy, c.NLL)
		}
	}
	if r := f.Recipe; r != nil {
		if r.Source == "" || len(r.Source) > maxTuneText || len(r.Overridden) > 64 {
			return "recipe", fmt.Errorf("source of %d bytes and %d overridden names, want 1..%d bytes and at most 64 names", len(r.Source), len(r.Overridden), maxTuneText)
		}
		for i, n := range r.Overridden {
			if n == "" || len(n) > 64 {
				return "recipe", fmt.Errorf("overridden[%d]: %q, want 1..64 bytes", i, n)
			}
		}
	}
	tas := int64(h.Clauses) * int64(h.Shape.Literals())
	if tas > MaxSPVValues/2 || tas*2*int64(t.N) > MaxSPVValues {
		return "clauses", fmt.Errorf("%d clauses x %d literals x %d states, limit %d SPV values", h.Clauses, h.Shape.Literals(), 2*t.N, MaxSPVValues)
	}
	if want := tas * 2 * int64(t.N); int64(len(f.SPV)) != want {
		return "spv_values", fmt.Errorf("%d SPV values, the shape gives %d", len(f.SPV), want)
	}
	return "", nil
}

// Model returns the float model: P(include) of a TA is the mass of its
// include states / 2^SPVBits (exact), as convtrain.Trainer.Model.
func (f *ConvFile) Model() *conv.Model {
	h := f.Head
	h.Weights = append([]int32(nil), f.Head.Weights...)
	m := &conv.Model{Head: h, Include: make([]float64, f.TAs())}
	n, n2 := f.Trainer.N, 2*f.Trainer.N
	scale := math.Ldexp(1, -f.Trainer.SPVBits)
	for ta := range m.Include {
		var inc int
		for _, v := range f.SPV[ta*n2+n : (ta+1)*n2] {
			inc += int(v)
		}
		m.Include[ta] = float64(inc) * scale
	}
	return m
}

// Bank returns the model quantized to bits-bit include thresholds (every
// SPV by fixed.QuantizeSPV, the threshold fixed.ThresholdOf), as
// convtrain.Trainer.Bank: the same bank bit for bit.
func (f *ConvFile) Bank(bits int) (*conv.Bank, error) {
	if err := fixed.CheckBits(bits); err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	h := f.Head
	h.Weights = append([]int32(nil), f.Head.Weights...)
	b := &conv.Bank{Head: h, Bits: bits, Thresh: make([]uint32, f.TAs())}
	n2 := 2 * f.Trainer.N
	p := make([]float64, n2)
	q := make([]uint32, n2)
	for ta := range b.Thresh {
		for i, v := range f.SPV[ta*n2 : (ta+1)*n2] {
			p[i] = float64(v)
		}
		if err := fixed.QuantizeSPV(p, bits, q); err != nil {
			return nil, fmt.Errorf("modelfile: TA %d: %w", ta, err)
		}
		b.Thresh[ta] = fixed.ThresholdOf(q, bits)
	}
	return b, b.Check()
}

// EncodeConv serializes a convolutional model (format 2, kind "conv";
// doc.go), validating it first.
func EncodeConv(f *ConvFile) ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	n2 := 2 * f.Trainer.N
	payload, err := encodeRecords(f.TAs(), n2, func(ta int, q []uint32) error {
		for i, v := range f.SPV[ta*n2 : (ta+1)*n2] {
			q[i] = uint32(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	split, err := json.Marshal(runsOfSplit(&f.Split))
	if err != nil {
		return nil, fmt.Errorf("modelfile: split: %w", err)
	}
	hd := f.Head
	h := convHeader{Kind: KindConv, Shape: hd.Shape, Structure: hd.Structure, Classes: f.Classes, Clauses: hd.Clauses, T: hd.T,
		Weights: hd.Weights, Thresholds: f.Encoder.Thresholds, JitterSets: f.JitterSets, JitterSpread: f.JitterSpread,
		Trainer: f.Trainer, BankBits: f.BankBits, K: f.K, Mapping: f.Mapping, Split: split, Fingerprint: f.DataFingerprint,
		Calibration: f.Calibration, Recipe: f.Recipe, TAs: f.TAs(), SPVValues: len(f.SPV), PayloadBytes: int64(len(payload))}
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

// kindOf returns the header's "kind" ("" for a tabular file or a header
// that does not parse).
func kindOf(hdr []byte) string {
	var k struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(hdr, &k) != nil {
		return ""
	}
	return k.Kind
}

// IsConv reports whether data (a whole file, or at least its header) is a
// convolutional model file.
func IsConv(data []byte) bool {
	if len(data) < 16 || string(data[:8]) != Magic || binary.LittleEndian.Uint32(data[8:]) != Version {
		return false
	}
	hl := int64(binary.LittleEndian.Uint32(data[12:]))
	if hl > MaxHeader || int64(len(data)) < 16+hl {
		return false
	}
	return kindOf(data[16:16+hl]) == KindConv
}

// DecodeConv parses and verifies a convolutional model file; name labels
// errors, which name the field and the byte offset.
func DecodeConv(data []byte, name string) (*ConvFile, error) {
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
	if v := le.Uint32(data[8:]); v != Version {
		return nil, fail(8, "version", ErrVersion, "format version %d, convolutional models are format %d", v, Version)
	}
	hl := int64(le.Uint32(data[12:]))
	if hl > MaxHeader {
		return nil, fail(12, "header length", ErrInvalid, "header length %d exceeds %d", hl, MaxHeader)
	}
	if int64(len(data)) < 16+hl+32 {
		return nil, fail(int64(len(data)), "header", ErrTruncated, "file is %d bytes, the %d-byte header alone needs %d", len(data), hl, 16+hl+32)
	}
	if sum := sha256.Sum256(data[:len(data)-32]); !bytes.Equal(sum[:], data[len(data)-32:]) {
		var h convHeader
		if json.Unmarshal(data[16:16+hl], &h) == nil && h.PayloadBytes > 0 && h.PayloadBytes <= MaxFileSize {
			if want := 16 + hl + h.PayloadBytes + 32; int64(len(data)) < want {
				return nil, fail(int64(len(data)), "payload", ErrTruncated, "file is %d bytes, its header describes %d", len(data), want)
			}
		}
		return nil, fail(int64(len(data))-32, "checksum", ErrChecksum, "SHA-256 does not match the content: the file is corrupted or was edited")
	}
	var h convHeader
	dec := json.NewDecoder(bytes.NewReader(data[16 : 16+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		if kindOf(data[16:16+hl]) != KindConv {
			return nil, fail(16, "kind", ErrInvalid, "not a convolutional model (a tabular one: ptm reads it with the tabular commands)")
		}
		return nil, fail(16, "header", ErrInvalid, "%v", err)
	}
	if dec.More() {
		return nil, fail(16, "header", ErrInvalid, "data after the header's JSON object")
	}
	if h.Kind != KindConv {
		return nil, fail(16, "kind", ErrInvalid, "kind %q, want %q", h.Kind, KindConv)
	}
	split, err := parseSplitRuns(h.Split)
	if err != nil {
		return nil, fail(16, "split", ErrInvalid, "%v", err)
	}
	f := &ConvFile{Head: conv.Head{Shape: h.Shape, Structure: h.Structure, Classes: len(h.Classes), Clauses: h.Clauses, T: h.T, Weights: h.Weights},
		Classes: h.Classes, Encoder: conv.Encoder{Thresholds: h.Thresholds}, JitterSets: h.JitterSets, JitterSpread: h.JitterSpread,
		Trainer: h.Trainer, BankBits: h.BankBits, K: h.K, Mapping: h.Mapping, Split: split, DataFingerprint: h.Fingerprint,
		Calibration: h.Calibration, Recipe: h.Recipe}
	// Check every field before allocating from them (the SPV count
	// against tas and spv_values, the slice itself comes later).
	if field, err := f.checkExceptSPV(); err != nil {
		return nil, fail(16, field, ErrInvalid, "%v", err)
	}
	tas := int64(h.Clauses) * int64(h.Shape.Literals())
	if int64(h.TAs) != tas || int64(h.SPVValues) != tas*2*int64(h.Trainer.N) {
		return nil, fail(16, "tas", ErrInvalid, "%d TAs and %d SPV values, the shape gives %d and %d", h.TAs, h.SPVValues, tas, tas*2*int64(h.Trainer.N))
	}
	maxP := maxRecords(tas, int64(h.SPVValues)) + maxRecords(tas, int64(h.SPVValues))/1024 + 1024
	if p := h.PayloadBytes; p < 1 || p > maxP || p*1032 < 2*tas {
		return nil, fail(16, "payload_bytes", ErrInvalid, "%d bytes for %d TAs, want %d..%d", p, tas, (2*tas+1031)/1032, maxP)
	}
	if want := 16 + hl + h.PayloadBytes + 32; int64(len(data)) != want {
		return nil, fail(int64(len(data)), "payload", ErrInvalid, "file is %d bytes, its header describes %d", len(data), want)
	}
	n2 := 2 * h.Trainer.N
	f.SPV = make([]uint16, h.SPVValues)
	lits := h.Shape.Literals()
	where := func(ta int) string {
		return fmt.Sprintf("payload: TA %d (clause %d, literal %d)", ta, ta/lits, ta%lits)
	}
	err = decodeRecords(data, name, 16+hl, h.PayloadBytes, int(tas), n2, h.Trainer.SPVBits, where, func(ta int, q []uint32) error {
		dst := f.SPV[ta*n2 : (ta+1)*n2]
		for i, v := range q {
			dst[i] = uint16(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, &Error{File: name, Offset: -1, Msg: err.Error(), Err: ErrInvalid}
	}
	return f, nil
}

// checkExceptSPV is check without the SPV count (not allocated yet).
func (f *ConvFile) checkExceptSPV() (string, error) {
	field, err := f.check()
	if field == "spv_values" {
		return "", nil
	}
	return field, err
}

// WriteConv encodes f to path atomically (as Write) and returns the model
// hash.
func WriteConv(path string, f *ConvFile) (string, error) {
	data, err := EncodeConv(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if err := writeFile(path, data); err != nil {
		return "", err
	}
	return Hash(data), nil
}

// ReadAny loads and verifies a model file of either kind: exactly one of
// the returned files is set (tab for a tabular model, cv for a
// convolutional one); hash is the model hash.
func ReadAny(path string) (tab *File, cv *ConvFile, hash string, err error) {
	fh, err := openModel(path)
	if err != nil {
		return nil, nil, "", err
	}
	defer fh.Close()
	size := int64(-1)
	if fi, err := fh.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	data, err := readModel(fh, path, size)
	if err != nil {
		return nil, nil, "", err
	}
	if IsConv(data) {
		cv, err = DecodeConv(data, path)
		if err != nil {
			return nil, nil, "", err
		}
		return nil, cv, Hash(data), nil
	}
	tab, err = Decode(data, path)
	if err != nil {
		return nil, nil, "", err
	}
	return tab, nil, Hash(data), nil
}

// ReadConv loads and verifies a convolutional model file.
func ReadConv(path string) (*ConvFile, string, error) {
	tab, cv, hash, err := ReadAny(path)
	if err != nil {
		return nil, "", err
	}
	if tab != nil {
		return nil, "", &Error{File: path, Offset: 16, Field: "kind", Msg: "a tabular model, not a convolutional one", Err: ErrInvalid}
	}
	return cv, hash, nil
}
