package hw

import (
	"bytes"
	"fmt"
	"math/bits"
	"strings"
	"text/template"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/rtl"
)

// Trainer limits (rtl/train/train_engine.v).
const (
	// MaxTrainerLanes is the most literal lanes of the trainer: one 64-bit
	// clause lane gives at most four 16-bit draws per cycle.
	MaxTrainerLanes = 4
	// DefaultTrainerLanes is the literal lanes used when
	// Config.LiteralLanes is 0: one SPRAM per lane on the UP5K.
	DefaultTrainerLanes = 4
	// SPRAMWords is the depth of one SB_SPRAM256KA (16K x 16 bit).
	SPRAMWords = 16384
)

// TrainParams are the training hyper-parameters the trainer needs besides
// the shape (NT, NC, m, o, T) and the hardware configuration (B, literal
// lanes, prefix): the states per action N, the specificity s (which the
// generator turns into the integer moves UP and DOWN) and the update rule.
type TrainParams struct {
	N        int
	S        float64
	Feedback ptm.Feedback
	// SPRAM maps the SPV RAMs to SB_SPRAM256KA for the UP5K (each literal
	// lane must then fit 16,384 words); otherwise they are register arrays.
	SPRAM bool
}

// TrainerParams are the derived constants of a generated trainer, written
// into its header and its parameter list.
type TrainerParams struct {
	Prefix           string
	NT, NC, M, O, T  int
	Binary, Paper    bool
	N, Bits, LL      int
	Up, Down         uint32
	Groups           int // G = ceil(2o/LL): TAs per clause per lane
	SPVDepth         int // words per literal lane: NT*m*G*2N
	IncDepth         int // include masses per lane: NT*m*G
	SPRAM            bool
	SeedW, LabelW    int // widths of seed_idx and ex_y
	LaneW, SPVAddrW  int // widths of dbg_lane and dbg_addr
	Clauses          int // NT*m clause lanes
	UpdateWordCycles int // cycles per TA group: stream 2*(2N+2), include write and group setup 2
}

// TrainerDesign is a generated trainer: its parameters and its files (the
// hand-written rtl/train modules, then the generated top).
type TrainerDesign struct {
	Params TrainerParams
	Files  []File
}

// Top is the top module, <prefix>_trainer.
func (d *TrainerDesign) Top() string { return d.Params.Prefix + "_trainer" }

// VerilogFiles returns the names of the Verilog files, top module last.
func (d *TrainerDesign) VerilogFiles() []string {
	v := make([]string, len(d.Files))
	for i, f := range d.Files {
		v[i] = f.Name
	}
	return v
}

// Words returns the SPV RAM depth of each literal lane and the include RAM
// depth (the words a readback reads per lane).
func (d *TrainerDesign) Words() (spv, inc int) { return d.Params.SPVDepth, d.Params.IncDepth }

// SPVAddr returns the literal lane and the word address of state n of TA
// (global clause c, literal i) (docs/fixed-point-training.md 11).
func (p *TrainerParams) SPVAddr(c, i, n int) (lane, addr int) {
	return i % p.LL, (c*p.Groups+i/p.LL)*2*p.N + n
}

// IncAddr returns the literal lane and the address of the include mass of
// TA (c, i).
func (p *TrainerParams) IncAddr(c, i int) (lane, addr int) {
	return i % p.LL, c*p.Groups + i/p.LL
}

// CheckTrainerParams is the training core's rule for N, s and T (the one
// GenerateTrainer applies; ptm train --board applies it before training):
// N 1..1024, s 1..65536, T 1..32768. The error wraps ErrConfig.
func CheckTrainerParams(n int, s float64, t int) error {
	switch {
	case n < 1 || n > 1024:
		return fmt.Errorf("%w: trainer N = %d, want 1..1024", ErrConfig, n)
	case !(s >= 1) || s > 65536:
		return fmt.Errorf("%w: s = %v, want 1..65536", ErrConfig, s)
	case t < 1 || t > 1<<15:
		return fmt.Errorf("%w: T = %d, want 1..32768", ErrConfig, t)
	}
	return nil
}

// GenerateTrainer derives the on-chip trainer from the same configuration
// as the inference core: the shape gives NT, NC, m, o, T; cfg gives B
// (Bits, 8..15 here), the literal lanes (LiteralLanes, 1..4, 0 for 4) and
// the prefix; tp gives N, s (as the integer moves UP and DOWN of
// fixedtrain.MovesOf) and the update rule.
func GenerateTrainer(cfg Config, sh fixed.Shape, tp TrainParams) (*TrainerDesign, error) {
	if err := sh.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if !identRE.MatchString(cfg.Prefix) || len(cfg.Prefix) > 32 {
		return nil, fmt.Errorf("%w: prefix %q is not a Verilog identifier of at most 32 characters", ErrConfig, cfg.Prefix)
	}
	ll := cfg.LiteralLanes
	if ll == 0 {
		ll = DefaultTrainerLanes
	}
	switch {
	case cfg.Bits < fixedtrain.MinBits || cfg.Bits > fixedtrain.MaxBits:
		return nil, fmt.Errorf("%w: trainer B = %d, want %d..%d", ErrConfig, cfg.Bits, fixedtrain.MinBits, fixedtrain.MaxBits)
	case ll < 1 || ll > MaxTrainerLanes:
		return nil, fmt.Errorf("%w: %d trainer literal lanes, want 1..%d", ErrConfig, ll, MaxTrainerLanes)
	case tp.Feedback != ptm.ConsistentFeedback && tp.Feedback != ptm.PaperFeedback:
		return nil, fmt.Errorf("%w: update rule %q, want %q or %q", ErrConfig, tp.Feedback, ptm.ConsistentFeedback, ptm.PaperFeedback)
	}
	if err := CheckTrainerParams(tp.N, tp.S, sh.T); err != nil {
		return nil, err
	}
	mv := fixedtrain.MovesOf(tp.S)
	p := TrainerParams{
		Prefix: cfg.Prefix, NT: sh.TMs, NC: sh.Classes, M: sh.Clauses, O: sh.Features, T: sh.T,
		Binary: sh.Binary, Paper: tp.Feedback == ptm.PaperFeedback,
		N: tp.N, Bits: cfg.Bits, LL: ll, Up: mv.Up, Down: mv.Down, SPRAM: tp.SPRAM,
		Clauses: sh.TotalClauses(),
	}
	p.Groups = (sh.Literals() + ll - 1) / ll
	p.IncDepth = p.Clauses * p.Groups
	p.SPVDepth = p.IncDepth * 2 * tp.N
	if p.SPVDepth > 1<<24 {
		return nil, fmt.Errorf("%w: %d SPV words per lane is too large", ErrConfig, p.SPVDepth)
	}
	if tp.SPRAM && p.SPVDepth > SPRAMWords {
		return nil, fmt.Errorf("%w: %d SPV words per literal lane do not fit one SPRAM (%d words): lower N or add lanes", ErrConfig, p.SPVDepth, SPRAMWords)
	}
	p.SeedW = vclog2(p.Clauses + 1)
	p.LabelW = 1
	if p.NC > 2 {
		p.LabelW = vclog2(p.NC)
	}
	p.LaneW = 1
	if ll > 1 {
		p.LaneW = vclog2(ll)
	}
	p.SPVAddrW = vclog2(p.SPVDepth)
	p.UpdateWordCycles = 2*(2*tp.N+2) + 2
	d := &TrainerDesign{Params: p}
	for _, name := range rtl.TrainerSources() {
		data, err := rtl.FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("hw: trainer source %s: %w", name, err)
		}
		d.Files = append(d.Files, File{Name: name[strings.LastIndexByte(name, '/')+1:], Data: data})
	}
	var b bytes.Buffer
	if err := trainerTmpl.Execute(&b, &p); err != nil {
		return nil, fmt.Errorf("hw: trainer top: %w", err)
	}
	d.Files = append(d.Files, File{Name: p.Prefix + "_trainer.v", Data: b.Bytes()})
	return d, nil
}

// vclog2 is Verilog's $clog2 (0 for n <= 1).
func vclog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var trainerTmpl = template.Must(template.New("trainer").Funcs(template.FuncMap{"b2i": b2i}).Parse(`// {{.Prefix}}_trainer.v - the on-chip PTM trainer for one model shape
//
// Generated by github.com/ptmhw/ptm/hw (GenerateTrainer); do not edit, regenerate.
// Contract: docs/fixed-point-training.md (sections 5.2-5.3, 11).
//
// Shape    : NT={{.NT}} NC={{.NC}} m={{.M}} o={{.O}} T={{.T}} binary={{b2i .Binary}}
// Training : N={{.N}} B={{.Bits}} UP={{.Up}} DOWN={{.Down}} rule={{if .Paper}}paper{{else}}consistent{{end}}
// Lanes    : LL={{.LL}} literal lanes, G={{.Groups}} TA groups per clause,
//            {{.SPVDepth}} SPV words and {{.IncDepth}} include masses per lane, SPRAM={{b2i .SPRAM}}
//
// A thin top: every parameter of train_engine (rtl/train) is set here from
// the configuration, and the ports are passed through.

` + "`default_nettype none" + `

module {{.Prefix}}_trainer (
    input  wire        clk,
    input  wire        rst,
    output wire        busy,
    input  wire        init_start,
    input  wire        seed_we,
    input  wire [{{.SeedW}}-1:0] seed_idx,
    input  wire [63:0] seed_data,
    input  wire        ex_valid,
    input  wire [{{.O}}-1:0] ex_x,
    input  wire [{{.LabelW}}-1:0] ex_y,
    input  wire        dbg_sel,
    input  wire [{{.LaneW}}-1:0] dbg_lane,
    input  wire [{{.SPVAddrW}}-1:0] dbg_addr,
    output wire [15:0] dbg_data,
    output wire [15:0] dbg_thresh
);
    train_engine #(
        .NT({{.NT}}), .NC({{.NC}}), .M({{.M}}), .O({{.O}}), .T({{.T}}),
        .N({{.N}}), .B({{.Bits}}), .LL({{.LL}}),
        .UP({{.Up}}), .DOWN({{.Down}}), .PAPER({{b2i .Paper}}), .BINARY({{b2i .Binary}}),
        .USE_SPRAM({{b2i .SPRAM}})
    ) u_engine (
        .clk(clk), .rst(rst), .busy(busy), .init_start(init_start),
        .seed_we(seed_we), .seed_idx(seed_idx), .seed_data(seed_data),
        .ex_valid(ex_valid), .ex_x(ex_x), .ex_y(ex_y),
        .dbg_sel(dbg_sel), .dbg_lane(dbg_lane), .dbg_addr(dbg_addr), .dbg_data(dbg_data),
        .dbg_thresh(dbg_thresh)
    );
endmodule

` + "`default_nettype wire" + `
`))
