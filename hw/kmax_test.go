package hw

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
)

// TestCheckKMax: the one rule of the 32-bit result words, at its edges:
// with K = 1 the largest T is 65535 (65536^2 = 2^32 does not fit, which
// MaxT = 1<<16 used to allow), at the default K = 255 it is 4104.
func TestCheckKMax(t *testing.T) {
	if got := MaxTFor(1); got != 65535 || MaxT != 65535 {
		t.Errorf("MaxTFor(1) = %d, MaxT = %d, want 65535", got, MaxT)
	}
	if got := MaxTFor(DefaultMaxK); got != 4104 {
		t.Errorf("MaxTFor(%d) = %d, want 4104", DefaultMaxK, got)
	}
	for _, k := range []int{1, 2, 7, 255, 1000, 65535} {
		tm := MaxTFor(k)
		if err := CheckKMax(k, 2, tm); err != nil {
			t.Errorf("K %d, T %d (MaxTFor): %v", k, tm, err)
		}
		if err := CheckKMax(k, 2, tm+1); err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "sumsq") {
			t.Errorf("K %d, T %d: %v, want a sumsq overflow", k, tm+1, err)
		}
		// The convolutional boards' rule is the same one.
		if ConvKMaxOK(k, 2, tm) != (CheckKMax(k, 2, tm) == nil) || ConvKMaxOK(k, 2, tm+1) {
			t.Errorf("ConvKMaxOK disagrees with CheckKMax at K %d, T %d", k, tm)
		}
	}
	for _, c := range []struct {
		k, nc, t int
		msg      string
	}{
		{0, 2, 10, "MaxK = 0"},
		{1, 2, 0, "T = 0"},
		{1, 2, 65536, "T = 65536"},
		{1 << 40, 2, 1, "does not fit 32 bits"},
		{10000, 16, 1, "votes word"},
	} {
		if err := CheckKMax(c.k, c.nc, c.t); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckKMax(%d, %d, %d) = %v, want %q", c.k, c.nc, c.t, err, c.msg)
		}
	}
	// train's rules and gen's agree at the edge: CheckT accepts exactly
	// the T that a default configuration's Check does.
	sh := fixed.Shape{Classes: 3, TMs: 3, Clauses: 4, Features: 4}
	cfg := Config{Bits: 8, LFSRWidth: 32, ClauseLanes: 1, LiteralLanes: 8, MaxK: DefaultMaxK, Prefix: DefaultPrefix}
	for _, tv := range []int{1, 4104, 4105, 65535, 65536} {
		sh.T = tv
		if (CheckT(tv) == nil) != (cfg.Check(sh) == nil) {
			t.Errorf("T %d: CheckT %v, Config.Check %v", tv, CheckT(tv), cfg.Check(sh))
		}
		if (CheckConvT(3, tv) == nil) != (tv <= 65535) {
			t.Errorf("CheckConvT(3, %d) = %v", tv, CheckConvT(3, tv))
		}
	}
}
