package conv

import (
	"fmt"
	"math"
)

// Encoder booleanizes 8-bit pixels into bit-planes: plane p's bit is
// pixel > Thresholds[p]; with Adaptive set, one more plane follows them,
// the pixel against its neighbourhood (AdaptiveThreshold).
type Encoder struct {
	Thresholds []int              `json:"thresholds"`
	Adaptive   *AdaptiveThreshold `json:"adaptive,omitempty"`
}

// AdaptiveThreshold is a bit-plane of local contrast, OpenCV's adaptive
// Gaussian thresholding in integer arithmetic: a pixel's bit is 1 when
// pixel > m - C, m the mean of its Block x Block neighbourhood weighted by
// a Gaussian of sigma 0.3 ((Block-1)/2 - 1) + 0.8 (OpenCV's default),
// the image's edge pixels repeated beyond it. The weights are
// GaussianWeights (integers); the comparison is exact:
// (pixel + C) * S^2 > sum of weight(dy) * weight(dx) * pixel(y+dy, x+dx),
// S the weights' sum.
type AdaptiveThreshold struct {
	Block int `json:"block"`
	C     int `json:"c"`
}

// MaxAdaptiveBlock bounds AdaptiveThreshold.Block.
const MaxAdaptiveBlock = 31

// Validate checks the parameters: Block odd in 3..MaxAdaptiveBlock, C in
// -255..255.
func (a AdaptiveThreshold) Validate() error {
	if a.Block < 3 || a.Block > MaxAdaptiveBlock || a.Block%2 == 0 {
		return fmt.Errorf("conv: adaptive threshold block %d, want odd 3..%d", a.Block, MaxAdaptiveBlock)
	}
	if a.C < -255 || a.C > 255 {
		return fmt.Errorf("conv: adaptive threshold C %d, want -255..255", a.C)
	}
	return nil
}

// GaussianWeights returns the integer weights of the adaptive plane's
// kernel, offsets -Block/2 .. Block/2: round(256 exp(-d^2 / (2 sigma^2))).
func (a AdaptiveThreshold) GaussianWeights() []int64 {
	r := a.Block / 2
	sigma := 0.3*(float64(a.Block-1)*0.5-1) + 0.8
	w := make([]int64, a.Block)
	for i := range w {
		d := float64(i - r)
		w[i] = int64(math.Round(256 * math.Exp(-d*d/(2*sigma*sigma))))
	}
	return w
}

// Planes is the number of bit-planes the encoder writes.
func (e Encoder) Planes() int {
	if e.Adaptive != nil {
		return len(e.Thresholds) + 1
	}
	return len(e.Thresholds)
}

// Validate checks the encoder against a shape.
func (e Encoder) Validate(s Shape) error {
	if e.Planes() != s.Planes {
		return fmt.Errorf("conv: encoder has %d thresholds and %d adaptive planes, shape has %d bit-planes", len(e.Thresholds), e.Planes()-len(e.Thresholds), s.Planes)
	}
	for p, t := range e.Thresholds {
		if t < -1 || t > 255 {
			return fmt.Errorf("conv: plane %d threshold %d, want -1..255", p, t)
		}
	}
	if e.Adaptive != nil {
		if err := e.Adaptive.Validate(); err != nil {
			return err
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
	if e.Adaptive != nil {
		e.Adaptive.plane(s.H, s.W, img, dst[len(e.Thresholds)*len(img):])
	}
	return dst, nil
}

// plane writes the adaptive bit-plane of an h x w image into dst.
func (a AdaptiveThreshold) plane(h, w int, img []uint8, dst []bool) {
	k := a.GaussianWeights()
	r := a.Block / 2
	var sum int64
	for _, v := range k {
		sum += v
	}
	s2 := sum * sum
	rows := make([]int64, h*w) // horizontal pass
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var acc int64
			for d := -r; d <= r; d++ {
				acc += k[d+r] * int64(img[y*w+max(0, min(w-1, x+d))])
			}
			rows[y*w+x] = acc
		}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var acc int64
			for d := -r; d <= r; d++ {
				acc += k[d+r] * rows[max(0, min(h-1, y+d))*w+x]
			}
			dst[y*w+x] = (int64(img[y*w+x])+int64(a.C))*s2 > acc
		}
	}
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
// around the base thresholds (the adaptive plane, if any, is every set's
// alike). An inference query draws its samples from
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
		sets[j] = Encoder{Thresholds: th, Adaptive: base.Adaptive}
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
