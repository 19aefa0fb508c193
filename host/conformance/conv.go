package conformance

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// CheckConv checks a convolutional board (protocol version 7,
// docs/protocol.md section 4 "Image queries") with bank: INFO's kind,
// image shape and depth, the upload of thresholds and weights (the
// upload rules themselves are Check's), a wrong commit CRC refused, the
// INFER refusals that protect the board, and bit-exact results against
// the golden conv.Core for random booleanized images in every mode, with
// 1..MMAX sets per query, several queries per INFER, and INFER_WINDOW
// windows. It leaves the board loaded with bank. opts.Garbage is not
// used.
func CheckConv(ctx context.Context, t transport.Transport, bank *conv.Bank, opts Opts) (*Report, error) {
	if opts.Queries <= 0 {
		opts.Queries = 50
	}
	dopts := opts.Driver
	dopts.Window = 1
	d := driver.New(t, dopts)
	defer d.Close()
	c := &checker{ctx: ctx, d: d, t: t, opts: opts, rep: &Report{}, strict: opts.Strict}
	in, err := d.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("conformance: INFO: %w", err)
	}
	c.in, c.rep.Info = in, *in
	c.add("INFO magic, version and shape are sane", nil)
	if !in.IsConv() {
		return c.rep, fmt.Errorf("conformance: the board is not convolutional (protocol %d, kind %d): %v", in.Version, in.Kind, in)
	}
	if in.ConvShape() != bank.Shape || int(in.NC) != bank.Classes || int(in.M) != bank.Clauses || int(in.T) != bank.T || int(in.B) != bank.Bits {
		return c.rep, fmt.Errorf("conformance: the bank (%+v, %d classes, %d clauses, T %d, %d bits) does not fit the board (%v)", bank.Shape, bank.Classes, bank.Clauses, bank.T, bank.Bits, in)
	}
	hw := in.HW()
	var derr error
	if dd := conv.LayoutOf(&bank.Head, hw).Depth; dd != int(in.D) {
		derr = fmt.Errorf("D = %d, want %d", in.D, dd)
	}
	c.add("INFO D equals the depth of the convolutional layout", derr)
	words := frame.ConvBankWords(bank, hw)
	crc := frame.WordsCRC(words)
	u32 := func(v ...uint32) []byte { return frame.AppendWords(nil, v) }
	if len(words) != in.BankWords() {
		c.add("INFO's bank words are L*D + NC*C", fmt.Errorf("%d words, INFO says %d", len(words), in.BankWords()))
	}
	c.add("upload of the thresholds and weights", d.Load(ctx, words))
	c.expectError("LOAD_COMMIT with a wrong CRC", frame.TypeLoadCommit, u32(uint32(len(words)), crc^1), frame.CodeCommitMismatch, 0, true)
	if in2, err := d.Info(ctx); err != nil {
		c.add("INFO after the upload", err)
	} else if in2.Loaded != 1 || in2.ModelCRC != crc {
		c.add("INFO after the upload", fmt.Errorf("loaded = %d, CRC 0x%08x; want 1, 0x%08x", in2.Loaded, in2.ModelCRC, crc))
	} else {
		c.add("INFO after the upload", nil)
	}
	fb := in.FeatureBytes()
	infer := func(mode frame.Mode, k, count int) []byte {
		return (&frame.InferRequest{Mode: mode, K: uint16(k), Seed: 1, Count: uint16(count), Features: make([]byte, count*fb)}).AppendTo(nil)
	}
	c.expectError("INFER K = 0", frame.TypeInfer, infer(frame.ModeStats, 0, 1), frame.CodeBadK, 0, true)
	c.expectError("INFER one image byte short", frame.TypeInfer, infer(frame.ModeStats, 1, 1)[:frame.InferHeaderLen+fb-1], frame.CodeBadLength, 0, true)
	if in.MMax < 255 {
		bad := infer(frame.ModeStats, 1, int(in.MMax)+1) // one query of MMAX+1 images (sets)
		bad[1], bad[8] = byte(in.MMax+1), 1
		c.expectError("INFER with MMAX+1 sets", frame.TypeInfer, bad, frame.CodeBadLength, 0, true)
	}

	core, err := conv.NewCore(bank, hw)
	if err != nil {
		return c.rep, fmt.Errorf("conformance: golden core: %w", err)
	}
	sh := bank.Shape
	rng := rand.New(rand.NewPCG(7, 8))
	randImage := func() ([]bool, *conv.Patches) { // a random booleanized image and its patches
		x := make([]bool, sh.Planes*sh.Pixels())
		for j := range x {
			x[j] = rng.IntN(3) == 0
		}
		pt := conv.NewPatches(sh)
		_ = pt.Fill(x)
		return x, pt
	}
	golden := func(mode frame.Mode, pts []*conv.Patches, k int, seed uint32) []uint32 {
		sums, st, _ := core.RunSets(pts, k, seed, nil)
		return frame.ResultWords(mode, bank.T, sums, st)
	}
	mmax := max(1, min(int(in.MMax), 4))
	kmax := min(int(in.KMax), 32)
	for _, mode := range []frame.Mode{frame.ModeStats, frame.ModeSamples, frame.ModeVotes, frame.ModeSums} {
		var reqs []driver.Request
		var pts [][]*conv.Patches
		for i := range opts.Queries {
			sets := 1 + i%mmax
			var q []*conv.Patches
			var feats []byte
			for range sets {
				x, pt := randImage()
				q = append(q, pt)
				feats = frame.PackFeatures(feats, x)
			}
			pts = append(pts, q)
			reqs = append(reqs, driver.Request{Index: i, Features: feats, Sets: sets, K: 1 + rng.IntN(kmax), Seed: rng.Uint32(), Mode: mode})
		}
		res, err := d.InferAll(ctx, reqs)
		name := fmt.Sprintf("%d image INFER results in %v mode (1..%d sets) equal the golden conv.Core", len(reqs), mode, mmax)
		if err != nil {
			c.add(name, err)
			continue
		}
		var bad error
		for i, r := range res {
			want := golden(mode, pts[i], reqs[i].K, reqs[i].Seed)
			if r.Err != nil {
				bad = fmt.Errorf("request %d: %w", i, r.Err)
			} else if !equal(r.Words, want) {
				bad = fmt.Errorf("request %d (%d sets, K %d, seed %d): %d words %v..., golden %d words %v...", i, reqs[i].Sets, reqs[i].K, reqs[i].Seed, len(r.Words), head(r.Words), len(want), head(want))
			}
			if bad != nil {
				break
			}
		}
		c.add(name, bad)
	}
	// Several queries in one INFER (query i with seed + i) and windows of
	// its answer.
	const count = 3
	var feats []byte
	var pts []*conv.Patches
	for range count {
		x, pt := randImage()
		pts = append(pts, pt)
		feats = frame.PackFeatures(feats, x)
	}
	seed := rng.Uint32() | 0xffff0000
	for _, mode := range []frame.Mode{frame.ModeSamples, frame.ModeStats, frame.ModeVotes, frame.ModeSums} {
		q := frame.InferRequest{Mode: mode, K: uint16(min(kmax, 5)), Seed: seed, Count: count, Features: feats}
		ib := in.ItemBytes(mode, int(q.K))
		var want []uint32
		for i, pt := range pts {
			want = append(want, golden(mode, []*conv.Patches{pt}, int(q.K), seed+uint32(i))...)
		}
		gold := frame.AppendItems(nil, want, ib)
		name := fmt.Sprintf("multi-image INFER in %v mode: image i uses seed + i", mode)
		if p := c.expectOK(name, frame.TypeInfer, q.AppendTo(nil), nil); p != nil && !bytes.Equal(p, gold) {
			c.add(name+": items", fmt.Errorf("% x..., golden % x...", p[:min(len(p), 16)], gold[:min(len(gold), 16)]))
		}
		if !in.Windows() {
			continue
		}
		n := uint16(len(want))
		var werr error
		for _, w := range []frame.Window{{First: 0, Count: n}, {First: 1, Count: 2}, {First: n / 2, Count: n / 3}, {First: n - 1, Count: 5}, {First: n, Count: 1}, {First: 0, Count: 0}} {
			rt, p, err := d.Exec(ctx, frame.TypeInferWindow, frame.AppendInferWindow(nil, q.AppendTo(nil), w))
			switch wantp := w.Select(gold, ib); {
			case err != nil:
				werr = fmt.Errorf("window [%d, +%d): %w", w.First, w.Count, err)
			case rt != frame.TypeInferWindow.Response():
				werr = fmt.Errorf("window [%d, +%d): response type %v", w.First, w.Count, rt)
			case !bytes.Equal(p, wantp):
				werr = fmt.Errorf("window [%d, +%d) of %d items: % x, golden % x", w.First, w.Count, n, p[:min(len(p), 16)], wantp[:min(len(wantp), 16)])
			}
			if werr != nil {
				break
			}
		}
		c.add(fmt.Sprintf("image INFER_WINDOW in %s mode: every window is that slice of the golden answer", mode), werr)
	}
	return c.rep, nil
}
