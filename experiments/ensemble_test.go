package experiments

import (
	"context"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/metrics"
)

// TestEnsembleStudy: one small Iris split of the ensemble study gives a
// validation and a test row per variant, and re-tabulating its dump
// (--load) gives the same table.
func TestEnsembleStudy(t *testing.T) {
	c := irisCandidate(10, 10, 2, 5, 6)
	var dump []byte
	opt := EnsembleOptions{Data: "iris", Splits: 1, Candidate: &c, Dump: func(b []byte) { dump = b }}
	table, err := EnsembleStudy(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range EnsembleVariants {
		if n := strings.Count(table, "| validation | "+v+" |"); n != 3 {
			t.Errorf("%d validation rows of %s, want 3 (one per mapping):\n%s", n, v, table)
		}
		if n := strings.Count(table, "| test | "+v+" |"); n != 1 {
			t.Errorf("%d test rows of %s, want 1:\n%s", n, v, table)
		}
	}
	again, err := EnsembleStudy(context.Background(), EnsembleOptions{Data: "iris", Load: [][]byte{dump}})
	if err != nil {
		t.Fatal(err)
	}
	if again != table {
		t.Errorf("re-tabulated dump differs:\n%s\nvs\n%s", again, table)
	}
}

// TestRankNoise: with right-row entropies 0.1..0.4 and wrong rows at 0.25
// and 0.5, the shares are 0.500 and 1.000 (AUROC 0.75), in order.
func TestRankNoise(t *testing.T) {
	var qs []metrics.QueryStats
	var labels []int
	for i, h := range []float64{0.1, 0.2, 0.3, 0.4, 0.25, 0.5} {
		qs = append(qs, metrics.QueryStats{Mean: []float64{0.9, 0.1}, Std: []float64{0, 0}, Pred: 0, Conf: 0.9, Entropy: h})
		if i < 4 {
			labels = append(labels, 0)
		} else {
			labels = append(labels, 1)
		}
	}
	got := RankNoise(qs, labels, 200)
	for _, want := range []string{"AUROC(entropy) 0.7500 from 2 wrong and 4 right rows", "(the AUROC is their mean): 0.500 1.000"} {
		if !strings.Contains(got, want) {
			t.Errorf("RankNoise = %q, want it to contain %q", got, want)
		}
	}
	if got := RankNoise(qs[:4], labels[:4], 10); !strings.Contains(got, "AUROC undefined") {
		t.Errorf("no wrong rows: %q", got)
	}
}
