package lfsr

import (
	"fmt"
	"testing"
)

// polyMulMod multiplies a and b modulo the degree-w polynomial
// x^w + low (low holds the terms below x^w), over GF(2).
func polyMulMod(a, b, low uint64, w int) uint64 {
	var r uint64
	for i := w - 1; i >= 0; i-- {
		top := r >> uint(w-1) & 1
		r = r << 1 & mask(w)
		if top == 1 {
			r ^= low
		}
		if b>>uint(i)&1 == 1 {
			r ^= a
		}
	}
	return r
}

func polyPowX(e, low uint64, w int) uint64 {
	res, base := uint64(1), uint64(2)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			res = polyMulMod(res, base, low, w)
		}
		base = polyMulMod(base, base, low, w)
	}
	return res
}

func primeFactors(n uint64) []uint64 {
	var f []uint64
	for q := uint64(2); q*q <= n; q++ {
		if n%q == 0 {
			f = append(f, q)
			for n%q == 0 {
				n /= q
			}
		}
	}
	if n > 1 {
		f = append(f, n)
	}
	return f
}

// TestPolynomialsPrimitive checks, with polynomial arithmetic independent of
// the shift-register code, that every tap set is primitive: x has order
// exactly 2^W-1 modulo the characteristic polynomial.
func TestPolynomialsPrimitive(t *testing.T) {
	for _, w := range Widths() {
		var low uint64
		for _, e := range Taps[w] {
			low |= 1 << uint(e)
		}
		order := mask(w)
		if got := polyPowX(order, low, w); got != 1 {
			t.Errorf("W=%d: x^(2^W-1) mod p = %#x, want 1", w, got)
		}
		for _, q := range primeFactors(order) {
			if polyPowX(order/q, low, w) == 1 {
				t.Errorf("W=%d: x^((2^W-1)/%d) = 1, polynomial not primitive", w, q)
			}
		}
	}
}

// TestPeriod walks small LFSRs through their whole cycle.
func TestPeriod(t *testing.T) {
	for _, w := range []int{16, 20} {
		l, err := New(w, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := uint64(1)<<uint(w) - 1
		var n uint64
		for {
			l.Step()
			n++
			if l.State() == 1 {
				break
			}
			if n > want {
				t.Fatalf("W=%d: no return to the seed within 2^W-1 steps", w)
			}
		}
		if n != want {
			t.Errorf("W=%d: period %d, want %d", w, n, want)
		}
	}
}

// TestSequenceMatchesRecurrence checks the packed leap-forward draws against
// the m-sequence written out bit by bit from the recurrence
// a[n+W] = XOR_e a[n+e].
func TestSequenceMatchesRecurrence(t *testing.T) {
	for _, w := range Widths() {
		for _, b := range []int{1, 8, 11, 16} {
			if b > MaxLeap(w) {
				continue
			}
			t.Run(fmt.Sprintf("W%d_B%d", w, b), func(t *testing.T) {
				seed := LaneSeed(12345, 3, w)
				l, err := New(w, b, seed)
				if err != nil {
					t.Fatal(err)
				}
				const draws = 500
				a := make([]uint8, w, w+draws*b)
				for i := 0; i < w; i++ {
					a[i] = uint8(seed >> uint(i) & 1)
				}
				for n := 0; len(a) < w+draws*b; n++ {
					var bit uint8
					for _, e := range Taps[w] {
						bit ^= a[n+e]
					}
					a = append(a, bit)
				}
				for d := 0; d < draws; d++ {
					r := l.Next()
					var want uint64
					for k := 0; k < b; k++ {
						want |= uint64(a[w+d*b+k]) << uint(k)
					}
					if r != want {
						t.Fatalf("draw %d = %#x, want %#x", d, r, want)
					}
				}
				// The state after the draws is the last W bits of the sequence.
				var st uint64
				for i := 0; i < w; i++ {
					st |= uint64(a[draws*b+i]) << uint(i)
				}
				if l.State() != st {
					t.Fatalf("state %#x, want %#x", l.State(), st)
				}
			})
		}
	}
}

// TestNextEqualsSteps checks that a draw is B single steps.
func TestNextEqualsSteps(t *testing.T) {
	a, _ := New(32, 16, 0xDEADBEEF)
	s, _ := New(32, 16, 0xDEADBEEF)
	for d := 0; d < 1000; d++ {
		r := a.Next()
		var want uint64
		for k := 0; k < 16; k++ {
			want |= s.Step() << uint(k)
		}
		if r != want || a.State() != s.State() {
			t.Fatalf("draw %d: %#x/%#x vs steps %#x/%#x", d, r, a.State(), want, s.State())
		}
	}
}

// TestMixBijective checks exhaustively at W=16 that the seed mix is a
// bijection, so distinct lanes of one request start in distinct states.
func TestMixBijective(t *testing.T) {
	seen := make([]bool, 1<<16)
	for x := uint64(0); x < 1<<16; x++ {
		y := Mix(x, 16)
		if seen[y] {
			t.Fatalf("Mix(%#x) collides", x)
		}
		seen[y] = true
	}
}

func TestLaneSeedValues(t *testing.T) {
	// Hand-evaluated from the specification for W=32, Q=0, lane 0:
	// t = 0x9E3779B9; the mix steps are spelled out here independently.
	x := uint64(0x9E3779B9)
	x = (x + x*1024) & 0xFFFFFFFF
	x ^= x >> 6
	x = (x + x*8) & 0xFFFFFFFF
	x ^= x >> 11
	x = (x + x*32768) & 0xFFFFFFFF
	if got := LaneSeed(0, 0, 32); got != x {
		t.Errorf("LaneSeed(0,0,32) = %#x, want %#x", got, x)
	}
	if Phi(32) != 0x9E3779B9 || Phi(16) != 0x9E37 {
		t.Errorf("Phi: %#x %#x", Phi(32), Phi(16))
	}
	seen := map[uint64]bool{}
	for l := 0; l < 4096; l++ {
		s := LaneSeed(7, l, 32)
		if s == 0 || seen[s] {
			t.Fatalf("lane %d seed %#x zero or repeated", l, s)
		}
		seen[s] = true
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		w, b int
		ok   bool
	}{{32, 16, true}, {16, 11, true}, {16, 12, false}, {17, 8, false}, {32, 0, false}, {64, 16, true}}
	for _, c := range cases {
		err := Check(c.w, c.b)
		if (err == nil) != c.ok {
			t.Errorf("Check(%d,%d) = %v, want ok=%v", c.w, c.b, err, c.ok)
		}
	}
	if _, err := New(32, 16, 0); err == nil {
		t.Error("zero seed accepted")
	}
}

// The bit-exact draw that a lane makes first in a request.
func ExampleLFSR_Next() {
	l, _ := New(32, 16, LaneSeed(1, 0, 32))
	fmt.Printf("%#04x %#04x\n", l.Next(), l.Next())
	// Output: 0xfb92 0xc36f
}

func BenchmarkNext(b *testing.B) {
	l, _ := New(32, 16, 1)
	var x uint64
	for i := 0; i < b.N; i++ {
		x ^= l.Next()
	}
	_ = x
}
