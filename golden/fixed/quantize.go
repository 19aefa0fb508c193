package fixed

import (
	"fmt"
	"math"
	"sort"

	"github.com/ptmhw/ptm/golden/ptm"
)

// Bit widths supported for quantized probabilities. B = 4 keeps the
// predictions and uncertainty of the default models (docs/fixed-point.md
// 2.3) and lets four lanes share one 16-bit block-RAM word.
const (
	MinBits = 4
	MaxBits = 16
)

// Shape is the model shape the hardware needs (docs/fixed-point.md 1).
type Shape struct {
	Binary   bool `json:"binary"`
	Classes  int  `json:"classes"`  // NC
	TMs      int  `json:"tms"`      // NT
	Clauses  int  `json:"clauses"`  // m, per TM
	Features int  `json:"features"` // o
	T        int  `json:"t"`
}

// ShapeOf returns the shape of a float model.
func ShapeOf(m *ptm.Model) Shape {
	return Shape{Binary: m.Binary, Classes: m.NumClasses, TMs: m.NumTMs(), Clauses: m.Clauses, Features: m.NumFeatures, T: m.T}
}

// TotalClauses is NT*m.
func (s Shape) TotalClauses() int { return s.TMs * s.Clauses }

// Literals is 2o.
func (s Shape) Literals() int { return 2 * s.Features }

// TAs is NT*m*2o.
func (s Shape) TAs() int { return s.TotalClauses() * s.Literals() }

// Validate checks the shape against the hardware's limits.
func (s Shape) Validate() error {
	switch {
	case s.Classes < 2 || s.Classes > MaxClasses:
		return fmt.Errorf("fixed: %d classes, want 2..%d", s.Classes, MaxClasses)
	case s.Binary && (s.Classes != 2 || s.TMs != 1):
		return fmt.Errorf("fixed: binary shape with %d classes and %d TMs", s.Classes, s.TMs)
	case !s.Binary && s.TMs != s.Classes:
		return fmt.Errorf("fixed: multiclass shape with %d classes but %d TMs", s.Classes, s.TMs)
	case s.Clauses < 1:
		return fmt.Errorf("fixed: %d clauses per TM, want >= 1", s.Clauses)
	case s.Features < 1:
		return fmt.Errorf("fixed: %d features, want >= 1", s.Features)
	case s.T < 1:
		return fmt.Errorf("fixed: T = %d, want >= 1", s.T)
	}
	return nil
}

// MaxClasses bounds NC so that lcm(1..NC) vote units stay small.
const MaxClasses = 16

// Bank is a quantized model: the full B-bit SPV of every TA and the B-bit
// include threshold the hardware stores.
type Bank struct {
	Shape
	Bits int `json:"bits"`
	N    int `json:"n"`
	// SPV holds the quantized SPVs, 2N values per TA in flat TA order,
	// each summing to exactly 2^Bits.
	SPV []uint32 `json:"-"`
	// Thresh holds one B-bit include threshold per TA in flat TA order
	// (docs/fixed-point.md 2.2).
	Thresh []uint32 `json:"-"`
}

// CheckBits validates a probability width.
func CheckBits(b int) error {
	if b < MinBits || b > MaxBits {
		return fmt.Errorf("fixed: %d-bit probabilities, want %d..%d", b, MinBits, MaxBits)
	}
	return nil
}

// QuantizeSPV quantizes one SPV to integers summing to exactly 2^bits by the
// largest-remainder method (docs/fixed-point.md 2.1). dst must have len(p).
func QuantizeSPV(p []float64, bits int, dst []uint32) error {
	var sum float64
	for n, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("fixed: state %d probability %v is not finite and non-negative", n, v)
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return fmt.Errorf("fixed: SPV mass %v, want > 0", sum)
	}
	scale := float64(uint64(1) << uint(bits))
	type rem struct {
		r float64
		n int
	}
	var rems []rem
	var total uint64
	for n, v := range p {
		f := v / sum * scale
		q := math.Floor(f)
		dst[n] = uint32(q)
		total += uint64(q)
		if v > 0 {
			rems = append(rems, rem{f - q, n})
		}
	}
	left := int64(uint64(1)<<uint(bits)) - int64(total)
	if left < 0 || left > int64(len(rems)) {
		return fmt.Errorf("fixed: cannot distribute %d units of mass over %d states", left, len(rems))
	}
	if left == 0 { // exact already (a model read from a model file): no sort
		return nil
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for i := int64(0); i < left; i++ {
		dst[rems[i].n]++
	}
	return nil
}

// ThresholdOf returns the B-bit include threshold of a quantized SPV:
// min(include mass, 2^B - 1), where all ones means "always include".
func ThresholdOf(q []uint32, bits int) uint32 {
	n := len(q) / 2
	var inc uint64
	for _, v := range q[n:] {
		inc += uint64(v)
	}
	max := uint64(1)<<uint(bits) - 1
	if inc > max {
		inc = max
	}
	return uint32(inc)
}

// Quantize quantizes every SPV of m to bits-bit fixed point.
func Quantize(m *ptm.Model, bits int) (*Bank, error) {
	if err := CheckBits(bits); err != nil {
		return nil, err
	}
	sh := ShapeOf(m)
	if err := sh.Validate(); err != nil {
		return nil, err
	}
	n2 := 2 * m.N
	b := &Bank{Shape: sh, Bits: bits, N: m.N, SPV: make([]uint32, len(m.SPV)), Thresh: make([]uint32, m.NumTAs())}
	for ta := 0; ta < m.NumTAs(); ta++ {
		q := b.SPV[ta*n2 : (ta+1)*n2]
		if err := QuantizeSPV(m.SPV[ta*n2:(ta+1)*n2], bits, q); err != nil {
			return nil, fmt.Errorf("TA %d: %w", ta, err)
		}
		b.Thresh[ta] = ThresholdOf(q, bits)
	}
	return b, nil
}

// Include returns the include probability a threshold stands for.
func (b *Bank) Include(ta int) float64 {
	q := b.Thresh[ta]
	if q == 1<<uint(b.Bits)-1 {
		return 1
	}
	return float64(q) / float64(uint64(1)<<uint(b.Bits))
}

// Check verifies that the bank is consistent: sizes, every SPV summing to
// 2^Bits, thresholds derived from the SPVs.
func (b *Bank) Check() error {
	if err := CheckBits(b.Bits); err != nil {
		return err
	}
	if err := b.Shape.Validate(); err != nil {
		return err
	}
	n2 := 2 * b.N
	if b.N < 1 || len(b.SPV) != b.TAs()*n2 || len(b.Thresh) != b.TAs() {
		return fmt.Errorf("fixed: bank sizes %d SPV values / %d thresholds do not fit %d TAs of %d states", len(b.SPV), len(b.Thresh), b.TAs(), n2)
	}
	for ta := 0; ta < b.TAs(); ta++ {
		q := b.SPV[ta*n2 : (ta+1)*n2]
		var s uint64
		for _, v := range q {
			s += uint64(v)
		}
		if s != 1<<uint(b.Bits) {
			return fmt.Errorf("fixed: TA %d quantized mass %d, want %d", ta, s, 1<<uint(b.Bits))
		}
		if want := ThresholdOf(q, b.Bits); b.Thresh[ta] != want {
			return fmt.Errorf("fixed: TA %d threshold %d, its SPV gives %d", ta, b.Thresh[ta], want)
		}
	}
	return nil
}

// RandomBank returns a bank of the given shape with random thresholds,
// for testing hardware on untrained models: a mix of exact 0, exact
// always-include and uniform values, drawn from next (a uniform uint64
// source). It has no full SPVs.
func RandomBank(sh Shape, bits int, next func() uint64) (*Bank, error) {
	if err := CheckBits(bits); err != nil {
		return nil, err
	}
	if err := sh.Validate(); err != nil {
		return nil, err
	}
	b := &Bank{Shape: sh, Bits: bits, Thresh: make([]uint32, sh.TAs())}
	max := uint64(1)<<uint(bits) - 1
	// About one TA per clause is "active" (always included or uniform), the
	// rest exact zeros or small values, so clause outputs vary as in a
	// trained model instead of being almost always 0.
	active := uint64(sh.Features)
	for i := range b.Thresh {
		r := next()
		switch {
		case r%active != 0 && (r>>32)%4 != 0:
			b.Thresh[i] = 0
		case r%active != 0:
			b.Thresh[i] = uint32((r >> 8) % (max/16 + 1))
		case (r>>32)%2 == 0:
			b.Thresh[i] = uint32(max)
		default:
			b.Thresh[i] = uint32((r >> 8) % (max + 1))
		}
	}
	return b, nil
}
