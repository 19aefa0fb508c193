package board

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
	"github.com/ptmhw/ptm/rtl"
	"github.com/ptmhw/ptm/rtl/internal/rtltest"
)

// depDirs are the hand-written RTL folders the board modules use.
var depDirs = []string{"../lib", "../uart", "../eth"}

type param struct{ name, value string }

// bench is one Verilator C++ test bench build.
type bench struct {
	name   string   // subtest name (also the bench's PASS name)
	top    string   // top module
	srcs   []string // Verilog sources, relative to rtl/board
	tb     string   // C++ bench, relative to rtl/board
	params []param  // passed as -G<name>=<value> and -D<name>=<value>
	flags  []string // extra verilator flags
	core   bool     // needs the generated core and the bench data file
	conv   bool     // needs the generated convolutional core (conv_query)
}

var (
	rxSrcs     = []string{"proto_rx.v", "../lib/crc32.v"}
	rxSerSrcs  = []string{"proto_rx.v", "../lib/crc32_serial.v"}
	rxEthSrcs  = []string{"proto_rx_eth.v", "../lib/crc32.v"}
	engineSrcs = []string{"proto_engine.v", "stat_counters.v"}
	boardSrcs  = []string{"board_top.v", "proto_rx.v", "proto_rx_eth.v", "proto_tx.v", "link_arb.v", "proto_engine.v",
		"stat_counters.v", "../lib/crc32.v", "../lib/crc32_serial.v", "../uart/uart_rx.v", "../uart/uart_tx.v",
		"../eth/eth_mac_rx.v", "../eth/eth_mac_tx.v"}
)

// benches[0] is built first and seeds the runtime objects of the others
// (keep it small); the rest run longest first.
var benches = []bench{
	{name: "link_arb", top: "link_arb", srcs: []string{"link_arb.v"}, tb: "tb/link_arb_tb.cpp"},
	{name: "board_top", top: "board_top", srcs: boardSrcs, tb: "tb/board_top_tb.cpp", core: true},
	// the dual-clock board: the core on clk_core at twice clk (core_xing)
	{name: "board_top_2clk", top: "board_top", srcs: append(append([]string{}, boardSrcs...), "core_xing.v"),
		tb: "tb/board_top_tb.cpp", core: true, params: []param{{"CORE_CLK", "1"}}},
	{name: "proto_engine", top: "proto_engine", srcs: engineSrcs, tb: "tb/proto_engine_tb.cpp",
		params: []param{{"FEATURES", "10"}, {"BITS", "12"}, {"LANES", "4"}, {"DEPTH", "7"}, {"LANE_W", "2"},
			{"ADDR_W", "3"}, {"K_W", "8"}, {"NT", "3"}, {"NC", "3"}, {"KMAX", "200"}, {"UART_BAUD", "3000000"},
			{"CLIP_T", "10"}, {"SETS_MAX", "8"}}},
	{name: "proto_engine_binary", top: "proto_engine", srcs: engineSrcs, tb: "tb/proto_engine_tb.cpp",
		params: []param{{"FEATURES", "3"}, {"BITS", "8"}, {"LANES", "2"}, {"DEPTH", "5"}, {"LANE_W", "1"},
			{"ADDR_W", "3"}, {"K_W", "8"}, {"NT", "1"}, {"NC", "2"}, {"KMAX", "255"}, {"UART_BAUD", "115200"},
			{"INIT_LOADED", "1"}, {"INIT_CRC", "305419896"}, {"CLIP_T", "127"}, {"SETS_MAX", "1"}}},
	// the UP5K image's engine: no Ethernet counters, the optional ones left out
	{name: "proto_engine_lean", top: "proto_engine", srcs: engineSrcs, tb: "tb/proto_engine_tb.cpp",
		params: []param{{"FEATURES", "12"}, {"BITS", "8"}, {"LANES", "3"}, {"DEPTH", "5"}, {"LANE_W", "2"},
			{"ADDR_W", "3"}, {"K_W", "8"}, {"NT", "1"}, {"NC", "2"}, {"KMAX", "255"}, {"UART_BAUD", "3000000"},
			{"CLIP_T", "15"}, {"SETS_MAX", "1"}, {"ETH_COUNTERS", "0"}, {"STATUS_ALL", "0"}}},
	// NC = 8: U = 840, so mode 2 sends u16 votes up to K = 78 and u32 above;
	// T = 200: mode 3 sends i16 items
	{name: "proto_engine_nc8", top: "proto_engine", srcs: engineSrcs, tb: "tb/proto_engine_tb.cpp",
		params: []param{{"FEATURES", "20"}, {"BITS", "8"}, {"LANES", "3"}, {"DEPTH", "6"}, {"LANE_W", "2"},
			{"ADDR_W", "3"}, {"K_W", "8"}, {"NT", "8"}, {"NC", "8"}, {"KMAX", "200"}, {"UART_BAUD", "115200"},
			{"CLIP_T", "200"}, {"SETS_MAX", "5"}}},
	{name: "proto_rx", top: "proto_rx", srcs: rxSrcs, tb: "tb/proto_rx_tb.cpp",
		params: []param{{"IDLE_CYCLES", "400"}, {"FIFO_DEPTH", "2048"}, {"FRAMES", "4"}}},
	// the board's configuration: 32 frames held
	{name: "proto_rx_32", top: "proto_rx", srcs: rxSrcs, tb: "tb/proto_rx_tb.cpp",
		params: []param{{"IDLE_CYCLES", "400"}, {"FIFO_DEPTH", "2048"}, {"FRAMES", "32"}}},
	// ... with the bit-serial CRC
	{name: "proto_rx_serial", top: "proto_rx", srcs: rxSerSrcs, tb: "tb/proto_rx_tb.cpp",
		params: []param{{"IDLE_CYCLES", "400"}, {"FIFO_DEPTH", "2048"}, {"FRAMES", "32"}, {"CRC_SERIAL", "1"}, {"TICK_CLKS", "16"}}},
	// ... stepped by the line's receiver (board_top's UART link)
	{name: "proto_rx_line", top: "proto_rx", srcs: rxSerSrcs, tb: "tb/proto_rx_tb.cpp",
		params: []param{{"IDLE_CYCLES", "400"}, {"FIFO_DEPTH", "2048"}, {"FRAMES", "32"}, {"CRC_SERIAL", "2"}, {"TICK_CLKS", "16"}}},
	// ... with payload bytes fetched on demand (board_top's: no byte counter)
	{name: "proto_rx_line_ondemand", top: "proto_rx", srcs: rxSerSrcs, tb: "tb/proto_rx_tb.cpp",
		params: []param{{"IDLE_CYCLES", "400"}, {"FIFO_DEPTH", "2048"}, {"FRAMES", "32"}, {"CRC_SERIAL", "2"}, {"TICK_CLKS", "16"}, {"PREFETCH", "0"}}},
	{name: "proto_rx_eth", top: "proto_rx_eth", srcs: rxEthSrcs, tb: "tb/proto_rx_eth_tb.cpp",
		params: []param{{"FIFO_DEPTH", "1024"}, {"DESC_DEPTH", "0"}}},
	{name: "proto_tx", top: "proto_tx", srcs: []string{"proto_tx.v", "../lib/crc32.v"}, tb: "tb/proto_tx_tb.cpp"},
	{name: "proto_tx_4", top: "proto_tx", srcs: []string{"proto_tx.v", "../lib/crc32.v"}, tb: "tb/proto_tx_tb.cpp",
		params: []param{{"FRAG_BYTES", "4"}}},
	// the UART-only board's: bit-serial CRC
	{name: "proto_tx_serial", top: "proto_tx", srcs: []string{"proto_tx.v", "../lib/crc32_serial.v"}, tb: "tb/proto_tx_tb.cpp",
		params: []param{{"CRC_SERIAL", "1"}}},
	{name: "proto_tx_serial_4", top: "proto_tx", srcs: []string{"proto_tx.v", "../lib/crc32_serial.v"}, tb: "tb/proto_tx_tb.cpp",
		params: []param{{"FRAG_BYTES", "4"}, {"CRC_SERIAL", "1"}}},
	// ... stepped by the line's transmitter (board_top's UART link)
	{name: "proto_tx_line", top: "proto_tx", srcs: []string{"proto_tx.v", "../lib/crc32_serial.v"}, tb: "tb/proto_tx_tb.cpp",
		params: []param{{"CRC_SERIAL", "2"}}},
	{name: "proto_tx_line_4", top: "proto_tx", srcs: []string{"proto_tx.v", "../lib/crc32_serial.v"}, tb: "tb/proto_tx_tb.cpp",
		params: []param{{"FRAG_BYTES", "4"}, {"CRC_SERIAL", "2"}}},
	{name: "core_xing", top: "core_xing", srcs: []string{"core_xing.v"}, tb: "tb/core_xing_tb.cpp"},
	{name: "conv_query", top: "conv_query", srcs: []string{"conv_query.v"}, tb: "tb/conv_query_tb.cpp", conv: true},
	{name: "stat_counters", top: "stat_counters", srcs: []string{"stat_counters.v"}, tb: "tb/stat_counters_tb.cpp",
		flags: []string{"--public-flat-rw"}},
	// the UART-only engine's: 5 counters, 2-bit pending counts
	{name: "stat_counters_5", top: "stat_counters", srcs: []string{"stat_counters.v"}, tb: "tb/stat_counters_tb.cpp",
		flags: []string{"--public-flat-rw"}, params: []param{{"NCNT", "5"}, {"PEND_W", "2"}}},
}

// lintParams lists extra parameter sets to lint besides the defaults.
var lintParams = map[string][][]param{
	"proto_rx": {
		{{"IDLE_CYCLES", "1280"}, {"FRAMES", "1"}},
		{{"IDLE_CYCLES", "80"}, {"FRAMES", "3"}, {"FIFO_DEPTH", "4096"}},
		{{"IDLE_CYCLES", "2560"}, {"CRC_SERIAL", "1"}, {"TICK_CLKS", "16"}},
		{{"IDLE_CYCLES", "2560"}, {"CRC_SERIAL", "2"}, {"TICK_CLKS", "16"}},
		{{"IDLE_CYCLES", "2560"}, {"CRC_SERIAL", "2"}, {"TICK_CLKS", "16"}, {"PREFETCH", "0"}},
	},
	"proto_rx_eth": {{{"DESC_DEPTH", "2"}, {"FIFO_DEPTH", "2048"}}},
	"proto_tx":     {{{"FRAG_BYTES", "4"}}, {{"CRC_SERIAL", "1"}}, {{"CRC_SERIAL", "2"}}},
	"board_top": {{{"ETH_ENABLE", "0"}}, {{"CLKS_PER_BIT", "8"}, {"UART_FIFO_DEPTH", "4096"}},
		{{"CORE_CLK", "1"}}, {{"CORE_CLK", "1"}, {"ETH_ENABLE", "0"}}},
	"stat_counters": {{{"NCNT", "2"}}, {{"NCNT", "16"}}, {{"NCNT", "9"}, {"PEND_W", "5"}}, {{"NCNT", "9"}, {"INC1", "16'h0171"}}},
	"proto_engine": {
		{{"FEATURES", "3"}, {"BITS", "12"}, {"LANES", "2"}, {"DEPTH", "5"}, {"LANE_W", "1"}, {"ADDR_W", "3"},
			{"NT", "1"}, {"NC", "2"}, {"INIT_LOADED", "1"}, {"INIT_CRC", "305419896"}, {"SETS_MAX", "1"}, {"CLIP_T", "128"}},
		{{"FEATURES", "100"}, {"BITS", "16"}, {"LANES", "64"}, {"DEPTH", "200"}, {"LANE_W", "6"},
			{"ADDR_W", "8"}, {"K_W", "16"}, {"NT", "16"}, {"NC", "16"}, {"KMAX", "1000"}, {"SETS_MAX", "255"}, {"CLIP_T", "30000"}},
		{{"K_W", "1"}, {"KMAX", "1"}, {"SETS_MAX", "15"}},
	},
}

// core is the small generated core used by the board_top lint, bench and
// synthesis (prefix "tiny", so PTM_CORE is exercised).
type core struct {
	dir    string
	design *hw.Design
	data   string // bench data file
}

var (
	coreOnce sync.Once
	coreVal  *core
	coreErr  error
	tmpRoot  string
)

func TestMain(m *testing.M) {
	var err error
	tmpRoot, err = os.MkdirTemp("", "rtl-board-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// tinyShape and tinyConfig describe the core of the board_top bench:
// 3 classes, L = 4 lanes, D = 30 beats (120 bank words).
var (
	tinyShape  = fixed.Shape{Classes: 3, TMs: 3, Clauses: 4, Features: 5, T: 3}
	tinyConfig = hw.Config{Bits: 8, LFSRWidth: 16, ClauseLanes: 2, LiteralLanes: 2, MaxK: 20, Prefix: "tiny"}
)

func getCore(t *testing.T) *core {
	t.Helper()
	coreOnce.Do(func() { coreVal, coreErr = makeCore() })
	if coreErr != nil {
		t.Fatalf("generating the bench core: %v", coreErr)
	}
	return coreVal
}

func makeCore() (*core, error) {
	d, err := hw.Generate(tinyConfig, tinyShape, nil, "0123abcd")
	if err != nil {
		return nil, err
	}
	c := &core{dir: filepath.Join(tmpRoot, "core"), design: d}
	if err := d.Write(c.dir); err != nil {
		return nil, err
	}
	c.data = filepath.Join(tmpRoot, "board_top.dat")
	return c, writeBenchData(c.data, d)
}

// convHeads are the convolutional cores board_top and conv_query are
// linted around: a coalesced 3-class model on 7 x 6 images of 2 planes
// (2 x 7 lanes: padding clauses and literal slots), and a 10-class one
// on 1 plane (4 x 4 lanes).
var (
	convOnce sync.Once
	convD    *hw.ConvDesign
	convDir  string
	convErr  error
)

// getConvCore generates the convolutional core of the lint runs (once).
func getConvCore(t *testing.T) (*hw.ConvDesign, string) {
	t.Helper()
	convOnce.Do(func() {
		h := conv.Head{Shape: conv.Shape{H: 7, W: 6, Planes: 2, WY: 3, WX: 4}, Structure: conv.Coalesced, Classes: 3, Clauses: 9, T: 200}
		h.Weights = make([]int32, h.Classes*h.Clauses)
		h.Weights[0], h.Weights[1] = -512, 511 // 10-bit weights (hw.ConvParams.WB)
		b := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
		cfg := hw.Config{Bits: 4, LFSRWidth: 16, ClauseLanes: 2, LiteralLanes: 7, MaxK: 100, Prefix: "tinyc"}
		convD, convErr = hw.GenerateConv(cfg, b, "0123abcd")
		if convErr == nil {
			convDir = filepath.Join(tmpRoot, "convcore")
			convErr = convD.Write(convDir)
		}
	})
	if convErr != nil {
		t.Fatalf("generating the convolutional core: %v", convErr)
	}
	return convD, convDir
}

// convBoardParams are board_top's parameters for the convolutional core
// (hw.ConvDesign.BoardParams).
func convBoardParams(t *testing.T, d *hw.ConvDesign, eth bool) []param {
	t.Helper()
	list, err := d.BoardParams(hw.Board{ClksPerBit: 8, Ethernet: eth})
	if err != nil {
		t.Fatal(err)
	}
	var ps []param
	for _, p := range list {
		ps = append(ps, param{p.Name, p.Value})
	}
	return ps
}

// convQueryParams are conv_query's parameters for the convolutional core:
// board_top's, renamed where conv_query's names differ.
func convQueryParams(t *testing.T, d *hw.ConvDesign) []param {
	t.Helper()
	keep := map[string]string{"FEATURES": "", "IMG_W": "", "BITS": "", "TBITS": "", "LANES": "", "LANE_W": "", "DEPTH": "",
		"ADDR_W": "", "CADDR_W": "", "NC": "", "CLAUSES": "", "WADDR_W": "", "K_W": "", "CLIP_T": "", "INFO_VER": "",
		"LFSR_W": "", "LC": "", "LL": "", "KMAX": "MAXK", "HASH32": "", "GROUPS": "", "BEATS": ""}
	var ps []param
	for _, p := range convBoardParams(t, d, false) {
		if n, ok := keep[p.name]; ok {
			if n == "" {
				n = p.name
			}
			ps = append(ps, param{n, p.value})
		}
	}
	for i, q := range ps { // 32'hXXXXXXXX as decimal: the benches pass parameters to C++ too
		if h, ok := strings.CutPrefix(q.value, "32'h"); ok {
			v, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			ps[i].value = fmt.Sprint(v)
		}
	}
	return ps
}

// coreParams are the board_top parameters that describe a generated core.
func coreParams(d *hw.Design) []param {
	p := d.Params
	return []param{
		{"FEATURES", fmt.Sprint(p.O)}, {"BITS", fmt.Sprint(p.Bits)}, {"LANES", fmt.Sprint(p.L)},
		{"DEPTH", fmt.Sprint(p.D)}, {"LANE_W", fmt.Sprint(p.LaneW)}, {"ADDR_W", fmt.Sprint(p.AddrW)},
		{"K_W", fmt.Sprint(p.KW)}, {"NT", fmt.Sprint(p.NT)}, {"NC", fmt.Sprint(p.NC)},
		{"KMAX", fmt.Sprint(p.MaxK)}, {"CLIP_T", fmt.Sprint(p.T)}, {"GEN_VERSION", fmt.Sprint(genVersion())},
	}
}

// genVersion is hw.Version as major<<16 | minor<<8 | patch.
func genVersion() uint32 {
	var a, b, c uint32
	fmt.Sscanf(hw.Version, "%d.%d.%d", &a, &b, &c)
	return a<<16 | b<<8 | c
}

// benchSetsMax is the board_top bench's SETS_MAX.
const benchSetsMax = 6

// boardBenchParams are the board_top bench's parameters: the core's, a
// fast simulated UART and a small CLK_HZ so the LEDs move.
func boardBenchParams(d *hw.Design) []param {
	return append(coreParams(d), param{"CLKS_PER_BIT", "8"}, param{"CLK_HZ", "6400"}, param{"UART_BAUD", "800"},
		param{"SETS_MAX", fmt.Sprint(benchSetsMax)})
}

// writeBenchData writes the board_top bench's data file: the shape, the
// info ROM, a random bank (upload order) and INFER requests (one set and
// several, all four modes) with the result items of fixed.Core.RunSets.
func writeBenchData(path string, d *hw.Design) error {
	rng := rand.New(rand.NewPCG(7, 11))
	cfg := d.Config
	bank, err := fixed.RandomBank(d.Shape, cfg.Bits, rng.Uint64)
	if err != nil {
		return err
	}
	gold, err := fixed.NewCore(bank, cfg.HW())
	if err != nil {
		return err
	}
	p := d.Params
	var b strings.Builder
	fb := (p.O + 7) / 8
	fmt.Fprintf(&b, "shape %d %d %d %d %d %d %d\n", p.L, p.D, p.NT, p.NC, fb, p.MaxK, p.Bits)
	b.WriteString("info")
	for _, w := range d.InfoWords() {
		fmt.Fprintf(&b, " %x", w)
	}
	b.WriteString("\nbank")
	lanes := bank.LaneWords(cfg.HW())
	for a := 0; a < p.D; a++ {
		for l := 0; l < p.L; l++ {
			fmt.Fprintf(&b, " %x", lanes[l][a])
		}
	}
	b.WriteString("\n")
	// one-set requests in modes 0..2 (as in protocol version 2), then set
	// queries (sets 0..benchSetsMax, K often below M) in all four modes
	for i := 0; i < 20; i++ {
		mode := i % 3 // 0 samples, 1 stats, 2 votes
		k := 1 + rng.IntN(p.MaxK)
		if i == 2 {
			k = p.MaxK
		}
		sets := 0
		if i >= 8 {
			mode = i % 4
			sets = (i - 8) % (benchSetsMax + 1)
			if i%2 == 0 {
				k = 1 + rng.IntN(min(p.MaxK, sets+2))
			}
		}
		m := max(1, sets)
		count := 1 + rng.IntN(4)
		seed := rng.Uint32()
		fmt.Fprintf(&b, "req %d %d %x %d %d", mode, k, seed, count, sets)
		var words []uint32
		ib := 4 // bytes per result item
		if mode == 2 && uint64(k)*fixed.VoteUnit(p.NC) <= 0xffff {
			ib = 2
		}
		if mode == 3 {
			ib = 1
			if p.T > 127 {
				ib = 2
			}
		}
		runs := 0
		var raws []string
		for v := 0; v < count; v++ {
			xs := make([][]bool, m)
			for s := range xs {
				x := make([]bool, p.O)
				raw := make([]byte, fb)
				for j := range x {
					x[j] = rng.IntN(2) == 1
					if x[j] {
						raw[j/8] |= 1 << (j % 8)
					}
				}
				for _, c := range raw {
					raws = append(raws, fmt.Sprintf("%02x", c))
				}
				xs[s] = x
				if fixed.SetK(k, m, s) > 0 {
					runs++
				}
			}
			sums, st, err := gold.RunSets(xs, k, seed+uint32(v), nil) // query v uses seed + v
			if err != nil {
				return err
			}
			switch mode {
			case 0:
				for _, s := range sums {
					words = append(words, uint32(s))
				}
			case 3:
				for _, s := range sums {
					c := min(max(s, -int32(p.T)), int32(p.T))
					words = append(words, uint32(c)&(1<<(8*ib)-1))
				}
			default:
				for _, v := range st.Votes {
					words = append(words, uint32(v))
				}
				if mode == 2 {
					continue
				}
				for _, v := range st.Sum {
					words = append(words, uint32(v))
				}
				for _, v := range st.SumSq {
					words = append(words, uint32(v))
				}
			}
		}
		fmt.Fprintf(&b, " %d %s items %d %d", runs, strings.Join(raws, " "), len(words), ib)
		for _, w := range words {
			fmt.Fprintf(&b, " %x", w)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// vFiles returns the board's .v files.
func vFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.v")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no .v files in rtl/board")
	}
	return files
}

var (
	moduleRE = regexp.MustCompile(`(?m)^module\s+(\w+)`)
	paramRE  = regexp.MustCompile(`(?m)^\s*parameter\s+(?:\[[^\]]*\]\s*)?(\w+)`)
)

// TestConventions checks the file layout rules that need no tools.
func TestConventions(t *testing.T) {
	for _, f := range vFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		lines := strings.Split(strings.TrimSpace(src), "\n")
		if strings.TrimSpace(lines[0]) != "`default_nettype none" {
			t.Errorf("%s: first line must be `default_nettype none", f)
		}
		if strings.TrimSpace(lines[len(lines)-1]) != "`default_nettype wire" {
			t.Errorf("%s: last line must be `default_nettype wire", f)
		}
		mods := moduleRE.FindAllStringSubmatch(src, -1)
		base := strings.TrimSuffix(f, ".v")
		if len(mods) != 1 || mods[0][1] != base {
			t.Errorf("%s: want exactly one module named %s, found %v", f, base, mods)
		}
		if !strings.Contains(src, " * "+base+" - ") {
			t.Errorf("%s: header comment \" * %s - <what it does>\" missing", f, base)
		}
		head := src[:strings.Index(src, "*/")]
		for _, m := range paramRE.FindAllStringSubmatch(src, -1) {
			name := m[1]
			if strings.ToUpper(name) != name {
				t.Errorf("%s: parameter %s is not UPPER_CASE", f, name)
			}
			if !strings.Contains(head, name) {
				t.Errorf("%s: parameter %s is not documented in the header comment", f, name)
			}
		}
		if _, err := os.Stat(filepath.Join("tb", base+"_tb.cpp")); err != nil {
			t.Errorf("%s: bench tb/%s_tb.cpp missing", f, base)
		}
	}
}

// TestLint runs verilator -Wall lint on every module as a top.
func TestLint(t *testing.T) {
	t.Parallel()
	rtltest.NeedTools(t, "verilator")
	for _, f := range vFiles(t) {
		top := strings.TrimSuffix(f, ".v")
		sets := append([][]param{nil}, lintParams[top]...)
		for _, ps := range sets {
			args := []string{"--lint-only", "-Wall", "--top-module", top, "-y", "."}
			for _, d := range depDirs {
				args = append(args, "-y", d)
			}
			label := top
			switch top {
			case "board_top":
				c := getCore(t)
				args = append(args, "-y", c.dir, "+define+PTM_CORE=tiny_core")
				ps = append(coreParams(c.design), ps...)
			case "conv_query":
				// the convolutional board's query path alone, around
				// its generated core
				d, dir := getConvCore(t)
				args = append(args, "-y", dir, "+define+PTM_CONV_CORE="+d.Top())
				ps = append(convQueryParams(t, d), ps...)
			}
			for _, p := range ps {
				args = append(args, "-G"+p.name+"="+p.value)
				label += fmt.Sprintf(" %s=%s", p.name, p.value)
			}
			args = append(args, f)
			out, err := rtltest.Run(t, ".", "verilator", args...)
			if err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("lint %s: %v\n%s", label, err, out)
			}
		}
	}
	// the convolutional board (KIND = 1, protocol 7): with and without
	// Ethernet, and on the core's own clock
	d, dir := getConvCore(t)
	for _, extra := range [][]param{nil, {{"CORE_CLK", "1"}}} {
		for _, eth := range []bool{true, false} {
			args := []string{"--lint-only", "-Wall", "--top-module", "board_top", "-y", ".", "-y", dir, "+define+PTM_CONV_CORE=" + d.Top()}
			for _, dd := range depDirs {
				args = append(args, "-y", dd)
			}
			label := "board_top (convolutional)"
			for _, p := range append(convBoardParams(t, d, eth), extra...) {
				args = append(args, "-G"+p.name+"="+p.value)
				label += fmt.Sprintf(" %s=%s", p.name, p.value)
			}
			out, err := rtltest.Run(t, ".", "verilator", append(args, "board_top.v")...)
			if err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("lint %s: %v\n%s", label, err, out)
			}
		}
	}
}

// runtimeObjs are the Verilator runtime objects that every bench build
// compiles identically; the first build's copies seed the others.
var runtimeObjs = []string{"verilated.o", "verilated_threads.o"}

// benchArgs are b's verilator arguments and input files (sources, bench,
// generated core and bench header folders). The model's hot code is
// compiled with -O2 (OPT_FAST): the proto_engine benches stream about 30
// INFER responses of up to 131,072 bytes each, and at -O0 they ran 390-820 s
// apiece (TestBench 19.7 min with every build cached); with -O2 TestBench
// takes 8.2 min from an empty build cache on a loaded 2-core machine.
func benchArgs(t *testing.T, b bench, dir string) (args, inputs []string) {
	t.Helper()
	args = []string{"--cc", "--exe", "--build", "-j", "2", "-Wall",
		"--top-module", b.top, "--Mdir", dir, "-o", "bench",
		"-CFLAGS", "-I" + rtltest.Abs(t, "../lib/tb") + " -I" + rtltest.Abs(t, "tb"),
		"-MAKEFLAGS", "OPT_FAST=-O2 OPT_GLOBAL=-O1 OPT_SLOW=-O0", "-I" + rtltest.Abs(t, "../lib")}
	inputs = []string{rtltest.Abs(t, "../lib/tb"), rtltest.Abs(t, "tb")}
	for _, n := range rtl.Includes() {
		inputs = append(inputs, rtltest.Abs(t, filepath.Join("..", filepath.FromSlash(n))))
	}
	args = append(args, b.flags...)
	params := b.params
	var files []string
	if b.core {
		c := getCore(t)
		params = append(boardBenchParams(c.design), params...)
		args = append(args, "+define+PTM_CORE=tiny_core")
		for _, f := range c.design.VerilogFiles() {
			files = append(files, filepath.Join(c.dir, f))
		}
	}
	if b.conv {
		d, dir := getConvCore(t)
		params = append(convQueryParams(t, d), params...)
		args = append(args, "+define+PTM_CONV_CORE="+d.Top(), "-CFLAGS", fmt.Sprintf("-DCONV_F=%d -DCONV_WB=%d", d.Params.F, d.Params.WB))
		for _, f := range d.VerilogFiles() {
			files = append(files, filepath.Join(dir, f))
		}
	}
	for _, p := range params {
		args = append(args, "-G"+p.name+"="+p.value, "-CFLAGS", "-D"+p.name+"="+p.value)
	}
	for _, s := range b.srcs {
		args = append(args, rtltest.Abs(t, s))
		inputs = append(inputs, rtltest.Abs(t, s))
	}
	args = append(args, files...)
	inputs = append(inputs, files...)
	args = append(args, rtltest.Abs(t, b.tb))
	return args, inputs
}

// buildBench verilates and compiles b into dir (seeded with runtime objects
// from seedDir when seedDir != "") and returns the bench binary's path.
func buildBench(t *testing.T, b bench, dir, seedDir string) string {
	t.Helper()
	if seedDir != "" {
		for _, o := range runtimeObjs {
			data, err := os.ReadFile(filepath.Join(seedDir, o))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, o), data, 0o644)
			}
			if err != nil {
				t.Fatalf("seeding runtime object %s: %v", o, err)
			}
		}
	}
	args, _ := benchArgs(t, b, dir)
	if out, err := rtltest.Run(t, dir, "verilator", args...); err != nil {
		t.Fatalf("verilator build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bench")
}

// TestBench builds (or takes from the build cache, rtltest.CachedBench)
// and runs every Verilator bench.
func TestBench(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("bench builds skipped in -short mode")
	}
	rtltest.NeedTools(t, "verilator", "g++", "make")
	testenv.Heartbeat(t, 0)
	// On a cache miss the first bench is built once, in its own folder,
	// which then seeds the runtime objects of the other builds.
	seedDir := t.TempDir()
	var seedOnce sync.Once
	seedOK := false
	seed := func(t *testing.T) string {
		seedOnce.Do(func() {
			buildBench(t, benches[0], seedDir, "")
			seedOK = true
		})
		if !seedOK {
			t.Fatalf("seed build of %s failed (see its subtest)", benches[0].name)
		}
		return seedDir
	}
	for i, b := range benches {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			build := func(t *testing.T, dir string) { buildBench(t, b, dir, seed(t)) }
			if i == 0 { // the seed build itself
				build = func(t *testing.T, dir string) {
					data, err := os.ReadFile(filepath.Join(seed(t), "bench"))
					if err == nil {
						err = os.WriteFile(filepath.Join(dir, "bench"), data, 0o755)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			args, inputs := benchArgs(t, b, "<dir>")
			bin, cached := rtltest.CachedBench(t, rtltest.Abs(t, ".."), rtltest.Build{
				Name: "board-" + b.name, Args: args, Inputs: inputs, Binary: "bench", Make: build,
				Rename: map[string]string{tmpRoot: "<tmp>"}})
			var runArgs []string
			if b.core {
				runArgs = append(runArgs, "--data", getCore(t).data)
			}
			out, err := rtltest.Run(t, t.TempDir(), bin, runArgs...)
			if err != nil {
				t.Fatalf("bench failed: %v\n%s", err, out)
			}
			pass := "PASS " + b.name + " "
			if b.name != b.top { // a second parameter set of the same bench
				pass = "PASS " + b.top + " "
			}
			if !strings.Contains(out, pass) {
				t.Fatalf("bench output lacks %q:\n%s", pass, out)
			}
			t.Logf("(cached build: %v) %s", cached, strings.TrimSpace(out))
		})
	}
}

var statRE = regexp.MustCompile(`(?m)^\s+(SB_\w+)\s+(\d+)`)

// synth runs yosys synth_ice40 and returns the cell counts per module
// ("" is the whole design). files are read with -D defines; noflatten keeps
// the hierarchy (one count per module); when jsonOut != "" the netlist is
// written there.
func synth(t *testing.T, dir, top string, files, defines []string, params []param, noflatten bool, jsonOut string) map[string]map[string]int {
	t.Helper()
	script := "verilog_defaults -add -sv; "
	for _, d := range defines {
		script += "verilog_defaults -add -D" + d + "; "
	}
	script += "read_verilog " + strings.Join(files, " ") + "; "
	libs := " -libdir " + rtltest.Abs(t, ".")
	for _, d := range depDirs {
		libs += " -libdir " + rtltest.Abs(t, d)
	}
	script += "hierarchy" + libs + " -top " + top
	for _, p := range params {
		script += fmt.Sprintf(" -chparam %s %s", p.name, p.value)
	}
	script += "; "
	stat := filepath.Join(dir, "stat.txt")
	script += "synth_ice40 -top " + top
	if noflatten {
		script += " -noflatten"
	}
	if jsonOut != "" {
		script += " -json " + jsonOut
	}
	script += "; tee -q -o " + stat + " stat"
	out, err := rtltest.Run(t, dir, "yosys", "-q", "-p", script)
	if err != nil || strings.Contains(out, "Warning") || strings.Contains(out, "ERROR") {
		t.Fatalf("yosys: %v\n%s", err, out)
	}
	b, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]map[string]int{}
	mod := ""
	for _, line := range strings.Split(string(b), "\n") {
		if m := modRE.FindStringSubmatch(line); m != nil {
			mod = m[1]
			if mod == "design hierarchy" {
				mod = ""
			}
			continue
		}
		m := statRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var n int
		fmt.Sscan(m[2], &n)
		if cells[mod] == nil {
			cells[mod] = map[string]int{}
		}
		if strings.HasPrefix(m[1], "SB_DFF") {
			cells[mod]["SB_DFF*"] += n
		} else {
			cells[mod][m[1]] += n
		}
	}
	if len(cells) == 0 {
		t.Fatalf("no iCE40 cells in stat:\n%s", b)
	}
	if !noflatten {
		for _, v := range cells {
			cells[""] = v
		}
	}
	return cells
}

var modRE = regexp.MustCompile(`^=== (.*) ===$`)

// moduleName strips yosys's parameter decoration ($paramod...\name\...).
func moduleName(m string) string {
	if i := strings.Index(m, "\\"); i >= 0 {
		m = m[i+1:]
		if j := strings.Index(m, "\\"); j >= 0 {
			m = m[:j]
		}
	}
	return m
}

func cellString(c map[string]int) string {
	return fmt.Sprintf("SB_LUT4=%d SB_DFF*=%d SB_CARRY=%d SB_RAM40_4K=%d", c["SB_LUT4"], c["SB_DFF*"], c["SB_CARRY"], c["SB_RAM40_4K"])
}

// TestSynth runs yosys synth_ice40 on board_top with the bench core,
// keeping the hierarchy so that every module's cells are reported (every
// board module is instantiated there, both proto_rx modes included).
func TestSynth(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("yosys synthesis skipped in -short mode")
	}
	rtltest.NeedTools(t, "yosys")
	t.Run("board_top_tiny", func(t *testing.T) {
		t.Parallel()
		c := getCore(t)
		files := []string{rtltest.Abs(t, "board_top.v")}
		for _, f := range c.design.VerilogFiles() {
			files = append(files, filepath.Join(c.dir, f))
		}
		cells := synth(t, t.TempDir(), "board_top", files, []string{"PTM_CORE=tiny_core"}, coreParams(c.design), true, "")
		var names []string
		for m := range cells {
			if m != "" {
				names = append(names, m)
			}
		}
		sort.Strings(names)
		seen := map[string]int{}
		for _, m := range names {
			n := moduleName(m)
			if seen[n]++; seen[n] > 1 {
				n = fmt.Sprintf("%s (variant %d)", n, seen[n])
			}
			t.Logf("%-24s %s", n, cellString(cells[m]))
		}
		total := cells[""] // yosys's design hierarchy summary (instances counted)
		t.Logf("%-24s %s", "board_top + core", cellString(total))
		// the board's 15: proto_rx 4, proto_rx_eth 2, eth_mac_rx 5, proto_tx 2,
		// stat_counters 1, proto_engine's response programs 1
		if total["SB_RAM40_4K"] != 15+c.design.Params.L {
			t.Errorf("%d SB_RAM40_4K, want 15 + %d (board + one per lane)", total["SB_RAM40_4K"], c.design.Params.L)
		}
	})
	if os.Getenv("PTM_BOARD_SYNTH_IRIS") == "" && !testenv.Long() {
		t.Log("board_top with Iris-like cores (16 and 8 lanes): make test-long (PTM_LONG_TESTS=1) or PTM_BOARD_SYNTH_IRIS=1")
		return
	}
	for _, lanes := range []int{16, 8} {
		t.Run(fmt.Sprintf("board_top_iris_%d", lanes), func(t *testing.T) {
			t.Parallel()
			sh := fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 16, T: 10}
			cfg := hw.Config{Bits: 8, LFSRWidth: 32, ClauseLanes: lanes / 8, LiteralLanes: 8, MaxK: 255}
			d, err := hw.Generate(cfg, sh, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := d.Write(dir); err != nil {
				t.Fatal(err)
			}
			var coreFiles []string
			for _, f := range d.VerilogFiles() {
				coreFiles = append(coreFiles, filepath.Join(dir, f))
			}
			core := synth(t, dir, d.Top(), coreFiles, nil, nil, false, filepath.Join(dir, "core.json"))[""]
			files := append([]string{rtltest.Abs(t, "board_top.v")}, coreFiles...)
			board := synth(t, dir, "board_top", files, nil, coreParams(d), false, filepath.Join(dir, "board.json"))[""]
			uart := synth(t, dir, "board_top", files, nil, append(coreParams(d), param{"ETH_ENABLE", "0"}), false,
				filepath.Join(dir, "uart.json"))[""]
			t.Logf("Iris-like core alone (L=%d): %s", lanes, cellString(core))
			t.Logf("board_top + Iris-like core (L=%d): %s", lanes, cellString(board))
			t.Logf("board_top ETH_ENABLE=0 + Iris-like core (L=%d): %s", lanes, cellString(uart))
			if _, err := exec.LookPath("nextpnr-ice40"); err == nil {
				for _, j := range []string{"core.json", "board.json", "uart.json"} {
					out, _ := rtltest.Run(t, dir, "nextpnr-ice40", "--up5k", "--package", "sg48", "--json", j,
						"--pcf-allow-unconstrained", "--pack-only", "--seed", "1")
					sc := bufio.NewScanner(strings.NewReader(out))
					for sc.Scan() {
						if l := sc.Text(); strings.Contains(l, "ICESTORM_LC") || strings.Contains(l, "ICESTORM_RAM") {
							t.Logf("%s: %s", j, strings.TrimSpace(strings.TrimPrefix(l, "Info:")))
						}
					}
				}
			}
		})
	}
}
