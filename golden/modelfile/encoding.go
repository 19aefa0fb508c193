package modelfile

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/booleanize"
)

// checkEncoding checks an optional sampled encoding against the booleanizer
// whose bit layout it must share.
func checkEncoding(e *booleanize.Sets, b *booleanize.Thermometer) error {
	if e == nil {
		return nil
	}
	if err := e.Validate(); err != nil {
		return err
	}
	if len(e.Set[0].Thresholds) != len(b.Thresholds) {
		return fmt.Errorf("%d features, the booleanizer has %d", len(e.Set[0].Thresholds), len(b.Thresholds))
	}
	for f, th := range b.Thresholds {
		if n := len(e.Set[0].Thresholds[f]); n != len(th) {
			return fmt.Errorf("feature %d has %d thresholds per set, the booleanizer %d", f, n, len(th))
		}
	}
	return nil
}

// Sets returns the model's input encoding: Encoding, or the booleanizer as
// a single set.
func (f *File) Sets() *booleanize.Sets {
	if f.Encoding != nil {
		return f.Encoding
	}
	return booleanize.Plain(f.Booleanizer)
}

// EncodeSets encodes one raw row with every set of the model's encoding
// (one vector per set; a single vector for a one-set model).
func (f *File) EncodeSets(x []float64) ([][]bool, error) {
	return f.Sets().EncodeSets(x)
}
