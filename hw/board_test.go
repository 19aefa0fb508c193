package hw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
)

// TestBankWords checks the upload order (word w = addr*L + lane) and that
// WordsCRC is the CRC-32 of the words as u16 little-endian bytes.
func TestBankWords(t *testing.T) {
	sh := fixed.Shape{Classes: 2, TMs: 2, Clauses: 3, Features: 3, T: 2}
	bank, err := fixed.RandomBank(sh, 16, rand.New(rand.NewPCG(2, 2)).Uint64)
	if err != nil {
		t.Fatal(err)
	}
	h := fixed.HW{Bits: 16, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 2}
	lanes := bank.LaneWords(h)
	w := BankWords(bank, h)
	L, D := len(lanes), len(lanes[0])
	if len(w) != L*D {
		t.Fatalf("%d words, want %d", len(w), L*D)
	}
	var b []byte
	for a := 0; a < D; a++ {
		for l := 0; l < L; l++ {
			if got := w[a*L+l]; uint32(got) != lanes[l][a] {
				t.Fatalf("word %d (lane %d, addr %d) = %#x, want %#x", a*L+l, l, a, got, lanes[l][a])
			}
			b = binary.LittleEndian.AppendUint16(b, w[a*L+l])
		}
	}
	if got, want := BankCRC(bank, h), crc32.ChecksumIEEE(b); got != want {
		t.Errorf("BankCRC = %08x, want %08x", got, want)
	}
	long := make([]uint16, 1000) // more than one 512-byte chunk
	var lb []byte
	for i := range long {
		long[i] = uint16(i * 7919)
		lb = binary.LittleEndian.AppendUint16(lb, long[i])
	}
	if got, want := WordsCRC(long), crc32.ChecksumIEEE(lb); got != want {
		t.Errorf("WordsCRC(1000 words) = %08x, want %08x", got, want)
	}
}

// TestBoardParams checks board_top's parameters for a preloaded design on
// a UART-only board, and the errors for unusable settings.
func TestBoardParams(t *testing.T) {
	cfg := tinyConfig
	cfg.InitBanks = true
	bank := tinyBank(t)
	d, err := Generate(cfg, tinyShape, bank, "")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.BoardParams(Board{ClockHz: 36_000_000, ClksPerBit: 12, Preload: bank,
		MAC: net.HardwareAddr{2, 0x50, 0x54, 0x4d, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range ps {
		if _, dup := got[p.Name]; dup {
			t.Errorf("parameter %s twice", p.Name)
		}
		got[p.Name] = p.Value
	}
	p := d.Params
	want := map[string]string{
		"FEATURES": itoa(p.O), "BITS": "8", "LANE_W": itoa(p.LaneW), "ADDR_W": itoa(p.AddrW), "K_W": itoa(p.KW),
		"CLK_HZ": "36000000", "CLKS_PER_BIT": "12", "LANES": "8", "DEPTH": itoa(p.D), "NT": "3", "NC": "3",
		"KMAX": "10", "GEN_VERSION": "32'h00000206", "INIT_LOADED": "1", "ETH_ENABLE": "0",
		"BOARD_MAC": "48'h0250544d0001", "CLIP_T": itoa(p.T), "SETS_MAX": "8",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if crc := BankCRC(bank, d.Config.HW()); got["INIT_CRC"] != "32'h"+hex8(crc) || crc == 0 {
		t.Errorf("INIT_CRC = %q, want the bank's CRC %08x", got["INIT_CRC"], crc)
	}
	if _, ok := got["UART_BAUD"]; ok {
		t.Error("UART_BAUD set without ReportedBaud")
	}
	if GenVersion() != 0x000206 || Version != "0.2.6" {
		t.Errorf("GenVersion %#x for Version %s", GenVersion(), Version)
	}
	for _, bad := range []Board{
		{ClksPerBit: 3},
		{ClksPerBit: 16, SetsMax: 256},
		{ClksPerBit: 16, SetsMax: -1},
		{ClksPerBit: 16, MAC: net.HardwareAddr{1, 2}},
		{ClksPerBit: 16, Preload: &fixed.Bank{Shape: fixed.Shape{Classes: 9}}},
	} {
		if _, err := d.BoardParams(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("BoardParams(%+v) = %v, want ErrConfig", bad, err)
		}
	}
	plain, err := Generate(tinyConfig, tinyShape, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.BoardParams(Board{ClksPerBit: 16, Preload: bank}); !errors.Is(err, ErrConfig) {
		t.Errorf("a preload without InitBanks: %v, want ErrConfig", err)
	}
}

func itoa(n int) string { return fmt.Sprint(n) }

func hex8(n uint32) string { return fmt.Sprintf("%08x", n) }
