package convtrain

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/ptm"
)

// TestFitSoftmaxRecoversTemperature draws labels from a known softmax of
// two-class sums and checks that the fitted temperature is the true one
// within a grid step, and that its NLL is the grid's lowest.
func TestFitSoftmaxRecoversTemperature(t *testing.T) {
	h := &conv.Head{Classes: 2, T: 100}
	const tau = 25.0 // T * 2^(-8/4), on the grid
	rng := rand.New(rand.NewPCG(3, 4))
	var sums [][]int32
	var labels []int
	for r := 0; r < 20000; r++ {
		d := int32(rng.IntN(81)) // 0..80, below T: no clipping
		p0 := 1 / (1 + math.Exp(-2*float64(d)/tau))
		y := 1
		if rng.Float64() < p0 {
			y = 0
		}
		sums = append(sums, []int32{d, -d})
		labels = append(labels, y)
	}
	mp, err := FitSoftmax(h, sums, 1, labels)
	if err != nil {
		t.Fatal(err)
	}
	if mp.Kind != ptm.Softmax || math.Abs(math.Log2(mp.Temperature/tau)) > 0.26 {
		t.Errorf("fitted %+v, want softmax with temperature %v within 2^(1/4)", mp, tau)
	}
	best := NLL(h, sums, 1, labels, mp)
	for _, g := range SoftmaxGrid(h.T) {
		if n := NLL(h, sums, 1, labels, ptm.Mapping{Kind: ptm.Softmax, Temperature: g}); n < best {
			t.Errorf("temperature %v has NLL %v below the fitted %v's %v", g, n, mp.Temperature, best)
		}
	}
}

func TestFitSoftmaxErrors(t *testing.T) {
	h := &conv.Head{Classes: 2, T: 100}
	for _, c := range []struct {
		name   string
		sums   [][]int32
		K      int
		labels []int
	}{
		{"no rows", nil, 1, nil},
		{"labels mismatch", [][]int32{{1, 2}}, 1, []int{0, 1}},
		{"K 0", [][]int32{{1, 2}}, 0, []int{0}},
		{"short row", [][]int32{{1, 2}}, 2, []int{0}},
		{"bad label", [][]int32{{1, 2}}, 1, []int{2}},
	} {
		if _, err := FitSoftmax(h, c.sums, c.K, c.labels); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
