package board

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/rtl"
)

// TrainerOptions describe a simulated training board (rtl/trainboard:
// train_board_top with the generated trainer, docs/protocol.md section 8):
// the trainer's shape and training parameters, and the UART.
type TrainerOptions struct {
	// Shape is the model shape (NT, NC, m, o, T, binary).
	Shape fixed.Shape
	// Train are N, s and the update rule (SPRAM is ignored: the
	// simulation uses register arrays).
	Train hw.TrainParams
	// Bits is B, the SPV width (8..15; 0 means 15).
	Bits int
	// LiteralLanes is the trainer's literal lanes (1..4; 0 means 4).
	LiteralLanes int
	// ClksPerBit is the simulated UART bit time in clocks (default
	// DefaultClksPerBit, at least 8).
	ClksPerBit int
	// ReportedBaud is the bit rate TRAIN_INFO reports (default
	// DefaultReportedBaud).
	ReportedBaud int
	// Faults are injected on the UART (none by default; Ethernet faults
	// are ignored).
	Faults Faults
	// Seed seeds the fault injection.
	Seed uint64
	// CacheDir holds cached simulator builds (default DefaultCacheDir()).
	CacheDir string
	// Jobs is verilator's -j (default 2).
	Jobs int
	// Log receives the simulator's stderr and a failed build's output.
	Log io.Writer
	// StartTimeout bounds building and starting (default 10 minutes).
	StartTimeout time.Duration
}

// TrainerBoardParams returns the train_board_top parameters for a
// generated trainer and a UART bit time.
func TrainerBoardParams(d *hw.TrainerDesign, clksPerBit, baud int) map[string]string {
	p := d.Params
	kw := p.LaneW
	return map[string]string{
		"CLKS_PER_BIT": strconv.Itoa(clksPerBit), "UART_BAUD": strconv.Itoa(baud),
		"NT": strconv.Itoa(p.NT), "NC": strconv.Itoa(p.NC), "M": strconv.Itoa(p.M), "O": strconv.Itoa(p.O),
		"T": strconv.Itoa(p.T), "N": strconv.Itoa(p.N), "B": strconv.Itoa(p.Bits), "LL": strconv.Itoa(p.LL),
		"UP": strconv.FormatUint(uint64(p.Up), 10), "DOWN": strconv.FormatUint(uint64(p.Down), 10),
		"PAPER": strconv.Itoa(b2i(p.Paper)), "BINARY": strconv.Itoa(b2i(p.Binary)),
		"SPV_DEPTH": strconv.Itoa(p.SPVDepth), "INC_DEPTH": strconv.Itoa(p.IncDepth),
		"CW": strconv.Itoa(p.SeedW), "YW": strconv.Itoa(p.LabelW), "KW": strconv.Itoa(kw), "SAW": strconv.Itoa(p.SPVAddrW),
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// options returns the board Options that carry the UART, cache and
// process settings of o.
func (o TrainerOptions) options() (Options, error) {
	b := Options{UART: true, ClksPerBit: o.ClksPerBit, ReportedBaud: o.ReportedBaud, Seed: o.Seed,
		Faults:   Faults{UARTRx: o.Faults.UARTRx, UARTTx: o.Faults.UARTTx, ResponseDelay: o.Faults.ResponseDelay},
		CacheDir: o.CacheDir, Jobs: o.Jobs, Log: o.Log, StartTimeout: o.StartTimeout, Shape: o.Shape, NoEthernet: true}
	r, _, err := b.resolved()
	return r, err
}

// BuildTrainer generates the trainer for o and compiles the training
// board simulator (reusing an identical earlier build).
func BuildTrainer(o TrainerOptions) (*Build, error) {
	return buildTrainer(context.Background(), o)
}

// buildTrainer is BuildTrainer returning ctx's error as soon as ctx is
// done.
func buildTrainer(ctx context.Context, o TrainerOptions) (*Build, error) {
	bo, err := o.options()
	if err != nil {
		return nil, err
	}
	ver, err := VerilatorVersion()
	if err != nil {
		return nil, err
	}
	bits := o.Bits
	if bits == 0 {
		bits = 15
	}
	tp := o.Train
	tp.SPRAM = false
	d, err := whileAlive(ctx, "generating the trainer", func() (*hw.TrainerDesign, error) {
		return hw.GenerateTrainer(hw.Config{Bits: bits, LiteralLanes: o.LiteralLanes}, o.Shape, tp)
	})
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	ps := TrainerBoardParams(d, bo.ClksPerBit, bo.ReportedBaud)
	flags := []string{"--cc", "--exe", "--build", "-O3", "--x-assign", "fast", "--x-initial", "fast",
		"--top-module", "train_board_top", "--prefix", "Vboard_top", "-o", "board_sim",
		"-j", fmt.Sprint(bo.Jobs), "+define+PTM_TRAINER=" + d.Top(),
		"-CFLAGS", "-O2 -Wall -DCLKS_PER_BIT=" + fmt.Sprint(bo.ClksPerBit)}
	for _, k := range sortedKeys(ps) {
		flags = append(flags, "-G"+k+"="+ps[k])
	}
	dir, bin, cached, err := compileSim(ctx, bo, ver, flags, rtl.TrainBoardSources(), d.Files, "trainboard-")
	if err != nil {
		return nil, err
	}
	return &Build{Dir: dir, Binary: bin, Cached: cached, Trainer: d, Params: ps}, nil
}

// StartTrainer builds (or reuses) the training board simulator and starts
// it with its UART on a pseudo-terminal (Process.UART).
func StartTrainer(ctx context.Context, o TrainerOptions) (*Process, error) {
	bo, err := o.options()
	if err != nil {
		return nil, err
	}
	b, err := buildTrainer(ctx, o)
	if err != nil {
		return nil, err
	}
	return startSim(ctx, bo, b)
}

// RunTrainer starts the training board and calls ready once it is up,
// then waits until ctx is cancelled (stopping the simulator) or the
// simulator exits.
func RunTrainer(ctx context.Context, o TrainerOptions, ready func(*Process)) error {
	p, err := StartTrainer(ctx, o)
	if err != nil {
		return err
	}
	return serve(ctx, p, ready)
}
