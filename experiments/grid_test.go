package experiments

import (
	"reflect"
	"testing"

	"github.com/ptmhw/ptm/golden/pipeline"
)

// TestFullRunGridsUnchanged: the full run's grids, now pipeline.KnownGrid
// (which `ptm train` tunes over), are the candidates the committed
// docs/results were made with.
func TestFullRunGridsUnchanged(t *testing.T) {
	want := map[string][]pipeline.Candidate{
		"iris":          {irisCandidate(60, 30, 2, 100, 6), irisCandidate(20, 10, 2, 100, 6), irisCandidate(150, 30, 3, 100, 6), irisCandidate(60, 10, 5, 100, 6)},
		"wine":          {irisCandidate(20, 10, 2, 60, 6), irisCandidate(40, 15, 2, 60, 6), irisCandidate(60, 20, 2, 60, 6)},
		"breast_cancer": {irisCandidate(20, 10, 2, 50, 6), irisCandidate(40, 15, 2, 50, 6), irisCandidate(60, 20, 2, 50, 6)},
	}
	for _, ds := range newConfig(false, false).datasets {
		if !reflect.DeepEqual(ds.grid, want[ds.key]) {
			t.Errorf("%s: grid %+v, want %+v", ds.key, ds.grid, want[ds.key])
		}
	}
}
