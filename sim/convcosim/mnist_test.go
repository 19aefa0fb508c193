package convcosim

import (
	"bufio"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// mnistFirst reads the first n images (28 x 28 bytes) and labels of MNIST's
// IDX file pair imgs, labels (gzip) in the module's data folder, or skips
// the test when MNIST is not installed.
func mnistFirst(t *testing.T, imgs, labels string, n int) ([][]uint8, []int) {
	t.Helper()
	dir, err := dataset.MNISTDir()
	if err != nil {
		t.Skipf("MNIST: %v", err)
	}
	read := func(name string, hdr, item int) []byte {
		fh, err := os.Open(filepath.Join(dir, name+".gz"))
		if err != nil {
			t.Skipf("MNIST: %v", err)
		}
		defer fh.Close()
		zr, err := gzip.NewReader(bufio.NewReader(fh))
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, hdr+n*item)
		if _, err := io.ReadFull(zr, b); err != nil {
			t.Fatal(err)
		}
		return b[hdr:]
	}
	px := read(imgs, 16, 28*28)
	lb := read(labels, 8, 1)
	x := make([][]uint8, n)
	y := make([]int, n)
	for i := range x {
		x[i] = px[i*784 : (i+1)*784]
		y[i] = int(lb[i])
	}
	return x, y
}

// TestTrainedMNIST trains a small convolutional model (convtrain, the
// image recipe with fewer clauses) on the first MNIST training images and
// co-simulates its core on test images, 4 patches per scan cycle: 0
// mismatches. The long form (PTM_LONG_TESTS=1) trains 128 clauses on
// 5,000 images and co-simulates 1,000 test images at K = 16, one patch per
// cycle.
func TestTrainedMNIST(t *testing.T) {
	needVerilator(t)
	testenv.Heartbeat(t, 0)
	trainN, testN, clauses, K := testenv.Size(300, 5000), testenv.Size(12, 1000), testenv.Size(16, 128), testenv.Size(4, 16)
	lc, ll := testenv.Size(4, 8), 8
	pn := testenv.Size(4, 1) // patches per scan cycle: blocks of 4 of the 19 patches of a row, or the long run's figure at one
	X, Y := mnistFirst(t, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", trainN)
	Xt, _ := mnistFirst(t, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", testN)
	rc, err := convtrain.ImageDefaults(28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	rc.Clauses, rc.T = clauses, 8*clauses
	tr, err := convtrain.New(rc.Trainer(28, 28, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	enc := conv.Encoder{Thresholds: rc.Thresholds}
	sh := rc.Shape(28, 28)
	planes := make([][]bool, len(X))
	for i, img := range X {
		if planes[i], err = enc.Booleanize(sh, img, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.RunEpoch(planes, Y); err != nil {
		t.Fatal(err)
	}
	bank, err := tr.Bank(rc.BankBits)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	for _, q := range bank.Thresh {
		if q == 0 {
			zero++
		}
	}
	t.Logf("trained %d clauses on %d images: %.1f%% of the %d-bit thresholds are 0", clauses, trainN, 100*float64(zero)/float64(len(bank.Thresh)), bank.Bits)
	rng := rand.New(rand.NewPCG(7, 8))
	reqs := make([]Request, len(Xt))
	for i, img := range Xt {
		p, err := enc.Booleanize(sh, img, nil)
		if err != nil {
			t.Fatal(err)
		}
		reqs[i] = Request{Planes: p, K: K, Seed: rng.Uint32()}
	}
	res, err := Run(Options{Bank: bank, Config: hw.Config{Bits: 4, LFSRWidth: 32, ClauseLanes: lc, LiteralLanes: ll, MaxK: 16, PatchLanes: pn},
		Requests: reqs, Seed: 1, Progress: func(done, total int) {
			if done%100 == 0 {
				t.Logf("[progress] %d/%d images", done, total)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MNIST test images, %d samples, %d words (%d distinct samples): %d mismatches; %.1f cycles per sample; build %.1fs (cached %v), simulation %.2fs",
		len(Xt), res.SamplesCompared, res.WordsCompared, res.DistinctSums, res.Mismatches, res.CyclesPerSample, res.BuildTime, res.BuildCached, res.SimTime)
	if res.Mismatches != 0 || res.FirstMismatch != nil {
		t.Fatalf("%d mismatches, first %+v", res.Mismatches, res.FirstMismatch)
	}
	if res.WordsCompared != len(Xt)*K*10 || res.DistinctSums < 2 {
		t.Fatalf("compared %d words (want %d), %d distinct samples", res.WordsCompared, len(Xt)*K*10, res.DistinctSums)
	}
}
