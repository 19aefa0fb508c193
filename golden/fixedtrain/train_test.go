package fixedtrain

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// spvHash is the SHA-256 of every SPV word (little-endian uint16) and
// every include mass of tr.
func spvHash(tr *Trainer) string {
	h := sha256.New()
	b := make([]byte, 2)
	for _, v := range tr.spv {
		binary.LittleEndian.PutUint16(b, v)
		h.Write(b)
	}
	for _, v := range tr.inc {
		binary.LittleEndian.PutUint16(b, v)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestParallelEqualsSerial: the parallel schedule (sched.go) gives the
// serial result bit for bit, for binary and multiclass shapes, both rules
// and several worker counts; the wide shapes cut Type I feedback into
// literal ranges (jumped lanes) and Type II into ranges of 0-literals.
func TestParallelEqualsSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		classes, features, clauses int
		binary                     bool
		fb                         ptm.Feedback
	}{
		{2, 6, 8, true, ptm.ConsistentFeedback},
		{3, 5, 7, false, ptm.ConsistentFeedback},
		{4, 9, 10, false, ptm.PaperFeedback},
		{2, 300, 6, true, ptm.ConsistentFeedback},
		{3, 290, 5, false, ptm.ConsistentFeedback},
		{2, 270, 4, false, ptm.PaperFeedback},
	} {
		X, y := classicXOR(300, c.features, 0.2, rng)
		for r := range y {
			y[r] = (y[r] + r%2*(r%c.classes)) % c.classes
		}
		var want string
		for _, w := range []int{1, 2, 3, 8} {
			cfg := Config{Params: ptm.Params{Clauses: c.clauses, T: 5, S: 3, N: 8, Epochs: 4, Seed: 9, Feedback: c.fb}, Workers: w}
			tr, err := New(cfg, c.classes, c.features, c.binary)
			if err != nil {
				t.Fatal(err)
			}
			tr.parallelMin = 1 // use the parallel path even for this small shape
			for e := 0; e < cfg.Epochs; e++ {
				if err := tr.RunEpoch(X, y); err != nil {
					t.Fatal(err)
				}
			}
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
			got := spvHash(tr)
			if w == 1 {
				want = got
			} else if got != want {
				t.Errorf("%+v: %d workers give SPV hash %s, serial %s", c, w, got, want)
			}
		}
	}
}

// TestGoldenHash pins the specification: a fixed small training run must
// keep giving the same SPV words. A change here changes what the hardware
// trainer must compute (docs/fixed-point-training.md); update the hash
// only together with the document.
func TestGoldenHash(t *testing.T) {
	X, y := classicXOR(200, 4, 0.1, rand.New(rand.NewPCG(1, 2)))
	for r := range y {
		if X[r][2] && X[r][3] {
			y[r] = 2
		}
	}
	cfg := Config{Params: ptm.Params{Clauses: 6, T: 4, S: 3.9, N: 6, Epochs: 3, Seed: 42, Feedback: ptm.ConsistentFeedback}, Bits: 12}
	tr := train(t, cfg, 3, 4, false, X, y)
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
	const want = "4b2f84ddb98d0c00c3b378d6a0d295ce6c298831ffe21342fc8cacdf4077854e"
	if got := spvHash(tr); got != want {
		t.Errorf("SPV hash %s, want %s", got, want)
	}
}

// TestModelFile: the trained model and bank make a valid model file that
// decodes to the same thresholds, and the float model quantizes back to
// the trainer's SPVs exactly.
func TestModelFile(t *testing.T) {
	X, y := xorData(400, 0.1, 4)
	for _, bits := range []int{8, 12, 15} {
		cfg := Config{Params: ptm.Params{Clauses: 4, T: 2, S: 3.9, N: 16, Epochs: 10, Seed: 2, Feedback: ptm.ConsistentFeedback}, Bits: bits}
		tr := train(t, cfg, 2, 2, true, X, y)
		m := model(t, tr)
		bank, err := tr.Bank()
		if err != nil {
			t.Fatal(err)
		}
		q, err := fixed.Quantize(m, bits)
		if err != nil {
			t.Fatal(err)
		}
		for i := range q.SPV {
			if q.SPV[i] != bank.SPV[i] {
				t.Fatalf("%d bits: quantizing the float model gives SPV word %d = %d, trainer %d", bits, i, q.SPV[i], bank.SPV[i])
			}
		}
		for ta := range q.Thresh {
			if q.Thresh[ta] != bank.Thresh[ta] {
				t.Fatalf("%d bits: TA %d threshold %d, trainer %d", bits, ta, q.Thresh[ta], bank.Thresh[ta])
			}
		}
		th := &booleanize.Thermometer{Thresholds: [][]float64{{0.5}, {0.5}}}
		f := &modelfile.File{Model: m, Booleanizer: th, Features: []string{"a", "b"}, Classes: []string{"0", "1"},
			Mapping: ptm.Mapping{Kind: ptm.Vote}, Bank: bank,
			Split: modelfile.Split{Dataset: "xor", Rows: 400, TestFraction: 0.2, Train: []int{0, 1}, Test: []int{2}}}
		data, err := modelfile.Encode(f)
		if err != nil {
			t.Fatalf("%d bits: %v", bits, err)
		}
		g, err := modelfile.Decode(data, "x.ptm")
		if err != nil {
			t.Fatalf("%d bits: %v", bits, err)
		}
		for ta := range bank.Thresh {
			if g.Bank.Thresh[ta] != bank.Thresh[ta] {
				t.Fatalf("%d bits: decoded threshold %d differs", bits, ta)
			}
		}
	}
}

// TestBadInput: wrong shapes and settings are errors naming what is wrong.
func TestBadInput(t *testing.T) {
	good := Config{Params: ptm.Params{Clauses: 4, T: 2, S: 3.9, N: 16, Seed: 1, Feedback: ptm.ConsistentFeedback}}
	for _, c := range []struct {
		cfg      Config
		classes  int
		features int
		binary   bool
		want     string
	}{
		{Config{Params: good.Params, Bits: 16}, 2, 2, true, "16-bit SPVs"},
		{Config{Params: good.Params, Bits: 7}, 2, 2, true, "7-bit SPVs"},
		{Config{Params: good.Params, Workers: -1}, 2, 2, true, "workers"},
		{good, 3, 2, true, "binary model with 3 classes"},
		{good, 1, 2, false, "1 classes"},
		{good, 2, 0, false, "0 features"},
		{Config{Params: ptm.Params{Clauses: 0, T: 2, S: 3.9, N: 16, Feedback: ptm.ConsistentFeedback}}, 2, 2, true, "clauses"},
	} {
		_, err := New(c.cfg, c.classes, c.features, c.binary)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v, %d, %d, %v) = %v, want an error naming %q", c.cfg, c.classes, c.features, c.binary, err, c.want)
		}
	}
	tr, err := New(good, 2, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		X    [][]bool
		y    []int
		want string
	}{
		{[][]bool{{true, false}}, []int{0, 1}, "1 inputs but 2 labels"},
		{[][]bool{{true}}, []int{0}, "row 0 has 1 features"},
		{[][]bool{{true, false}, {true, true}}, []int{0, 2}, "row 1 label 2"},
	} {
		if err := tr.RunEpoch(c.X, c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RunEpoch: %v, want an error naming %q", err, c.want)
		}
	}
	if err := tr.Update([]bool{true}, 0); err == nil {
		t.Error("Update with 1 feature: no error")
	}
	if _, err := New(Config{Params: ptm.Params{Clauses: 4, T: 2, S: 3.9, N: 16, Feedback: ptm.ConsistentFeedback}}, 2, 2, true); errors.Is(err, ptm.ErrShape) {
		t.Error("a good shape reported ErrShape")
	}
}

// poolLoops counts the goroutines running a pool's loop.
func poolLoops() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "fixedtrain.(*pool).loop(")
}

// TestPoolStops: the worker goroutines of a trainer's pool end once the
// trainer is unreachable (its cleanup stops them).
func TestPoolStops(t *testing.T) {
	// let the pools of earlier tests' trainers go first
	for i := 0; i < 100 && poolLoops() > 0; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	before := poolLoops()
	func() {
		X, y := classicXOR(50, 40, 0.2, rand.New(rand.NewPCG(1, 2)))
		tr, err := New(Config{Params: ptm.Params{Clauses: 4, T: 5, S: 3, N: 8, Epochs: 1, Seed: 1, Feedback: ptm.ConsistentFeedback}, Workers: 3}, 3, 40, false)
		if err != nil {
			t.Fatal(err)
		}
		tr.parallelMin = 1
		for r := range y {
			y[r] = r % 3
		}
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
		if n := poolLoops(); tr.pool == nil || n < before+2 {
			t.Fatalf("no pool: %d pool goroutines, %d before", n, before)
		}
	}()
	for i := 0; i < 100 && poolLoops() > before; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := poolLoops(); n > before {
		t.Errorf("%d pool goroutines after the trainer is gone, %d before", n, before)
	}
}
