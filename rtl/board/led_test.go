package board

import (
	"math/bits"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestLEDLFSRTaps: every feedback tap set in the lfsr_taps table
// (rtl/lib/lfsr_taps.vh, included by board_top, proto_rx and uart_tx;
// widths 2..24) gives a maximal-length LFSR as board_top steps it
// (shift towards the MSB, the XOR of the tapped bits shifted in): from the
// seed 1 it returns to 1 after exactly 2^n - 1 steps. The LED tick and the
// heartbeat periods depend on it.
func TestLEDLFSRTaps(t *testing.T) {
	src, err := os.ReadFile("../lib/lfsr_taps.vh")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s+(\d+): lfsr_taps = 24'h([0-9A-Fa-f]+);`)
	seen := map[int]bool{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		n, _ := strconv.Atoi(m[1])
		taps, err := strconv.ParseUint(m[2], 16, 32)
		if err != nil {
			t.Fatalf("width %d: taps %q: %v", n, m[2], err)
		}
		seen[n] = true
		mask := uint32(1)<<n - 1
		if taps&^uint64(mask) != 0 || taps>>(n-1)&1 == 0 {
			t.Errorf("width %d: taps 0x%X are not within %d bits with bit %d set", n, taps, n, n-1)
			continue
		}
		s, period := uint32(1), 0
		for {
			fb := uint32(bits.OnesCount32(s&uint32(taps)) & 1)
			s = (s<<1 | fb) & mask
			period++
			if s == 1 || period > int(mask) {
				break
			}
		}
		if period != int(mask) {
			t.Errorf("width %d: taps 0x%X: period %d, want %d", n, taps, period, mask)
		}
	}
	for n := 2; n <= 24; n++ {
		if !seen[n] {
			t.Errorf("lfsr_taps has no entry for width %d", n)
		}
	}
}
