package pipeline

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

func irisModel(t *testing.T) (*Data, *modelfile.File) {
	t.Helper()
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.Params{Clauses: 20, T: 10, S: 2, N: 100, Epochs: 60, Seed: 1, Feedback: ptm.ConsistentFeedback}
	f, err := Train(d, TrainConfig{Params: p, Thresholds: 6, SplitSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return d, f
}

// TestFixedAgreesWithFloatIris: the fixed-point core (B = 16 and the
// hardware's B = 8) and the float PTM agree on at least 99% of Iris
// predictions (K = 400 samples each), for the plain encoding and the
// default sampled encoding, and their mean predictive entropy and mutual
// information agree within sampling error.
func TestFixedAgreesWithFloatIris(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.Params{Clauses: 20, T: 10, S: 2, N: 100, Epochs: 60, Seed: 1, Feedback: ptm.ConsistentFeedback}
	for _, enc := range []Encoding{Plain, DefaultEncoding} {
		f, err := Train(d, TrainConfig{Params: p, Thresholds: 6, SplitSeed: 1, Encoding: &enc})
		if err != nil {
			t.Fatal(err)
		}
		for _, bits := range []int{16, 8} {
			frac, hF, hX, miF, miX := fixedVsFloat(t, d, f, fixed.HW{Bits: bits, LFSRWidth: 32, ClauseLanes: 3, LiteralLanes: 16}, 400)
			t.Logf("Iris, %d sets, B=%d: agreement %.4f; mean entropy float %.4f fixed %.4f, MI float %.4f fixed %.4f",
				f.Sets().M(), bits, frac, hF, hX, miF, miX)
			if frac < 0.99 {
				t.Errorf("%d sets, B=%d: agreement %.4f, want >= 0.99", f.Sets().M(), bits, frac)
			}
			// K = 400 samples per row: the per-row sampling error of an
			// entropy is a few hundredths of a bit, its mean over 150 rows
			// well under 0.02.
			if math.Abs(hF-hX) > 0.02 || math.Abs(miF-miX) > 0.02 {
				t.Errorf("%d sets, B=%d: mean entropy %.4f vs %.4f, MI %.4f vs %.4f differ by more than 0.02 bits", f.Sets().M(), bits, hF, hX, miF, miX)
			}
		}
	}
}

func argmax(v []float64) int {
	b := 0
	for i := range v {
		if v[i] > v[b] {
			b = i
		}
	}
	return b
}

func argmaxU(v []uint64) int {
	b := 0
	for i := range v {
		if v[i] > v[b] {
			b = i
		}
	}
	return b
}

func TestTrainDeterministicAndEval(t *testing.T) {
	d, f := irisModel(t)
	_, g := irisModel(t)
	for i := range f.Model.SPV {
		if f.Model.SPV[i] != g.Model.SPV[i] {
			t.Fatalf("same seed, different SPV at %d", i)
		}
	}
	if len(f.Split.Test) != 30 || len(f.Split.Train) != 120 {
		t.Fatalf("split %d/%d", len(f.Split.Train), len(f.Split.Test))
	}
	rows, err := Rows(f, d, "test")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(f, d, rows, 100, 1, ptm.Mapping{Kind: ptm.Vote}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.Report.N != 30 || r.Report.Accuracy < 0.85 {
		t.Errorf("Iris test accuracy %.3f over %d rows", r.Report.Accuracy, r.Report.N)
	}
	if _, err := Rows(f, d, "validation"); err == nil {
		t.Error("unknown split accepted")
	}
}

func TestEvalRejectsMismatchedData(t *testing.T) {
	_, f := irisModel(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Wrong feature count.
	bad, err := LoadData(write("three.csv", "a,b,c,species\n1,2,3,setosa\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rows(f, bad, "all"); err == nil || !strings.Contains(err.Error(), "feature") {
		t.Errorf("wrong feature count: %v", err)
	}
	// Unknown label.
	unk, err := LoadData(write("unk.csv", "sepal_length,sepal_width,petal_length,petal_width,species\n5.1,3.5,1.4,0.2,setosa\n6,3,4,1,daisy\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Rows(f, unk, "all")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Evaluate(f, unk, rows, 10, 1, ptm.Mapping{Kind: ptm.Vote}, 10); err == nil || !strings.Contains(err.Error(), `row 2 has label "daisy"`) {
		t.Errorf("unknown label: %v", err)
	}
	// Test split on another data set of a different size.
	if _, err := Rows(f, unk, "test"); err == nil || !strings.Contains(err.Error(), "150 rows") {
		t.Errorf("split on other data: %v", err)
	}
	if _, err := LoadData("xor-unknown", ""); err == nil {
		t.Error("unknown built-in accepted")
	}
}

// TestRepeatedSplitsFirst: running split 1 alone (First = 1) gives the
// same result as the second split of a two-split run, with the model and
// the test rows' statistics attached.
func TestRepeatedSplitsFirst(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	grid := []Candidate{{Params: ptm.Params{Clauses: 10, T: 5, S: 2, N: 100, Epochs: 5, Feedback: ptm.ConsistentFeedback}, Thresholds: 4, Encoding: &Plain}}
	cfg := ProtocolConfig{Splits: 2, K: 10, Grid: grid}
	both, err := RepeatedSplits(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.First, cfg.Splits = 1, 1
	one, err := RepeatedSplits(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := both[1], one[0]
	if a.Split != 1 || b.Split != 1 || a.Report.Accuracy != b.Report.Accuracy || a.Report.ECE != b.Report.ECE || a.Report.NLL != b.Report.NLL || a.Mapping != b.Mapping {
		t.Errorf("split %d %+v, alone: split %d %+v", a.Split, a.Report, b.Split, b.Report)
	}
	if b.Model == nil || b.Eval == nil || len(b.Eval.Queries) != b.Report.N || b.Model.Split.Seed != 2 {
		t.Errorf("model %v, eval %v", b.Model != nil, b.Eval != nil)
	}
	cfg.First = -1
	if _, err := RepeatedSplits(d, cfg); err == nil {
		t.Error("a negative first split was accepted")
	}
}

// TestFixedAgreesWithFloatB4: at B = 4 (four lanes per block-RAM word)
// the fixed-point core and the float PTM agree on at least 99% of the
// predictions of the default model of every built-in data set with
// classes (every row, K = 200, the default sampled encoding, softmax at
// temperature 1), and the mean entropy and mutual information agree
// within 0.02 bits. Measured 2026-11-26: agreement 1.000 / 1.000 / 0.9965
// (Iris, wine, breast cancer), AUROC(entropy) of the wrong predictions
// unchanged to 0.001.
func TestFixedAgreesWithFloatB4(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three models")
	}
	for _, name := range []string{Iris, Wine, BreastCancer} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := LoadData(name, "")
			if err != nil {
				t.Fatal(err)
			}
			p := ptm.DefaultParams()
			p.Seed = 1
			enc := DefaultEncoding
			f, err := Train(d, TrainConfig{Params: p, Thresholds: 6, SplitSeed: 1, Encoding: &enc, TestFraction: 0.2})
			if err != nil {
				t.Fatal(err)
			}
			const bits, K = 4, 200
			frac, hF, hX, miF, miX := fixedVsFloat(t, d, f, fixed.HW{Bits: bits, LFSRWidth: 16, ClauseLanes: 4, LiteralLanes: 8}, K)
			t.Logf("%s, B=%d: agreement %.4f; mean entropy float %.4f fixed %.4f, MI float %.4f fixed %.4f", name, bits, frac, hF, hX, miF, miX)
			if frac < 0.99 {
				t.Errorf("agreement %.4f, want >= 0.99", frac)
			}
			if math.Abs(hF-hX) > 0.02 || math.Abs(miF-miX) > 0.02 {
				t.Errorf("mean entropy %.4f vs %.4f, MI %.4f vs %.4f differ by more than 0.02 bits", hF, hX, miF, miX)
			}
		})
	}
}

// fixedVsFloat quantizes f's model for hw, samples every row of d K times
// with the float model and with the fixed-point core (softmax at
// temperature 1) and returns the fraction of rows whose predictions agree
// and the mean entropy and mutual information of each.
func fixedVsFloat(t *testing.T, d *Data, f *modelfile.File, hw fixed.HW, K int) (agree, hF, hX, miF, miX float64) {
	t.Helper()
	bank, err := fixed.Quantize(f.Model, hw.Bits)
	if err != nil {
		t.Fatal(err)
	}
	core, err := fixed.NewCore(bank, hw)
	if err != nil {
		t.Fatal(err)
	}
	s := ptm.NewSampler(f.Model, 5)
	mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}
	for r := range d.X {
		xs, err := f.EncodeSets(d.X[r])
		if err != nil {
			t.Fatal(err)
		}
		sums, err := s.SampleSets(xs, K, nil)
		if err != nil {
			t.Fatal(err)
		}
		qf := metrics.Query(f.Model.SumsToProbs(sums, K, mp))
		raw, _, err := core.RunSets(xs, K, uint32(r), nil)
		if err != nil {
			t.Fatal(err)
		}
		is := make([]int, len(raw))
		for i, v := range raw {
			is[i] = int(v)
		}
		qx := metrics.Query(f.Model.SumsToProbs(is, K, mp))
		if qf.Pred == qx.Pred {
			agree++
		}
		hF, hX, miF, miX = hF+qf.Entropy, hX+qx.Entropy, miF+qf.MutualInfo, miX+qx.MutualInfo
	}
	n := float64(len(d.X))
	return agree / n, hF / n, hX / n, miF / n, miX / n
}
