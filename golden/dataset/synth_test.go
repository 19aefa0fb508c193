package dataset

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"
)

func TestStreamConstants(t *testing.T) {
	tests := []struct {
		got uint64
		tag string
	}{
		{streamNoisyXOR, "ptm/xor2"},
		{streamNoisyXORClassic, "ptm/xorc"},
		{streamSynth2DTrain, "ptm/2dtr"},
		{streamSynth2DTest, "ptm/2dte"},
		{streamSplit, "ptm/splt"},
	}
	for _, tc := range tests {
		if want := binary.BigEndian.Uint64([]byte(tc.tag)); tc.got != want {
			t.Errorf("stream %q = %#x, want %#x", tc.tag, tc.got, want)
		}
	}
}

// flipRate returns the fraction of labels that differ from x[a] XOR x[b].
func flipRate(d *Dataset, a, b int) float64 {
	flips := 0
	for i, row := range d.X {
		if int(row[a])^int(row[b]) != d.Y[i] {
			flips++
		}
	}
	return float64(flips) / float64(d.Len())
}

func TestNoisyXOR(t *testing.T) {
	const n = 10000
	tests := []struct {
		name      string
		gen       func(n int, noise float64, seed uint64) *Dataset
		nFeatures int
		a, b      int // informative features
	}{
		{"paper", NoisyXOR, 2, 0, 1},
		{"classic", NoisyXORClassic, 12, 0, 1},
	}
	for _, tc := range tests {
		for _, noise := range []float64{0, 0.3, 0.4, 1} {
			d := tc.gen(n, noise, 7)
			if err := d.Validate(); err != nil {
				t.Fatalf("%s noise %v: Validate: %v", tc.name, noise, err)
			}
			if d.Len() != n || len(d.Features) != tc.nFeatures || !reflect.DeepEqual(d.Classes, []string{"0", "1"}) {
				t.Fatalf("%s: shape %d x %d classes %q", tc.name, d.Len(), len(d.Features), d.Classes)
			}
			// Label noise rate: binomial standard error at n=10000 is <= 0.005.
			if got := flipRate(d, tc.a, tc.b); math.Abs(got-noise) > 0.02 {
				t.Errorf("%s: noise %v: flip rate %.4f", tc.name, noise, got)
			}
			// Every feature is a fair binary coin.
			for f := range d.Features {
				ones := 0
				for _, row := range d.X {
					switch row[f] {
					case 1:
						ones++
					case 0:
					default:
						t.Fatalf("%s: feature %d value %v not binary", tc.name, f, row[f])
					}
				}
				if p := float64(ones) / n; math.Abs(p-0.5) > 0.02 {
					t.Errorf("%s: feature %d: P(1) = %.4f, want about 0.5", tc.name, f, p)
				}
			}
		}
		// Noise changes labels only: the features are the same for one seed.
		clean, noisy := tc.gen(500, 0, 3), tc.gen(500, 0.4, 3)
		if !reflect.DeepEqual(clean.X, noisy.X) {
			t.Errorf("%s: features depend on the noise level", tc.name)
		}
		// Same seed, same data; another seed, other data.
		if !reflect.DeepEqual(tc.gen(500, 0.4, 3), noisy) {
			t.Errorf("%s: same seed gave different data", tc.name)
		}
		if reflect.DeepEqual(tc.gen(500, 0.4, 4).X, noisy.X) {
			t.Errorf("%s: seeds 3 and 4 gave identical features", tc.name)
		}
	}
}

func TestNoisyXORClassicNuisance(t *testing.T) {
	// The ten nuisance features carry no information about the label.
	d := NoisyXORClassic(10000, 0, 11)
	for f := 2; f < 12; f++ {
		agree := 0
		for i, row := range d.X {
			if int(row[f]) == d.Y[i] {
				agree++
			}
		}
		if p := float64(agree) / 10000; math.Abs(p-0.5) > 0.03 {
			t.Errorf("feature x%d agrees with the label %.4f of the time", f, p)
		}
	}
	if want := []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11"}; !reflect.DeepEqual(d.Features, want) {
		t.Errorf("Features = %q", d.Features)
	}
}

// TestGeneratorsPinned pins the first values of each generator, so a change
// in the random streams (ours or the standard library's) is noticed.
func TestGeneratorsPinned(t *testing.T) {
	x := NoisyXOR(6, 0.3, 1)
	wantX := [][]float64{{1, 1}, {0, 0}, {1, 1}, {0, 0}, {0, 0}, {1, 0}}
	wantY := []int{1, 0, 0, 0, 0, 1}
	if !reflect.DeepEqual(x.X, wantX) || !reflect.DeepEqual(x.Y, wantY) {
		t.Errorf("NoisyXOR(6, 0.3, 1) = %v %v, want %v %v", x.X, x.Y, wantX, wantY)
	}
	c := NoisyXORClassic(2, 0.4, 1)
	wantCX := [][]float64{
		{0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 0},
		{1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0},
	}
	wantCY := []int{1, 0}
	if !reflect.DeepEqual(c.X, wantCX) || !reflect.DeepEqual(c.Y, wantCY) {
		t.Errorf("NoisyXORClassic(2, 0.4, 1) = %v %v, want %v %v", c.X, c.Y, wantCX, wantCY)
	}
	train, test := Synthetic2D(1)
	wantTrain := [][]float64{{-0.9785680255512721, -1.0927621352397026}, {0.21148060576272798, 1.8661466423366417}}
	wantTest := [][]float64{{2.9839982072440794, 0.20215938215112406}, {4.2195931036973455, 1.3839180586374145}}
	if !reflect.DeepEqual(train.X[:2], wantTrain) {
		t.Errorf("Synthetic2D(1) train[:2] = %v, want %v", train.X[:2], wantTrain)
	}
	if !reflect.DeepEqual(test[:2], wantTest) {
		t.Errorf("Synthetic2D(1) test[:2] = %v, want %v", test[:2], wantTest)
	}
}

func TestSynthetic2D(t *testing.T) {
	train, test := Synthetic2D(2024)
	if err := train.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if train.Len() != 1000 || len(test) != 2000 {
		t.Fatalf("sizes %d/%d, want 1000/2000", train.Len(), len(test))
	}
	if got := train.ClassCounts(); !reflect.DeepEqual(got, []int{500, 500}) {
		t.Errorf("ClassCounts = %v, want [500 500]", got)
	}
	var sum [2][2]float64
	correct := 0
	for i, p := range train.X {
		if train.Y[i] != i%2 {
			t.Fatalf("label %d = %d, want %d", i, train.Y[i], i%2)
		}
		if math.Abs(p[0]) > Synthetic2DTrainRegion || math.Abs(p[1]) > Synthetic2DTrainRegion {
			t.Errorf("training point %d = %v outside the region", i, p)
		}
		sum[train.Y[i]][0] += p[0]
		sum[train.Y[i]][1] += p[1]
		if (p[0]+p[1] > 0) == (train.Y[i] == 1) {
			correct++
		}
	}
	// Class means near (-0.8,-0.8) and (0.8,0.8); truncation at 2 pulls
	// them slightly towards the origin. Standard error is about 0.03.
	for c, mu := range []float64{-0.8, 0.8} {
		for f := range 2 {
			if m := sum[c][f] / 500; math.Abs(m-mu) > 0.12 {
				t.Errorf("class %d feature %d mean %.3f, want about %.1f", c, f, m, mu)
			}
		}
	}
	// The Bayes rule (sign of x1+x2) errs on roughly 5% of the points: the
	// classes overlap, but not much.
	t.Logf("Bayes-rule training accuracy %.3f", float64(correct)/1000)
	if acc := float64(correct) / 1000; acc < 0.91 || acc > 0.98 {
		t.Errorf("Bayes-rule accuracy %.3f, want 0.91..0.98", acc)
	}
	inside := 0
	for i, p := range test {
		if p[0] < -Synthetic2DTestRange || p[0] >= Synthetic2DTestRange || p[1] < -Synthetic2DTestRange || p[1] >= Synthetic2DTestRange {
			t.Errorf("test point %d = %v outside [-6,6)^2", i, p)
		}
		if math.Max(math.Abs(p[0]), math.Abs(p[1])) <= Synthetic2DTrainRegion {
			inside++
		}
	}
	t.Logf("%d of %d test points inside the training region", inside, len(test))
	// 1/9 of 2000 is 222; the binomial standard deviation is 14.
	if inside < 170 || inside > 275 {
		t.Errorf("%d test points inside the training region, want about 222", inside)
	}
	train2, test2 := Synthetic2D(2024)
	if !reflect.DeepEqual(train, train2) || !reflect.DeepEqual(test, test2) {
		t.Errorf("same seed gave different data")
	}
	if train3, test3 := Synthetic2D(2025); reflect.DeepEqual(train3.X, train.X) || reflect.DeepEqual(test3, test) {
		t.Errorf("seeds 2024 and 2025 gave identical data")
	}
}

func TestGeneratorPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"negative n", func() { NoisyXOR(-1, 0, 0) }},
		{"noise above 1", func() { NoisyXOR(10, 1.5, 0) }},
		{"negative noise", func() { NoisyXORClassic(10, -0.1, 0) }},
		{"NaN noise", func() { NoisyXORClassic(10, math.NaN(), 0) }},
	}
	for _, tc := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
	if d := NoisyXOR(0, 0.5, 0); d.Len() != 0 || len(d.X) != 0 {
		t.Errorf("NoisyXOR(0) = %+v, want empty", d)
	}
}
