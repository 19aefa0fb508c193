package convtrain

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
)

// long reports whether the full-size tests run (PTM_LONG_TESTS=1).
func long() bool { return os.Getenv("PTM_LONG_TESTS") == "1" }

// strokes returns n side x side 8-bit images of three classes, a stroke of
// length 4 at a random position: 0 horizontal, 1 vertical, 2 diagonal,
// with 3% of the pixels flipped to noise. Only a translation-invariant
// feature separates the classes.
func strokes(n, side int, seed uint64) ([][]uint8, []int) {
	rng := rand.New(rand.NewPCG(seed, 17))
	X := make([][]uint8, n)
	y := make([]int, n)
	for r := range X {
		img := make([]uint8, side*side)
		c := rng.IntN(3)
		dy, dx := []int{0, 1, 1}[c], []int{1, 0, 1}[c]
		y0, x0 := rng.IntN(side-3*dy), rng.IntN(side-3*dx)
		for k := 0; k < 4; k++ {
			img[(y0+k*dy)*side+x0+k*dx] = uint8(180 + rng.IntN(76))
		}
		for i := range img {
			if rng.IntN(100) < 3 {
				img[i] = uint8(rng.IntN(256))
			}
		}
		X[r], y[r] = img, c
	}
	return X, y
}

func booleanize(t testing.TB, sh conv.Shape, enc conv.Encoder, X [][]uint8) [][]bool {
	B := make([][]bool, len(X))
	for i, x := range X {
		var err error
		if B[i], err = enc.Booleanize(sh, x, nil); err != nil {
			t.Fatal(err)
		}
	}
	return B
}

// hash is a digest of the trainer's state: SPVs, include masses, weights.
func hash(tr *Trainer) string {
	h := sha256.New()
	cl := tr.Clauses()
	for ta := 0; ta < tr.Head().TAs(); ta++ {
		_ = binary.Write(h, binary.LittleEndian, cl.SPV(ta))
		_ = binary.Write(h, binary.LittleEndian, uint16(cl.IncludeMass(ta)))
	}
	_ = binary.Write(h, binary.LittleEndian, tr.Head().Weights)
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestWorkersBitExact(t *testing.T) {
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	enc := conv.Encoder{Thresholds: []int{127}}
	X, y := strokes(300, 10, 1)
	B := booleanize(t, sh, enc, X)
	for _, st := range []conv.Structure{conv.PerClass, conv.Coalesced} {
		var first string
		for _, w := range []int{1, 2, 3, 7} {
			tr, err := New(Config{Shape: sh, Structure: st, Classes: 3, Clauses: 12, T: 6, S: 4, N: 30, Bits: 12, Seed: 5, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			for e := 0; e < 2; e++ {
				if err := tr.RunEpoch(B, y); err != nil {
					t.Fatal(err)
				}
			}
			if err := tr.Clauses().Check(); err != nil {
				t.Fatal(err)
			}
			h := hash(tr)
			tr.Close()
			if first == "" {
				first = h
			} else if h != first {
				t.Fatalf("%s: %d workers give state %s, 1 worker %s", st, w, h[:16], first[:16])
			}
		}
	}
}

// evaluate scores a model's float sampler on booleanized images.
func evaluate(t testing.TB, m *conv.Model, sh conv.Shape, B [][]bool, y []int, K int) metrics.Report {
	smp, err := conv.NewSampler(m, 3)
	if err != nil {
		t.Fatal(err)
	}
	pt := conv.NewPatches(sh)
	var qs []metrics.QueryStats
	var sums []int32
	for _, b := range B {
		if err := pt.Fill(b); err != nil {
			t.Fatal(err)
		}
		if sums, err = smp.Run(pt, K, sums); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, metrics.Query(m.Probs(sums, K, ptm.Mapping{Kind: ptm.Vote})))
	}
	return metrics.Evaluate(qs, y, 0)
}

// Both class structures learn translated strokes that no single pixel
// separates, and the 4-bit fixed-point twin agrees with the float model on
// >= 99% of the test images (coalesced, the structure chosen for MNIST)
// and, for both, as often as two float samplers of different seeds agree
// with each other, less 1% (the rest of the disagreement is sampling
// noise on near-ties, not quantization).
func TestLearnsStrokes(t *testing.T) {
	n, epochs := 600, 12
	if long() {
		n, epochs = 3000, 20
	}
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	enc := conv.Encoder{Thresholds: []int{127}}
	X, y := strokes(n, 10, 2)
	Xt, yt := strokes(400, 10, 3)
	B, Bt := booleanize(t, sh, enc, X), booleanize(t, sh, enc, Xt)
	for _, tc := range []struct {
		st       conv.Structure
		clauses  int
		minAcc   float64
		minAgree float64
	}{{conv.PerClass, 24, 0.6, 0}, {conv.Coalesced, 24, 0.93, 0.99}} {
		tr, err := New(Config{Shape: sh, Structure: tc.st, Classes: 3, Clauses: tc.clauses, T: 12, S: 4, N: 50, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for e := 0; e < epochs; e++ {
			if err := tr.RunEpoch(B, y); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: epoch %d done", tc.st, e+1)
		}
		tr.Close()
		m := tr.Model()
		r := evaluate(t, m, sh, Bt, yt, 20)
		t.Logf("%s: %d images x %d epochs: test accuracy %.4f, ECE %.4f, AUROC(H) %.4f", tc.st, n, epochs, r.Accuracy, r.ECE, r.AUROCEntropy)
		if r.Accuracy < tc.minAcc {
			t.Errorf("%s: test accuracy %.4f, want >= %.2f", tc.st, r.Accuracy, tc.minAcc)
		}
		b, err := tr.Bank(4)
		if err != nil {
			t.Fatal(err)
		}
		const K = 100
		agree, total := agreement(t, m, b, Bt, K)
		self := selfAgreement(t, m, Bt, K)
		t.Logf("%s: 4-bit core agrees with the float model on %d of %d images, two float samplers on %d (K = %d)", tc.st, agree, total, self, K)
		if float64(agree) < tc.minAgree*float64(total) || agree < self-total/100 {
			t.Errorf("%s: 4-bit core agrees on %d of %d images (float with itself %d), want >= %.0f%% and >= %d", tc.st, agree, total, self, 100*tc.minAgree, self-total/100)
		}
	}
}

// selfAgreement counts the images on which two float samplers of
// different seeds predict the same class from K samples.
func selfAgreement(t testing.TB, m *conv.Model, B [][]bool, K int) int {
	s1, err := conv.NewSampler(m, 21)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := conv.NewSampler(m, 22)
	if err != nil {
		t.Fatal(err)
	}
	pt := conv.NewPatches(m.Shape)
	n := 0
	var a, c []int32
	mp := ptm.Mapping{Kind: ptm.Vote}
	for _, x := range B {
		if err := pt.Fill(x); err != nil {
			t.Fatal(err)
		}
		if a, err = s1.Run(pt, K, a); err != nil {
			t.Fatal(err)
		}
		if c, err = s2.Run(pt, K, c); err != nil {
			t.Fatal(err)
		}
		if metrics.Query(m.Probs(a, K, mp)).Pred == metrics.Query(m.Probs(c, K, mp)).Pred {
			n++
		}
	}
	return n
}

// agreement counts the images on which the 4-bit core and the float
// sampler predict the same class from K samples.
func agreement(t testing.TB, m *conv.Model, b *conv.Bank, B [][]bool, K int) (int, int) {
	core, err := conv.NewCore(b, conv.HW{Bits: b.Bits, LFSRWidth: 32, ClauseLanes: 4, LiteralLanes: 8})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := conv.NewSampler(m, 11)
	if err != nil {
		t.Fatal(err)
	}
	pt := conv.NewPatches(m.Shape)
	agree := 0
	var sums []int32
	for i, x := range B {
		if err := pt.Fill(x); err != nil {
			t.Fatal(err)
		}
		if sums, err = smp.Run(pt, K, sums); err != nil {
			t.Fatal(err)
		}
		pf := metrics.Query(m.Probs(sums, K, ptm.Mapping{Kind: ptm.Vote})).Pred
		if sums, _, err = core.Run(pt, K, uint32(i), sums); err != nil {
			t.Fatal(err)
		}
		if metrics.Query(b.Probs(sums, K, ptm.Mapping{Kind: ptm.Vote})).Pred == pf {
			agree++
		}
	}
	return agree, len(B)
}

func TestBankAtTrainerWidth(t *testing.T) {
	sh := conv.Shape{H: 6, W: 6, Planes: 1, WY: 3, WX: 3}
	tr, err := New(Config{Shape: sh, Structure: conv.Coalesced, Classes: 2, Clauses: 4, T: 4, S: 3, N: 20, Bits: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	X, y := strokes(100, 6, 4)
	for i := range y {
		y[i] %= 2
	}
	if err := tr.RunEpoch(booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X), y); err != nil {
		t.Fatal(err)
	}
	// At the trainer's own width the SPVs are already quantized: the
	// thresholds are min(include mass, 2^B - 1).
	b, err := tr.Bank(10)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[uint32]bool{}
	for ta, q := range b.Thresh {
		if want := min(uint32(tr.Clauses().IncludeMass(ta)), 1023); q != want {
			t.Fatalf("TA %d threshold %d, want %d", ta, q, want)
		}
		distinct[q] = true
	}
	if len(distinct) < 3 {
		t.Fatalf("only %d distinct thresholds: training did not move the automata", len(distinct))
	}
}

func TestConfigErrors(t *testing.T) {
	sh := conv.Shape{H: 6, W: 6, Planes: 1, WY: 3, WX: 3}
	good := Config{Shape: sh, Structure: conv.PerClass, Classes: 2, Clauses: 4, T: 4, S: 3, N: 20, Seed: 1}
	for name, mod := range map[string]func(*Config){
		"classes":   func(c *Config) { c.Classes = 1 },
		"clauses":   func(c *Config) { c.Clauses = 3 },
		"structure": func(c *Config) { c.Structure = "mixed" },
		"T":         func(c *Config) { c.T = 0 },
		"s":         func(c *Config) { c.S = 0.5 },
		"N":         func(c *Config) { c.N = 0 },
		"bits":      func(c *Config) { c.Bits = 4 },
		"workers":   func(c *Config) { c.Workers = -1 },
		"shape":     func(c *Config) { c.Shape.WY = 7 },
	} {
		c := good
		mod(&c)
		if tr, err := New(c); err == nil {
			tr.Close()
			t.Errorf("%s: bad config accepted", name)
		}
	}
	tr, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.RunEpoch([][]bool{make([]bool, 35)}, []int{0}); err == nil {
		t.Error("short image accepted")
	}
	if err := tr.RunEpoch([][]bool{make([]bool, 36)}, []int{2}); err == nil {
		t.Error("label 2 of 2 classes accepted")
	}
	if err := tr.Update(make([]bool, 36), -1); err == nil {
		t.Error("label -1 accepted")
	}
}

// The float trainer learns the strokes like the fixed-point one, and
// keeps every SPV a probability vector.
func TestFloatLearnsStrokes(t *testing.T) {
	n, epochs := 600, 8
	if long() {
		n, epochs = 3000, 20
	}
	sh := conv.Shape{H: 10, W: 10, Planes: 1, WY: 4, WX: 4}
	enc := conv.Encoder{Thresholds: []int{127}}
	X, y := strokes(n, 10, 2)
	Xt, yt := strokes(400, 10, 3)
	B, Bt := booleanize(t, sh, enc, X), booleanize(t, sh, enc, Xt)
	f, err := NewFloat(Config{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: 24, T: 12, S: 4, N: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < epochs; e++ {
		if err := f.RunEpoch(B, y); err != nil {
			t.Fatal(err)
		}
		t.Logf("epoch %d done", e+1)
	}
	r := evaluate(t, f.Model(), sh, Bt, yt, 20)
	t.Logf("float coalesced: %d images x %d epochs: test accuracy %.4f, ECE %.4f, AUROC(H) %.4f", n, epochs, r.Accuracy, r.ECE, r.AUROCEntropy)
	if r.Accuracy < 0.9 {
		t.Errorf("test accuracy %.4f, want >= 0.9", r.Accuracy)
	}
	for ta := 0; ta < f.Model().TAs(); ta++ {
		var s float64
		for _, v := range f.SPV(ta) {
			if v < 0 {
				t.Fatalf("TA %d: negative state probability %v", ta, v)
			}
			s += v
		}
		if s < 1-1e-9 || s > 1+1e-9 {
			t.Fatalf("TA %d: SPV mass %v, want 1", ta, s)
		}
	}
}
