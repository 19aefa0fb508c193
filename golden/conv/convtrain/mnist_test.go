package convtrain_test

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
)

// imageFloors are the assertions of an image test: floors a little below
// the measured figures (docs/fixed-point-conv.md), so that a regression
// fails.
type imageFloors struct {
	acc, accFixed float64 // test accuracy, float and fixed point
	ece           float64 // largest float ECE
	auroc         float64 // AUROC(entropy), float and fixed point
	agree         float64 // fixed-vs-float prediction agreement
}

// TestMNIST trains ImageRecipe(mnist) (what `ptm train --data mnist` uses) on
// MNIST's first 55,000 training images, fits the softmax temperature on
// the last 5,000 (held out), and scores the 10,000 test images at the
// recipe's K, float and fixed point at its bank bits: the figures of the
// earlier 1024-clause recipe in docs/fixed-point-conv.md's MNIST section
// come from this test (the 512-clause recipes' were measured through the
// CLI, the one-plane and today's two-plane one; this test has not been
// run with either, so its floors stay the 1024-clause recipe's, below
// the CLI's figures). It runs with PTM_LONG_TESTS=1 (about 45 minutes on
// 2 busy cores with the 1024-clause recipe: training 12, then four 5,000-
// or 10,000-image passes of 6-14 each):
//
//	PTM_LONG_TESTS=1 go test ./golden/conv/convtrain -run 'TestMNIST$' -v -timeout 180m
func TestMNIST(t *testing.T) {
	if os.Getenv("PTM_LONG_TESTS") != "1" {
		t.Skip("PTM_LONG_TESTS=1 runs the full MNIST training (about 40 minutes)")
	}
	d, err := dataset.MNIST(nil)
	if err != nil {
		t.Fatal(err)
	}
	imageTest(t, d, true, imageFloors{acc: 0.965, accFixed: 0.965, ece: 0.01, auroc: 0.93, agree: 0.99})
}

// TestFashionMNIST is TestMNIST on Fashion-MNIST with its own recipe,
// ImageRecipe(fashion-mnist) (pixel > 0 and the adaptive plane, a 7 x 7
// window, 896 clauses, 12 epochs), without the float-vs-float noise
// floor, to save a third pass. The recipe misses the 0.85 on
// Fashion-MNIST: through `ptm train` it scores 0.8386 on 5,000
// validation rows carved from the training rows (docs/fixed-point-conv.md
// section 9); this test's loop (train on the first 55,000, validate on
// the last 5,000) has not been run with it, and its floors sit below the
// CLI's test figures (float accuracy 0.8242, ECE 0.015, AUROC(entropy)
// 0.849; the agreement floor is the one-threshold recipe's 0.96 less a
// margin). About an hour on 2 busy cores:
//
//	PTM_LONG_TESTS=1 go test ./golden/conv/convtrain -run 'TestFashionMNIST$' -v -timeout 180m
func TestFashionMNIST(t *testing.T) {
	if os.Getenv("PTM_LONG_TESTS") != "1" {
		t.Skip("PTM_LONG_TESTS=1 runs the full Fashion-MNIST training (about an hour)")
	}
	d, err := dataset.FashionMNIST(nil)
	if err != nil {
		t.Fatal(err)
	}
	imageTest(t, d, false, imageFloors{acc: 0.80, accFixed: 0.80, ece: 0.04, auroc: 0.80, agree: 0.95})
}

// heldOut is the number of training images held out to fit the mapping.
const heldOut = 5000

// imageTest is the whole train-and-score loop of a data set's recipe on a
// 60,000 / 10,000 image data set. Every query's samples depend only on
// the image's index and a seed, so the figures do not depend on
// GOMAXPROCS.
func imageTest(t *testing.T, d *dataset.Dataset, noiseFloor bool, fl imageFloors) {
	if d.Predefined == nil || len(d.Predefined.Train) != 60000 || len(d.Predefined.Test) != 10000 {
		t.Fatalf("%s: predefined split missing or not 60,000 / 10,000", d.Name)
	}
	cfg, err := convtrain.ImageRecipe(convtrain.RecipeFor(d.Name), 28, 28, len(d.Classes))
	if err != nil {
		t.Fatal(err)
	}
	sh := cfg.Shape(28, 28)
	enc := cfg.Encoder()
	sets, err := conv.Jitter(enc, cfg.JitterSets, cfg.JitterSpread)
	if err != nil {
		t.Fatal(err)
	}
	img := func(i int) []uint8 {
		x := make([]uint8, len(d.X[i]))
		for j, v := range d.X[i] {
			x[j] = uint8(v)
		}
		return x
	}
	train := d.Predefined.Train[:60000-heldOut]
	hold := d.Predefined.Train[60000-heldOut:]
	Xtr := make([][]bool, 0, len(train))
	ytr := make([]int, 0, len(train))
	for _, i := range train {
		b, err := enc.Booleanize(sh, img(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		Xtr = append(Xtr, b)
		ytr = append(ytr, d.Y[i])
	}
	tr, err := convtrain.New(cfg.Trainer(28, 28, len(d.Classes), 1))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	start := time.Now()
	for e := 0; e < cfg.Epochs; e++ {
		t0 := time.Now()
		tr.Progress = func(done, total int) {
			if done%10000 == 0 {
				t.Logf("[progress] epoch %d of %d: %d of %d images, %.0f s", e+1, cfg.Epochs, done, total, time.Since(t0).Seconds())
			}
		}
		if err := tr.RunEpoch(Xtr, ytr); err != nil {
			t.Fatal(err)
		}
		t.Logf("[progress] epoch %d of %d: %.1f s", e+1, cfg.Epochs, time.Since(t0).Seconds())
	}
	trainS := time.Since(start).Seconds()
	Xtr = nil
	m := tr.Model()
	bank, err := tr.Bank(cfg.BankBits)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	for _, q := range bank.Thresh {
		if q == 0 {
			zero++
		}
	}
	var wmax int32
	for _, w := range m.Weights {
		wmax = max(wmax, w, -w)
	}
	hw := conv.HW{Bits: cfg.BankBits, LFSRWidth: 32, ClauseLanes: 8, LiteralLanes: 8}
	// sample returns K samples of class sums of every image of rows: the
	// float model with a sampler seeded seed+index, or the bank's core
	// with request seed index.
	sample := func(what string, rows []int, fixed bool, seed uint64) [][]int32 {
		out := make([][]int32, len(rows))
		workers := runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		var mu sync.Mutex
		done := 0
		errs := make([]error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				var core *conv.Core
				if fixed {
					if core, errs[w] = conv.NewCore(bank, hw); errs[w] != nil {
						return
					}
				}
				pts := make([]*conv.Patches, len(sets))
				for j := range pts {
					pts[j] = conv.NewPatches(sh)
				}
				var buf []bool
				for k := w; k < len(rows); k += workers {
					x := img(rows[k])
					for j, e := range sets {
						if buf, errs[w] = e.Encode(x, pts[j], buf); errs[w] != nil {
							return
						}
					}
					var sums []int32
					if fixed {
						sums, _, errs[w] = core.RunSets(pts, cfg.K, uint32(seed)+uint32(k), nil)
					} else {
						var smp *conv.Sampler
						if smp, errs[w] = conv.NewSampler(m, seed+uint64(k)); errs[w] != nil {
							return
						}
						sums, errs[w] = smp.RunSets(pts, cfg.K, nil)
					}
					if errs[w] != nil {
						return
					}
					out[k] = sums
					mu.Lock()
					if done++; done%2000 == 0 {
						t.Logf("[progress] %s: %d of %d images", what, done, len(rows))
					}
					mu.Unlock()
				}
			}(w)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		return out
	}
	labels := func(rows []int) []int {
		y := make([]int, len(rows))
		for k, i := range rows {
			y[k] = d.Y[i]
		}
		return y
	}
	score := func(h *conv.Head, all [][]int32, mp ptm.Mapping, y []int) (metrics.Report, []int) {
		q := make([]metrics.QueryStats, len(all))
		pred := make([]int, len(all))
		for k, s := range all {
			q[k] = metrics.Query(h.Probs(s, cfg.K, mp))
			pred[k] = q[k].Pred
		}
		return metrics.Evaluate(q, y, 0), pred
	}
	agree := func(a, b []int) float64 {
		n := 0
		for k := range a {
			if a[k] == b[k] {
				n++
			}
		}
		return float64(n) / float64(len(a))
	}
	line := func(name string, r metrics.Report) string {
		return fmt.Sprintf("%s: accuracy %.4f, ECE %.4f, NLL %.3f, AUROC(entropy) %.4f, AUROC(MI) %.4f", name, r.Accuracy, r.ECE, r.NLL, r.AUROCEntropy, r.AUROCMI)
	}

	yh := labels(hold)
	mp, err := convtrain.FitSoftmax(&m.Head, sample("held-out float", hold, false, 1_000_000), cfg.K, yh)
	if err != nil {
		t.Fatal(err)
	}
	test := d.Predefined.Test
	yt := labels(test)
	rf, pf := score(&m.Head, sample("test float", test, false, 0), mp, yt)
	rx, px := score(&bank.Head, sample("test fixed", test, true, 0), mp, yt)
	ag := agree(pf, px)
	t.Logf("%s: %d coalesced clauses x %d literals, T %d, s %g, %d epochs in %.0f s (GOMAXPROCS %d); %d-bit thresholds at 0: %.3f",
		d.Name, cfg.Clauses, sh.Literals(), cfg.T, cfg.S, cfg.Epochs, trainS, runtime.GOMAXPROCS(0), cfg.BankBits, float64(zero)/float64(len(bank.Thresh)))
	t.Logf("largest weight magnitude %d", wmax)
	t.Logf("softmax temperature %.1f (%.4f T), fitted on %d held-out training images", mp.Temperature, mp.Temperature/float64(cfg.T), len(hold))
	t.Log(line(fmt.Sprintf("float, K = %d", cfg.K), rf))
	t.Log(line(fmt.Sprintf("%d-bit fixed point, K = %d", cfg.BankBits, cfg.K), rx))
	t.Logf("fixed point agrees with float on %.4f of the test images", ag)
	if noiseFloor {
		_, p2 := score(&m.Head, sample("test float, second seed", test, false, 5_000_000), mp, yt)
		t.Logf("two float samplers (other seeds) agree on %.4f of the test images", agree(pf, p2))
	}
	if rf.Accuracy < fl.acc || rx.Accuracy < fl.accFixed {
		t.Errorf("accuracy float %.4f / fixed %.4f, want >= %.3f / %.3f", rf.Accuracy, rx.Accuracy, fl.acc, fl.accFixed)
	}
	if rf.ECE > fl.ece || rx.ECE > fl.ece {
		t.Errorf("ECE float %.4f / fixed %.4f, want <= %.3f", rf.ECE, rx.ECE, fl.ece)
	}
	if rf.AUROCEntropy < fl.auroc || rx.AUROCEntropy < fl.auroc {
		t.Errorf("AUROC(entropy) float %.4f / fixed %.4f, want >= %.2f", rf.AUROCEntropy, rx.AUROCEntropy, fl.auroc)
	}
	if ag < fl.agree {
		t.Errorf("fixed point agrees with float on %.4f of the test images, want >= %.3f", ag, fl.agree)
	}
}
