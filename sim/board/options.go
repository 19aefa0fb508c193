package board

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/internal/simcache"
)

// DefaultClksPerBit is the simulated UART bit time in board clocks.
const DefaultClksPerBit = 8

// DefaultReportedBaud is the UART bit rate the board reports in INFO word 17.
const DefaultReportedBaud = 115200

// DefaultMAC is the board's Ethernet address (docs/protocol.md section 1).
var DefaultMAC = net.HardwareAddr{0x02, 0x50, 0x54, 0x4D, 0x00, 0x01}

// ErrOptions is wrapped by every error about inconsistent Options.
var ErrOptions = errors.New("board: bad options")

// Fault is a byte fault rate of one direction of a link: each byte is
// dropped with probability Drop, otherwise one of its bits is flipped with
// probability Flip.
type Fault struct {
	Flip float64 `json:"flip"`
	Drop float64 `json:"drop"`
}

// Faults are the fault injection settings of the simulated links.
type Faults struct {
	UARTRx Fault `json:"uart_rx"` // host to board
	UARTTx Fault `json:"uart_tx"` // board to host
	EthRx  Fault `json:"eth_rx"`  // host to board (wire bytes, after the FCS)
	EthTx  Fault `json:"eth_tx"`  // board to host (wire bytes, before the FCS check)
	// ResponseDelay holds every response byte (UART) or frame (Ethernet)
	// this long (wall time) before delivering it.
	ResponseDelay time.Duration `json:"response_delay"`
}

// Options describe the simulated board.
type Options struct {
	// ModelFile is a model file (golden/modelfile): its shape, bank and
	// hash define the core. Bank, or else Shape, is used when it is empty.
	ModelFile string
	// Bank is a quantized model (its shape and Bits define the core).
	Bank *fixed.Bank
	// ConvBank is a quantized convolutional model: its head and Bits
	// define a convolutional board (protocol version 7, rtl/board's
	// conv_query around hw.GenerateConv's core), which the host uploads
	// (thresholds, then weights) before INFER. A convolutional model
	// file (ModelFile) makes the same board.
	ConvBank *conv.Bank
	// Shape defines the core when there is neither a model file nor a bank;
	// the host must then upload a bank (LOAD_BEGIN/DATA/COMMIT) before INFER.
	Shape fixed.Shape
	// ModelHash goes into the generated core's info ROM (INFO word 14);
	// a model file's own hash is used when it is empty.
	ModelHash string
	// Config sets the core's precision and parallelism; zero fields take
	// DefaultConfig's values (Bits: the bank's). Prefix is ignored ("ptm").
	// A convolutional board's defaults are `ptm eval --fixed`'s: the
	// bank's Bits, 32-bit LFSRs, min(8, C) x min(8, 2F) lanes
	// (ClauseLanes x LiteralLanes; Lanes is not used), one patch per
	// cycle, and MaxK the largest K up to 255 that keeps the statistics
	// in 32 bits (hw.ConvKMax).
	Config hw.Config
	// Preload generates the banks with the model's thresholds
	// (hw.Config.InitBanks) and starts with the model committed, so INFER
	// works at once. It needs a model file or a bank.
	Preload bool

	// UART bridges the UART to a pseudo-terminal (Process.UART).
	UART bool
	// TAP bridges Ethernet to this TAP device ("" for no Ethernet).
	TAP string
	// NoEthernet builds the UART-only board (ETH_ENABLE = 0), the image
	// `ptm synth --no-eth` builds; it cannot go with TAP.
	NoEthernet bool
	// SetsMax is the board's MMAX, the most sets per INFER query
	// (SETS_MAX, hw.Board.SetsMax): 0 means hw.DefaultSetsMax; 1 is the
	// board without the set loop (`ptm synth --sets-max 1`).
	SetsMax int
	// ClockHz is the board clock the image runs at (CLK_HZ: the LED timing
	// only; the simulation has no wall-clock rate). 0 means 48 MHz.
	ClockHz int
	// CoreClock builds the dual-clock board (hw.Board.CoreClock, CORE_CLK
	// = 1; `ptm synth --core-clock-ratio 2`): the core on clk_core, which
	// the simulator toggles twice per board clock (phase-aligned, as the
	// PLL's GENCLK and GENCLK_HALF), through rtl/board/core_xing.v.
	// ClockHz and ClksPerBit stay the board (shell) clock's.
	CoreClock bool
	// NetNS runs the simulator in this network namespace (`ip netns exec`).
	NetNS string
	// MAC is the board's Ethernet address (default DefaultMAC).
	MAC net.HardwareAddr
	// ClksPerBit is the simulated UART bit time in clocks (default
	// DefaultClksPerBit, at least 8).
	ClksPerBit int
	// ReportedBaud is the UART bit rate in INFO word 17 (default
	// DefaultReportedBaud).
	ReportedBaud int
	// Faults are injected on the links (none by default).
	Faults Faults
	// Seed seeds the fault injection.
	Seed uint64

	// CacheDir holds cached simulator builds (default DefaultCacheDir()).
	CacheDir string
	// Jobs is verilator's -j (default 2).
	Jobs int
	// Log receives the simulator's stderr and the build output of a
	// failed build (default: discarded).
	Log io.Writer
	// StartTimeout bounds building and starting (default 10 minutes).
	StartTimeout time.Duration
}

// DefaultConfig is the core configuration used for zero Config fields:
// 8-bit thresholds, 32-bit LFSRs, K up to 255; no lane count, so a
// config without one gets hw.DefaultLanes for the model's shape.
func DefaultConfig() hw.Config {
	return hw.Config{Bits: 8, LFSRWidth: 32, MaxK: 255}
}

// DefaultOptions are the options of `ptm board` without flags: the UART on
// a pseudo-terminal, no Ethernet, DefaultConfig, no faults.
func DefaultOptions() Options {
	return Options{UART: true, Config: DefaultConfig(), ClksPerBit: DefaultClksPerBit,
		ReportedBaud: DefaultReportedBaud, MAC: DefaultMAC}
}

// model is the resolved model: its shape, bank (nil for a shape only)
// and hash.
type model struct {
	shape fixed.Shape
	bank  *fixed.Bank
	conv  *conv.Bank // a convolutional model (shape and bank unused)
	hash  string
}

func (o Options) model() (model, error) {
	switch {
	case o.ModelFile != "":
		f, cv, hash, err := modelfile.ReadAny(o.ModelFile)
		if err != nil {
			return model{}, fmt.Errorf("board: %w", err)
		}
		if o.ModelHash != "" {
			hash = o.ModelHash
		}
		if cv != nil {
			bits := cv.BankBits
			if o.Config.Bits != 0 {
				bits = o.Config.Bits
			}
			b, err := cv.Bank(bits)
			if err != nil {
				return model{}, fmt.Errorf("board: %s: %w", o.ModelFile, err)
			}
			return model{conv: b, hash: hash}, nil
		}
		return model{shape: f.Bank.Shape, bank: f.Bank, hash: hash}, nil
	case o.ConvBank != nil:
		if err := o.ConvBank.Check(); err != nil {
			return model{}, fmt.Errorf("%w: ConvBank: %w", ErrOptions, err)
		}
		return model{conv: o.ConvBank, hash: o.ModelHash}, nil
	case o.Bank != nil:
		return model{shape: o.Bank.Shape, bank: o.Bank, hash: o.ModelHash}, nil
	case o.Shape != (fixed.Shape{}):
		if o.Preload {
			return model{}, fmt.Errorf("%w: Preload needs a model file or a bank", ErrOptions)
		}
		return model{shape: o.Shape, hash: o.ModelHash}, nil
	}
	return model{}, fmt.Errorf("%w: no model: set ModelFile, Bank, ConvBank or Shape", ErrOptions)
}

// resolved returns o with defaults filled in, and the model.
func (o Options) resolved() (Options, model, error) {
	m, err := o.model()
	if err != nil {
		return o, m, err
	}
	def := DefaultConfig()
	c := o.Config
	if m.conv != nil {
		if o.Preload {
			return o, m, fmt.Errorf("%w: Preload: a convolutional board is not preloaded (the host uploads the model)", ErrOptions)
		}
		h := m.conv
		if c.Bits == 0 {
			c.Bits = h.Bits
		}
		if c.LFSRWidth == 0 {
			c.LFSRWidth = def.LFSRWidth
		}
		if c.ClauseLanes == 0 && c.LiteralLanes == 0 {
			c.ClauseLanes, c.LiteralLanes = min(8, h.Clauses), min(8, h.Shape.Literals())
		}
		c.Lanes = 0
		if c.MaxK == 0 {
			c.MaxK = hw.ConvKMax(def.MaxK, h.Classes, h.T)
		}
		if !hw.ConvKMaxOK(c.MaxK, h.Classes, h.T) {
			return o, m, fmt.Errorf("%w: MaxK %d with %d classes and T = %d: the statistics need 32 bits (at most %d)", ErrOptions, c.MaxK, h.Classes, h.T, hw.ConvKMax(65535, h.Classes, h.T))
		}
	}
	if c.Bits == 0 {
		c.Bits = def.Bits
		if m.bank != nil {
			c.Bits = m.bank.Bits
		}
	}
	if c.LFSRWidth == 0 {
		c.LFSRWidth = def.LFSRWidth
	}
	if c.ClauseLanes == 0 && c.LiteralLanes == 0 && c.Lanes == 0 {
		c.Lanes = hw.DefaultLanes(m.shape)
	}
	if c.MaxK == 0 {
		c.MaxK = def.MaxK
	}
	c.Prefix = hw.DefaultPrefix
	c.InitBanks = o.Preload
	o.Config = c
	if o.ClksPerBit == 0 {
		o.ClksPerBit = DefaultClksPerBit
	}
	if o.ClksPerBit < 8 {
		return o, m, fmt.Errorf("%w: ClksPerBit = %d, want >= 8 (uart_rx samples 3 times per bit)", ErrOptions, o.ClksPerBit)
	}
	if o.ReportedBaud == 0 {
		o.ReportedBaud = DefaultReportedBaud
	}
	if o.MAC == nil {
		o.MAC = DefaultMAC
	}
	if len(o.MAC) != 6 {
		return o, m, fmt.Errorf("%w: MAC %v is not 6 bytes", ErrOptions, o.MAC)
	}
	if o.NoEthernet && o.TAP != "" {
		return o, m, fmt.Errorf("%w: TAP %q on a board without Ethernet (NoEthernet)", ErrOptions, o.TAP)
	}
	if o.ClockHz < 0 {
		return o, m, fmt.Errorf("%w: ClockHz %d, want > 0 (or 0 for 48 MHz)", ErrOptions, o.ClockHz)
	}
	if !o.UART && o.TAP == "" {
		return o, m, fmt.Errorf("%w: neither UART nor TAP: the board would have no link", ErrOptions)
	}
	for _, f := range []Fault{o.Faults.UARTRx, o.Faults.UARTTx, o.Faults.EthRx, o.Faults.EthTx} {
		if f.Flip < 0 || f.Flip > 1 || f.Drop < 0 || f.Drop > 1 {
			return o, m, fmt.Errorf("%w: fault rates must be in [0, 1]: %+v", ErrOptions, f)
		}
	}
	if o.Jobs < 1 {
		o.Jobs = 2
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 10 * time.Minute
	}
	return o, m, nil
}

// DefaultCacheDir is where simulator builds are cached: $PTM_BOARD_CACHE,
// else <user cache dir>/ptm-board, else a per-user <temp
// dir>/ptm-board-<uid>. The directory must belong to the current user and
// be writable by nobody else (sim/internal/simcache).
func DefaultCacheDir() string {
	return simcache.Dir("PTM_BOARD_CACHE", "ptm-board")
}
