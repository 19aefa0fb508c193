package board

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestEngineProgramLayout: proto_engine's response programs, stepped by
// its 8-bit LFSR pc (pc_step) from their starts 8*rsel (the P_* and E_*
// selectors), never share a ROM address and never reach the LFSR's
// lock-up state 0; the LFSR is maximal (255 states in one cycle). A
// collision would overwrite one program's byte with another's.
func TestEngineProgramLayout(t *testing.T) {
	src, err := os.ReadFile("proto_engine.v")
	if err != nil {
		t.Fatal(err)
	}
	// the feedback: pc_step = {x[6:0], x[a] ^ x[b] ^ ...};
	fbLine := regexp.MustCompile(`pc_step = \{x\[6:0\], ([^}]*)\};`).FindSubmatch(src)
	if fbLine == nil {
		t.Fatal("proto_engine.v: no pc_step feedback found")
	}
	var taps []uint
	for _, m := range regexp.MustCompile(`x\[(\d)\]`).FindAllSubmatch(fbLine[1], -1) {
		n, _ := strconv.Atoi(string(m[1]))
		taps = append(taps, uint(n))
	}
	if len(taps) == 0 {
		t.Fatal("proto_engine.v: pc_step has no taps")
	}
	step := func(x uint8) uint8 {
		fb := uint8(0)
		for _, tp := range taps {
			fb ^= x >> tp & 1
		}
		return x<<1 | fb
	}
	x, period := step(1), 1
	for ; x != 1 && period <= 256; period++ {
		x = step(x)
	}
	if period != 255 {
		t.Fatalf("pc_step (taps %v) has period %d from 1, want 255", taps, period)
	}
	sel := map[string]int{}
	for _, m := range regexp.MustCompile(`localparam \[4:0\] ([PE]_[A-Z]+)\s*= 5'd(\d+);`).FindAllSubmatch(src, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		sel[string(m[1])] = n
	}
	// program lengths in bytes (proto_engine.v's prog_len; STATUS: 13 words)
	progs := map[string]int{"P_INFO": 80, "P_STATUS": 52, "P_ACK": 4, "P_EMPTY": 1,
		"E_UNKNOWN": 8, "E_LENGTH": 8, "E_NOMODEL": 8, "E_K": 8, "E_GAP": 8, "E_COMMIT": 8, "E_BUSY": 8, "E_NOLOAD": 8}
	owner := map[uint8]string{}
	for name, n := range progs {
		r, ok := sel[name]
		if !ok {
			t.Fatalf("proto_engine.v: no selector %s", name)
		}
		a := uint8(8 * r)
		for k := 0; k < n; k++ {
			if a == 0 {
				t.Errorf("%s byte %d: the LFSR's lock-up state 0", name, k)
				break
			}
			if o, dup := owner[a]; dup {
				t.Errorf("%s byte %d at address %d: already %s's", name, k, a, o)
			}
			owner[a] = name
			a = step(a)
		}
	}
	if len(owner) != 201 {
		t.Errorf("programs cover %d addresses, want 201", len(owner))
	}
}
