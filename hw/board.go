package hw

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"
	"strconv"

	"github.com/ptmhw/ptm/golden/fixed"
)

// This file is the board contract: what every consumer of a generated core
// (the Verilated board in sim/board, the synthesis flow in hw/synth, the
// host driver in host/) derives from a Design, computed here once.

// Param is one Verilog parameter of a top module: its name and its value
// as a Verilog constant (decimal, or sized like 32'h0000abcd).
type Param struct{ Name, Value string }

// DefaultLanes is the lane count used when a Config gives none (Lanes,
// ClauseLanes and LiteralLanes all 0): one literal lane per literal (2o),
// one clause lane.
func DefaultLanes(sh fixed.Shape) int { return sh.Literals() }

// defaultClockHz is the board clock of board_top when Board.ClockHz is 0.
const defaultClockHz = 48_000_000

// DefaultSetsMax is MMAX, the most sets an INFER query may carry
// (docs/protocol.md section 4, SETS_MAX), when Board.SetsMax is 0.
const DefaultSetsMax = 8

// Board is the board shell around a design: the settings of board_top
// that do not come from the core.
type Board struct {
	// ClockHz is the board clock (CLK_HZ); 0 means defaultClockHz.
	ClockHz int
	// ClksPerBit is the UART bit time in clocks (CLKS_PER_BIT, >= 4).
	ClksPerBit int
	// ReportedBaud is the bit rate INFO reports (UART_BAUD); 0 leaves
	// board_top's default, ClockHz / ClksPerBit, and omits the parameter
	// (the device tops derive it).
	ReportedBaud int
	// MAC is the Ethernet address (BOARD_MAC); nil leaves the default.
	MAC net.HardwareAddr
	// Ethernet keeps the Ethernet link (ETH_ENABLE = 1).
	Ethernet bool
	// SetsMax is MMAX, the most sets per INFER query (SETS_MAX, 1..255);
	// 0 means DefaultSetsMax.
	SetsMax int
	// CoreClock runs the core on its own clock, clk_core (CORE_CLK = 1):
	// at least twice ClockHz, from the same PLL (GENCLK and GENCLK_HALF),
	// through rtl/board/core_xing.v. ClockHz and ClksPerBit stay the
	// shell's. false: one clock (the parameter is then omitted).
	CoreClock bool
	// Preload is the bank the core's banks hold at configuration (the
	// design must be generated with Config.InitBanks and this bank): the
	// board then starts with the model committed (INIT_LOADED, INIT_CRC).
	// nil: the host uploads a bank first.
	Preload *fixed.Bank
}

// GenVersion is Version as major<<16 | minor<<8 | patch, the generator
// version a board reports (INFO, GEN_VERSION).
func GenVersion() uint32 {
	var a, b, c uint32
	fmt.Sscanf(Version, "%d.%d.%d", &a, &b, &c)
	return a<<16 | b<<8 | c
}

// CoreParams are the parameters every top around the core takes (the
// board shell and the device tops, the core-only tops too): FEATURES,
// BITS, LANE_W, ADDR_W, K_W.
func (d *Design) CoreParams() []Param {
	p := d.Params
	return []Param{
		{"FEATURES", strconv.Itoa(p.O)}, {"BITS", strconv.Itoa(p.Bits)},
		{"LANE_W", strconv.Itoa(p.LaneW)}, {"ADDR_W", strconv.Itoa(p.AddrW)}, {"K_W", strconv.Itoa(p.KW)},
	}
}

// BoardParams are the parameters of board_top (and of the device tops,
// which pass them on) for this design on board b: CoreParams, then the
// clock and UART divider, the bank geometry, T (CLIP_T), the generator version, the
// preloaded model's CRC, the Ethernet switch and SETS_MAX. An error names a Board
// field that cannot be used.
func (d *Design) BoardParams(b Board) ([]Param, error) {
	p := d.Params
	clk := b.ClockHz
	if clk == 0 {
		clk = defaultClockHz
	}
	if clk < 0 || b.ClksPerBit < 4 {
		return nil, fmt.Errorf("%w: board clock %d Hz, %d clocks per UART bit: want a clock > 0 and >= 4 clocks per bit", ErrConfig, clk, b.ClksPerBit)
	}
	sets := b.SetsMax
	if sets == 0 {
		sets = DefaultSetsMax
	}
	if sets < 1 || sets > 255 {
		return nil, fmt.Errorf("%w: %d sets per query: want 1..255", ErrConfig, sets)
	}
	loaded, crc := 0, uint32(0)
	if b.Preload != nil {
		if !d.Config.InitBanks {
			return nil, fmt.Errorf("%w: a preloaded bank needs a design generated with InitBanks", ErrConfig)
		}
		if b.Preload.Shape != d.Shape || b.Preload.Bits != p.Bits {
			return nil, fmt.Errorf("%w: the preloaded bank (%+v, B=%d) is not the design's (%+v, B=%d)", ErrConfig, b.Preload.Shape, b.Preload.Bits, d.Shape, p.Bits)
		}
		loaded, crc = 1, BankCRC(b.Preload, d.Config.HW())
	}
	eth := 0
	if b.Ethernet {
		eth = 1
	}
	ps := append(d.CoreParams(),
		Param{"CLK_HZ", strconv.Itoa(clk)},
		Param{"CLKS_PER_BIT", strconv.Itoa(b.ClksPerBit)},
		Param{"LANES", strconv.Itoa(p.L)}, Param{"DEPTH", strconv.Itoa(p.D)},
		Param{"NT", strconv.Itoa(p.NT)}, Param{"NC", strconv.Itoa(p.NC)}, Param{"KMAX", strconv.Itoa(p.MaxK)},
		Param{"CLIP_T", strconv.Itoa(p.T)},
		Param{"GEN_VERSION", fmt.Sprintf("32'h%08x", GenVersion())},
		Param{"INIT_LOADED", strconv.Itoa(loaded)}, Param{"INIT_CRC", fmt.Sprintf("32'h%08x", crc)},
		Param{"ETH_ENABLE", strconv.Itoa(eth)},
		Param{"SETS_MAX", strconv.Itoa(sets)},
	)
	if b.CoreClock {
		ps = append(ps, Param{"CORE_CLK", "1"})
	}
	if b.ReportedBaud != 0 {
		ps = append(ps, Param{"UART_BAUD", strconv.Itoa(b.ReportedBaud)})
	}
	if b.MAC != nil {
		if len(b.MAC) != 6 {
			return nil, fmt.Errorf("%w: MAC %v is not 6 bytes", ErrConfig, b.MAC)
		}
		var mac uint64
		for _, x := range b.MAC {
			mac = mac<<8 | uint64(x)
		}
		ps = append(ps, Param{"BOARD_MAC", fmt.Sprintf("48'h%012x", mac)})
	}
	return ps, nil
}

// BankWords returns a bank in upload order (docs/protocol.md section 2):
// word w = addr*L + lane of bank.LaneWords(h), each threshold as a u16
// (B <= 16), padding slots 0. LOAD_DATA carries these words and
// LOAD_COMMIT their CRC (WordsCRC).
func BankWords(bank *fixed.Bank, h fixed.HW) []uint16 {
	lanes := bank.LaneWords(h)
	l := len(lanes)
	if l == 0 {
		return nil
	}
	out := make([]uint16, l*len(lanes[0]))
	for lane, ws := range lanes {
		for a, w := range ws {
			out[a*l+lane] = uint16(w)
		}
	}
	return out
}

// WordsCRC is the CRC-32 (IEEE 802.3) of words as u16 little-endian bytes
// in order: the checksum LOAD_COMMIT carries and board_top's INIT_CRC.
func WordsCRC(words []uint16) uint32 {
	var b [512]byte
	var crc uint32
	for len(words) > 0 {
		n := min(len(words), len(b)/2)
		for k, w := range words[:n] {
			binary.LittleEndian.PutUint16(b[2*k:], w)
		}
		crc = crc32.Update(crc, crc32.IEEETable, b[:2*n])
		words = words[n:]
	}
	return crc
}

// BankCRC is WordsCRC(BankWords(bank, h)), the CRC of a whole bank.
func BankCRC(bank *fixed.Bank, h fixed.HW) uint32 { return WordsCRC(BankWords(bank, h)) }

// ConvKMaxOK reports whether K up to kmax keeps a convolutional board's
// statistics in their 32-bit words (docs/core-interface.md, "Result
// words"): kmax*lcm(1..nc) < 2^32, kmax*T^2 < 2^32, kmax*T < 2^31.
func ConvKMaxOK(kmax, nc, t int) bool {
	return kmax <= 65535 && CheckKMax(kmax, nc, t) == nil
}

// ConvKMax is the largest K up to limit that ConvKMaxOK allows for nc
// classes and margin t, or 0 if none.
func ConvKMax(limit, nc, t int) int {
	for k := min(limit, 65535); k >= 1; k-- {
		if ConvKMaxOK(k, nc, t) {
			return k
		}
	}
	return 0
}

// BoardParams are the parameters of board_top for a convolutional board
// (KIND = 1, protocol version 7; rtl/board/conv_query.v around this
// core) on board b: the core's port widths as the protocol engine sees
// them (FEATURES = P*H*W, BITS = 16: an upload word, ADDR_W wide enough
// for the weight words after the L*D thresholds), the clock and UART
// divider, the threshold rows (DEPTH = D), NT = NC, KMAX = MaxK, T, the
// image and window shape INFO reports, the conv core's own widths and
// info words, the Ethernet switch and SETS_MAX. A preloaded model is not
// supported (b.Preload must be nil: the host uploads thresholds and
// weights); MaxK must keep the statistics in 32 bits (ConvKMaxOK).
func (d *ConvDesign) BoardParams(b Board) ([]Param, error) {
	p := d.Params
	clk := b.ClockHz
	if clk == 0 {
		clk = defaultClockHz
	}
	if clk < 0 || b.ClksPerBit < 4 {
		return nil, fmt.Errorf("%w: board clock %d Hz, %d clocks per UART bit: want a clock > 0 and >= 4 clocks per bit", ErrConfig, clk, b.ClksPerBit)
	}
	sets := b.SetsMax
	if sets == 0 {
		sets = DefaultSetsMax
	}
	if sets < 1 || sets > 255 {
		return nil, fmt.Errorf("%w: %d sets per query: want 1..255", ErrConfig, sets)
	}
	if b.Preload != nil || d.Config.InitBanks {
		return nil, fmt.Errorf("%w: a convolutional board is not preloaded: generate it without InitBanks and upload the model", ErrConfig)
	}
	if !ConvKMaxOK(p.MaxK, p.NC, p.T) {
		return nil, fmt.Errorf("%w: MaxK %d with %d classes and T = %d: the statistics need MaxK*lcm(1..NC) and MaxK*T^2 < 2^32, MaxK*T < 2^31 (at most %d)",
			ErrConfig, p.MaxK, p.NC, p.T, ConvKMax(65535, p.NC, p.T))
	}
	var hash32 uint32
	if len(p.Hash) >= 8 {
		h, err := strconv.ParseUint(p.Hash[:8], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: model hash %q: %w", ErrConfig, p.Hash, err)
		}
		hash32 = uint32(h)
	}
	eth := 0
	if b.Ethernet {
		eth = 1
	}
	words := p.L*p.D + p.NC*p.C
	rows := (words + p.L - 1) / p.L
	ps := []Param{
		{"FEATURES", strconv.Itoa(p.ImgBits)}, {"BITS", "16"},
		{"LANE_W", strconv.Itoa(p.LaneW)}, {"ADDR_W", strconv.Itoa(clog2(rows))}, {"K_W", strconv.Itoa(p.KW)},
		{"CLK_HZ", strconv.Itoa(clk)},
		{"CLKS_PER_BIT", strconv.Itoa(b.ClksPerBit)},
		{"LANES", strconv.Itoa(p.L)}, {"DEPTH", strconv.Itoa(p.D)},
		{"NT", strconv.Itoa(p.NC)}, {"NC", strconv.Itoa(p.NC)}, {"KMAX", strconv.Itoa(p.MaxK)},
		{"CLIP_T", strconv.Itoa(p.T)},
		{"GEN_VERSION", fmt.Sprintf("32'h%08x", GenVersion())},
		{"INIT_LOADED", "0"}, {"INIT_CRC", "32'h00000000"},
		{"ETH_ENABLE", strconv.Itoa(eth)},
		{"SETS_MAX", strconv.Itoa(sets)},
		{"KIND", "1"},
		{"IMG_H", strconv.Itoa(p.H)}, {"IMG_W", strconv.Itoa(p.W)}, {"PLANES", strconv.Itoa(p.P)},
		{"WIN_Y", strconv.Itoa(p.WY)}, {"WIN_X", strconv.Itoa(p.WX)},
		{"CLAUSES", strconv.Itoa(p.C)}, {"TBITS", strconv.Itoa(p.Bits)},
		{"CADDR_W", strconv.Itoa(p.AddrW)}, {"WADDR_W", strconv.Itoa(p.WAddrW)},
		{"LFSR_W", strconv.Itoa(p.LW)}, {"LC", strconv.Itoa(p.LC)}, {"LL", strconv.Itoa(p.LL)},
		{"GROUPS", strconv.Itoa(p.G)}, {"BEATS", strconv.Itoa(p.BT)}, {"WT_BITS", strconv.Itoa(p.WB)},
		{"HASH32", fmt.Sprintf("32'h%08x", hash32)},
		{"INFO_VER", fmt.Sprintf("32'h%08x", versionWord)},
	}
	if b.CoreClock {
		ps = append(ps, Param{"CORE_CLK", "1"})
	}
	if b.ReportedBaud != 0 {
		ps = append(ps, Param{"UART_BAUD", strconv.Itoa(b.ReportedBaud)})
	}
	if b.MAC != nil {
		if len(b.MAC) != 6 {
			return nil, fmt.Errorf("%w: MAC %v is not 6 bytes", ErrConfig, b.MAC)
		}
		var mac uint64
		for _, x := range b.MAC {
			mac = mac<<8 | uint64(x)
		}
		ps = append(ps, Param{"BOARD_MAC", fmt.Sprintf("48'h%012x", mac)})
	}
	return ps, nil
}
