package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// PCG stream constants (the second argument of rand.NewPCG), one per
// generator: the ASCII bytes of an 8-character tag, big-endian.
const (
	streamNoisyXOR        = 0x70746d2f786f7232 // "ptm/xor2"
	streamNoisyXORClassic = 0x70746d2f786f7263 // "ptm/xorc"
	streamSynth2DTrain    = 0x70746d2f32647472 // "ptm/2dtr"
	streamSynth2DTest     = 0x70746d2f32647465 // "ptm/2dte"
	streamSplit           = 0x70746d2f73706c74 // "ptm/splt"
)

// binaryClasses are the class names of the two-class generators.
var binaryClasses = []string{"0", "1"}

func checkXORArgs(fn string, n int, noise float64) {
	if n < 0 {
		panic(fmt.Sprintf("dataset.%s: negative sample count %d", fn, n))
	}
	if !(noise >= 0 && noise <= 1) {
		panic(fmt.Sprintf("dataset.%s: noise %v outside [0,1]", fn, noise))
	}
}

// NoisyXOR returns the paper's noisy-XOR variant: n samples with two binary
// features x1, x2 (values 0 or 1 as float64) and label x1 XOR x2, inverted
// with probability noise (the paper uses 0.3). Classes are "0" and "1".
//
// Generation, with r := rand.New(rand.NewPCG(seed, 0x70746d2f786f7232)):
// for each sample in order, x1 = r.IntN(2), x2 = r.IntN(2), u = r.Float64(),
// and the label is flipped when u < noise. u is drawn even when noise is 0,
// so for one seed the features are identical at every noise level and only
// labels differ. Use different seeds for a training and a test set.
//
// NoisyXOR panics if n < 0 or noise is not in [0, 1].
func NoisyXOR(n int, noise float64, seed uint64) *Dataset {
	checkXORArgs("NoisyXOR", n, noise)
	return noisyXOR("noisy-xor", []string{"x1", "x2"}, n, noise, rand.NewPCG(seed, streamNoisyXOR))
}

// NoisyXORClassic returns the classic Tsetlin Machine noisy-XOR benchmark:
// n samples with 12 binary features x0..x11 (0 or 1 as float64), of which
// only x0 and x1 are informative: the label is x0 XOR x1, inverted with
// probability noise, and x2..x11 are independent fair coin flips. Classes
// are "0" and "1". The benchmark trains on 5000 samples with noise 0.4 and
// tests on 5000 noise-free samples (noise 0, another seed).
//
// Generation, with r := rand.New(rand.NewPCG(seed, 0x70746d2f786f7263)):
// for each sample in order, x0..x11 = r.IntN(2) in feature order, then
// u = r.Float64(), and the label is flipped when u < noise. As in
// [NoisyXOR], u is always drawn, so the features do not depend on noise.
//
// NoisyXORClassic panics if n < 0 or noise is not in [0, 1].
func NoisyXORClassic(n int, noise float64, seed uint64) *Dataset {
	checkXORArgs("NoisyXORClassic", n, noise)
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("x%d", i)
	}
	return noisyXOR("noisy-xor-classic", names, n, noise, rand.NewPCG(seed, streamNoisyXORClassic))
}

// noisyXOR draws n samples of len(features) fair bits; the label is the XOR
// of the first two bits, flipped with probability noise.
func noisyXOR(name string, features []string, n int, noise float64, src rand.Source) *Dataset {
	r := rand.New(src)
	d := &Dataset{
		Name:     name,
		Features: features,
		Classes:  append([]string(nil), binaryClasses...),
		X:        make([][]float64, n),
		Y:        make([]int, n),
	}
	backing := make([]float64, n*len(features))
	for i := range n {
		row := backing[i*len(features) : (i+1)*len(features) : (i+1)*len(features)]
		for f := range row {
			row[f] = float64(r.IntN(2))
		}
		y := int(row[0]) ^ int(row[1])
		if r.Float64() < noise {
			y ^= 1
		}
		d.X[i] = row
		d.Y[i] = y
	}
	return d
}

// Bounds of the [Synthetic2D] data, as half-widths of squares centred on the
// origin: training points lie in [-Synthetic2DTrainRegion,
// +Synthetic2DTrainRegion]^2 and test points in [-Synthetic2DTestRange,
// +Synthetic2DTestRange)^2. A test point p is inside the training region
// when max(|p[0]|, |p[1]|) <= Synthetic2DTrainRegion.
const (
	Synthetic2DTrainRegion = 2.0
	Synthetic2DTestRange   = 6.0
)

// Parameters of the Synthetic2D class blobs.
const (
	synth2DTrainN = 1000
	synth2DTestN  = 2000
	synth2DCentre = 0.8 // class 0 centred at (-0.8,-0.8), class 1 at (+0.8,+0.8)
	synth2DSigma  = 0.7
)

// Synthetic2D returns the two-dimensional binary set used to visualise
// uncertainty (the paper's Fig. "Synthetic binary classification dataset"):
// 1000 labelled training points inside a bounded square and 2000 unlabelled
// test points spread uniformly over a three times wider square, so that a
// model's uncertainty can be compared inside and far outside the data.
//
// Training set (features "x1", "x2"; classes "0", "1"): sample i has class
// i mod 2, so there are exactly 500 of each, alternating. A class-c point is
// an isotropic Gaussian draw with standard deviation 0.7 around (-0.8, -0.8)
// for class 0 and (+0.8, +0.8) for class 1, truncated to the training region
// [-2, 2]^2 by rejection: with r := rand.New(rand.NewPCG(seed,
// 0x70746d2f32647472)), draw x1 = mu + 0.7*r.NormFloat64(), then
// x2 = mu + 0.7*r.NormFloat64(), and redraw both until both lie in [-2, 2].
// The classes overlap along the diagonal x1 + x2 = 0: the Bayes error of the
// untruncated blobs is Phi(-0.8*sqrt(2)/0.7), about 5.3%, so the set is
// separable-ish with a band of genuinely ambiguous points.
//
// Test set: 2000 points, each x1 = -6 + 12*u then x2 = -6 + 12*u with u =
// r2.Float64() and r2 := rand.New(rand.NewPCG(seed, 0x70746d2f32647465)),
// i.e. uniform over [-6, 6)^2. It uses its own stream, so it does not depend
// on how many training draws were rejected. About 1/9 of the test points
// fall inside the training region.
func Synthetic2D(seed uint64) (train *Dataset, test [][]float64) {
	r := rand.New(rand.NewPCG(seed, streamSynth2DTrain))
	train = &Dataset{
		Name:     "synthetic-2d",
		Features: []string{"x1", "x2"},
		Classes:  append([]string(nil), binaryClasses...),
		X:        make([][]float64, synth2DTrainN),
		Y:        make([]int, synth2DTrainN),
	}
	const lim = Synthetic2DTrainRegion
	for i := range synth2DTrainN {
		c := i % 2
		mu := -synth2DCentre
		if c == 1 {
			mu = synth2DCentre
		}
		var x1, x2 float64
		for {
			// The conversions forbid fused multiply-add, keeping results
			// identical on every architecture for the same NormFloat64 output.
			x1 = mu + float64(synth2DSigma*r.NormFloat64())
			x2 = mu + float64(synth2DSigma*r.NormFloat64())
			if math.Abs(x1) <= lim && math.Abs(x2) <= lim {
				break
			}
		}
		train.X[i] = []float64{x1, x2}
		train.Y[i] = c
	}

	r2 := rand.New(rand.NewPCG(seed, streamSynth2DTest))
	const w = Synthetic2DTestRange
	test = make([][]float64, synth2DTestN)
	for i := range test {
		x1 := -w + float64(2*w*r2.Float64())
		x2 := -w + float64(2*w*r2.Float64())
		test[i] = []float64{x1, x2}
	}
	return train, test
}
