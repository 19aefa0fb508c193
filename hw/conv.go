package hw

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"text/template"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/lfsr"
)

// The convolutional inference core (docs/conv-core.md): the lanes, seeding
// and beat schedule of the tabular core (docs/fixed-point-conv.md 4), the
// patch literals formed on chip from the image's bit-planes and the
// position thermometers, the clause AND over included literals and OR over
// patches, and coalesced signed weights summed into class sums.

// SPRAMThreshold is the size in bits above which the threshold memory is
// marked for the UP5K's SPRAM (ram_style "huge") when its rows fit the
// four SPRAMs side by side (at most 64 bits), its lanes are whole nibbles
// (B a multiple of 4: the lanes are written one at a time through the
// SPRAMs' 4-bit write masks) and it has no initial contents (SPRAM has
// none): half of the UP5K's 120 kbit of block RAM.
const SPRAMThreshold = 60 * 1024

// ConvWeightBits is the width of a clause weight on the core's weight
// write port (and of an uploaded weight word): conv.MaxWeight fits a
// signed 16-bit word. The weight memory keeps ConvParams.WB bits of each.
const ConvWeightBits = 16

// ConvWeightWidth is the width WB of the weight memory's words for a
// head: the fewest two's complement bits (at least 2) that hold every
// clause weight of the model.
func ConvWeightWidth(h *conv.Head) int {
	var lo, hi int64
	for _, w := range h.Weights {
		lo, hi = min(lo, int64(w)), max(hi, int64(w))
	}
	b := 2
	for lo < -(int64(1)<<(b-1)) || hi > int64(1)<<(b-1)-1 {
		b++
	}
	return min(b, ConvWeightBits)
}

// ConvDesign is a generated convolutional core: its configuration, the
// model's head, the derived parameters and files (Verilog modules in
// dependency order, then memory images).
type ConvDesign struct {
	Config Config
	Head   conv.Head
	Params ConvParams
	Files
}

// Top is the name of the top-level module, <prefix>_conv_core.
func (d *ConvDesign) Top() string { return d.Config.Prefix + "_conv_core" }

// ConvParams are the derived constants of a convolutional design, written
// into the header of every file.
type ConvParams struct {
	Prefix              string
	H, W, P, WY, WX     int    // image, bit-planes, window
	PY, PX, NP          int    // patch rows, columns, patches
	PN                  int    // patches evaluated per cycle (Config.PatchLanes, at most PX)
	Scan                string // Config.Scan: ScanRange or ScanFull
	Range               bool   // Scan == ScanRange or ScanCompact
	Compact             bool   // Scan == ScanCompact: no row band, no include copy
	Lane1               bool   // the range scan (not compact) at one clause lane and at most Lane1MaxBlocks blocks per patch row: no range cycle, rows from the block of the first allowed column, the end seen at the last block (docs/conv-core.md 3)
	NB, XBW             int    // blocks per patch row, ceil(PX/PN), and the width of a block index (Lane1's first block)
	NR                  int    // ScanCompact: image reads of a window load, ceil(WY/2)
	NRW                 int    // ... the width of a read's pair index
	YW, XW              int    // widths of a patch row index (0..PY-1) and of a column x + PN
	HH, HAW             int    // rows of an image memory (the even or the odd rows of a plane, ceil(H/2)) and the width of their address
	MAW, RAW            int    // widths of the image write row counter (0..H-1, HAW+1) and of the read row counter (0..H+2)
	PWd, LdW            int    // widths of the image write plane (0..P-1) and of the window load's row count (0..WY+1)
	F, Lit              int    // features, literals (2F) of a patch
	FO                  int    // features the clause AND tests: the window bits with Range (the rectangle stands for the thermometers), else F
	TY, TX              int    // row and column thermometer bits
	WinBits, ImgBits    int    // WY*WX*P, P*H*W
	NC, C, T            int
	Structure           string
	Bits, LW            int // threshold / draw width B, LFSR width
	LC, LL, L           int
	G, BT, D            int
	MaxK                int
	LaneW, AddrW, KW    int
	BeatW, GroupW       int
	WAddrW, ClsW, JW    int // weight address (G*LC rows), class index, accumulation step widths
	SW                  int // width of a raw class sum (signed)
	WB                  int // width of a stored weight (ConvWeightWidth), at most ConvWeightBits
	WDepth              int // weight rows, G*LC
	Taps                []int
	Phi                 uint64
	Hash                string
	InitMems            bool
	ThreshSPRAM         bool // the threshold memory is marked for SPRAM (SPRAMThreshold)
	ThreshFile, WtsFile string
}

// RowInterval is the fewest cycles from one image row write (img_wr_en)
// to the next: 1, or NB with Lane1 (each row is written as NB copies in
// the NB cycles after it). The board's protocol engine writes a row every
// W clocks at most (one image bit per clock).
func (p *ConvParams) RowInterval() int {
	if p.Lane1 {
		return p.NB
	}
	return 1
}

// Lane1MaxBlocks bounds the blocks per patch row, NB = ceil(PX/PN), of a
// one-lane range scan that starts its rows at the first allowed column's
// block (ConvParams.Lane1): the image memories keep NB copies of every
// row, copy k moved down by k*PN columns (written in the NB cycles after
// the row, so rows must come at least NB cycles apart), in 2^ceil(log2 NB)
// times the words (MNIST at 4 patches per cycle: 5 blocks per row, 256
// words per memory, still one block RAM deep; at one patch 19).
const Lane1MaxBlocks = 8

// ScanOverhead is the longest time the scan unit spends on a clause group
// besides its blocks (one cycle each): the take, with the range scan one
// cycle registering the range, the start of the window's load, the load
// (LoadCycles at an odd first row), and the cycle that sees the scan's
// end. With Lane1 the load starts the cycle after the take (the range is
// registered at the take) and a scan that reaches its last block ends as
// that block is evaluated; a fired clause's end is seen two cycles after
// its block (generator 0.2.6's pipelined clause AND) but never after the
// last block, so Lane1's scans take at most 1 + LoadCycles + blocks and
// the bound keeps a cycle to spare.
func (p *ConvParams) ScanOverhead() int {
	if p.Compact {
		return 3 + p.NR + 2
	}
	ld := p.LoadCycles(1)
	if !p.Range {
		return 2 + p.LoadCycles(0)
	}
	if p.Lane1 { // the take starts the load the cycle after
		return 2 + ld
	}
	return 3 + ld
}

// LoadCycles is the cycles of the window's load from first patch row y:
// the n = WY + y%2 rows from the even row at or below y, two per cycle,
// the last one or two one per cycle: n - floor((n-1)/2).
func LoadCycles(wy, y int) int {
	n := wy + y%2
	return n - (n-1)/2
}

// LoadCycles is LoadCycles(WY, y) of the design.
func (p *ConvParams) LoadCycles(y int) int { return LoadCycles(p.WY, y) }

// SampleCyclesMax bounds the cycles of a sample when every group scans all
// of its blocks: the sampler (BT + 1 cycles per group), the scan unit
// (ScanOverhead + ScanCycles) and the weigh unit (LC + 2) work on
// consecutive groups at once, so a group costs the longest of the three;
// the last group's weighing and the NC result words add LC + 2 + NC.
func (p *ConvParams) SampleCyclesMax() int {
	if p.Compact { // the sampler waits for the scan: a group costs both
		return p.G*(p.BT+2+p.ScanOverhead()+p.ScanCycles()) + p.LC + 2 + p.NC
	}
	return p.G*max(p.BT+1, p.ScanOverhead()+p.ScanCycles(), p.LC+2) + p.LC + 2 + p.NC
}

// ScanCycles is the longest scan of a group: PY patch rows of
// ceil(PX/PN) blocks of PN patches, one block per cycle.
// ScanCompact adds the window's reload at every move to the next patch
// row (NR + 2 cycles instead of 1).
func (p *ConvParams) ScanCycles() int {
	n := p.PY * ((p.PX + p.PN - 1) / p.PN)
	if p.Compact {
		n += (p.PY - 1) * (p.NR + 1)
	}
	return n
}

// ResolveConv returns c with defaults filled in (Prefix) and Lanes split
// when ClauseLanes and LiteralLanes are both 0: LiteralLanes = the largest
// divisor of Lanes that is at most 16 and at most 2F, ClauseLanes the rest.
func (c Config) ResolveConv(h *conv.Head) (Config, error) {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Scan == "" {
		c.Scan = ScanRange
	}
	if c.ClauseLanes == 0 && c.LiteralLanes == 0 {
		if c.Lanes < 1 {
			return c, fmt.Errorf("%w: no lanes: set ClauseLanes and LiteralLanes, or Lanes", ErrConfig)
		}
		ll := 1
		for d := 1; d <= min(16, c.Lanes, h.Shape.Literals()); d++ {
			if c.Lanes%d == 0 {
				ll = d
			}
		}
		c.ClauseLanes, c.LiteralLanes = c.Lanes/ll, ll
	}
	c.Lanes = c.ClauseLanes * c.LiteralLanes
	return c, nil
}

// CheckConv validates a resolved configuration against a convolutional
// head: the head, bits, LFSR width and lanes (conv.CheckHW), MaxK and the
// prefix.
func (c Config) CheckConv(h *conv.Head) error {
	if err := h.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := conv.CheckHW(h, c.HW()); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if !identRE.MatchString(c.Prefix) || len(c.Prefix) > 32 {
		return fmt.Errorf("%w: prefix %q is not a Verilog identifier of at most 32 characters", ErrConfig, c.Prefix)
	}
	if c.MaxK < 1 || c.MaxK > 1<<16 {
		return fmt.Errorf("%w: MaxK = %d, want 1..%d", ErrConfig, c.MaxK, 1<<16)
	}
	if c.PatchLanes < 0 || c.PatchLanes > 1024 {
		return fmt.Errorf("%w: PatchLanes = %d, want 0..1024", ErrConfig, c.PatchLanes)
	}
	if c.Scan != ScanFull && c.Scan != ScanRange && c.Scan != ScanCompact {
		return fmt.Errorf("%w: Scan = %q, want %q, %q or %q", ErrConfig, c.Scan, ScanRange, ScanFull, ScanCompact)
	}
	if h.Clauses > 1<<16 {
		return fmt.Errorf("%w: %d clauses: class sums must fit 32 bits (at most %d clauses)", ErrConfig, h.Clauses, 1<<16)
	}
	return nil
}

func deriveConvParams(c Config, h *conv.Head, hash string) *ConvParams {
	s := h.Shape
	lay := conv.LayoutOf(h, c.HW())
	p := &ConvParams{
		Prefix: c.Prefix, H: s.H, W: s.W, P: s.Planes, WY: s.WY, WX: s.WX,
		PY: s.PY(), PX: s.PX(), NP: s.Patches(), F: s.Features(), Lit: s.Literals(),
		TY: s.H - s.WY, TX: s.W - s.WX, WinBits: s.WindowBits(), ImgBits: s.Planes * s.Pixels(),
		NC: h.Classes, C: h.Clauses, T: h.T, Structure: string(h.Structure),
		Bits: c.Bits, LW: c.LFSRWidth, LC: c.ClauseLanes, LL: c.LiteralLanes, L: c.ClauseLanes * c.LiteralLanes,
		G: lay.Groups, BT: lay.Beats, D: lay.Depth, MaxK: c.MaxK, PN: min(max(c.PatchLanes, 1), s.PX()),
		Scan: c.Scan, Range: (c.Scan == ScanRange || c.Scan == ScanCompact) && s.Features() > s.WindowBits(),
		Taps: lfsr.Taps[c.LFSRWidth], Phi: lfsr.Phi(c.LFSRWidth), Hash: hash, InitMems: c.InitBanks,
	}
	p.FO = p.F
	if p.Range {
		p.FO = p.WinBits
	}
	p.LaneW = clog2(p.L)
	p.AddrW = clog2(p.D)
	p.KW = ubits(uint64(p.MaxK))
	p.BeatW = clog2(p.BT)
	p.GroupW = clog2(p.G)
	p.WDepth = p.G * p.LC
	p.WAddrW = clog2(p.WDepth)
	p.ClsW = clog2(p.NC)
	p.JW = clog2(p.LC + 1)
	p.WB = ConvWeightWidth(h)
	p.SW = sbits(uint64(p.C) << (p.WB - 1))
	if !p.Range {
		p.Scan = ScanFull // a shape of one patch has nothing to skip
	}
	p.Compact = p.Scan == ScanCompact
	p.NB = (p.PX + p.PN - 1) / p.PN
	p.Lane1 = p.Range && !p.Compact && p.LC == 1 && p.NB <= Lane1MaxBlocks
	p.XBW = max(clog2(p.NB), 1)
	p.NR = (p.WY + 1) / 2
	p.NRW = clog2(p.NR)
	p.YW = ubits(uint64(p.PY - 1))
	p.HH = (p.H + 1) / 2
	p.HAW = clog2(p.HH)
	p.MAW = p.HAW + 1
	p.RAW = max(ubits(uint64(p.H+2)), p.HAW+1)
	p.PWd = clog2(p.P)
	p.LdW = ubits(uint64(max(p.WY+1, 3)))
	p.XW = ubits(uint64(p.PX - 1 + p.PN))
	p.ThreshSPRAM = !c.InitBanks && p.D*p.L*p.Bits > SPRAMThreshold && p.L*p.Bits <= 64 && p.Bits%4 == 0 && p.D <= 1<<14
	p.ThreshFile = p.Prefix + "_conv_thresh.hex"
	p.WtsFile = p.Prefix + "_conv_weights.hex"
	return p
}

// GenerateConv specializes the convolutional inference core for a bank's
// head on cfg (cfg.Bits must be the bank's). With cfg.InitBanks the
// threshold and weight memories start with the bank's contents
// ($readmemh images); otherwise they are loaded through the write ports.
// modelHash is written into every header; it may be empty.
func GenerateConv(cfg Config, bank *conv.Bank, modelHash string) (*ConvDesign, error) {
	if bank == nil {
		return nil, fmt.Errorf("%w: GenerateConv needs a bank", ErrConfig)
	}
	cfg, err := cfg.ResolveConv(&bank.Head)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckConv(&bank.Head); err != nil {
		return nil, err
	}
	if err := bank.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if bank.Bits != cfg.Bits {
		return nil, fmt.Errorf("%w: bank has %d-bit thresholds, design %d", ErrConfig, bank.Bits, cfg.Bits)
	}
	p := deriveConvParams(cfg, &bank.Head, modelHash)
	d := &ConvDesign{Config: cfg, Head: bank.Head, Params: *p}
	// The LFSR and the seeder are the tabular core's modules, executed
	// with the parameters they read.
	tp := &Params{Prefix: p.Prefix, W: p.LW, Bits: p.Bits, L: p.L, LaneW: p.LaneW, Taps: p.Taps, Phi: p.Phi}
	for _, m := range modules {
		if m.name != "lfsr_lane" && m.name != "seeder" {
			continue
		}
		var buf bytes.Buffer
		buf.WriteString(p.header(p.Prefix+"_"+m.name+".v", m.purpose))
		if err := m.tmpl.Execute(&buf, view{tp}); err != nil {
			return nil, fmt.Errorf("hw: module %s: %w", m.name, err)
		}
		d.Files = append(d.Files, File{Name: p.Prefix + "_" + m.name + ".v", Data: buf.Bytes()})
	}
	for _, m := range convModules {
		if m.when != nil && !m.when(p) {
			continue
		}
		var buf bytes.Buffer
		buf.WriteString(p.header(p.Prefix+"_"+m.name+".v", m.purpose))
		if err := m.tmpl.Execute(&buf, convView{p}); err != nil {
			return nil, fmt.Errorf("hw: module %s: %w", m.name, err)
		}
		d.Files = append(d.Files, File{Name: p.Prefix + "_" + m.name + ".v", Data: buf.Bytes()})
	}
	if cfg.InitBanks {
		d.Files = append(d.Files,
			File{Name: p.ThreshFile, Data: RowHex(ConvThreshRows(bank, cfg.HW()), p.L*p.Bits)},
			File{Name: p.WtsFile, Data: RowHex(ConvWeightRowsWB(&bank.Head, cfg.HW(), p.WB), p.NC*p.WB)})
	}
	return d, nil
}

// ConvThreshWord returns the threshold lane l reads at beat address a
// (a = g*BT + b) of the dense threshold memory: TA (c, i) with
// c = g*LC + l/LL, i = b*LL + l%LL, or 0 for a padding slot (which then
// never includes, like the golden model's ignored padding draws).
func ConvThreshWord(b *conv.Bank, h conv.HW, a, l int) uint32 {
	lay := conv.LayoutOf(&b.Head, h)
	g, bt := a/lay.Beats, a%lay.Beats
	c := g*h.ClauseLanes + l/h.LiteralLanes
	i := bt*h.LiteralLanes + l%h.LiteralLanes
	nl := b.Shape.Literals()
	if c >= b.Clauses || i >= nl {
		return 0
	}
	return b.Thresh[c*nl+i]
}

// ConvThreshRows returns the dense threshold memory: D rows of L
// thresholds, lane l's in row word l (ConvThreshWord).
func ConvThreshRows(b *conv.Bank, h conv.HW) [][]uint32 {
	lay := conv.LayoutOf(&b.Head, h)
	rows := make([][]uint32, lay.Depth)
	for a := range rows {
		rows[a] = make([]uint32, h.Lanes())
		for l := range rows[a] {
			rows[a][l] = ConvThreshWord(b, h, a, l)
		}
	}
	return rows
}

// ConvWeightRows returns the weight memory: one row per clause slot
// c = 0..G*LC-1, class k's weight (two's complement, ConvWeightBits) in
// word k; rows of padding clauses are 0.
func ConvWeightRows(h *conv.Head, hw conv.HW) [][]uint32 {
	return ConvWeightRowsWB(h, hw, ConvWeightBits)
}

// ConvWeightRowsWB is ConvWeightRows with each weight in wb bits (the
// weight memory's words, ConvParams.WB).
func ConvWeightRowsWB(h *conv.Head, hw conv.HW, wb int) [][]uint32 {
	lay := conv.LayoutOf(h, hw)
	rows := make([][]uint32, lay.Groups*hw.ClauseLanes)
	for c := range rows {
		rows[c] = make([]uint32, h.Classes)
		if c >= h.Clauses {
			continue
		}
		for k := range rows[c] {
			rows[c][k] = uint32(h.Weights[k*h.Clauses+c]) & (1<<wb - 1)
		}
	}
	return rows
}

// RowHex formats memory rows of equal length as a $readmemh image: one
// hex number per line, word 0 of a row in its least significant bits,
// each word w bits wide (width/len(row)); width is the row's bits.
func RowHex(rows [][]uint32, width int) []byte {
	var b bytes.Buffer
	digits := (width + 3) / 4
	for _, r := range rows {
		w := uint(width / max(len(r), 1))
		v := new(big.Int)
		for i := len(r) - 1; i >= 0; i-- {
			v.Lsh(v, w)
			v.Or(v, big.NewInt(int64(r[i])))
		}
		fmt.Fprintf(&b, "%0*x\n", digits, v)
	}
	return b.Bytes()
}

// header is the comment block that opens every file of a conv design.
func (p *ConvParams) header(file, purpose string) string {
	var b strings.Builder
	hash := p.Hash
	if hash == "" {
		hash = "(none)"
	}
	fmt.Fprintf(&b, "// %s - %s\n//\n", file, purpose)
	fmt.Fprintf(&b, "// Generated by github.com/ptmhw/ptm/hw %s; do not edit, regenerate.\n", Version)
	fmt.Fprintf(&b, "// Contract: docs/fixed-point-conv.md; design: docs/conv-core.md.\n//\n")
	fmt.Fprintf(&b, "// Model hash : %s\n", hash)
	fmt.Fprintf(&b, "// Shape      : image %dx%d x %d planes, window %dx%d, %d patches (%dx%d), F=%d features, %d literals\n",
		p.H, p.W, p.P, p.WY, p.WX, p.NP, p.PY, p.PX, p.F, p.Lit)
	fmt.Fprintf(&b, "// Model      : NC=%d classes, C=%d clauses, %s, T=%d (%d TAs)\n", p.NC, p.C, p.Structure, p.T, p.C*p.Lit)
	fmt.Fprintf(&b, "// Hardware   : B=%d W=%d LC=%d LL=%d L=%d MaxK=%d init_mems=%v threshold_spram=%v\n", p.Bits, p.LW, p.LC, p.LL, p.L, p.MaxK, p.InitMems, p.ThreshSPRAM)
	fmt.Fprintf(&b, "// Schedule   : G=%d groups x BT=%d beats = D=%d beats per sample (threshold rows); %s scan, PN=%d patches per cycle\n", p.G, p.BT, p.D, p.Scan, p.PN)
	fmt.Fprintf(&b, "// LFSR       : x^%d%s, PHI=%d'h%x\n", p.LW, (&Params{Taps: p.Taps}).polyTerms(), p.LW, p.Phi)
	fmt.Fprintf(&b, "// Widths     : lane=%d addr=%d k=%d sum=%d weight=%d weight_addr=%d\n", p.LaneW, p.AddrW, p.KW, p.SW, p.WB, p.WAddrW)
	b.WriteString("\n`default_nettype none\n\n")
	return b.String()
}

type convModule struct {
	name, purpose string
	tmpl          *template.Template
	when          func(*ConvParams) bool // nil: always emitted
}

var convModules []convModule

func addConvModule(name, purpose, text string) { addConvModuleIf(name, purpose, text, nil) }

func addConvModuleIf(name, purpose, text string, when func(*ConvParams) bool) {
	t := template.Must(template.New(name).Funcs(funcs).Parse(text))
	convModules = append(convModules, convModule{name: name, purpose: purpose, tmpl: t, when: when})
}

// convView is the data of the conv module templates.
type convView struct {
	*ConvParams
}

// ThreshRowW is the width of a threshold memory row, L*B.
func (v convView) ThreshRowW() int { return v.L * v.Bits }

// WRowW is the width of a weight memory row, NC*WB.
func (v convView) WRowW() int { return v.NC * v.WB }

// IncW is the width of a clause lane's include shift register, BT*LL.
func (v convView) IncW() int { return v.BT * v.LL }

// KBad is the Verilog condition of a K outside 1..MaxK.
func (v convView) KBad() string {
	if v.MaxK == 1<<v.KW-1 {
		return fmt.Sprintf("req_k == %d'd0", v.KW)
	}
	return fmt.Sprintf("req_k == %d'd0 || req_k > %d'd%d", v.KW, v.KW, v.MaxK)
}

// SumToWord sign-extends a class sum (SW bits) to 32.
func (v convView) SumToWord() string {
	return sext("out_sum", "out_sum[SW-1]", v.SW, 32)
}

// WtExt sign-extends weight k of the weight row to SW bits.
func (v convView) WtExt() string {
	return sext(fmt.Sprintf("wt_row[k*%d +: %d]", v.WB, v.WB), fmt.Sprintf("wt_row[k*%d + %d]", v.WB, v.WB-1), v.WB, v.SW)
}

// TH is the thermometer include bits of one clause lane that the range
// scan reads: 2*(TY+TX).
func (v convView) TH() int { return 2 * (v.TY + v.TX) }

// RangeLogic is the body of conv_range: for clause lane ci, from its
// thermometer include bits (therm, TH bits per lane: the TY row and TX
// column thermometers included positively, then negated), the allowed
// patch rows lo..hi (a literal "y > k" included means y >= k+1, its
// negation y <= k), the allowed columns as a mask cols (column c is
// allowed when no "x > k" with k >= c and no "x <= k" with k < c is
// included) and the last allowed column xh, registered at load; from
// those registers ok[ci] when the lane has an included literal and its
// rectangle is not empty, the union over the ok lanes (none when there
// is none), and the gates (gateLogic).
func (v convView) RangeLogic() string {
	if v.Lane1 {
		return v.lane1RangeLogic()
	}
	var b strings.Builder
	th := v.TH()
	for ci := 0; ci < v.LC; ci++ {
		fmt.Fprintf(&b, "    reg [%d:0] e_lo_%d, e_hi_%d, lo_%d, hi_%d;\n    reg [%d:0] e_xh_%d, xh_%d;\n    reg [%d:0] cols_%d; // the lane's columns, bit c: column c\n",
			v.YW-1, ci, ci, ci, ci, v.XW-1, ci, ci, v.PX-1, ci)
	}
	b.WriteString("\n    always @* begin\n")
	for ci := 0; ci < v.LC; ci++ {
		base := ci * th
		fmt.Fprintf(&b, "        // clause lane %d\n", ci)
		fmt.Fprintf(&b, "        e_lo_%d = %d'd0;\n", ci, v.YW)
		for k := 0; k < v.TY; k++ {
			fmt.Fprintf(&b, "        if (therm[%d]) e_lo_%d = %d'd%d;\n", base+k, ci, v.YW, k+1)
		}
		fmt.Fprintf(&b, "        e_hi_%d = %d'd%d;\n", ci, v.YW, v.PY-1)
		for k := v.TY - 1; k >= 0; k-- {
			fmt.Fprintf(&b, "        if (therm[%d]) e_hi_%d = %d'd%d;\n", base+v.TY+v.TX+k, ci, v.YW, k)
		}
		fmt.Fprintf(&b, "        e_xh_%d = %d'd%d;\n", ci, v.XW, v.PX-1)
		for k := v.TX - 1; k >= 0; k-- {
			fmt.Fprintf(&b, "        if (therm[%d]) e_xh_%d = %d'd%d;\n", base+v.TY+v.TX+v.TY+k, ci, v.XW, k)
		}
	}
	b.WriteString("    end\n\n")
	// the column masks: x > k included (pos, bit TY + k) kills columns
	// 0..k, x <= k included (neg, bit 2TY + TX + k) kills k+1..PX-1
	for ci := 0; ci < v.LC; ci++ {
		base := ci * th
		pos, neg := base+v.TY, base+v.TY+v.TX+v.TY
		fmt.Fprintf(&b, "    wire [%d:0] e_cols_%d;\n", v.PX-1, ci)
		for c := 0; c < v.PX; c++ {
			var terms []string
			if c < v.TX {
				terms = append(terms, fmt.Sprintf("therm[%d:%d]", pos+v.TX-1, pos+c))
			}
			if c > 0 {
				terms = append(terms, fmt.Sprintf("therm[%d:%d]", neg+c-1, neg))
			}
			if len(terms) == 0 {
				fmt.Fprintf(&b, "    assign e_cols_%d[%d] = 1'b1;\n", ci, c)
				continue
			}
			fmt.Fprintf(&b, "    assign e_cols_%d[%d] = ~|{%s};\n", ci, c, strings.Join(terms, ", "))
		}
	}
	b.WriteString("\n    always @(posedge clk) begin\n        if (load) begin\n")
	for ci := 0; ci < v.LC; ci++ {
		fmt.Fprintf(&b, "            lo_%d   <= e_lo_%d;\n            hi_%d   <= e_hi_%d;\n            xh_%d   <= e_xh_%d;\n            cols_%d <= e_cols_%d;\n", ci, ci, ci, ci, ci, ci, ci, ci)
	}
	b.WriteString("        end\n    end\n\n    always @* begin\n")
	fmt.Fprintf(&b, "        none = 1'b1;\n        ylo  = %d'd0;\n        yhi  = %d'd0;\n        xhi  = %d'd0;\n", v.YW, v.YW, v.XW)
	for ci := 0; ci < v.LC; ci++ {
		fmt.Fprintf(&b, "        ok[%d] = any[%d] && lo_%d <= hi_%d && |cols_%d;\n", ci, ci, ci, ci, ci)
		fmt.Fprintf(&b, "        if (ok[%d]) begin\n", ci)
		fmt.Fprintf(&b, "            if (none || lo_%d < ylo) ylo = lo_%d;\n", ci, ci)
		fmt.Fprintf(&b, "            if (none || hi_%d > yhi) yhi = hi_%d;\n", ci, ci)
		fmt.Fprintf(&b, "            if (none || xh_%d > xhi) xhi = xh_%d;\n", ci, ci)
		b.WriteString("            none = 1'b0;\n        end\n")
	}
	b.WriteString("    end\n")
	v.gateLogic(&b)
	return b.String()
}

// lane1RangeLogic is conv_range's body with Lane1 (one clause lane):
// from the lane's thermometer include bits, registered at load, its rows
// lo..hi and last column xh (the scan's), the block xb holding its first
// allowed column xl (an included "x > k" means xl >= k + 1: block b is at
// or below xl's when one with k >= b*PN - 1 is included) and that block's
// first column xs = xb*PN, where every patch row starts, the first and
// last columns' offsets from xs, and ok (an included literal and a
// non-empty rectangle; registered, so that no comparison lies between a
// register and the scan's end). The gates are registers, set for the
// block that comes: at a row's start patch j lies in the rectangle when
// xl - xs <= j <= xh - xs; at the next block when j <= rm - PN, rm the
// last column's offset from the present block's first column (xh - xs at
// a row's start, PN less at every block).
func (v convView) lane1RangeLogic() string {
	var b strings.Builder
	yw, xw := v.YW, v.XW
	pos, neg := v.TY, v.TY+v.TX+v.TY // the column thermometers "x > k", then "x <= k"
	fmt.Fprintf(&b, "    reg [%d:0] e_lo, e_hi, lo_0, hi_0;\n    reg [%d:0] e_xl, e_xh, e_xs, xh_0, xlm, xhm; // xlm, xhm: xl - xs, xh - xs\n    reg [%d:0] e_xb;\n    reg       ok_0r;\n\n", yw-1, xw-1, v.XBW-1)
	b.WriteString("    always @* begin\n")
	fmt.Fprintf(&b, "        e_lo = %d'd0;\n", yw)
	for k := 0; k < v.TY; k++ {
		fmt.Fprintf(&b, "        if (therm[%d]) e_lo = %d'd%d;\n", k, yw, k+1)
	}
	fmt.Fprintf(&b, "        e_hi = %d'd%d;\n", yw, v.PY-1)
	for k := v.TY - 1; k >= 0; k-- {
		fmt.Fprintf(&b, "        if (therm[%d]) e_hi = %d'd%d;\n", v.TY+v.TX+k, yw, k)
	}
	fmt.Fprintf(&b, "        e_xl = %d'd0;\n", xw)
	for k := 0; k < v.TX; k++ {
		fmt.Fprintf(&b, "        if (therm[%d]) e_xl = %d'd%d;\n", pos+k, xw, k+1)
	}
	fmt.Fprintf(&b, "        e_xh = %d'd%d;\n", xw, v.PX-1)
	for k := v.TX - 1; k >= 0; k-- {
		fmt.Fprintf(&b, "        if (therm[%d]) e_xh = %d'd%d;\n", neg+k, xw, k)
	}
	fmt.Fprintf(&b, "        e_xs = %d'd0;\n        e_xb = %d'd0;\n", xw, v.XBW)
	for k := 1; k < v.NB; k++ {
		lo := k*v.PN - 1
		if lo > v.TX-1 {
			break
		}
		fmt.Fprintf(&b, "        if (|therm[%d:%d]) begin\n            e_xs = %d'd%d;\n            e_xb = %d'd%d;\n        end\n", pos+v.TX-1, pos+lo, xw, k*v.PN, v.XBW, k)
	}
	b.WriteString("    end\n\n")
	b.WriteString("    always @(posedge clk) begin\n        if (load) begin\n")
	b.WriteString("            lo_0  <= e_lo;\n            hi_0  <= e_hi;\n            xh_0  <= e_xh;\n            xs    <= e_xs;\n            xb    <= e_xb;\n")
	b.WriteString("            xlm   <= e_xl - e_xs;\n            xhm   <= e_xh - e_xs;\n")
	b.WriteString("            ok_0r <= any[0] && e_lo <= e_hi && e_xl <= e_xh;\n        end\n    end\n\n")
	b.WriteString("    always @* begin\n        ok[0] = ok_0r;\n        none  = !ok_0r;\n        ylo   = lo_0;\n        yhi   = hi_0;\n        xhi   = xh_0;\n    end\n")
	b.WriteString("\n    // The gates of the present block's patches.\n")
	b.WriteString("    wire adv = next && row_end; // a move to the next patch row\n")
	if v.PN < v.PX {
		fmt.Fprintf(&b, "    reg  [%d:0] rm; // the last column's offset from the present block's first column\n", xw-1)
	}
	fmt.Fprintf(&b, "    reg  [%d:0] gr; // the present block's gates\n", v.PN-1)
	b.WriteString("    always @(posedge clk) begin\n        if (start || adv) begin // the row's first block\n")
	if v.PN < v.PX {
		b.WriteString("            rm    <= xhm;\n")
	}
	fmt.Fprintf(&b, "            gr[0] <= xlm == %d'd0;\n", xw)
	for j := 1; j < v.PN; j++ {
		fmt.Fprintf(&b, "            gr[%d] <= xhm >= %d'd%d && xlm <= %d'd%d;\n", j, xw, j, xw, j)
	}
	if v.PN < v.PX {
		fmt.Fprintf(&b, "        end else if (next) begin\n            rm    <= rm - %d'd%d;\n", xw, v.PN)
		for j := 0; j < v.PN; j++ {
			fmt.Fprintf(&b, "            gr[%d] <= rm >= %d'd%d;\n", j, xw, v.PN+j)
		}
	}
	b.WriteString("        end\n    end\n    assign gate = gr;\n")
	return b.String()
}

// gateLogic writes conv_range's gates: per clause lane ci a register of
// the present block's columns (sh_ci, bit j: column x + j is in the
// lane's columns; loaded from cols_ci at the start of every patch row,
// shifted down by PN at every move along it, so columns past PX shift in
// as 0); with several clause lanes also whether the present patch row is
// in the lane's rows (yin_ci, registered at the start of every row: the
// group scans the union of its lanes' rows). gate[ci*PN + j] is patch
// j's: inside the rectangle every included thermometer literal holds,
// outside it one fails.
func (v convView) gateLogic(b *strings.Builder) {
	b.WriteString("\n    // The gates of the present block's patches.\n")
	b.WriteString("    wire adv = next && row_end; // a move to the next patch row\n")
	if v.LC > 1 {
		fmt.Fprintf(b, "    reg  [%d:0] yr;   // the present patch row\n", v.YW-1)
		fmt.Fprintf(b, "    wire [%d:0] ny = start ? ylo : yr + 1'b1; // the row a start or adv moves to\n", v.YW-1)
		b.WriteString("    always @(posedge clk) begin\n        if (start || adv)\n            yr <= ny;\n    end\n")
	}
	for ci := 0; ci < v.LC; ci++ {
		fmt.Fprintf(b, "    reg  [%d:0] sh_%d;\n", v.PX-1, ci)
		fmt.Fprintf(b, "    always @(posedge clk) begin\n        if (start || adv)\n            sh_%d <= cols_%d;\n", ci, ci)
		if v.PN < v.PX {
			fmt.Fprintf(b, "        else if (next)\n            sh_%d <= {%d'b0, sh_%d[%d:%d]};\n", ci, v.PN, ci, v.PX-1, v.PN)
		}
		b.WriteString("    end\n")
		if v.LC > 1 {
			fmt.Fprintf(b, "    reg yin_%d; // the present row is in lane %d's rows\n", ci, ci)
			fmt.Fprintf(b, "    always @(posedge clk) begin\n        if (start || adv)\n            yin_%d <= ny >= lo_%d && ny <= hi_%d;\n    end\n", ci, ci, ci)
			fmt.Fprintf(b, "    assign gate[%d +: %d] = sh_%d[%d:0] & {%d{yin_%d}};\n", ci*v.PN, v.PN, ci, v.PN-1, v.PN, ci)
		} else {
			fmt.Fprintf(b, "    assign gate[%d +: %d] = sh_%d[%d:0]; // one clause lane: the scan's rows are its rows\n", ci*v.PN, v.PN, ci, v.PN-1)
		}
	}
}
