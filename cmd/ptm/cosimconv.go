package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/convcosim"
)

// convCosimJSON is `ptm cosim --json`'s object for a convolutional model.
type convCosimJSON struct {
	*convcosim.Result
	Model        string `json:"model"`
	Data         string `json:"data"`
	Split        string `json:"split,omitempty"`
	Images       int    `json:"images"`
	K            int    `json:"k"`
	ClauseLanes  int    `json:"clause_lanes"`
	LiteralLanes int    `json:"literal_lanes"`
	LFSRWidth    int    `json:"lfsr_width"`
	PatchLanes   int    `json:"patch_lanes"`
}

// convHW is the conv core's hardware from the flags: `ptm eval --fixed`'s
// defaults (the file's bank bits, the default LFSR width, 8 x 8 lanes)
// where a flag is not given.
func convHW(fs *flag.FlagSet, f *modelfile.ConvFile, hf *hwFlags) (conv.HW, error) {
	h := pipeline.DefaultConvHW(&f.Head, f.BankBits)
	if isSet(fs, "bits") {
		h.Bits = hf.bits
	}
	if isSet(fs, "lfsr-width") {
		h.LFSRWidth = hf.width
	}
	if isSet(fs, "clause-lanes") {
		h.ClauseLanes = hf.lc
	}
	if isSet(fs, "literal-lanes") {
		h.LiteralLanes = hf.ll
	}
	if isSet(fs, "lanes") {
		return h, fmt.Errorf("%w: --lanes: a convolutional core takes --clause-lanes and --literal-lanes (default %d and %d)", errUsage, convClauseLanes, convLiteralLanes)
	}
	if err := conv.CheckHW(&f.Head, h); err != nil {
		return h, fmt.Errorf("%w: %v", errUsage, err)
	}
	return h, nil
}

// genConv writes the convolutional core of model file f into dir.
func genConv(fs *flag.FlagSet, f *modelfile.ConvFile, hash string, hf *hwFlags, dir string, init bool, stdout io.Writer) error {
	h, err := convHW(fs, f, hf)
	if err != nil {
		return err
	}
	scan, err := hf.convScan()
	if err != nil {
		return err
	}
	bank, err := f.Bank(h.Bits)
	if err != nil {
		return err
	}
	cfg := hw.Config{Bits: h.Bits, LFSRWidth: h.LFSRWidth, ClauseLanes: h.ClauseLanes, LiteralLanes: h.LiteralLanes, MaxK: hf.maxK, Prefix: hf.prefix, InitBanks: init, PatchLanes: hf.pn, Scan: scan}
	d, err := hw.GenerateConv(cfg, bank, hash)
	if err != nil {
		return err
	}
	if err := d.Write(dir); err != nil {
		return err
	}
	p := d.Params
	fmt.Fprintf(stdout, "generated %s (generator %s) in %s: %d files\n", d.Top(), hw.Version, dir, len(d.Files))
	fmt.Fprintf(stdout, "  shape: %dx%d image x %d planes, %dx%d window, %d patches, %d clauses x %d literals = %d TAs, %d classes (%s)\n",
		p.H, p.W, p.P, p.WY, p.WX, p.NP, p.C, p.Lit, p.C*p.Lit, p.NC, p.Structure)
	fmt.Fprintf(stdout, "  hardware: B=%d, W=%d, L=%d (%d clause x %d literal lanes), threshold memory %d rows x %d bits, weights %d rows x %d bits, MaxK=%d\n",
		p.Bits, p.LW, p.L, p.LC, p.LL, p.D, p.L*p.Bits, p.WDepth, p.NC*hw.ConvWeightBits, p.MaxK)
	fmt.Fprintf(stdout, "  one sample takes %d groups x max(%d sampling, %d + up to %d scan (%s scan, %d patches per cycle), %d weighing) cycles, at most %d\n", p.G, p.BT+1, p.ScanOverhead(), p.ScanCycles(), p.Scan, p.PN, p.LC+2, p.SampleCyclesMax())
	return nil
}

// cosimConv co-simulates the convolutional core of model file f (already
// read) on n images of --data (or random images without it), K samples
// each, every threshold set of the model's encoding a request of its own
// (docs/fixed-point-conv.md 6: the samples of a query concatenated).
func cosimConv(fs *flag.FlagSet, path string, f *modelfile.ConvFile, hash string, hf *hwFlags, data, split string, n, K int, seed uint64, ready int, asJSON bool, stdout, stderr io.Writer) error {
	if isSet(fs, "mode") || isSet(fs, "sets") || isSet(fs, "trace") || isSet(fs, "lanes") {
		return fmt.Errorf("%w: a convolutional model takes neither --mode (the core returns per-sample class sums), --sets (the model's own), --trace nor --lanes (give --clause-lanes and --literal-lanes)", errUsage)
	}
	if seed > math.MaxUint32 {
		return fmt.Errorf("%w: --seed %d: the core takes a 32-bit seed", errUsage, seed)
	}
	h, err := convHW(fs, f, hf)
	if err != nil {
		return err
	}
	scan, err := hf.convScan()
	if err != nil {
		return err
	}
	bank, err := f.Bank(h.Bits)
	if err != nil {
		return err
	}
	sets, err := f.Sets()
	if err != nil {
		return err
	}
	sh := f.Head.Shape
	var reqs []convcosim.Request
	images := 0
	add := func(img []uint8, q uint32) error {
		images++
		for m, e := range sets {
			km := conv.SetSamples(K, len(sets), m)
			if km == 0 {
				continue
			}
			planes, err := e.Booleanize(sh, img, nil)
			if err != nil {
				return err
			}
			reqs = append(reqs, convcosim.Request{Planes: planes, K: km, Seed: conv.SetSeed(q, m)})
		}
		return nil
	}
	if data != "" {
		d, err := pipeline.LoadDataProgress(data, "", newProgress(stderr, "loading "+data).bytes)
		if err != nil {
			return err
		}
		rows, err := pipeline.ConvRows(f, d, split)
		if err != nil {
			return err
		}
		if d.Image.Rows != sh.H || d.Image.Cols != sh.W {
			return fmt.Errorf("%q has %dx%d images, the model takes %dx%d", data, d.Image.Rows, d.Image.Cols, sh.H, sh.W)
		}
		for _, r := range rows[:min(n, len(rows))] {
			img := make([]uint8, len(d.X[r]))
			for i, v := range d.X[r] {
				img[i] = uint8(math.Max(0, math.Min(255, math.Round(v))))
			}
			// The row's seed, as `ptm eval --fixed` draws it.
			if err := add(img, uint32(seed)+uint32(r)); err != nil {
				return err
			}
		}
	} else {
		rng := rand.New(rand.NewPCG(seed, 0x636f_6e76_636f_7369)) // "convcosi"
		for i := 0; i < n; i++ {
			img := make([]uint8, sh.Pixels())
			for j := range img {
				img[j] = uint8(rng.IntN(256))
			}
			if err := add(img, rng.Uint32()); err != nil {
				return err
			}
		}
	}
	bar := newProgress(stderr, "co-simulating")
	cfg := hw.Config{Bits: h.Bits, LFSRWidth: h.LFSRWidth, ClauseLanes: h.ClauseLanes, LiteralLanes: h.LiteralLanes, MaxK: hf.maxK, Prefix: hf.prefix, PatchLanes: hf.pn, Scan: scan}
	res, err := convcosim.Run(convcosim.Options{Bank: bank, Config: cfg, ModelHash: hash, Requests: reqs, Ready: ready, Seed: seed, Progress: bar.update})
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(stdout, convCosimJSON{Result: res, Model: path, Data: data, Split: split, Images: images, K: K,
			ClauseLanes: h.ClauseLanes, LiteralLanes: h.LiteralLanes, LFSRWidth: h.LFSRWidth, PatchLanes: max(hf.pn, 1)}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "co-simulated %d images (%d requests), %d samples, %d class-sum words: %d mismatches; %.1f cycles per sample on %d x %d lanes (B=%d, W=%d, %s scan, %d patches per cycle); build %.1fs%s, simulation %.1fs\n",
			images, res.Requests, res.SamplesCompared, res.WordsCompared, res.Mismatches, res.CyclesPerSample, h.ClauseLanes, h.LiteralLanes, h.Bits, h.LFSRWidth, res.Scan, max(hf.pn, 1), res.BuildTime, cachedNote(res.BuildCached), res.SimTime)
	}
	if res.Mismatches > 0 {
		if m := res.FirstMismatch; m != nil {
			fmt.Fprintf(stderr, "first mismatch: request %d, sample %d: expected %v, got %v %s\n", m.Request, m.Sample, m.Expected, m.Actual, m.Note)
		}
		return fmt.Errorf("%d mismatches between the RTL and the golden model", res.Mismatches)
	}
	return nil
}
