package ptm

import (
	"math/rand/v2"
	"testing"
)

// TestPCGMatchesStdlib: pcg reproduces math/rand/v2's PCG value for value,
// and as a rand.Source drives rand.Rand exactly like it.
func TestPCGMatchesStdlib(t *testing.T) {
	for _, seed := range [][2]uint64{{0, 0}, {1, 2}, {3, 0x5054_4d5f_7472_6e21}, {^uint64(0), 12345}} {
		want := rand.NewPCG(seed[0], seed[1])
		got := pcg{hi: seed[0], lo: seed[1]}
		for i := 0; i < 10000; i++ {
			var x uint64
			if got, x = got.next(); x != want.Uint64() {
				t.Fatalf("seed %v: value %d differs", seed, i)
			}
		}
		r1 := rand.New(rand.NewPCG(seed[0], seed[1]))
		p := pcg{hi: seed[0], lo: seed[1]}
		r2 := rand.New(&p)
		for i := 0; i < 1000; i++ {
			var x uint64
			p, x = p.next()
			if a, b := r1.Float64(), unit(x); a != b {
				t.Fatalf("seed %v: Float64 %d: %v vs unit %v", seed, i, a, b)
			}
			if a, b := r1.IntN(7+i), r2.IntN(7+i); a != b {
				t.Fatalf("seed %v: IntN %d: %v vs %v", seed, i, a, b)
			}
		}
	}
}
