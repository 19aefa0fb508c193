package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/hw/synth"
	"github.com/ptmhw/ptm/sim/traincosim"
)

// defaultTrainerMHz is the default clock of `ptm synth --trainer`.
const defaultTrainerMHz = 24

// cmdSynthTrainer is `ptm synth --trainer`: the on-chip trainer for a data
// set's shape (default Iris, N = 8), synthesized with its SPRAM for the
// UP5K; its cycles per example are measured first in the Verilated engine
// (co-simulated against the golden trainer, so the figure is of a
// verified run) unless --cycles gives them.
func cmdSynthTrainer(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("synth --trainer", "--trainer [--data iris] [--device up5k] [--freq MHz] [--states N] [--epochs E | --cycles C] [--json]", stderr)
	def := ptm.DefaultParams()
	fs.Bool("trainer", true, "synthesize the on-chip trainer (this mode)")
	data := fs.String("data", "iris", "data set whose shape the trainer is generated for")
	label := fs.String("label", "", "label column of a CSV file")
	device := fs.String("device", "up5k", "device: up5k (the trainer's SPVs need its SPRAM)")
	freq := fs.Float64("freq", defaultTrainerMHz, "target clock in `MHz`")
	seed := fs.Int("seed", 1, "nextpnr placement seed (and training seed of the cycle measurement)")
	epochs := fs.Int("epochs", 5, "epochs co-simulated to measure cycles per example")
	cycles := fs.Float64("cycles", 0, "cycles per example to use instead of measuring them (no Verilator run)")
	clauses := fs.Int("clauses", def.Clauses, "clauses per TM (m)")
	T := fs.Int("T", def.T, "target T")
	s := fs.Float64("s", def.S, "specificity s >= 1")
	states := fs.Int("states", defaultTrainStates, "states per action N")
	feedback := fs.String("feedback", string(def.Feedback), "SPV update rule: consistent or paper")
	bits := fs.Int("bits", fixedtrain.DefaultBits, "SPV width B (8..15)")
	lanes := fs.Int("lanes", hw.DefaultTrainerLanes, "literal lanes (1..4; one SPRAM each)")
	thresholds := fs.Int("thresholds", 6, "thermometer thresholds per feature")
	out := fs.String("out", "", "build `directory` (default build/synth/trainer-<data>-<device>-N<n>-<freq>MHz-s<seed>)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	toolchain := fs.String("toolchain", "", "`debian` or yowasp (as ptm synth); default $PTM_TOOLCHAIN, else debian")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkDirOutput(pathFlag{"--out", *out}); err != nil {
		return err
	}
	if _, err := synth.LookupDevice(*device); err != nil {
		return fmt.Errorf("%w: --device: %w", errUsage, err)
	}
	if err := synth.UseToolchain(*toolchain); err != nil {
		return fmt.Errorf("%w: --toolchain: %w", errUsage, err)
	}
	switch {
	case *epochs < 1:
		return fmt.Errorf("%w: --epochs %d, want >= 1", errUsage, *epochs)
	case *cycles < 0:
		return fmt.Errorf("%w: --cycles %v, want > 0", errUsage, *cycles)
	case !(*freq > 0 && *freq <= 300):
		return fmt.Errorf("%w: --freq %v, want 0 < MHz <= 300", errUsage, *freq)
	case *lanes < 1 || *lanes > hw.MaxTrainerLanes:
		return fmt.Errorf("%w: --lanes %d, want 1..%d", errUsage, *lanes, hw.MaxTrainerLanes)
	}
	p := ptm.Params{Clauses: *clauses, T: *T, S: *s, N: *states, Epochs: *epochs, Seed: uint64(*seed), Feedback: ptm.Feedback(*feedback)}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	td, err := loadTrainData(*data, *label, p.Seed, 0.2, *thresholds, p)
	if err != nil {
		return err
	}
	d, err := hw.GenerateTrainer(hw.Config{Bits: *bits, LiteralLanes: *lanes}, td.shape,
		hw.TrainParams{N: p.N, S: p.S, Feedback: p.Feedback, SPRAM: true})
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	cpe := *cycles
	if cpe == 0 {
		if !*quiet {
			fmt.Fprintf(stderr, "synth: measuring cycles per example: %d epochs of %s in the Verilated trainer\n", p.Epochs, td.data.Name)
		}
		to := traincosim.Options{Shape: td.shape, N: p.N, S: p.S, Seed: p.Seed, Feedback: p.Feedback, Bits: *bits, LiteralLanes: *lanes}
		if !*quiet {
			to.Progress = stderr
		}
		sess, err := traincosim.Start(to)
		if err != nil {
			return err
		}
		for e := 0; e < p.Epochs; e++ {
			if err := sess.Epoch(td.X, td.tr.Y, nil); err != nil {
				sess.Close()
				return err
			}
		}
		_, total, first, err := sess.Compare(1)
		if err == nil && total > 0 {
			err = fmt.Errorf("%d mismatches against golden/fixedtrain (first: %v)", total, first[0])
		}
		cpe = float64(sess.Cycles()) / float64(sess.Examples())
		if cerr := sess.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("build", "synth", fmt.Sprintf("trainer-%s-%s-N%d-%gMHz-s%d", td.data.Name, *device, p.N, *freq, *seed))
	}
	opts := synth.TrainerOptions{Design: d, Device: *device, FreqMHz: *freq, Seed: *seed, CyclesPerExample: cpe, Dir: dir}
	if !*quiet {
		opts.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := synth.RunTrainer(ctx, opts)
	if res != nil {
		if *asJSON {
			if jerr := writeJSON(stdout, res); jerr != nil {
				return jerr
			}
		} else {
			met := "met"
			if !res.TimingMet {
				met = "NOT met"
			}
			fmt.Fprintf(stdout, "trainer (%d TMs x %d clauses x %d literals, N = %d, B = %d, %d lanes) on %s:\n", res.NT, res.Clauses, 2*res.Features, res.N, res.Bits, res.Lanes, res.Device)
			fmt.Fprintf(stdout, "  logic cells %d/%d (%d LUT4, %d FF, %d carry), block RAM %d/%d, SPRAM %d, DSP %d\n",
				res.LUTs, res.LUTsAvailable, res.LUT4, res.FFs, res.Carry, res.BRAMs, res.BRAMsAvailable, res.SPRAMs, res.DSPs)
			fmt.Fprintf(stdout, "  Fmax %.2f MHz, clock %.2f MHz: timing %s\n", res.FmaxMHz, res.ClockMHz, met)
			fmt.Fprintf(stdout, "  %.1f cycles/example: %.0f examples/s at the clock, %.0f at Fmax\n", res.CyclesPerExample, res.ExamplesPerSAtClock, res.ExamplesPerSAtFmax)
			fmt.Fprintf(stdout, "  bitstream: %s\n", res.Bitstream)
		}
	}
	if err != nil && errors.Is(err, synth.ErrOptions) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}
