package modelfile

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Magic opens every model file.
const Magic = "PTMMODEL"

// Version is the format version Encode and Write produce (doc.go).
// Decode reads it and the legacy VersionV1.
const Version = 2

// VersionV1 is the first format: float64 SPVs over every state, quantized
// SPVs and thresholds (doc.go). Decode still reads it; `ptm convert`
// rewrites such a file in the current format.
const VersionV1 = 1

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
	// SPVBits is W, the width at which a format-2 file stores the SPVs:
	// every SPV as integers summing to 2^W, the float SPV being q / 2^W
	// (MinSPVBits..MaxSPVBits). 0 means the default: Bank.Bits when the
	// model's SPVs are exact at that width (a fixed-point trained model),
	// else MaxSPVBits. A model that is not exact at W is rounded when
	// written; Canonicalize rounds it in memory, so that the File equals
	// what Read gives back. Decode sets it from the file (0 for format 1).
	SPVBits int
	// Format is the format version Decode read (VersionV1 or Version); 0
	// for a File made in memory. Encode always writes Version.
	Format int
	// Tuning, if set, records how the hyper-parameters were chosen
	// (`ptm train` without hyper-parameter flags); nil otherwise.
	Tuning *Tuning
	// FixedTraining, if set, records what resuming the fixed-point
	// trainer needs besides the SPVs and parameters (`ptm train --fixed`
	// with the control lane's shuffle); nil for other models and files
	// written before it existed.
	FixedTraining *FixedTraining
}

// FixedTraining is the record of a tabular model trained by the
// fixed-point trainer (golden/fixedtrain) with its control lane's shuffle:
// the lanes at the end of training (Lanes.Control the control lane,
// Lanes.Clauses every global clause's, TM-major) and the training
// configuration the other header fields do not hold: thermometer
// thresholds per feature, the input encoding's configuration
// (pipeline.Encoding as JSON), whether the mapping parameter was fitted
// by cross-validation and the temperature floor of that fit
// (pipeline.TrainConfig.TemperatureFloor).
type FixedTraining struct {
	Lanes            Lanes           `json:"lanes"`
	Thresholds       int             `json:"thresholds"`
	Encoding         json.RawMessage `json:"encoding"`
	Calibrate        bool            `json:"calibrate"`
	TemperatureFloor float64         `json:"temperature_floor,omitempty"`
}

// maxFixedEncoding bounds FixedTraining.Encoding's JSON.
const maxFixedEncoding = 4096

// checkFixedTraining checks a FixedTraining record against the model.
func checkFixedTraining(r *FixedTraining, m *ptm.Model) error {
	if r == nil {
		return nil
	}
	lanes := m.NumTMs() * m.Clauses
	switch {
	case len(r.Lanes.Clauses) != lanes:
		return fmt.Errorf("fixed_training.lanes: %d clause lanes, the model has %d clauses", len(r.Lanes.Clauses), lanes)
	case r.Lanes.Control == 0:
		return errors.New("fixed_training.lanes: control lane state 0 (an LFSR never reaches it)")
	case r.Thresholds < 1 || r.Thresholds > 1<<16:
		return fmt.Errorf("fixed_training.thresholds: %d, want 1..%d", r.Thresholds, 1<<16)
	case !(r.TemperatureFloor >= -1e6 && r.TemperatureFloor <= 1e6):
		return fmt.Errorf("fixed_training.temperature_floor: %v, want a finite value", r.TemperatureFloor)
	case len(r.Encoding) > maxFixedEncoding || !json.Valid(r.Encoding) || len(r.Encoding) == 0 || r.Encoding[0] != '{':
		return fmt.Errorf("fixed_training.encoding: want a JSON object of at most %d bytes", maxFixedEncoding)
	}
	for c, s := range r.Lanes.Clauses {
		if s == 0 {
			return fmt.Errorf("fixed_training.lanes.clauses[%d]: lane state 0 (an LFSR never reaches it)", c)
		}
	}
	return nil
}

// header is the JSON part of the file, the same struct for both format
// versions: a field added later is optional (omitempty) so that older
// files still decode (unknown fields are refused).
type header struct {
	Params      ptm.Params              `json:"params"`
	Binary      bool                    `json:"binary"`
	Classes     []string                `json:"classes"`
	Features    []string                `json:"features"`
	BoolInputs  int                     `json:"bool_features"`
	Booleanizer *booleanize.Thermometer `json:"booleanizer"`
	// Split is a Split in format 1 and a splitRuns (row lists as runs)
	// in format 2; parseSplit decodes it by version.
	Split     json.RawMessage  `json:"split"`
	Mapping   ptm.Mapping      `json:"mapping"`
	Encoding  *booleanize.Sets `json:"encoding,omitempty"`
	Bits      int              `json:"quant_bits"`
	TAs       int              `json:"tas"`
	SPVValues int              `json:"spv_values"`
	// DataFingerprint is File.DataFingerprint.
	DataFingerprint string `json:"data_fingerprint,omitempty"`
	// SPVBits is W (File.SPVBits); format 2 only.
	SPVBits int `json:"spv_bits,omitempty"`
	// PayloadBytes is the length of the SPV payload; format 2 only.
	PayloadBytes int64 `json:"payload_bytes,omitempty"`
	// Tuning is File.Tuning (optional).
	Tuning *Tuning `json:"tuning,omitempty"`
	// FixedTraining is File.FixedTraining (optional).
	FixedTraining *FixedTraining `json:"fixed_training,omitempty"`
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

// Validate checks that the parts of f agree with each other: the model's
// shape and SPVs, names, split, encoding and mapping, and the bank equal to
// what quantizing the float SPVs gives.
func (f *File) Validate() error { return f.validate(true) }

// validate is Validate; checkBank false skips comparing the bank with a
// fresh quantization (Decode derives the bank that way itself).
func (f *File) validate(checkBank bool) error {
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
	if err := checkFixedTraining(f.FixedTraining, m); err != nil {
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
	if f.SPVBits != 0 {
		if err := checkSPVBits(f.SPVBits); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if !checkBank {
		return nil
	}
	// The bank must be what quantizing the float SPVs gives: checked TA by
	// TA with one scratch SPV, so that validating allocates no second bank.
	n2 := 2 * m.N
	q := make([]uint32, n2)
	for ta := 0; ta < m.NumTAs(); ta++ {
		if err := fixed.QuantizeSPV(m.SPV[ta*n2:(ta+1)*n2], b.Bits, q); err != nil {
			return fmt.Errorf("%w: TA %d: %w", ErrInvalid, ta, err)
		}
		for n, v := range q {
			if i := ta*n2 + n; b.SPV[i] != v {
				return fmt.Errorf("%w: quantized SPV value %d is %d, quantizing the float SPVs gives %d", ErrInvalid, i, b.SPV[i], v)
			}
		}
		if want := fixed.ThresholdOf(q, b.Bits); b.Thresh[ta] != want {
			return fmt.Errorf("%w: threshold of TA %d is %d, quantizing the float SPVs gives %d", ErrInvalid, ta, b.Thresh[ta], want)
		}
	}
	return nil
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
	size := int64(-1)
	if fi, err := fh.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	data, err := readModel(fh, path, size)
	if err != nil {
		return nil, "", err
	}
	f, err := Decode(data, path)
	if err != nil {
		return nil, "", err
	}
	return f, Hash(data), nil
}

// ReadFrom reads a whole model from r (at most MaxFileSize bytes, the
// magic checked first, as Read does).
func ReadFrom(r io.Reader, name string) (*File, string, error) {
	data, err := readModel(r, name, -1)
	if err != nil {
		return nil, "", err
	}
	f, err := Decode(data, name)
	if err != nil {
		return nil, "", err
	}
	return f, Hash(data), nil
}
