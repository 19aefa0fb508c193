package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestEnsembleFixedAgreesWithFloat: the per-set ensemble (one PTM per
// threshold set, docs/uncertainty.md section 11) sampled on per-set
// fixed-point cores (B = 16 and the hardware's B = 8) agrees with its
// float sampling on at least 99% of Iris predictions (K = 400), and the
// mean entropy and mutual information agree within 0.02 bits; its PTMs
// differ from each other (they are trained on different encodings).
func TestEnsembleFixedAgreesWithFloat(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.Params{Clauses: 20, T: 10, S: 2, N: 100, Epochs: 30, Seed: 1, Feedback: ptm.ConsistentFeedback}
	enc := DefaultEncoding
	e, err := TrainEnsemble(d, TrainConfig{Params: p, Thresholds: 6, SplitSeed: 1, Encoding: &enc}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Models) != enc.Sets || e.File.Model != e.Models[0] {
		t.Fatalf("%d models, want %d with Models[0] in the file", len(e.Models), enc.Sets)
	}
	same := true
	for i, v := range e.Models[1].IncludeAll() {
		if v != e.Models[0].IncludeAll()[i] {
			same = false
			break
		}
	}
	if same {
		t.Errorf("PTMs 0 and 1 of the ensemble are identical")
	}
	rows := make([]int, len(d.X))
	for i := range rows {
		rows[i] = i
	}
	const K = 400
	mp := ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}
	sf, err := e.SampleRows(d, rows, K, 5)
	if err != nil {
		t.Fatal(err)
	}
	qf := sf.Queries(mp)
	for _, bits := range []int{16, 8} {
		sx, err := e.SampleRowsFixed(d, rows, K, fixed.HW{Bits: bits, LFSRWidth: 32, ClauseLanes: 3, LiteralLanes: 16}, 0)
		if err != nil {
			t.Fatal(err)
		}
		qx := sx.Queries(mp)
		agree := 0
		var hF, hX, miF, miX float64
		for i := range qf {
			if qf[i].Pred == qx[i].Pred {
				agree++
			}
			hF, hX, miF, miX = hF+qf[i].Entropy, hX+qx[i].Entropy, miF+qf[i].MutualInfo, miX+qx[i].MutualInfo
		}
		n := float64(len(rows))
		frac := float64(agree) / n
		rf := metrics.Evaluate(qf, sf.Labels(), 10)
		t.Logf("ensemble, B=%d: agreement %.4f, accuracy float %.4f; mean entropy float %.4f fixed %.4f, MI float %.4f fixed %.4f",
			bits, frac, rf.Accuracy, hF/n, hX/n, miF/n, miX/n)
		if frac < 0.99 {
			t.Errorf("B=%d: agreement %.4f, want >= 0.99", bits, frac)
		}
		if math.Abs(hF-hX)/n > 0.02 || math.Abs(miF-miX)/n > 0.02 {
			t.Errorf("B=%d: mean entropy %.4f vs %.4f, MI %.4f vs %.4f differ by more than 0.02 bits", bits, hF/n, hX/n, miF/n, miX/n)
		}
	}
}

// TestEnsembleNeedsSets: a one-set encoding and the fixed-point trainer
// are refused with errors that say so.
func TestEnsembleNeedsSets(t *testing.T) {
	d, err := LoadData(Iris, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ptm.Params{Clauses: 10, T: 10, S: 2, N: 100, Epochs: 1, Seed: 1, Feedback: ptm.ConsistentFeedback}
	plain := Plain
	if _, err := TrainEnsemble(d, TrainConfig{Params: p, Encoding: &plain}, false); err == nil || !strings.Contains(err.Error(), ">= 2 encoding sets") {
		t.Errorf("one set: err %v, want one naming the sets", err)
	}
	if _, err := TrainEnsemble(d, TrainConfig{Params: p, Fixed: true}, false); err == nil || !strings.Contains(err.Error(), "float trainer") {
		t.Errorf("fixed: err %v, want one naming the trainer", err)
	}
}
