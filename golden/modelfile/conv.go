package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

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
	// Bits is B of the trainer's SPVs (fixedtrain.DefaultBits).
	Bits   int    `json:"bits"`
	Seed   uint64 `json:"seed"`
	Epochs int    `json:"epochs"`
	// WeightClip is the trainer's class-weight bound (convtrain.Config):
	// 1..conv.MaxWeight, or 0 (absent from the header) for conv.MaxWeight.
	// Every stored weight is within it.
	WeightClip int `json:"weight_clip,omitempty"`
	// LiteralBudget is the trainer's per-clause literal budget
	// (convtrain.Config): 1..the clause's literals, or 0 (absent) for none.
	LiteralBudget int `json:"literal_budget,omitempty"`
	// BoostTruePositive is the trainer's boosted true-positive feedback
	// (convtrain.Config.BoostTruePositive), absent when false.
	BoostTruePositive bool `json:"boost_true_positive,omitempty"`
}

// Lanes records the trainer's random lanes at the end of training:
// the control lane (shuffles, negative classes) and every clause's lane,
// 64-bit LFSR states (golden/fixedtrain), never 0. With them and SPVs
// stored exactly (SPVBits = Trainer.Bits) resumed training continues
// exactly where training stopped (convtrain.Trainer.Resume).
type Lanes struct {
	Control uint64   `json:"control"`
	Clauses []uint64 `json:"clauses"`
}

// DefaultConvSPVBits is the width TrainConv stores a convolutional
// model's SPVs at. Inference does not depend on it (the include masses
// and the bank are stored exactly); resumed training restarts from the
// SPVs at this width. A trained MNIST model's 15-bit SPVs are wide and
// noisy (supports of a median 101 of the 200 states, the low bits
// dithering noise), so the width is what sets the file's size. At 8
// bits, with each half of an SPV rounded to its own total (roundHalves:
// P(include) within 2^-9 of the trainer's) and the SPVs range-coded
// (SPVCodingRange), the default MNIST model (512 clauses x 472 literals)
// rewritten from its 12-bit file is 1,831,402 bytes (2,799,985 with the
// SPVs DEFLATE-coded; 5,372,030 range-coded at 12 bits); the
// measurements are in docs/model-file-size.md.
const DefaultConvSPVBits = 8

// The SPV codings of a convolutional file (ConvFile.SPVCoding, the header
// field "spv_coding"; doc.go).
const (
	// SPVCodingDeflate codes the SPVs as supports and second differences,
	// DEFLATE-compressed with the extras: files written before the range
	// coder (their header has no spv_coding).
	SPVCodingDeflate = "deflate"
	// SPVCodingRange codes the SPVs with the adaptive binary range coder
	// (rangecoder.go), the extras DEFLATE-compressed after them: what
	// EncodeConv writes by default.
	SPVCodingRange = "range"
)

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
	// Fixed, if set, records the fit of ConvFile.FixedMapping: the same
	// rows, K and seed (uint32(Seed)) on the bit-exact fixed-point core
	// (absent from files written before the field: their hashes are
	// unchanged).
	Fixed *ConvFixedCalibration `json:"fixed,omitempty"`
}

// ConvFixedCalibration records the fixed-point core that fitted
// ConvFile.FixedMapping (bits, LFSR width, lanes: Bits is the file's
// BankBits) and the NLL and accuracy of the fitted mapping on the
// calibration rows' class sums from that core.
type ConvFixedCalibration struct {
	Bits         int     `json:"bits"`
	LFSRWidth    int     `json:"lfsr_width"`
	ClauseLanes  int     `json:"clause_lanes"`
	LiteralLanes int     `json:"literal_lanes"`
	NLL          float64 `json:"nll"`
	Accuracy     float64 `json:"accuracy"`
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
	// Encoder holds the base pixel thresholds and the adaptive plane's
	// parameters (nil: none); JitterSets and
	// JitterSpread make the sampled encoding's sets (conv.Jitter).
	Encoder                  conv.Encoder
	JitterSets, JitterSpread int
	Trainer                  ConvTrainer
	// SPVBits is W, the width the SPVs are stored at (MinSPVBits ..
	// Trainer.Bits; Trainer.Bits: exactly the trainer's).
	SPVBits int
	// BankBits is B of the quantized bank inference in fixed point runs.
	BankBits int
	// K is the default samples per query.
	K       int
	Mapping ptm.Mapping
	// FixedMapping, if set, is the mapping of the fixed-point core's
	// class sums at BankBits (the hardware's probabilities): Mapping's
	// kind with the parameter fitted on that core's class sums of the
	// calibration rows (Calibration.Fixed). Nil in files written before
	// the field: the fixed-point core then uses Mapping (MappingAt).
	FixedMapping *ptm.Mapping
	Split        Split
	// DataFingerprint is as File.DataFingerprint.
	DataFingerprint string
	Calibration     *ConvCalibration
	Recipe          *ConvRecipe
	// Lanes, if set, are the trainer's lanes at the end of training
	// (optional: files written before the field existed have none).
	Lanes *Lanes
	// SPVCoding is how the file codes the SPVs: SPVCodingRange (the
	// default, "" writes it) or SPVCodingDeflate (files written before
	// the range coder; DecodeConv sets it, so such a file re-encodes to
	// its own bytes).
	SPVCoding string
	// SPV holds every TA's SPV, TA (c, i) = c*Literals + i, 2N states each
	// (state n < N excludes), as integer masses summing to 2^SPVBits: the
	// trainer's rounded half by half (SetSPVs) when SPVBits <
	// Trainer.Bits (files written before: as a whole, fixed.QuantizeSPV).
	SPV []uint16
	// Include is every TA's include mass at Trainer.Bits, exactly the
	// trainer's (the float model's P(include) is Include / 2^Trainer.Bits).
	Include []uint16
	// Thresh is the BankBits-bit bank's include threshold of every TA,
	// exactly convtrain.Trainer.Bank(BankBits)'s.
	Thresh []uint32
}

// convHeader is the JSON header of a convolutional file.
type convHeader struct {
	Kind         string                  `json:"kind"`
	Shape        conv.Shape              `json:"shape"`
	Structure    conv.Structure          `json:"structure"`
	Classes      []string                `json:"classes"`
	Clauses      int                     `json:"clauses"`
	T            int                     `json:"T"`
	Weights      []int32                 `json:"weights"`
	Thresholds   []int                   `json:"pixel_thresholds"`
	Adaptive     *conv.AdaptiveThreshold `json:"adaptive_threshold,omitempty"`
	JitterSets   int                     `json:"jitter_sets"`
	JitterSpread int                     `json:"jitter_spread"`
	Trainer      ConvTrainer             `json:"trainer"`
	SPVBits      int                     `json:"spv_bits"`
	BankBits     int                     `json:"bank_bits"`
	K            int                     `json:"K"`
	Mapping      ptm.Mapping             `json:"mapping"`
	FixedMapping *ptm.Mapping            `json:"fixed_mapping,omitempty"`
	Split        json.RawMessage         `json:"split"`
	Fingerprint  string                  `json:"data_fingerprint,omitempty"`
	Calibration  *ConvCalibration        `json:"calibration,omitempty"`
	Recipe       *ConvRecipe             `json:"recipe,omitempty"`
	Lanes        *Lanes                  `json:"lanes,omitempty"`
	SPVCoding    string                  `json:"spv_coding,omitempty"`
	TAs          int                     `json:"tas"`
	SPVValues    int                     `json:"spv_values"`
	PayloadBytes int64                   `json:"payload_bytes"`
}

// Sets returns the encoders of the sampled encoding (conv.Jitter).
func (f *ConvFile) Sets() ([]conv.Encoder, error) {
	return conv.Jitter(f.Encoder, f.JitterSets, f.JitterSpread)
}

// TAs is the number of automata.
func (f *ConvFile) TAs() int { return f.Head.TAs() }

// MappingAt returns the mapping for class sums of the model sampled at
// bits: bits 0 is the float model (Mapping); the fixed-point core at
// BankBits uses FixedMapping when the file has one; any other width, or
// a file without FixedMapping, uses Mapping.
func (f *ConvFile) MappingAt(bits int) ptm.Mapping {
	if bits != 0 && bits == f.BankBits && f.FixedMapping != nil {
		return *f.FixedMapping
	}
	return f.Mapping
}

// Validate checks that the parts of f agree with each other.
func (f *ConvFile) Validate() error {
	if _, err := f.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	n, n2 := f.Trainer.N, 2*f.Trainer.N
	w, b := f.SPVBits, f.Trainer.Bits
	full := uint32(1) << uint(w)
	tmax := uint32(1)<<uint(f.BankBits) - 1
	for ta := 0; ta < f.TAs(); ta++ {
		var sum, inc uint32
		for k, v := range f.SPV[ta*n2 : (ta+1)*n2] {
			sum += uint32(v)
			if k >= n {
				inc += uint32(v)
			}
		}
		c, i := ta/f.Head.Shape.Literals(), ta%f.Head.Shape.Literals()
		switch {
		case sum != full:
			return fmt.Errorf("%w: SPV of TA %d (clause %d, literal %d) holds %d, want 2^%d", ErrInvalid, ta, c, i, sum, w)
		case uint32(f.Include[ta]) > 1<<uint(b):
			return fmt.Errorf("%w: include mass of TA %d (clause %d, literal %d) is %d, over 2^%d", ErrInvalid, ta, c, i, f.Include[ta], b)
		case w == b && uint32(f.Include[ta]) != inc:
			return fmt.Errorf("%w: include mass of TA %d (clause %d, literal %d) is %d, its SPV's is %d", ErrInvalid, ta, c, i, f.Include[ta], inc)
		case w < b && math.Abs(float64(f.Include[ta])/float64(uint32(1)<<uint(b))-float64(inc)/float64(full)) > float64(n)/float64(full):
			// Rounding moves each state's mass by less than 2^-W.
			return fmt.Errorf("%w: include mass of TA %d (clause %d, literal %d) is %d / 2^%d, its %d-bit SPV's %d / 2^%d: more than N / 2^W apart", ErrInvalid, ta, c, i, f.Include[ta], b, w, inc, w)
		case f.Thresh[ta] > tmax:
			return fmt.Errorf("%w: threshold of TA %d (clause %d, literal %d) is %d, over %d bits", ErrInvalid, ta, c, i, f.Thresh[ta], f.BankBits)
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
	case t.Bits < MinSPVBits || t.Bits > MaxConvSPVBits:
		return "trainer.bits", fmt.Errorf("%d-bit trainer SPVs, want %d..%d", t.Bits, MinSPVBits, MaxConvSPVBits)
	case f.SPVBits < MinSPVBits || f.SPVBits > t.Bits:
		return "spv_bits", fmt.Errorf("SPVs stored at %d bits, want %d..%d (trainer.bits)", f.SPVBits, MinSPVBits, t.Bits)
	case t.Epochs < 0 || t.Epochs > 1<<20:
		return "trainer.epochs", fmt.Errorf("%d epochs, want 0..%d", t.Epochs, 1<<20)
	case t.WeightClip < 0 || t.WeightClip > conv.MaxWeight:
		return "trainer.weight_clip", fmt.Errorf("weight clip %d, want 1..%d (0 or absent: %d)", t.WeightClip, conv.MaxWeight, conv.MaxWeight)
	case t.LiteralBudget < 0 || t.LiteralBudget > h.Shape.Literals():
		return "trainer.literal_budget", fmt.Errorf("literal budget %d, want 1..%d (the clause's literals; 0 or absent: none)", t.LiteralBudget, h.Shape.Literals())
	}
	if c := int32(t.WeightClip); c > 0 {
		for i, w := range h.Weights {
			if w < -c || w > c {
				return "weights", fmt.Errorf("weight of class %d clause %d is %d, outside trainer.weight_clip +-%d", i/h.Clauses, i%h.Clauses, w, c)
			}
		}
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
	if fm := f.FixedMapping; fm != nil {
		if err := fm.Validate(); err != nil {
			return "fixed_mapping", err
		}
		if fm.Kind != f.Mapping.Kind {
			return "fixed_mapping", fmt.Errorf("kind %q, the mapping's is %q: want the same kind", fm.Kind, f.Mapping.Kind)
		}
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
		if x := c.Fixed; x != nil {
			hw := conv.HW{Bits: x.Bits, LFSRWidth: x.LFSRWidth, ClauseLanes: x.ClauseLanes, LiteralLanes: x.LiteralLanes}
			switch {
			case f.FixedMapping == nil:
				return "calibration.fixed", errors.New("a fixed-point calibration record without fixed_mapping")
			case x.Bits != f.BankBits:
				return "calibration.fixed", fmt.Errorf("fitted on a %d-bit core, the bank is %d bits (bank_bits)", x.Bits, f.BankBits)
			case !(x.Accuracy >= 0 && x.Accuracy <= 1) || !(x.NLL >= 0) || math.IsInf(x.NLL, 0):
				return "calibration.fixed", fmt.Errorf("accuracy %v, nll %v: want accuracy 0..1, a finite nll >= 0", x.Accuracy, x.NLL)
			}
			if err := conv.CheckHW(h, hw); err != nil {
				return "calibration.fixed", err
			}
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
	if l := f.Lanes; l != nil {
		if len(l.Clauses) != h.Clauses {
			return "lanes", fmt.Errorf("%d clause lanes for %d clauses", len(l.Clauses), h.Clauses)
		}
		if l.Control == 0 {
			return "lanes", errors.New("control lane state 0 (an LFSR never reaches it)")
		}
		for c, s := range l.Clauses {
			if s == 0 {
				return "lanes", fmt.Errorf("clauses[%d]: lane state 0 (an LFSR never reaches it)", c)
			}
		}
	}
	tas := int64(h.Clauses) * int64(h.Shape.Literals())
	if tas > MaxSPVValues/2 || tas*2*int64(t.N) > MaxSPVValues {
		return "clauses", fmt.Errorf("%d clauses x %d literals x %d states, limit %d SPV values", h.Clauses, h.Shape.Literals(), 2*t.N, MaxSPVValues)
	}
	if want := tas * 2 * int64(t.N); int64(len(f.SPV)) != want || int64(len(f.Include)) != tas || int64(len(f.Thresh)) != tas {
		return "spv_values", fmt.Errorf("%d SPV values, %d include masses, %d thresholds; the shape gives %d, %d, %d", len(f.SPV), len(f.Include), len(f.Thresh), want, tas, tas)
	}
	return "", nil
}

// Model returns the float model: P(include) of a TA is its include mass /
// 2^Trainer.Bits, convtrain.Trainer.Model exactly.
func (f *ConvFile) Model() *conv.Model {
	h := f.Head
	h.Weights = append([]int32(nil), f.Head.Weights...)
	m := &conv.Model{Head: h, Include: make([]float64, f.TAs())}
	scale := math.Ldexp(1, -f.Trainer.Bits)
	for ta, v := range f.Include {
		m.Include[ta] = float64(v) * scale
	}
	return m
}

// Bank returns the model quantized to bits-bit include thresholds: at
// BankBits the stored bank (convtrain.Trainer.Bank(BankBits) bit for bit),
// at other widths every stored SPV quantized by fixed.QuantizeSPV, the
// threshold fixed.ThresholdOf (Trainer.Bank's rule, on SPVs rounded to
// SPVBits when those are narrower than the trainer's).
func (f *ConvFile) Bank(bits int) (*conv.Bank, error) {
	if err := fixed.CheckBits(bits); err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	h := f.Head
	h.Weights = append([]int32(nil), f.Head.Weights...)
	b := &conv.Bank{Head: h, Bits: bits, Thresh: make([]uint32, f.TAs())}
	if bits == f.BankBits {
		copy(b.Thresh, f.Thresh)
		return b, b.Check()
	}
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
	spv := func(ta int, q []uint32) error {
		for i, v := range f.SPV[ta*n2 : (ta+1)*n2] {
			q[i] = uint32(v)
		}
		return nil
	}
	var payload []byte
	var err error
	coding := f.SPVCoding
	switch coding {
	case SPVCodingDeflate:
		payload, err = encodeRecords(f.TAs(), n2, f.extras(), spv)
		coding = "" // files written before the field have none
	case "", SPVCodingRange:
		coding = SPVCodingRange
		payload, err = encodeRangePayload(f.TAs(), n2, f.SPVBits, f.extras(), spv)
	default:
		return nil, fmt.Errorf("%w: SPV coding %q, want %q or %q", ErrInvalid, f.SPVCoding, SPVCodingRange, SPVCodingDeflate)
	}
	if err != nil {
		return nil, err
	}
	split, err := json.Marshal(runsOfSplit(&f.Split))
	if err != nil {
		return nil, fmt.Errorf("modelfile: split: %w", err)
	}
	hd := f.Head
	h := convHeader{Kind: KindConv, Shape: hd.Shape, Structure: hd.Structure, Classes: f.Classes, Clauses: hd.Clauses, T: hd.T,
		Weights: hd.Weights, Thresholds: f.Encoder.Thresholds, Adaptive: f.Encoder.Adaptive, JitterSets: f.JitterSets, JitterSpread: f.JitterSpread,
		Trainer: f.Trainer, SPVBits: f.SPVBits, BankBits: f.BankBits, K: f.K, Mapping: f.Mapping, FixedMapping: f.FixedMapping, Split: split, Fingerprint: f.DataFingerprint,
		Calibration: f.Calibration, Recipe: f.Recipe, Lanes: f.Lanes, SPVCoding: coding, TAs: f.TAs(), SPVValues: len(f.SPV), PayloadBytes: int64(len(payload))}
	return frame(h, payload)
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
	return decodeConv(data, name, nil)
}

// decodeConv is DecodeConv; quote as for decode.
func decodeConv(data []byte, name string, quote *[]string) (*ConvFile, error) {
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
	if off, ok := trailingJSON(data, hl, dec); ok {
		return nil, fail(off, "header", ErrInvalid, "data after the header's JSON object, %d bytes into the header", off-16)
	}
	quoteNames(quote, "classes", h.Classes)
	if h.Kind != KindConv {
		return nil, fail(16, "kind", ErrInvalid, "kind %q, want %q", h.Kind, KindConv)
	}
	split, err := parseSplitRuns(h.Split)
	if err != nil {
		return nil, fail(16, "split", ErrInvalid, "%v", err)
	}
	coding := SPVCodingDeflate
	switch h.SPVCoding {
	case "":
	case SPVCodingRange:
		coding = SPVCodingRange
	default:
		return nil, fail(16, "spv_coding", ErrInvalid, "SPV coding %q, want %q (or none: %s)", h.SPVCoding, SPVCodingRange, SPVCodingDeflate)
	}
	f := &ConvFile{SPVCoding: coding, Head: conv.Head{Shape: h.Shape, Structure: h.Structure, Classes: len(h.Classes), Clauses: h.Clauses, T: h.T, Weights: h.Weights},
		Classes: h.Classes, Encoder: conv.Encoder{Thresholds: h.Thresholds, Adaptive: h.Adaptive}, JitterSets: h.JitterSets, JitterSpread: h.JitterSpread,
		Trainer: h.Trainer, SPVBits: h.SPVBits, BankBits: h.BankBits, K: h.K, Mapping: h.Mapping, FixedMapping: h.FixedMapping, Split: split, DataFingerprint: h.Fingerprint,
		Calibration: h.Calibration, Recipe: h.Recipe, Lanes: h.Lanes}
	// Check every field before allocating from them (the SPV count
	// against tas and spv_values, the slice itself comes later).
	if field, err := f.checkExceptSPV(); err != nil {
		return nil, fail(16, field, ErrInvalid, "%v", err)
	}
	tas := int64(h.Clauses) * int64(h.Shape.Literals())
	if int64(h.TAs) != tas || int64(h.SPVValues) != tas*2*int64(h.Trainer.N) {
		return nil, fail(16, "tas", ErrInvalid, "%d TAs and %d SPV values, the shape gives %d and %d", h.TAs, h.SPVValues, tas, tas*2*int64(h.Trainer.N))
	}
	maxR := maxRecords(tas, int64(h.SPVValues)) + 6*tas
	maxP := maxR + maxR/1024 + 1024
	if coding == SPVCodingRange {
		maxP = maxRangePayload(tas, int64(h.SPVValues))
	}
	if p := h.PayloadBytes; p < 1 || p > maxP || p*1032 < 2*tas {
		return nil, fail(16, "payload_bytes", ErrInvalid, "%d bytes for %d TAs, want %d..%d", p, tas, (2*tas+1031)/1032, maxP)
	}
	if want := 16 + hl + h.PayloadBytes + 32; int64(len(data)) != want {
		return nil, fail(int64(len(data)), "payload", ErrInvalid, "file is %d bytes, its header describes %d", len(data), want)
	}
	n2 := 2 * h.Trainer.N
	f.SPV = make([]uint16, h.SPVValues)
	f.Include = make([]uint16, tas)
	f.Thresh = make([]uint32, tas)
	lits := h.Shape.Literals()
	where := func(ta int) string {
		return fmt.Sprintf("payload: TA %d (clause %d, literal %d)", ta, ta/lits, ta%lits)
	}
	rest := func(rr *records) error {
		return f.readExtras(rr, func(ta int, what string, err error) error {
			return errorf(name, 16+hl, where(ta), ErrInvalid, "%s after the SPV records (byte %d of the inflated records): %v", what, rr.n, err)
		})
	}
	put := func(ta int, q []uint32) error {
		dst := f.SPV[ta*n2 : (ta+1)*n2]
		for i, v := range q {
			dst[i] = uint16(v)
		}
		return nil
	}
	if coding == SPVCodingRange {
		err = decodeRangePayload(data, name, 16+hl, h.PayloadBytes, int(tas), n2, h.SPVBits, where, rest, put)
	} else {
		err = decodeRecords(data, name, 16+hl, h.PayloadBytes, int(tas), n2, h.SPVBits, where, rest, put)
	}
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
	return readAny(path, nil)
}

// ReadAnyQuoted is ReadAny for looking at a file rather than using it
// (ptm inspect): a class or feature name that ReadAny refuses for a
// control or bidirectional-control character (internal/names) is
// accepted in its escaped form (names.Quote: "\x1b[31mred" with the
// quotes), and quoted lists the names so changed ("classes[1]", ...).
// A file written before names were checked stays inspectable, and the
// characters never reach the terminal; every other check is ReadAny's.
func ReadAnyQuoted(path string) (tab *File, cv *ConvFile, hash string, quoted []string, err error) {
	quoted = []string{}
	tab, cv, hash, err = readAny(path, &quoted)
	return tab, cv, hash, quoted, err
}

// readAny is ReadAny; quote as for decode.
func readAny(path string, quote *[]string) (tab *File, cv *ConvFile, hash string, err error) {
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
		cv, err = decodeConv(data, path, quote)
		if err != nil {
			return nil, nil, "", err
		}
		return nil, cv, Hash(data), nil
	}
	tab, err = decode(data, path, quote)
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

// incOf is the include mass of a stored SPV.
func (f *ConvFile) incOf(ta int) int64 {
	n, n2 := f.Trainer.N, 2*f.Trainer.N
	var inc int64
	for _, v := range f.SPV[ta*n2+n : (ta+1)*n2] {
		inc += int64(v)
	}
	return inc
}

// threshOf predicts a TA's bank threshold from its include mass: the
// mass rounded to BankBits, saturated.
func (f *ConvFile) threshOf(inc int64) int64 {
	b, bb := f.Trainer.Bits, f.BankBits
	var t int64
	if bb >= b {
		t = inc << uint(bb-b)
	} else {
		t = (inc + 1<<uint(b-bb-1)) >> uint(b-bb)
	}
	return min(t, 1<<uint(bb)-1)
}

// extras codes what follows the SPV records in a convolutional payload:
// every TA's include mass less its stored SPV's (scaled to the trainer's
// width), then every TA's bank threshold less threshOf its include mass,
// zigzag varints (0 but for rounding: DEFLATE takes them to almost
// nothing).
func (f *ConvFile) extras() []byte {
	sh := uint(f.Trainer.Bits - f.SPVBits)
	out := make([]byte, 0, 2*f.TAs())
	for ta, v := range f.Include {
		out = binary.AppendUvarint(out, zig(int64(v)-f.incOf(ta)<<sh))
	}
	for ta, v := range f.Thresh {
		out = binary.AppendUvarint(out, zig(int64(v)-f.threshOf(int64(f.Include[ta]))))
	}
	return out
}

// readExtras reads extras' values into f.Include and f.Thresh (f.SPV
// read); fail names the TA and the part.
func (f *ConvFile) readExtras(rr *records, fail func(ta int, what string, err error) error) error {
	sh := uint(f.Trainer.Bits - f.SPVBits)
	for ta := range f.Include {
		u, err := rr.uvarint()
		if err != nil {
			return fail(ta, "include mass", err)
		}
		v := f.incOf(ta)<<sh + unzig(u)
		if v < 0 || v > 1<<uint(f.Trainer.Bits) {
			return fail(ta, "include mass", fmt.Errorf("%d outside 0..2^%d", v, f.Trainer.Bits))
		}
		f.Include[ta] = uint16(v)
	}
	for ta := range f.Thresh {
		u, err := rr.uvarint()
		if err != nil {
			return fail(ta, "bank threshold", err)
		}
		v := f.threshOf(int64(f.Include[ta])) + unzig(u)
		if v < 0 || v >= 1<<uint(f.BankBits) {
			return fail(ta, "bank threshold", fmt.Errorf("%d outside 0..%d", v, 1<<uint(f.BankBits)-1))
		}
		f.Thresh[ta] = uint32(v)
	}
	return nil
}

func zig(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// SetSPVs fills f.SPV at f.SPVBits from the trainer's SPVs (spv(ta), masses
// summing to 2^Trainer.Bits), rounding each half by half (roundHalves:
// the stored include mass is the trainer's rounded to SPVBits) when
// SPVBits is narrower, and f.Include with the trainer's include masses.
func (f *ConvFile) SetSPVs(spv func(ta int) []uint16) error {
	n, n2 := f.Trainer.N, 2*f.Trainer.N
	tas := f.TAs()
	f.SPV = make([]uint16, tas*n2)
	f.Include = make([]uint16, tas)
	var rs []remainder
	for ta := 0; ta < tas; ta++ {
		src := spv(ta)
		if len(src) != n2 {
			return fmt.Errorf("modelfile: TA %d has %d states, want %d", ta, len(src), n2)
		}
		var inc int
		for _, v := range src[n:] {
			inc += int(v)
		}
		f.Include[ta] = uint16(inc)
		dst := f.SPV[ta*n2 : (ta+1)*n2]
		if f.SPVBits == f.Trainer.Bits {
			copy(dst, src)
			continue
		}
		if err := roundHalves(src, n, uint(f.Trainer.Bits-f.SPVBits), dst, &rs); err != nil {
			return fmt.Errorf("modelfile: TA %d: %w", ta, err)
		}
	}
	return nil
}

// roundHalves rounds an SPV src of 2n states (masses summing to 2^B) to
// dst at B-sh bits, the include half (states n..2n-1) and the exclude
// half each by the largest remainder to their own rounded total: the
// include half holds the include mass of src rounded to the nearest unit
// of 2^-(B-sh) (halves up), the exclude half the rest. So the stored
// P(include) is within half a unit of the trainer's, however many states
// there are (rounding the whole SPV at once moves it by up to n units).
// Ties between remainders go to the lower state. scratch is reused
// between calls (nil allowed).
func roundHalves(src []uint16, n int, sh uint, dst []uint16, scratch *[]remainder) error {
	if len(src) != 2*n || len(dst) != 2*n || sh > 15 {
		return fmt.Errorf("modelfile: %d and %d states, shift %d: want 2N = %d each, shift <= 15", len(src), len(dst), sh, 2*n)
	}
	var inc, all uint32
	for i, v := range src {
		all += uint32(v)
		if i >= n {
			inc += uint32(v)
		}
	}
	if all == 0 || all&(1<<sh-1) != 0 {
		return fmt.Errorf("modelfile: an SPV holding %d, want a positive multiple of 2^%d", all, sh)
	}
	tinc := (inc + (1<<sh)>>1) >> sh
	if sh == 0 {
		tinc = inc
	}
	rs := scratch
	if rs == nil {
		rs = new([]remainder)
	}
	for h, target := range [2]uint32{all>>sh - tinc, tinc} {
		part, out := src[h*n:(h+1)*n], dst[h*n:(h+1)*n]
		r := (*rs)[:0]
		var sum uint32
		for i, v := range part {
			out[i] = v >> sh
			sum += uint32(v >> sh)
			if m := v & (1<<sh - 1); m != 0 {
				r = append(r, remainder{m, i})
			}
		}
		left := int(target) - int(sum)
		if left < 0 || left > len(r) {
			return fmt.Errorf("modelfile: cannot distribute %d units over %d states", left, len(r))
		}
		if left > 0 && left < len(r) {
			slices.SortFunc(r, func(a, b remainder) int {
				if a.rem != b.rem {
					return int(b.rem) - int(a.rem)
				}
				return a.state - b.state
			})
		}
		for _, x := range r[:left] {
			out[x.state]++
		}
		*rs = r
	}
	return nil
}

// remainder is a state's remainder in roundHalves.
type remainder struct {
	rem   uint16
	state int
}
