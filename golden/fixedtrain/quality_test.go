package fixedtrain_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/testenv"
)

// xorSet is the noisy XOR: f random bits, label x0 XOR x1 flipped with
// probability noise.
func xorSet(n, f int, noise float64, rng *rand.Rand) ([][]bool, []int) {
	X := make([][]bool, n)
	y := make([]int, n)
	for r := range X {
		X[r] = make([]bool, f)
		for i := range X[r] {
			X[r][i] = rng.IntN(2) == 1
		}
		if X[r][0] != X[r][1] {
			y[r] = 1
		}
		if rng.Float64() < noise {
			y[r] ^= 1
		}
	}
	return X, y
}

func voteAccuracy(m *ptm.Model, X [][]bool, y []int, K int) float64 {
	s := ptm.NewSampler(m, 11)
	right := 0
	for r, x := range X {
		sums, _ := s.Sample(x, K, nil)
		mean := make([]float64, m.NumClasses)
		for _, p := range m.SumsToProbs(sums, K, ptm.Mapping{Kind: ptm.Vote}) {
			for c := range p {
				mean[c] += p[c]
			}
		}
		best := 0
		for c := range mean {
			if mean[c] > mean[best] {
				best = c
			}
		}
		if best == y[r] {
			right++
		}
	}
	return float64(right) / float64(len(X))
}

// xorTask trains the float and the fixed trainer on one noisy-XOR draw and
// returns their clean-test accuracies.
func xorTask(t *testing.T, f int, p ptm.Params, noise float64, seed uint64) (float, fixed float64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	X, y := xorSet(5000, f, noise, rng)
	Xt, yt := xorSet(2000, f, 0, rng)
	p.Seed = seed
	m, err := ptm.New(p, 2, f, false)
	if err != nil {
		t.Fatal(err)
	}
	tr := ptm.NewTrainer(m)
	ft, err := fixedtrain.New(fixedtrain.Config{Params: p}, 2, f, false)
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < p.Epochs; e++ {
		if err := tr.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
		if err := ft.RunEpoch(X, y); err != nil {
			t.Fatal(err)
		}
	}
	fm, err := ft.Model()
	if err != nil {
		t.Fatal(err)
	}
	return voteAccuracy(m, Xt, yt, 20), voteAccuracy(fm, Xt, yt, 20)
}

// dataTask trains both trainers through the pipeline (booleanizer, sampled
// encoding, defaults of `ptm train`, no calibration) on split seed and
// returns their test accuracies.
func dataTask(t *testing.T, d *pipeline.Data, p ptm.Params, seed uint64) (float, fixed float64) {
	var acc [2]float64
	for k, fx := range []bool{false, true} {
		p.Seed = seed
		f, err := pipeline.Train(d, pipeline.TrainConfig{Params: p, SplitSeed: seed, Fixed: fx})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := pipeline.Rows(f, d, "test")
		if err != nil {
			t.Fatal(err)
		}
		res, err := pipeline.Evaluate(f, d, rows, 50, 7, f.Mapping, 10)
		if err != nil {
			t.Fatal(err)
		}
		acc[k] = res.Report.Accuracy
	}
	return acc[0], acc[1]
}

type qualityTask struct {
	name  string
	runs  int // splits or data draws
	run   func(t *testing.T, seed uint64) (float, fixed float64)
	slack float64 // allowed shortfall of the fixed trainer's mean accuracy
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	if len(v) > 1 {
		sd = math.Sqrt(sd / float64(len(v)-1))
	}
	return mean, sd
}

// TestQualityVsFloat: the fixed trainer's mean test accuracy is the float
// trainer's within noise on noisy XOR (2 and 12 features), Iris, wine and
// breast cancer. Reduced: few splits and epochs, asserted within a slack
// of a few standard errors. PTM_LONG_TESTS=1: the full table of
// docs/fixed-point-training.md 9 (20 splits of Iris and wine, 10 of breast
// cancer, 5 noisy-XOR draws), printed with -v.
func TestQualityVsFloat(t *testing.T) {
	beat := testenv.Heartbeat(t, 30*time.Second)
	def := ptm.DefaultParams()
	loadData := func(name string) *pipeline.Data {
		d, err := pipeline.LoadData(name, "")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	iris, wine, bc := loadData("iris"), loadData("wine"), loadData("breast-cancer")
	dp := def
	dp.Epochs = testenv.Size(30, def.Epochs)
	bcp := dp
	bcp.Epochs = testenv.Size(20, def.Epochs)
	tasks := []qualityTask{
		{"xor-2 (20% noise, m=10, T=5, N=16)", testenv.Size(2, 5), func(t *testing.T, s uint64) (float64, float64) {
			return xorTask(t, 2, ptm.Params{Clauses: 10, T: 5, S: 3.9, N: 16, Epochs: testenv.Size(20, 50), Feedback: ptm.ConsistentFeedback}, 0.2, s)
		}, 0.02},
		{"xor-12 (40% noise, m=10, T=15, s=3.9, N=100)", testenv.Size(1, 5), func(t *testing.T, s uint64) (float64, float64) {
			return xorTask(t, 12, ptm.Params{Clauses: 10, T: 15, S: 3.9, N: 100, Epochs: testenv.Size(25, 60), Feedback: ptm.ConsistentFeedback}, 0.4, s)
		}, 0.03},
		{"iris (ptm train defaults)", testenv.Size(4, 20), func(t *testing.T, s uint64) (float64, float64) { return dataTask(t, iris, dp, s) }, 0.05},
		{"wine (ptm train defaults)", testenv.Size(2, 20), func(t *testing.T, s uint64) (float64, float64) { return dataTask(t, wine, dp, s) }, 0.05},
		{"breast_cancer (ptm train defaults)", testenv.Size(1, 10), func(t *testing.T, s uint64) (float64, float64) { return dataTask(t, bc, bcp, s) }, 0.05},
	}
	for _, task := range tasks {
		var fl, fx []float64
		for s := 1; s <= task.runs; s++ {
			a, b := task.run(t, uint64(s))
			fl, fx = append(fl, a), append(fx, b)
			beat("%s: run %d/%d float %.4f fixed %.4f", task.name, s, task.runs, a, b)
		}
		mf, sf := meanSD(fl)
		mx, sx := meanSD(fx)
		t.Logf("| %s | %d | %.4f ± %.4f | %.4f ± %.4f | %+.4f |", task.name, task.runs, mf, sf, mx, sx, mx-mf)
		if mx < mf-task.slack {
			t.Errorf("%s: fixed trainer mean accuracy %.4f, float %.4f: more than %.2f below", task.name, mx, mf, task.slack)
		}
	}
}
