package hw

import (
	"errors"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
)

// TestConvBoardParams: a convolutional board's board_top parameters
// (KIND 1, 16-bit upload words, ADDR_W holding the weight words after the
// L*D thresholds, the image words of INFO, the core's widths) for a
// 3-class, 9-clause head on 2 x 7 lanes, and the refusals: a preloaded
// model, one set per query, a MaxK whose statistics overflow 32 bits.
func TestConvBoardParams(t *testing.T) {
	h := conv.Head{Shape: conv.Shape{H: 7, W: 6, Planes: 2, WY: 3, WX: 4}, Structure: conv.Coalesced, Classes: 3, Clauses: 9, T: 200}
	h.Weights = make([]int32, h.Classes*h.Clauses)
	b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	cfg := Config{Bits: 4, LFSRWidth: 16, ClauseLanes: 2, LiteralLanes: 7, MaxK: 100}
	d, err := GenerateConv(cfg, b, "89abcdef0123")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.BoardParams(Board{ClksPerBit: 8})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range ps {
		got[p.Name] = p.Value
	}
	// D = G*BT = 5 groups x 9 beats (2F = 2*(24+4+2) = 60 literals on 7
	// literal lanes); L*D + NC*C = 14*45 + 27 = 657 words, 47 rows of 14
	want := map[string]string{"KIND": "1", "BITS": "16", "TBITS": "4", "FEATURES": "84", "LANES": "14", "DEPTH": "45",
		"ADDR_W": "6", "CADDR_W": "6", "NT": "3", "NC": "3", "CLAUSES": "9", "KMAX": "100", "CLIP_T": "200",
		"IMG_H": "7", "IMG_W": "6", "PLANES": "2", "WIN_Y": "3", "WIN_X": "4", "LC": "2", "LL": "7", "GROUPS": "5", "BEATS": "9",
		"HASH32": "32'h89abcdef", "INFO_VER": "32'h50540002", "SETS_MAX": "8", "INIT_LOADED": "0"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// SetsMax 1: the board without the set loop (protocol 7, INFER_WINDOW kept)
	one, err := d.BoardParams(Board{ClksPerBit: 8, SetsMax: 1})
	if err != nil {
		t.Fatalf("SetsMax 1: %v", err)
	}
	for _, p := range one {
		if p.Name == "SETS_MAX" && p.Value != "1" {
			t.Errorf("SetsMax 1: SETS_MAX = %q", p.Value)
		}
	}
	if _, err := d.BoardParams(Board{ClksPerBit: 8, SetsMax: 256}); !errors.Is(err, ErrConfig) {
		t.Errorf("SetsMax 256: %v", err)
	}
	if _, err := d.BoardParams(Board{ClksPerBit: 8, Preload: &fixed.Bank{}}); !errors.Is(err, ErrConfig) {
		t.Errorf("preload: %v", err)
	}
	h.T = 20000 // 100 * T^2 >= 2^32
	b.Head = h
	if d, err = GenerateConv(cfg, b, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := d.BoardParams(Board{ClksPerBit: 8}); !errors.Is(err, ErrConfig) {
		t.Errorf("MaxK 100 at T = 20000: %v", err)
	}
	if k := ConvKMax(255, 3, 20000); k != 10 || !ConvKMaxOK(k, 3, 20000) || ConvKMaxOK(k+1, 3, 20000) {
		t.Errorf("ConvKMax(255, 3, 20000) = %d", k)
	}
}
