package cosim

import (
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
)

func TestQuick(t *testing.T) {
	res, err := Run(Options{
		Shape:  fixed.Shape{TMs: 3, Classes: 3, Clauses: 5, Features: 5, T: 3},
		Config: hw.Config{Bits: 8, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 3, MaxK: 20},
		Seed:   1, Samples: 2000, CacheDir: "/tmp/cosimcache",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.FirstMismatch != nil {
		t.Logf("%+v", *res.FirstMismatch)
	}
}
