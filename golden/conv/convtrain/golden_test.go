package convtrain

import (
	"fmt"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// TestGoldenHash pins the trainer's output: small fixed-seed training runs
// must keep giving the same SPVs, include masses and weights, so a change
// made for speed cannot move a trained model. The runs cover both class
// structures, the 5-word patch path (28 x 28 images, 10 x 10 window, 272
// literals) and a generic width (10 x 10 images, 4 x 4 window), and 1 and
// 2 workers. Update a hash only with a deliberate change of the training
// rule (package doc), never for speed work.
func TestGoldenHash(t *testing.T) {
	cases := []struct {
		side, win, clauses, T, images int
		st                            conv.Structure
		want                          string
	}{
		{28, 10, 30, 8, 150, conv.PerClass, "428c4217f5af9cfa11d639c893104ca41ed1adf97b28d6bd69b38e792df0868d"},
		{28, 10, 32, 40, 150, conv.Coalesced, "d93b43e2088672b32d5c7d3b1da6e2bbe9dead24da9622c7869f0de723e8455c"},
		{10, 4, 12, 6, 300, conv.PerClass, "7e54adeeb513e1ac2f34108a84d8b4ccb5f5025ee6ea1bad4dc3127f1783d595"},
		{10, 4, 12, 6, 300, conv.Coalesced, "21d5dadb0e5184573f35a697c4bcf5e3f9633ca6b7692871c997ededc9c5f207"},
	}
	for _, c := range cases {
		sh := conv.Shape{H: c.side, W: c.side, Planes: 1, WY: c.win, WX: c.win}
		X, y := strokes(c.images, c.side, 3)
		B := booleanize(t, sh, conv.Encoder{Thresholds: []int{127}}, X)
		for _, w := range []int{1, 2} {
			name := fmt.Sprintf("%dx%d/%s/workers=%d", c.side, c.win, c.st, w)
			tr, err := New(Config{Shape: sh, Structure: c.st, Classes: 3, Clauses: c.clauses, T: c.T, S: 3, N: 20, Bits: 12, Seed: 11, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			for e := 0; e < 2; e++ {
				if err := tr.RunEpoch(B, y); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if err := tr.Clauses().Check(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := hash(tr)
			tr.Close()
			if got != c.want {
				t.Errorf("%s: state hash %s, want %s", name, got, c.want)
			}
		}
	}
}
