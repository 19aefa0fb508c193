package synth

import (
	"errors"
	"os"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// irisTrainer is the trainer of the Iris shape (3 TMs x 20 clauses x 24
// Boolean features, T = 10) at N = 8, s = 2, B = 15, 4 literal lanes.
func irisTrainer(t *testing.T, spram bool) *hw.TrainerDesign {
	t.Helper()
	d, err := hw.GenerateTrainer(hw.Config{Bits: 15}, fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 24, T: 10},
		hw.TrainParams{N: 8, S: 2, Feedback: ptm.ConsistentFeedback, SPRAM: spram})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTrainerErrors: RunTrainer refuses what it cannot build before any
// tool runs.
func TestTrainerErrors(t *testing.T) {
	ctx := testenv.Context(t)
	for _, c := range []struct {
		o    TrainerOptions
		want error
	}{
		{TrainerOptions{Device: "up5k", Dir: t.TempDir()}, ErrOptions},
		{TrainerOptions{Design: irisTrainer(t, false), Device: "up5k", Dir: t.TempDir()}, ErrOptions},
		{TrainerOptions{Design: irisTrainer(t, true), Device: "hx8k", Dir: t.TempDir()}, ErrOptions},
		{TrainerOptions{Design: irisTrainer(t, true), Device: "ecp5", Dir: t.TempDir()}, ErrDevice},
		{TrainerOptions{Design: irisTrainer(t, true), Device: "up5k"}, ErrOptions},
	} {
		if _, err := RunTrainer(ctx, c.o); !errors.Is(err, c.want) {
			t.Errorf("device %q: %v, want %v", c.o.Device, err, c.want)
		}
	}
}

// TestTrainerFlow synthesizes the Iris trainer for the UP5K (about 3
// minutes: long tests only): it fits with its four SPRAMs and meets
// timing at 24 MHz (docs/fixed-point-training.md 11).
func TestTrainerFlow(t *testing.T) {
	testenv.SkipUnlessLong(t, "trainer place and route")
	needTools(t, Tools...)
	dir := t.TempDir()
	res, err := RunTrainer(testenv.Context(t), TrainerOptions{Design: irisTrainer(t, true), Device: "up5k", FreqMHz: 24,
		Seed: 1, CyclesPerExample: 4000, Dir: dir, Progress: newProgress(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d/%d LCs, %d BRAM, %d SPRAM, %d DSP, Fmax %.1f MHz, %.0f examples/s at %.0f MHz",
		res.LUTs, res.LUTsAvailable, res.BRAMs, res.SPRAMs, res.DSPs, res.FmaxMHz, res.ExamplesPerSAtClock, res.ClockMHz)
	switch {
	case res.SPRAMs != 4 || res.SPVWordsPerLane != 11520:
		t.Errorf("%d SPRAMs for %d words per lane, want 4 for 11,520", res.SPRAMs, res.SPVWordsPerLane)
	case res.LUTs < 1000 || res.LUTs > res.LUTsAvailable || res.BRAMs < 12 || res.BRAMs > 30:
		t.Errorf("%d LCs, %d BRAMs: out of range", res.LUTs, res.BRAMs)
	case !res.TimingMet || res.FmaxMHz < 24:
		t.Errorf("Fmax %.1f MHz, timing met %v at 24 MHz", res.FmaxMHz, res.TimingMet)
	case res.ExamplesPerSAtClock != 24e6/4000:
		t.Errorf("%.0f examples/s at 24 MHz, want 6,000", res.ExamplesPerSAtClock)
	}
	if fi, err := os.Stat(res.Bitstream); err != nil || fi.Size() < 100_000 {
		t.Errorf("bitstream %s: %v", res.Bitstream, err)
	}
}
