package conv

import (
	"fmt"
	"math"
)

// Encoder booleanizes 8-bit pixels into bit-planes: plane p's bit is
// pixel > Thresholds[p].
type Encoder struct {
	Thresholds []int `json:"thresholds"`
}

// Validate checks the encoder against a shape.
func (e Encoder) Validate(s Shape) error {
	if len(e.Thresholds) != s.Planes {
		return fmt.Errorf("conv: encoder has %d thresholds, shape has %d bit-planes", len(e.Thresholds), s.Planes)
	}
	for p, t := range e.Thresholds {
		if t < -1 || t > 255 {
			return fmt.Errorf("conv: plane %d threshold %d, want -1..255", p, t)
		}
	}
	return nil
}

// Booleanize writes the bit-planes of img (H*W pixels, row-major) into
// dst (Planes*H*W bits, plane-major), growing dst if needed.
func (e Encoder) Booleanize(s Shape, img []uint8, dst []bool) ([]bool, error) {
	if err := e.Validate(s); err != nil {
		return nil, err
	}
	if len(img) != s.Pixels() {
		return nil, fmt.Errorf("conv: image has %d pixels, shape %dx%d needs %d", len(img), s.H, s.W, s.Pixels())
	}
	n := s.Planes * s.Pixels()
	if cap(dst) < n {
		dst = make([]bool, n)
	}
	dst = dst[:n]
	for p, t := range e.Thresholds {
		for i, v := range img {
			dst[p*len(img)+i] = int(v) > t
		}
	}
	return dst, nil
}

// Encode booleanizes img and fills pt with its patches; buf is scratch
// (returned grown).
func (e Encoder) Encode(img []uint8, pt *Patches, buf []bool) ([]bool, error) {
	buf, err := e.Booleanize(pt.Shape, img, buf)
	if err != nil {
		return buf, err
	}
	return buf, pt.Fill(buf)
}

// Jitter returns M encoders, the image counterpart of the tabular sampled
// input encoding (docs/uncertainty.md): set j's thresholds are base's
// moved by d_j = round(spread * (2j/(M-1) - 1)) (d_0 = 0 when M = 1),
// clamped to -1..255, so the sets spread evenly over [-spread, +spread]
// around the base thresholds. An inference query draws its samples from
// the sets in turn (Sampler.RunSets, Core.RunSets).
func Jitter(base Encoder, m, spread int) ([]Encoder, error) {
	if m < 1 {
		return nil, fmt.Errorf("conv: %d threshold sets, want >= 1", m)
	}
	if spread < 0 || spread > 255 {
		return nil, fmt.Errorf("conv: threshold spread %d, want 0..255", spread)
	}
	sets := make([]Encoder, m)
	for j := range sets {
		d := 0
		if m > 1 {
			d = int(math.Round(float64(spread) * (2*float64(j)/float64(m-1) - 1)))
		}
		th := make([]int, len(base.Thresholds))
		for p, t := range base.Thresholds {
			th[p] = max(-1, min(255, t+d))
		}
		sets[j] = Encoder{Thresholds: th}
	}
	return sets, nil
}

// SetSamples returns K_m, the samples set m of M draws in a query of K:
// floor(K/M) + (1 if m < K mod M), as docs/fixed-point.md section 8.
func SetSamples(K, M, m int) int {
	k := K / M
	if m < K%M {
		k++
	}
	return k
}
