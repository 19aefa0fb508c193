package experiments

import (
	"context"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/pipeline"
)

// The temperature study tabulates one row per rule with defined validation
// and test figures, and its dump, loaded again, gives the same table.
func TestTemperatureStudyDumpLoad(t *testing.T) {
	grid := []pipeline.Candidate{irisCandidate(10, 5, 2, 10, 4)}
	var dump []byte
	table, err := TemperatureStudy(context.Background(), TemperatureOptions{Data: "iris", Splits: 1, OODSplits: 1, K: 10, Grid: grid,
		Dump: func(b []byte) { dump = b }})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		for _, r := range TempRules() {
			if strings.HasPrefix(line, "| "+r.Name+" |") {
				rows++
				if strings.Contains(line, "NaN") || strings.Count(line, " - |") > 3 {
					t.Errorf("bad row: %s", line)
				}
			}
		}
	}
	if rows != len(TempRules()) {
		t.Errorf("%d rule rows, want %d:\n%s", rows, len(TempRules()), table)
	}
	if !strings.Contains(table, "| 0 | 10/5/2, 4 thresholds | 120 |") {
		t.Errorf("no per-split row for split 0 with 120 out-of-fold rows:\n%s", table)
	}
	again, err := TemperatureStudy(context.Background(), TemperatureOptions{Data: "iris", Splits: 1, OODSplits: 1, K: 10, Grid: grid,
		Load: [][]byte{dump}})
	if err != nil {
		t.Fatal(err)
	}
	if again != table {
		t.Errorf("loaded table differs:\n%s\nwant\n%s", again, table)
	}
	if _, err := TemperatureStudy(context.Background(), TemperatureOptions{Data: "mnist", Splits: 1}); err == nil {
		t.Error("unknown data set accepted")
	}
}
