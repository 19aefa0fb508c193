package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// CheckConvFit checks that a convolutional board (its INFO words,
// protocol version 7) can run bank with K samples in mode. The error
// names what differs.
func CheckConvFit(in *frame.Info, bank *conv.Bank, k int, mode frame.Mode) error {
	if !in.IsConv() {
		return fmt.Errorf("stream: the model is convolutional, the board serves a tabular model (protocol version %d, INFO kind %d): %v", in.Version, in.Kind, in)
	}
	if sh := in.ConvShape(); sh != bank.Shape {
		return fmt.Errorf("stream: the board is built for %dx%d images of %d planes with a %dx%d window, the model for %dx%d of %d with %dx%d (board: %v)",
			sh.H, sh.W, sh.Planes, sh.WY, sh.WX, bank.Shape.H, bank.Shape.W, bank.Shape.Planes, bank.Shape.WY, bank.Shape.WX, in)
	}
	for _, c := range []struct {
		what       string
		board, mdl int
	}{
		{"classes (NC)", int(in.NC), bank.Classes}, {"clauses (C)", int(in.M), bank.Clauses}, {"T", int(in.T), bank.T}, {"probability bits (B)", int(in.B), bank.Bits},
	} {
		if c.board != c.mdl {
			return fmt.Errorf("stream: the board is built for %d %s, the model has %d (board: %v)", c.board, c.what, c.mdl, in)
		}
	}
	hw := in.HW()
	if err := conv.CheckHW(&bank.Head, hw); err != nil {
		return fmt.Errorf("stream: the board's lanes do not fit the model: %w", err)
	}
	if d := conv.LayoutOf(&bank.Head, hw).Depth; d != int(in.D) {
		return fmt.Errorf("stream: the board reports bank depth D = %d, but %d clause x %d literal lanes need %d for this model", in.D, in.LC, in.LL, d)
	}
	if k < 1 || k > int(in.KMax) || k > 0xffff {
		return fmt.Errorf("stream: K = %d, the board accepts 1..%d", k, in.KMax)
	}
	if mode == frame.ModeSums && bank.T > 1<<15-1 {
		return fmt.Errorf("stream: T = %d does not fit the i16 items of sums mode; use samples or stats mode", bank.T)
	}
	if n := in.ResultBytes(mode, k); n > frame.MaxResponseBytes {
		return fmt.Errorf("stream: K = %d in %v mode gives %d result bytes per image, more than one response can carry (%d); use stats or votes mode or a smaller K", k, mode, n, frame.MaxResponseBytes)
	}
	return nil
}

// RunConv streams images (H*W 8-bit pixels each, row-major) through the
// convolutional board behind t with the model of f, as Run does for
// tabular rows: each image is booleanized on the host with every
// threshold set of the model (f.Sets(), docs/fixed-point-conv.md section
// 6) and sent as one INFER query of M feature vectors of P*H*W bits
// (docs/protocol.md section 4, "Image queries"); image i is queried with
// seed cfg.Seed + its row id, as `ptm eval --fixed` does. Every answer is
// checked word for word against the golden conv.Core. cfg.K 0 means the
// model's K. hash is the model file's hash or "".
func RunConv(ctx context.Context, t transport.Transport, f *modelfile.ConvFile, hash string, images [][]uint8, cfg Config) (*Summary, error) {
	if f == nil {
		return nil, fmt.Errorf("stream: no convolutional model")
	}
	if cfg.K == 0 {
		cfg.K = f.K
	}
	cfg, err := checkCommon(cfg, len(images), f.Head.Classes)
	if err != nil {
		return nil, err
	}
	sets, err := f.Sets()
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	sh := f.Head.Shape
	enc := make([][][]bool, len(images))
	for i, img := range images {
		xs := make([][]bool, len(sets))
		for m, e := range sets {
			if xs[m], err = e.Booleanize(sh, img, nil); err != nil {
				return nil, fmt.Errorf("stream: image %d: %w", rowID(cfg, i), err)
			}
		}
		enc[i] = xs
	}
	d := driver.New(t, cfg.Driver)
	defer d.Close()
	s := &Summary{Requested: len(images), Mode: cfg.Mode.String(), K: cfg.K, Seed: cfg.Seed}
	s.Board.Link = t.Name()
	s.Board.ModelHash = hash
	in, err := connect(ctx, d, t, cfg)
	if err != nil {
		return nil, err
	}
	if !in.IsConv() {
		return nil, fmt.Errorf("stream: the model is convolutional, the board serves a tabular model (protocol version %d, INFO kind %d): %v", in.Version, in.Kind, in)
	}
	if err := fixed.CheckBits(int(in.B)); err != nil {
		return nil, fmt.Errorf("stream: the board's probability width: %w", err)
	}
	bank, err := f.Bank(int(in.B))
	if err != nil {
		return nil, fmt.Errorf("stream: the model's bank at the board's %d bits: %w", in.B, err)
	}
	if err := CheckConvFit(in, bank, cfg.K, cfg.Mode); err != nil {
		return nil, err
	}
	M := len(sets)
	subs := subRequests(enc, M, int(in.MMax), cfg)
	if M > 1 && int(in.MMax) < M {
		s.Board.Warnings = append(s.Board.Warnings, fmt.Sprintf("the board runs at most %d sets per query (INFO MMAX), the model has %d: one request per set", in.MMax, M))
	}
	if in, err = upload(ctx, d, s, in, frame.ConvBankWords(bank, in.HW()), cfg); err != nil {
		return nil, err
	}
	describeBoard(s, t, in, hash)
	core, err := conv.NewCore(bank, in.HW())
	if err != nil {
		return nil, fmt.Errorf("stream: golden core: %w", err)
	}
	want, err := goldenConvAnswers(core, sh, subs, cfg, bank.T)
	if err != nil {
		return nil, err
	}
	status0, err := d.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	link0, drv0 := t.Stats(), d.Stats()
	start := time.Now()
	results, streamErr := streamAll(ctx, d, subs, want, cfg)
	wall := time.Since(start)
	linkFigures(s, t.Stats().Sub(link0), d.Stats(), drv0, wall)
	boardCounters(ctx, s, d, in, status0, d.Stats().Completed-drv0.Completed)

	// The board's class sums are the fixed-point core's at its width:
	// the file's mapping fitted on them when the width is the bank's.
	mapping := rowMapping(s, f.MappingAt(int(in.B)), cfg)
	hd := bank.Head
	mv := modelView{classes: hd.Classes, tms: hd.Classes, sets: M, probs: func(sums []int, K int, mp ptm.Mapping) [][]float64 {
		v := make([]int32, len(sums))
		for k, x := range sums {
			v[k] = int32(x)
		}
		return hd.Probs(v, K, mp)
	}}
	if err := checkRows(s, mv, cfg, mapping, len(images), subs, results, want, streamErr); err != nil {
		return s, err
	}
	if wall > 0 {
		s.QueriesPerS = float64(s.Queries) / wall.Seconds()
	}
	if streamErr != nil {
		return s, fmt.Errorf("stream: %w", streamErr)
	}
	return s, nil
}

// goldenConvAnswers runs the golden convolutional core for every request:
// the result words the board must send (conv.Core.RunSets on the
// request's booleanized images).
func goldenConvAnswers(core *conv.Core, sh conv.Shape, subs []subRequest, cfg Config, T int) ([][]uint32, error) {
	want := make([][]uint32, len(subs))
	var sums []int32
	var pts []*conv.Patches
	for j, sb := range subs {
		for len(pts) < len(sb.xs) {
			pts = append(pts, conv.NewPatches(sh))
		}
		for m, x := range sb.xs {
			if err := pts[m].Fill(x); err != nil {
				return nil, fmt.Errorf("stream: image %d set %d: %w", rowID(cfg, sb.row), sb.set+m, err)
			}
		}
		var st fixed.Stats
		var err error
		sums, st, err = core.RunSets(pts[:len(sb.xs)], sb.k, sb.seed, sums)
		if err != nil {
			return nil, fmt.Errorf("stream: golden run of image %d set %d: %w", rowID(cfg, sb.row), sb.set, err)
		}
		want[j] = frame.ResultWords(cfg.Mode, T, sums, st)
	}
	return want, nil
}
