package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/host/softboard"

	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/board"
)

func init() {
	register("board", "run the Verilated board: the generated core behind UART (pseudo-terminal) and Ethernet (TAP)", cmdBoard)
}

func cmdBoard(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("board", "--model MODEL | --random-shape SPEC [--tap IFACE] [--no-uart] [--preload] [faults]", stderr)
	def := board.DefaultOptions()
	model := fs.String("model", "", "model `file` whose shape (and, with --preload, bank) defines the core")
	shapeSpec := fs.String("random-shape", "", "build the core for an untrained shape: classes=N,clauses=M,features=O,t=T[,binary]")
	noUART := fs.Bool("no-uart", false, "do not bridge the UART to a pseudo-terminal")
	noEth := fs.Bool("no-eth", false, "the UART-only board (ETH_ENABLE = 0), as `ptm synth --no-eth` builds it")
	setsMax := fs.Int("sets-max", hw.DefaultSetsMax, "the board's MMAX, the most sets per INFER query (SETS_MAX, 1..255), as `ptm synth --sets-max` builds it")
	coreRatio := fs.Int("core-clock-ratio", 1, "1: one clock; 2: the dual-clock board, the core on its own clock at twice the board clock, as `ptm synth --core-clock-ratio 2` builds it")
	clockHz := fs.Int("clock-hz", 0, "the image's board clock in Hz (CLK_HZ: LED timing only; default 48 MHz)")
	tap := fs.String("tap", "", "bridge Ethernet to this TAP `device` (created if missing; needs root or CAP_NET_ADMIN)")
	netns := fs.String("netns", "", "run the simulator inside this network namespace")
	preload := fs.Bool("preload", false, "start with the model's banks loaded (no upload needed)")
	clks := fs.Int("clks-per-bit", def.ClksPerBit, "simulated UART bit time in board clocks (the pty itself has no baud rate)")
	baud := fs.Int("baud", def.ReportedBaud, "UART bit rate the board reports in INFO")
	flip := fs.Float64("flip", 0, "flip a random bit of this fraction of bytes, both directions, both links")
	drop := fs.Float64("drop", 0, "drop this fraction of bytes, both directions, both links")
	delay := fs.Duration("delay", 0, "hold every response this long")
	seed := fs.Uint64("seed", 1, "seed of the fault injection")
	verbose := fs.Bool("v", false, "show the simulator's log on stderr")
	soft := fs.Bool("soft", false, "the software board instead of the Verilated one: host/softboard (protocol 7, the golden fixed-point core, tabular or convolutional) on a pseudo-terminal, UART only; --model's lanes and bits as `ptm eval --fixed` takes them")
	trainer := fs.Bool("trainer", false, "the training board (rtl/trainboard, docs/protocol.md section 8) for --random-shape, UART only: `ptm train --board` trains on it")
	states := fs.Int("states", 8, "with --trainer: states per action N")
	spec := fs.Float64("s", 2, "with --trainer: specificity s")
	feedback := fs.String("feedback", string(ptm.ConsistentFeedback), "with --trainer: update rule, consistent or paper")
	var hf hwFlags
	hf.addImage(fs)
	hf.addPatchLanes(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *soft {
		if *model == "" || *tap != "" || *noUART || *trainer || *shapeSpec != "" {
			return fmt.Errorf("%w: --soft needs --model and the UART (no --random-shape, --tap, --no-uart, --trainer)", errUsage)
		}
		for name, v := range map[string]float64{"--flip": *flip, "--drop": *drop} {
			if !(v >= 0 && v < 1) {
				return fmt.Errorf("%w: %s %v, want 0 <= rate < 1", errUsage, name, v)
			}
		}
		if err := checkSetsMax(*setsMax); err != nil {
			return err
		}
		var faults *softboard.Faults
		if *flip > 0 || *drop > 0 {
			faults = &softboard.Faults{Seed: *seed, FlipToBoard: *flip, DropToBoard: *drop, FlipToHost: *flip, DropToHost: *drop, MinDelay: *delay, MaxDelay: *delay}
		}
		return softBoard(fs, *model, &hf, *preload, *baud, *setsMax, faults, stdout, stderr)
	}
	if *trainer {
		if *model != "" || *shapeSpec == "" || *tap != "" || *noUART || *preload {
			return fmt.Errorf("%w: --trainer needs --random-shape and the UART (no --model, --tap, --no-uart, --preload)", errUsage)
		}
		sh, err := parseShape(*shapeSpec)
		if err != nil {
			return err
		}
		bits := 15
		if isSet(fs, "bits") {
			bits = hf.bits
		}
		o := board.TrainerOptions{Shape: sh, Bits: bits, LiteralLanes: hf.ll, ClksPerBit: *clks, ReportedBaud: *baud, Seed: *seed,
			Train: hw.TrainParams{N: *states, S: *spec, Feedback: ptm.Feedback(*feedback)}}
		f := board.Fault{Flip: *flip, Drop: *drop}
		o.Faults = board.Faults{UARTRx: f, UARTTx: f, ResponseDelay: *delay}
		if *verbose {
			o.Log = stderr
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		fmt.Fprintln(stderr, "building the Verilated training board (cached after the first build)...")
		start := time.Now()
		return board.RunTrainer(ctx, o, func(p *board.Process) {
			tp := p.Build.Trainer.Params
			fmt.Fprintf(stderr, "training board ready after %.1fs: NT=%d NC=%d m=%d o=%d T=%d, N=%d B=%d, %d literal lanes, UP=%d DOWN=%d\n",
				time.Since(start).Seconds(), tp.NT, tp.NC, tp.M, tp.O, tp.T, tp.N, tp.Bits, tp.LL, tp.Up, tp.Down)
			fmt.Fprintf(stdout, "UART: %s\n", p.UART)
			if f, ok := stdout.(*os.File); ok {
				_ = f.Sync()
			}
		})
	}
	if (*model == "") == (*shapeSpec == "") {
		return fmt.Errorf("%w: exactly one of --model or --random-shape is required", errUsage)
	}
	if *noUART && *tap == "" {
		return fmt.Errorf("%w: --no-uart without --tap leaves the board unreachable", errUsage)
	}
	for name, v := range map[string]float64{"--flip": *flip, "--drop": *drop} {
		if !(v >= 0 && v < 1) {
			return fmt.Errorf("%w: %s %v, want 0 <= rate < 1", errUsage, name, v)
		}
	}
	if err := checkSetsMax(*setsMax); err != nil {
		return err
	}
	if *coreRatio != 1 && *coreRatio != 2 {
		return fmt.Errorf("%w: --core-clock-ratio %d, want 1 or 2", errUsage, *coreRatio)
	}
	opts := def
	opts.SetsMax = *setsMax
	opts.CoreClock = *coreRatio == 2
	if *noEth && *tap != "" {
		return fmt.Errorf("%w: --tap on a board built with --no-eth", errUsage)
	}
	opts.UART, opts.TAP, opts.NetNS, opts.Preload = !*noUART, *tap, *netns, *preload
	opts.NoEthernet, opts.ClockHz = *noEth, *clockHz
	opts.ClksPerBit, opts.ReportedBaud, opts.Seed = *clks, *baud, *seed
	f := board.Fault{Flip: *flip, Drop: *drop}
	opts.Faults = board.Faults{UARTRx: f, UARTTx: f, EthRx: f, EthTx: f, ResponseDelay: *delay}
	if *verbose {
		opts.Log = stderr
	}
	_, cv, cvHash, err := readModelIfAny(*model)
	if err != nil {
		return err
	}
	switch {
	case cv != nil:
		// a convolutional board (protocol 7): `ptm eval --fixed`'s lanes
		// unless the flags say otherwise
		if *preload {
			return fmt.Errorf("%w: --preload: a convolutional board is not preloaded (the host uploads the model)", errUsage)
		}
		if *setsMax == 1 {
			return fmt.Errorf("%w: --sets-max 1: a convolutional board (protocol 7) has the set loop", errUsage)
		}
		h, err := convHW(fs, cv, &hf)
		if err != nil {
			return err
		}
		b, err := cv.Bank(h.Bits)
		if err != nil {
			return err
		}
		scan, err := hf.convScan()
		if err != nil {
			return err
		}
		opts.ConvBank, opts.ModelHash = b, cvHash
		opts.Config = hw.Config{Bits: h.Bits, LFSRWidth: h.LFSRWidth, ClauseLanes: h.ClauseLanes, LiteralLanes: h.LiteralLanes, PatchLanes: hf.pn, Scan: scan}
		if isSet(fs, "max-k") {
			opts.Config.MaxK = hf.maxK
		}
	case *model != "":
		_, b, hash, err := loadBank(*model, hf.bits)
		if err != nil {
			return err
		}
		opts.Bank, opts.ModelHash = b, hash
		cfg, err := hf.config(b.Shape)
		if err != nil {
			return err
		}
		opts.Config = cfg
	default:
		if *preload {
			return fmt.Errorf("%w: --preload needs --model", errUsage)
		}
		sh, err := parseShape(*shapeSpec)
		if err != nil {
			return err
		}
		opts.Shape = sh
		if opts.Config, err = hf.config(sh); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(stderr, "building the Verilated board (cached after the first build)...")
	start := time.Now()
	return board.Run(ctx, opts, func(p *board.Process) {
		if d := p.Build.ConvDesign; d != nil {
			c := d.Config
			fmt.Fprintf(stderr, "convolutional board (protocol 7) ready after %.1fs: %dx%d images, %d clauses, core %d x %d lanes, %d patches per cycle, B=%d, MaxK=%d\n",
				time.Since(start).Seconds(), d.Params.H, d.Params.W, d.Params.C, c.ClauseLanes, c.LiteralLanes, d.Params.PN, c.Bits, c.MaxK)
		} else {
			c := p.Build.Design.Config
			fmt.Fprintf(stderr, "board ready after %.1fs: core %d lanes (%d x %d), B=%d, MaxK=%d\n",
				time.Since(start).Seconds(), c.Lanes, c.ClauseLanes, c.LiteralLanes, c.Bits, c.MaxK)
		}
		if p.UART != "" {
			fmt.Fprintf(stdout, "UART: %s\n", p.UART)
		}
		if p.TAP != "" {
			fmt.Fprintf(stdout, "TAP: %s\n", p.TAP)
		}
		if f, ok := stdout.(*os.File); ok {
			_ = f.Sync()
		}
	})
}

// softBoard is `ptm board --soft`: a software board for the model at path
// on a pseudo-terminal until SIGINT or SIGTERM. A convolutional model's
// board has `ptm eval --fixed`'s lanes unless the flags say otherwise
// (8 x 8, the file's bank width, lfsr.DefaultWidth); a tabular model's
// takes the flags as the Verilated board does.
func softBoard(fs *flag.FlagSet, path string, hf *hwFlags, preload bool, baud, setsMax int, faults *softboard.Faults, stdout, stderr io.Writer) error {
	_, cv, hash, err := modelfile.ReadAny(path)
	if err != nil {
		return err
	}
	cfg := softboard.Config{BitRate: baud, MMax: setsMax, QueueFrames: 31}
	if len(hash) >= 8 {
		if h, err := strconv.ParseUint(hash[:8], 16, 32); err == nil {
			cfg.Hash32 = uint32(h)
		}
	}
	if isSet(fs, "max-k") {
		cfg.KMax = hf.maxK
	}
	var desc string
	if cv != nil {
		h := conv.HW{Bits: cv.BankBits, LFSRWidth: lfsr.DefaultWidth, ClauseLanes: min(convClauseLanes, cv.Head.Clauses), LiteralLanes: min(convLiteralLanes, cv.Head.Shape.Literals())}
		if isSet(fs, "lanes") {
			return fmt.Errorf("%w: --lanes: a convolutional board takes --clause-lanes and --literal-lanes (default %d and %d)", errUsage, convClauseLanes, convLiteralLanes)
		}
		for _, o := range []struct {
			name string
			dst  *int
			v    int
		}{{"bits", &h.Bits, hf.bits}, {"lfsr-width", &h.LFSRWidth, hf.width}, {"clause-lanes", &h.ClauseLanes, hf.lc}, {"literal-lanes", &h.LiteralLanes, hf.ll}} {
			if isSet(fs, o.name) {
				*o.dst = o.v
			}
		}
		if err := conv.CheckHW(&cv.Head, h); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		cfg.HW = h
		head := cv.Head
		cfg.Conv = &head
		if preload {
			if cfg.ConvBank, err = cv.Bank(h.Bits); err != nil {
				return err
			}
		}
		desc = fmt.Sprintf("convolutional, %dx%d images, %d clauses, %d-bit bank, %d x %d lanes", head.Shape.H, head.Shape.W, head.Clauses, h.Bits, h.ClauseLanes, h.LiteralLanes)
	} else {
		_, b, _, err := loadBank(path, hf.bits)
		if err != nil {
			return err
		}
		c, err := hf.config(b.Shape)
		if err != nil {
			return err
		}
		cfg.Shape, cfg.HW = b.Shape, c.HW()
		if preload {
			cfg.Bank = b
		}
		desc = fmt.Sprintf("tabular, %d classes, %d-bit bank, %d x %d lanes", b.Classes, b.Bits, c.ClauseLanes, c.LiteralLanes)
	}
	b, err := softboard.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in := b.Info()
	// The pseudo-terminal has no line rate: the board paces its answers
	// at --baud (the rate INFO reports); what the host sends is paced
	// only if the host does so (transport.UARTOpts.Pace).
	return b.ServePTY(ctx, softboard.StreamOpts{NoRescan: true, Pace: true}, faults, func(port string) {
		fmt.Fprintf(stderr, "software board ready: protocol %d, %s, KMAX %d, loaded %d\n", in.Version, desc, in.KMax, in.Loaded)
		fmt.Fprintf(stdout, "UART: %s\n", port)
		if f, ok := stdout.(*os.File); ok {
			_ = f.Sync()
		}
	})
}

// readModelIfAny reads the model file at path when path is not empty:
// either a tabular model or a convolutional one (modelfile.ReadAny).
func readModelIfAny(path string) (*modelfile.File, *modelfile.ConvFile, string, error) {
	if path == "" {
		return nil, nil, "", nil
	}
	return modelfile.ReadAny(path)
}
