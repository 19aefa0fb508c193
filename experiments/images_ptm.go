package experiments

import (
	"context"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/ptm"
)

// imageSet is a set of labelled 8-bit images of one shape.
type imageSet struct {
	H, W int
	X    [][]uint8 // H*W pixels per image, row-major
	Y    []int
}

// imagePTM is a trained convolutional PTM with its input encoding and its
// fitted probability mapping, ready to be sampled.
type imagePTM struct {
	Config   convtrain.ImageConfig
	Model    *conv.Model
	Encoders []conv.Encoder // the threshold sets of a query (conv.Jitter)
	Mapping  ptm.Mapping    // fitted on the validation images
	// TrainS is the wall time of training (seconds), PeakRSSMB the peak
	// resident set of the process after training (MB), BankBytes the size
	// of the quantized bank at Config.BankBits (bankBytes).
	TrainS, PeakRSSMB float64
	BankBytes         int
}

// trainImagePTM trains the convolutional PTM of cfg (the fixed-point
// trainer, convtrain.New with cfg.Trainer and the given seed, cfg.Epochs
// epochs over train booleanized with cfg's base thresholds) and fits the
// parameter of cfg.Mapping's kind by NLL on val (K = cfg.K samples per
// image through every threshold set of conv.Jitter, fitMapping). It is
// the one train-and-fit step of the images section; `ptm train` has its
// own in golden/pipeline (the section is meant to call that one once it
// exists). progress, if set, gets (done, total) training images.
func trainImagePTM(ctx context.Context, cfg convtrain.ImageConfig, train, val *imageSet, classes int, seed uint64, progress func(done, total int)) (*imagePTM, error) {
	sh := cfg.Shape(train.H, train.W)
	base := conv.Encoder{Thresholds: cfg.Thresholds}
	X := make([][]bool, len(train.X))
	for i, img := range train.X {
		b, err := base.Booleanize(sh, img, nil)
		if err != nil {
			return nil, fmt.Errorf("training image %d: %w", i, err)
		}
		X[i] = b
	}
	tr, err := convtrain.New(cfg.Trainer(train.H, train.W, classes, seed))
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	if progress != nil {
		tr.Progress = func(done, total int) { progress(tr.Epochs*total+done, cfg.Epochs*total) }
	}
	start := time.Now()
	for e := 0; e < cfg.Epochs; e++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := tr.RunEpoch(X, train.Y); err != nil {
			return nil, fmt.Errorf("epoch %d: %w", e+1, err)
		}
	}
	p := &imagePTM{Config: cfg, Model: tr.Model(), TrainS: time.Since(start).Seconds(), PeakRSSMB: peakRSSMB()}
	bank, err := tr.Bank(cfg.BankBits)
	if err != nil {
		return nil, err
	}
	p.BankBytes = bankBytes(bank)
	if p.Encoders, err = conv.Jitter(base, cfg.JitterSets, cfg.JitterSpread); err != nil {
		return nil, err
	}
	sums, err := p.sample(ctx, val.X, cfg.K, p.Encoders, seed+1)
	if err != nil {
		return nil, fmt.Errorf("validation images: %w", err)
	}
	if p.Mapping, err = fitMapping(&p.Model.Head, sums, val.Y, cfg.K, cfg.Mapping); err != nil {
		return nil, err
	}
	return p, nil
}

// bankBytes is the size a quantized bank needs as stored: one B-bit
// threshold per TA, packed, plus one 16-bit weight per class and clause.
func bankBytes(b *conv.Bank) int {
	return (b.TAs()*b.Bits+7)/8 + 2*len(b.Weights)
}

// peakRSSMB is the peak resident set size of this process so far, in MB
// (getrusage; NaN where unavailable).
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024 // kB on Linux
}

// sampleBlock is the number of images one sampler (one seed) draws for:
// the samples do not depend on the number of workers.
const sampleBlock = 250

// sample draws K samples of every image through encs (conv.Sampler,
// RunSets) and returns each image's raw class sums (K*Classes). Block j
// of sampleBlock images uses a sampler seeded seed + j.
func (p *imagePTM) sample(ctx context.Context, imgs [][]uint8, K int, encs []conv.Encoder, seed uint64) ([][]int32, error) {
	out := make([][]int32, len(imgs))
	blocks := (len(imgs) + sampleBlock - 1) / sampleBlock
	err := parallel(ctx, blocks, func(j int) error {
		smp, err := conv.NewSampler(p.Model, seed+uint64(j))
		if err != nil {
			return err
		}
		pts := make([]*conv.Patches, len(encs))
		for i := range pts {
			pts[i] = conv.NewPatches(p.Model.Shape)
		}
		var buf []bool
		for i := j * sampleBlock; i < min(len(imgs), (j+1)*sampleBlock); i++ {
			for s, e := range encs {
				if buf, err = e.Encode(imgs[i], pts[s], buf); err != nil {
					return fmt.Errorf("image %d: %w", i, err)
				}
			}
			if out[i], err = smp.RunSets(pts, K, nil); err != nil {
				return fmt.Errorf("image %d: %w", i, err)
			}
		}
		return nil
	})
	return out, err
}

// imageQueries maps every image's K samples with mp and summarises them.
func imageQueries(h *conv.Head, sums [][]int32, K int, mp ptm.Mapping) []metrics.QueryStats {
	out := make([]metrics.QueryStats, len(sums))
	for i, s := range sums {
		out[i] = metrics.Query(h.Probs(s, K, mp))
	}
	return out
}

// fitMapping chooses the parameter of a mapping kind that minimizes the
// NLL of the K-sample predictive mean of the labelled samples: the vote
// smoothing from pipeline.FitMapping's grid (0 .. 0.3), the softmax
// temperature from T/128 to 2T in steps of 2^(1/4) (the class sums of a
// convolutional model span hundreds, not the tabular model's tens).
func fitMapping(h *conv.Head, sums [][]int32, y []int, K int, kind ptm.MappingKind) (ptm.Mapping, error) {
	var cands []ptm.Mapping
	switch kind {
	case ptm.Vote:
		for _, e := range []float64{0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3} {
			cands = append(cands, ptm.Mapping{Kind: ptm.Vote, Smoothing: e})
		}
	case ptm.Softmax:
		for e := -28; e <= 4; e++ {
			cands = append(cands, ptm.Mapping{Kind: ptm.Softmax, Temperature: float64(h.T) * math.Pow(2, float64(e)/4)})
		}
	default:
		return ptm.Mapping{}, fmt.Errorf("cannot fit mapping kind %q", kind)
	}
	if len(sums) == 0 {
		return ptm.Mapping{}, fmt.Errorf("no validation images to fit the %s mapping on", kind)
	}
	best, bestNLL := cands[0], math.Inf(1)
	for _, mp := range cands {
		nll := 0.0
		for i, s := range sums {
			q := metrics.Query(h.Probs(s, K, mp))
			nll -= math.Log(math.Max(q.Mean[y[i]], metrics.NLLFloor))
		}
		if nll < bestNLL {
			best, bestNLL = mp, nll
		}
	}
	return best, nil
}
