package experiments

import (
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestFoldOut: with hand-made out-of-fold samples (4 folds of 2 rows),
// candidate 0 right everywhere but on fold 0 and candidate 1 right only on
// fold 0, a carve on fold 0 picks candidate 1 while the pooled folds pick
// candidate 0; the tallies follow.
func TestFoldOut(t *testing.T) {
	mk := func(rightOnFold0 bool) *pipeline.Samples {
		d := pipeline.SamplesData{K: 1, NumClasses: 2}
		for r := range 8 {
			y := r % 2
			right := (r < 2) == rightOnFold0
			s := []int{-5, -5}
			if right {
				s[y] = 5
			} else {
				s[1-y] = 5
			}
			d.T, d.Sums, d.Labels = append(d.T, 10), append(d.Sums, s), append(d.Labels, y)
		}
		return pipeline.SamplesFrom(d)
	}
	oof := []*pipeline.Samples{mk(false), mk(true)}
	fo, err := foldOut(oof, pipeline.SelectAccuracy, ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}, false, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fo.comparisons != 12 || fo.differ != 3 || len(fo.carveQ) != 24 || len(fo.cvQ) != 8 {
		t.Fatalf("comparisons %d, differ %d, rows %d / %d; want 12, 3, 24 / 8", fo.comparisons, fo.differ, len(fo.carveQ), len(fo.cvQ))
	}
	if fo.cvN[0] != 4 || fo.cvN[1] != 0 || fo.carveN[0] != 9 || fo.carveN[1] != 3 {
		t.Errorf("chosen: cv %v, carve %v; want [4 0], [9 3]", fo.cvN, fo.carveN)
	}
	table := foldOutTable([]*foldOutcome{fo, nil}, pipeline.SelectAccuracy, 10, []string{"a", "b"}, 0)
	for _, want := range []string{"| carve (one fold) | 24 | 0.5000 |", "| cv (other folds pooled) | 8 | 0.7500 |", "differ in 3 of 12"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "first 1") || len(fo.partQ[0]) != 0 {
		t.Errorf("without a base: part rows %d, table:\n%s", len(fo.partQ[0]), table)
	}
	// With base 1 the pooled folds also choose within {a} and within {b}:
	// a is right on 6 of the 8 held-out rows, b on 2.
	fo, err = foldOut(oof, pipeline.SelectAccuracy, ptm.Mapping{Kind: ptm.Softmax, Temperature: 1}, false, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fo.partN[0][0] != 4 || fo.partN[1][1] != 4 || len(fo.partQ[0]) != 8 || len(fo.partQ[1]) != 8 {
		t.Errorf("parts: chosen %v, rows %d / %d; want [4 0] [0 4], 8 / 8", fo.partN, len(fo.partQ[0]), len(fo.partQ[1]))
	}
	table = foldOutTable([]*foldOutcome{fo}, pipeline.SelectAccuracy, 10, []string{"a", "b"}, 1)
	for _, want := range []string{"| cv, first 1 candidates | 8 | 0.7500 |", "| cv, candidates 2-2 | 8 | 0.2500 |", "| cv (other folds pooled) | 8 | 0.7500 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
