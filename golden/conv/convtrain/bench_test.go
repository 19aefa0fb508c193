package convtrain

import (
	"fmt"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
)

// BenchmarkStep is one training step (one image) of a coalesced model on
// 28x28 stroke images with a 10x10 window (361 patches, 272 literals),
// after a warm-up epoch of 500 images, at 32, 128 and 256 clauses and 1 or
// 2 workers; seeds fixed. ns/op is per image.
func BenchmarkStep(b *testing.B) {
	sh := conv.Shape{H: 28, W: 28, Planes: 1, WY: 10, WX: 10}
	X, y := strokes(2000, 28, 5)
	B := booleanize(b, sh, conv.Encoder{Thresholds: []int{127}}, X)
	for _, clauses := range []int{32, 128, 256} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("clauses=%d/workers=%d", clauses, w), func(b *testing.B) {
				tr, err := New(Config{Shape: sh, Structure: conv.Coalesced, Classes: 3, Clauses: clauses, T: 100, S: 5, N: 100, Seed: 1, Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				if err := tr.RunEpoch(B[:500], y[:500]); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := tr.Update(B[i%len(B)], y[i%len(B)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
