package hw

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"strconv"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/lfsr"
)

// Version is the generator version written into every emitted file header
// and, as versionWord, into word 0 of the info ROM.
const Version = "0.2.6"

// versionWord is info ROM word 0: "PT" followed by the generator's major and
// minor version (0x5054_MMmm).
const versionWord uint32 = 0x5054_0002

// ErrConfig is wrapped by every error Generate returns for a configuration
// that does not fit the shape or the hardware's limits.
var ErrConfig = errors.New("hw: bad configuration")

// Config decides the precision and parallelism of a generated core.
type Config struct {
	// Bits is B, the width of a threshold and of a draw (4..16).
	Bits int `json:"bits"`
	// LFSRWidth is W, the width of every lane's LFSR (16, 20, 24, 32, 40,
	// 48 or 64; it must leave room for a B-bit leap: max tap + B <= W).
	LFSRWidth int `json:"lfsr_width"`
	// ClauseLanes (LC) and LiteralLanes (LL) give L = LC*LL lanes. When
	// both are 0, Lanes is split by fixed.SplitLanes.
	ClauseLanes  int `json:"clause_lanes"`
	LiteralLanes int `json:"literal_lanes"`
	// Lanes is used only when ClauseLanes and LiteralLanes are both 0.
	Lanes int `json:"lanes,omitempty"`
	// MaxK is the largest number of samples per request. Result words are
	// 32 bits, so MaxK*lcm(1..NC) and MaxK*T^2 must fit in 32 bits
	// (and MaxK*T in 31).
	MaxK int `json:"max_k"`
	// Prefix names every module (<prefix>_core, ...); default "ptm".
	Prefix string `json:"prefix"`
	// InitBanks emits one $readmemh image per lane with the bank's
	// thresholds, loaded as the banks' initial contents.
	InitBanks bool `json:"init_banks"`
	// PatchLanes is the number of adjacent patches of one patch row the
	// convolutional core evaluates per cycle (0 or 1: one; at most the
	// patch columns are used). Each costs every clause lane a 2F-input
	// AND. The tabular core ignores it.
	PatchLanes int `json:"patch_lanes,omitempty"`
	// Scan is the convolutional core's patch scan: ScanRange (the default
	// when empty), ScanFull or ScanCompact (docs/conv-core.md 3). The tabular core
	// ignores it.
	Scan string `json:"scan,omitempty"`
}

// The convolutional core's scans (Config.Scan).
const (
	// ScanFull visits every patch in raster order until every clause lane
	// is resolved.
	ScanFull = "full"
	// ScanRange visits only the patch rows and the leading column blocks
	// that the clause lanes' included position-thermometer literals
	// allow: rows below the lowest allowed one pass in one cycle each,
	// a row ends at the block holding its last allowed column, and the
	// scan ends after the last allowed row.
	ScanRange = "range"
	// ScanCompact is the range scan in the least logic: no band of rows
	// below the window (the window's rows are reloaded from the image
	// memory at every move to the next patch row, ceil(WY/2) + 2 cycles)
	// and no copy of the scanned group's include bits (the sampler waits
	// for the scan before it draws the next group), for a model whose
	// range-scan core does not fit (docs/conv-core.md 3).
	ScanCompact = "compact"
)

// DefaultPrefix is the module prefix used when Config.Prefix is empty.
const DefaultPrefix = "ptm"

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// HW returns the golden model's view of the hardware parameters (after
// resolving Lanes into clause and literal lanes; see Resolve).
func (c Config) HW() fixed.HW {
	return fixed.HW{Bits: c.Bits, LFSRWidth: c.LFSRWidth, ClauseLanes: c.ClauseLanes, LiteralLanes: c.LiteralLanes}
}

// Resolve returns c with defaults filled in (Prefix) and Lanes split into
// ClauseLanes x LiteralLanes when those are both 0. It checks nothing else.
func (c Config) Resolve(sh fixed.Shape) (Config, error) {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.ClauseLanes == 0 && c.LiteralLanes == 0 {
		if c.Lanes < 1 {
			return c, fmt.Errorf("%w: no lanes: set ClauseLanes and LiteralLanes, or Lanes", ErrConfig)
		}
		lc, ll, err := fixed.SplitLanes(c.Lanes, sh)
		if err != nil {
			return c, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c.ClauseLanes, c.LiteralLanes = lc, ll
	}
	c.Lanes = c.ClauseLanes * c.LiteralLanes
	return c, nil
}

// Check validates a resolved configuration against a shape: the shape
// itself, bits and LFSR width (fixed.HW.Check, lfsr.Check), lanes, MaxK and
// the 32-bit result words, and the prefix.
func (c Config) Check(sh fixed.Shape) error {
	if err := sh.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := lfsr.Check(c.LFSRWidth, c.Bits); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := c.HW().Check(sh); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if !identRE.MatchString(c.Prefix) || len(c.Prefix) > 32 {
		return fmt.Errorf("%w: prefix %q is not a Verilog identifier of at most 32 characters", ErrConfig, c.Prefix)
	}
	return CheckKMax(c.MaxK, sh.Classes, sh.T)
}

// CheckKMax is the rule of the 32-bit result words (docs/core-interface.md,
// "Result words"), the one every consumer of a model applies (Config.Check
// for gen, eval --fixed and the tabular boards, ConvKMaxOK for the
// convolutional ones, CheckT and CheckConvT for train): K up to maxK
// samples of a model with nc classes and margin t keep maxK*lcm(1..nc)
// and maxK*T^2 below 2^32 and maxK*T below 2^31. The error wraps
// ErrConfig and names the word that overflows.
func CheckKMax(maxK, nc, t int) error {
	const max32 = uint64(1)<<32 - 1
	if maxK < 1 {
		return fmt.Errorf("%w: MaxK = %d, want >= 1", ErrConfig, maxK)
	}
	if t < 1 {
		return fmt.Errorf("%w: T = %d, want >= 1", ErrConfig, t)
	}
	k, u, tt := uint64(maxK), fixed.VoteUnit(nc), uint64(t)
	switch {
	case k > max32:
		return fmt.Errorf("%w: MaxK = %d does not fit 32 bits", ErrConfig, maxK)
	case tt > MaxT:
		return fmt.Errorf("%w: T = %d: T^2 does not fit a 32-bit sumsq word (T at most %d)", ErrConfig, t, MaxT)
	case k*u > max32:
		return fmt.Errorf("%w: MaxK*lcm(1..%d) = %d*%d overflows a 32-bit votes word", ErrConfig, nc, maxK, u)
	case k*tt*tt > max32:
		return fmt.Errorf("%w: MaxK*T^2 = %d*%d overflows a 32-bit sumsq word (with MaxK = %d, T at most %d)", ErrConfig, maxK, tt*tt, maxK, MaxTFor(maxK))
	case k*tt > max32>>1:
		return fmt.Errorf("%w: MaxK*T = %d*%d overflows a signed 32-bit sum word", ErrConfig, maxK, t)
	}
	return nil
}

// MaxT is the largest T any design takes: T^2 must fit the 32-bit
// sum-of-squares word with MaxK = 1 (65535^2 < 2^32 <= 65536^2); a larger
// MaxK lowers it (MaxTFor).
const MaxT = 1<<16 - 1

// DefaultMaxK is the largest K per request of a tabular board when none is
// asked for: gen --max-k's default, and what eval --fixed and the tabular
// boards are built with.
const DefaultMaxK = 255

// MaxTFor is the largest T that CheckKMax allows with maxK samples per
// request (for any class count): 4104 at DefaultMaxK.
func MaxTFor(maxK int) int {
	if maxK < 1 {
		return 0
	}
	const max32 = uint64(1)<<32 - 1
	t := uint64(math.Sqrt(float64(max32 / uint64(maxK))))
	for t > 0 && (uint64(maxK)*t*t > max32 || uint64(maxK)*t > max32>>1) {
		t--
	}
	for uint64(maxK)*(t+1)*(t+1) <= max32 && uint64(maxK)*(t+1) <= max32>>1 {
		t++
	}
	return int(min(t, MaxT))
}

// CheckT reports whether a tabular model with margin t runs on the boards
// gen, eval --fixed and ptm board build by default: CheckKMax at
// DefaultMaxK (T at most 4104). ptm train refuses a T it fails.
func CheckT(t int) error {
	return CheckKMax(DefaultMaxK, 1, t)
}

// CheckConvT reports whether a convolutional model with nc classes and
// margin t runs on a board at all: the convolutional boards lower MaxK
// until the statistics fit (ConvKMax), so only K = 1 must (T at most
// MaxT). ptm train refuses a T it fails.
func CheckConvT(nc, t int) error {
	return CheckKMax(1, nc, t)
}

// PlanBytes estimates the memory Generate (and a board or co-simulation
// build around it) needs for the shape on this configuration, before
// anything of that size is allocated: per bank word (D of them) the
// address decode and bank image text, per clause group (G) its class-sum
// ROM row (two masks of Slots x LC bits, as text, several copies while the
// template runs), per TA a threshold (a random or preloaded bank) and its
// image entry. Measured peaks (Go heap, hw.Generate, 2026-11) stay below
// half of it. Float64, so that absurd shapes do not overflow; cfg must be
// resolved (lanes split).
func (c Config) PlanBytes(sh fixed.Shape) float64 {
	lay := c.HW().LayoutOf(sh)
	lc := float64(max(c.ClauseLanes, 1))
	slots := min(float64(sh.TMs), lc+1)
	tas := float64(sh.TMs) * float64(sh.Clauses) * 2 * float64(sh.Features)
	return 1<<20 + 192*float64(lay.Depth) + float64(lay.Groups)*(1024+8*slots*lc) + 16*tas + 64*float64(c.ClauseLanes)*float64(c.LiteralLanes)
}

// clog2 is the number of bits that index n items (at least 1).
func clog2(n int) int {
	if n <= 2 {
		return 1
	}
	return bits.Len(uint(n - 1))
}

// ubits is the number of bits that hold the unsigned value v (at least 1).
func ubits(v uint64) int {
	if v == 0 {
		return 1
	}
	return bits.Len64(v)
}

// sbits is the number of bits of a two's complement word that holds -v..v.
func sbits(v uint64) int { return ubits(v) + 1 }

// Params are the derived constants of a design: the shape, the schedule
// and every width. They are written into the header of every file.
type Params struct {
	Prefix                      string
	NT, NC, M, O, T             int
	Binary                      bool
	Bits, W                     int
	LC, LL, L                   int
	G, BT, D                    int
	MaxK                        int
	Literals, TotalClauses      int
	LaneW, AddrW, GroupW, BeatW int
	KW                          int // width of req_k
	VW                          int // width of a raw class sum v_t (signed)
	UW                          int // width of a clipped class sum u_t (signed)
	PCW                         int // width of a popcount of LC clause bits
	TMW                         int // width of a TM index
	Slots                       int // TMs one clause group can touch
	Unit                        uint64
	VoteW, SumW, SqW            int
	FifoDepth, FifoAW           int
	Taps                        []int
	Phi                         uint64
	Hash                        string
	Hash32                      uint32
	PipeLatency                 int // issue of a beat to its sample's sums
	CtrlLanes                   int // lanes per copy of the lane control registers
	ChunkSize                   int // popcount chunk (bits) of the class sum
	Chunks                      int
	InitBanks                   bool
	InfoWords                   int
}

// popChunk is the largest popcount computed in one cycle by the class sum;
// wider clause lanes get a two-stage (chunked) popcount.
const popChunk = 8

// ctrlLanes is the number of lanes one copy of the lane control registers
// (step, address) drives. A multiple of 2, 3 and 4, so that the lanes of a
// packed block RAM (hw/synth's bank pass merges runs of two to four
// consecutive lanes with the same read address and enable) share a copy.
const ctrlLanes = 24

func deriveParams(c Config, sh fixed.Shape, hash string) (*Params, error) {
	lay := c.HW().LayoutOf(sh)
	p := &Params{
		Prefix: c.Prefix, NT: sh.TMs, NC: sh.Classes, M: sh.Clauses, O: sh.Features, T: sh.T, Binary: sh.Binary,
		Bits: c.Bits, W: c.LFSRWidth, LC: c.ClauseLanes, LL: c.LiteralLanes, L: c.ClauseLanes * c.LiteralLanes,
		G: lay.Groups, BT: lay.Beats, D: lay.Depth, MaxK: c.MaxK,
		Literals: sh.Literals(), TotalClauses: sh.TotalClauses(),
		Taps: lfsr.Taps[c.LFSRWidth], Phi: lfsr.Phi(c.LFSRWidth), Hash: hash, InitBanks: c.InitBanks,
	}
	p.LaneW = clog2(p.L)
	p.AddrW = clog2(p.D)
	p.GroupW = clog2(p.G)
	p.BeatW = clog2(p.BT)
	p.KW = ubits(uint64(p.MaxK))
	p.TMW = clog2(p.NT)
	p.PCW = ubits(uint64(p.LC))
	p.VW = max(sbits(uint64((p.M+1)/2)), p.PCW+1)
	p.UW = sbits(uint64(p.T))
	p.Unit = fixed.VoteUnit(p.NC)
	p.VoteW = ubits(uint64(p.MaxK) * p.Unit)
	p.SumW = sbits(uint64(p.MaxK) * uint64(p.T))
	p.SqW = ubits(uint64(p.MaxK) * uint64(p.T) * uint64(p.T))
	p.SqW = max(p.SqW, 2*(p.UW-1)) // at least one sample's square
	// Slots: the most TMs the LC clauses of one group span.
	for g := 0; g < p.G; g++ {
		first := g * p.LC
		last := min(first+p.LC, p.TotalClauses) - 1
		p.Slots = max(p.Slots, last/p.M-first/p.M+1)
	}
	p.ChunkSize = min(p.LC, popChunk)
	p.Chunks = (p.LC + p.ChunkSize - 1) / p.ChunkSize
	// Issue -> lane control (1) -> lane read/draw (1) -> include (1) ->
	// clause (1) -> masks (1) -> popcount (1 or 2) -> accumulate (1).
	p.PipeLatency = 6 + p.popStages()
	p.CtrlLanes = ctrlLanes
	// The samples FIFO must hold every sample in flight so that the beat
	// pipeline never waits for an unstalled result stream: a sample is
	// started every max(D, NT) cycles and stays in flight for about
	// D + PipeLatency + NT cycles.
	period := max(p.D, p.NT)
	need := (p.D+p.PipeLatency+p.NT+2+period-1)/period + 1
	p.FifoDepth = 2
	for p.FifoDepth < need {
		p.FifoDepth *= 2
	}
	p.FifoAW = clog2(p.FifoDepth)
	p.InfoWords = 16
	if hash != "" {
		if len(hash) < 8 {
			return nil, fmt.Errorf("%w: model hash %q: want at least 8 hex digits", ErrConfig, hash)
		}
		h, err := strconv.ParseUint(hash[:8], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: model hash %q: %w", ErrConfig, hash, err)
		}
		p.Hash32 = uint32(h)
	}
	return p, nil
}

// popStages is the number of pipeline stages of the class-sum popcount.
func (p *Params) popStages() int {
	if p.Chunks > 1 {
		return 2
	}
	return 1
}

// StatsWords is NC vote words, NT sum words and NT sumsq words.
func (p *Params) StatsWords() int { return p.NC + 2*p.NT }
