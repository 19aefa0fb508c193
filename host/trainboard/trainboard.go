// Package trainboard trains a PTM on a training board (rtl/trainboard:
// the on-chip trainer behind the TRAIN commands of docs/protocol.md
// section 8) through the host driver: the host shuffles every epoch with
// its shuffle lane and streams the rows, the board trains them bit for bit
// as golden/fixedtrain does, and the trained SPVs and include masses are
// read back into a model. Board.NewRowTrainer plugs into
// pipeline.TrainConfig.NewRowTrainer, so `ptm train --board` writes the
// model file `ptm train --fixed --host-shuffle` writes, byte for byte.
package trainboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
)

// ErrMismatch is wrapped when the board's trainer does not match the
// training configuration, or its read-back state is inconsistent.
var ErrMismatch = errors.New("trainboard: board does not match")

// Board is a training board behind a driver.
type Board struct {
	D   *driver.Driver
	Ctx context.Context
	// Stats, if set, is called after every model trained with the board's
	// TRAIN_INFO (progress: examples trained, trainer clocks).
	Stats func(*driver.TrainInfo)
}

// NewRowTrainer checks that the board's trainer has this configuration
// and shape, initialises its SPVs, seeds its lanes (fixedtrain.ControlSeed,
// ClauseSeed) and returns it as a pipeline.RowTrainer.
func (b *Board) NewRowTrainer(cfg fixedtrain.Config, classes, features int, binary bool) (pipeline.RowTrainer, error) {
	ctx := b.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	golden, err := fixedtrain.New(cfg, classes, features, binary)
	if err != nil {
		return nil, err
	}
	in, err := b.D.TrainInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("trainboard: %w", err)
	}
	nt := classes
	if binary {
		nt = 1
	}
	mv := fixedtrain.MovesOf(cfg.S)
	want := driver.TrainInfo{NT: nt, NC: classes, M: cfg.Clauses, O: features, T: cfg.T, N: cfg.N, B: golden.Bits(),
		Up: mv.Up, Down: mv.Down, Binary: binary, Paper: cfg.Feedback == ptm.PaperFeedback}
	got := driver.TrainInfo{NT: in.NT, NC: in.NC, M: in.M, O: in.O, T: in.T, N: in.N, B: in.B,
		Up: in.Up, Down: in.Down, Binary: in.Binary, Paper: in.Paper}
	if got != want {
		return nil, fmt.Errorf("%w: the board trains NT=%d NC=%d m=%d o=%d T=%d N=%d B=%d UP=%d DOWN=%d binary=%v paper=%v; this run needs NT=%d NC=%d m=%d o=%d T=%d N=%d B=%d UP=%d DOWN=%d binary=%v paper=%v (start the board with the run's shape: ptm board --trainer)",
			ErrMismatch, got.NT, got.NC, got.M, got.O, got.T, got.N, got.B, got.Up, got.Down, got.Binary, got.Paper,
			want.NT, want.NC, want.M, want.O, want.T, want.N, want.B, want.Up, want.Down, want.Binary, want.Paper)
	}
	if in.LL < 1 {
		return nil, fmt.Errorf("%w: %d literal lanes", ErrMismatch, in.LL)
	}
	g := (2*features + in.LL - 1) / in.LL
	if in.IncDepth != nt*cfg.Clauses*g || in.SPVDepth != in.IncDepth*2*cfg.N {
		return nil, fmt.Errorf("%w: %d SPV words and %d include masses per lane, want %d and %d", ErrMismatch,
			in.SPVDepth, in.IncDepth, nt*cfg.Clauses*g*2*cfg.N, nt*cfg.Clauses*g)
	}
	if err := b.D.TrainInit(ctx); err != nil {
		return nil, fmt.Errorf("trainboard: %w", err)
	}
	seeds := []uint64{fixedtrain.ControlSeed(cfg.Seed)}
	for c := 0; c < nt*cfg.Clauses; c++ {
		seeds = append(seeds, fixedtrain.ClauseSeed(cfg.Seed, c))
	}
	if err := b.D.TrainSeed(ctx, 0, seeds); err != nil {
		return nil, fmt.Errorf("trainboard: %w", err)
	}
	return &run{b: b, ctx: ctx, golden: golden, info: in, groups: g, clauses: nt * cfg.Clauses, lits: 2 * features, n: cfg.N}, nil
}

type run struct {
	b       *Board
	ctx     context.Context
	golden  *fixedtrain.Trainer // holds the read-back state for export
	info    *driver.TrainInfo
	trained uint32
	groups  int
	clauses int
	lits    int
	n       int
}

func (r *run) TrainRows(X [][]bool, y []int) error {
	t, err := r.b.D.TrainRows(r.ctx, r.trained, X, y)
	r.trained = t
	if err != nil {
		return fmt.Errorf("trainboard: %w", err)
	}
	return nil
}

// Trained reads every SPV word, include mass and threshold back, checks
// the thresholds against min(I, 2^B - 1) and exports the model.
func (r *run) Trained(epochs int) (*ptm.Model, *fixed.Bank, error) {
	ll := r.info.LL
	spvL := make([][]uint16, ll)
	incL := make([][]uint16, ll)
	thrL := make([][]uint16, ll)
	for k := 0; k < ll; k++ {
		var err error
		if spvL[k], err = r.b.D.TrainRead(r.ctx, driver.ReadSPV, k, 0, r.info.SPVDepth); err != nil {
			return nil, nil, fmt.Errorf("trainboard: %w", err)
		}
		if incL[k], err = r.b.D.TrainRead(r.ctx, driver.ReadInclude, k, 0, r.info.IncDepth); err != nil {
			return nil, nil, fmt.Errorf("trainboard: %w", err)
		}
		if thrL[k], err = r.b.D.TrainRead(r.ctx, driver.ReadThreshold, k, 0, r.info.IncDepth); err != nil {
			return nil, nil, fmt.Errorf("trainboard: %w", err)
		}
	}
	n2 := 2 * r.n
	spv := make([]uint16, r.clauses*r.lits*n2)
	inc := make([]uint16, r.clauses*r.lits)
	maxT := uint16(1)<<uint(r.golden.Bits()) - 1
	for c := 0; c < r.clauses; c++ {
		for i := 0; i < r.lits; i++ {
			ta := c*r.lits + i
			lane, a := i%ll, c*r.groups+i/ll
			copy(spv[ta*n2:(ta+1)*n2], spvL[lane][a*n2:(a+1)*n2])
			inc[ta] = incL[lane][a]
			if want := min(inc[ta], maxT); thrL[lane][a] != want {
				return nil, nil, fmt.Errorf("%w: TA (clause %d, literal %d): threshold %d read back, include mass %d gives %d", ErrMismatch, c, i, thrL[lane][a], inc[ta], want)
			}
		}
	}
	if err := r.golden.Restore(spv, inc); err != nil {
		return nil, nil, fmt.Errorf("trainboard: read back: %w", err)
	}
	r.golden.Epochs = epochs
	if r.b.Stats != nil {
		if in, err := r.b.D.TrainInfo(r.ctx); err == nil {
			r.b.Stats(in)
		}
	}
	m, err := r.golden.Model()
	if err != nil {
		return nil, nil, err
	}
	bank, err := r.golden.Bank()
	return m, bank, err
}
