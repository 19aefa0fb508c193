package experiments

import (
	"context"
	"strings"
	"testing"
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
