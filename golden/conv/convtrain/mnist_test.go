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

// TestMNIST trains the convolutional PTM on the 60,000 MNIST training
// images and scores it, float and 4-bit fixed point, on the 10,000 test
// images at K = 16: the figures of docs/fixed-point-conv.md's MNIST
// section come from this test. It runs with PTM_LONG_TESTS=1 (about 10
// minutes on 2 cores):
//
//	PTM_LONG_TESTS=1 go test ./golden/conv/convtrain -run TestMNIST -v -timeout 60m
//
// The configuration (256 coalesced clauses, T 600, s 3, N 100, 10 x 10
// window, pixel > 75, 2 epochs) was chosen on validation rows carved from
// the training images (the last 5,000). The assertions are floors a little
// below the measured figures, so that a regression fails.
func TestMNIST(t *testing.T) {
	if os.Getenv("PTM_LONG_TESTS") != "1" {
		t.Skip("PTM_LONG_TESTS=1 runs the full MNIST training (about 10 minutes)")
	}
	d, err := dataset.MNIST(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Predefined == nil || len(d.Predefined.Train) != 60000 || len(d.Predefined.Test) != 10000 {
		t.Fatalf("MNIST's predefined split: %+v rows", d.Predefined != nil)
	}
	img := func(i int) []uint8 {
		x := make([]uint8, len(d.X[i]))
		for j, v := range d.X[i] {
			x[j] = uint8(v)
		}
		return x
	}
	sh := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	enc := conv.Encoder{Thresholds: []int{75}}
	Xtr := make([][]bool, 0, 60000)
	ytr := make([]int, 0, 60000)
	for _, i := range d.Predefined.Train {
		b, err := enc.Booleanize(sh, img(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		Xtr = append(Xtr, b)
		ytr = append(ytr, d.Y[i])
	}
	cfg := convtrain.Config{Shape: sh, Structure: conv.Coalesced, Classes: 10, Clauses: 256, T: 600, S: 3, N: 100, Seed: 1}
	tr, err := convtrain.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	start := time.Now()
	for e := 0; e < 2; e++ {
		t0 := time.Now()
		if err := tr.RunEpoch(Xtr, ytr); err != nil {
			t.Fatal(err)
		}
		t.Logf("[progress] epoch %d of 2: %.1f s", e+1, time.Since(t0).Seconds())
	}
	trainS := time.Since(start).Seconds()
	m := tr.Model()
	bank, err := tr.Bank(4)
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	for _, q := range bank.Thresh {
		if q == 0 {
			zero++
		}
	}
	const K = 16
	hw := conv.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 8, LiteralLanes: 8}
	test := d.Predefined.Test
	qf := make([]metrics.QueryStats, len(test))
	qx := make([]metrics.QueryStats, len(test))
	agree := make([]bool, len(test))
	labels := make([]int, len(test))
	mp := ptm.Mapping{Kind: ptm.Vote}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			smp, err := conv.NewSampler(m, 7+uint64(w))
			if err != nil {
				errs[w] = err
				return
			}
			core, err := conv.NewCore(bank, hw)
			if err != nil {
				errs[w] = err
				return
			}
			pts := []*conv.Patches{conv.NewPatches(sh)}
			var buf []bool
			var sums []int32
			for k := w; k < len(test); k += workers {
				i := test[k]
				labels[k] = d.Y[i]
				if buf, err = enc.Encode(img(i), pts[0], buf); err != nil {
					errs[w] = err
					return
				}
				if sums, err = smp.RunSets(pts, K, sums); err != nil {
					errs[w] = err
					return
				}
				qf[k] = metrics.Query(m.Probs(sums, K, mp))
				if sums, _, err = core.RunSets(pts, K, uint32(k), sums); err != nil {
					errs[w] = err
					return
				}
				qx[k] = metrics.Query(bank.Probs(sums, K, mp))
				agree[k] = qx[k].Pred == qf[k].Pred
				mu.Lock()
				done++
				if done%1000 == 0 {
					t.Logf("[progress] scored %d of %d test images", done, len(test))
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, a := range agree {
		if a {
			n++
		}
	}
	rf := metrics.Evaluate(qf, labels, 0)
	rx := metrics.Evaluate(qx, labels, 0)
	ag := float64(n) / float64(len(test))
	line := func(name string, r metrics.Report) string {
		return fmt.Sprintf("%s: accuracy %.4f, ECE %.4f, NLL %.3f, AUROC(entropy) %.4f, AUROC(MI) %.4f", name, r.Accuracy, r.ECE, r.NLL, r.AUROCEntropy, r.AUROCMI)
	}
	t.Logf("256 coalesced clauses x 272 literals, 2 epochs in %.0f s (GOMAXPROCS %d); 4-bit thresholds at 0: %.3f", trainS, workers, float64(zero)/float64(len(bank.Thresh)))
	t.Log(line("float, K = 16", rf))
	t.Log(line("4-bit fixed point, K = 16", rx))
	t.Logf("fixed point agrees with float on %.4f of the test images", ag)
	if rf.Accuracy < 0.96 || rx.Accuracy < 0.955 {
		t.Errorf("accuracy float %.4f / fixed %.4f, want >= 0.96 / 0.955", rf.Accuracy, rx.Accuracy)
	}
	if rf.ECE > 0.01 {
		t.Errorf("float ECE %.4f, want <= 0.01", rf.ECE)
	}
	if rf.AUROCEntropy < 0.90 || rx.AUROCEntropy < 0.90 {
		t.Errorf("AUROC(entropy) float %.4f / fixed %.4f, want >= 0.90", rf.AUROCEntropy, rx.AUROCEntropy)
	}
	if ag < 0.975 {
		t.Errorf("fixed point agrees with float on %.4f of the test images, want >= 0.975", ag)
	}
}
