package experiments

import (
	"context"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/ptmhw/ptm/golden/conv/convtrain"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
)

// imageSet is a set of labelled 8-bit images of one shape: rows Rows of
// the data set Data (pipeline.TrainConv and pipeline.SampleConv take
// those) with their pixels as bytes (X, the baselines' input) and labels.
type imageSet struct {
	H, W int
	Data *pipeline.Data
	Rows []int
	X    [][]uint8 // H*W pixels per image, row-major
	Y    []int
}

// imagePTM is a convolutional PTM trained by pipeline.TrainConv (the
// train-and-fit step of `ptm train` on image data): its model file with
// the mapping fitted on the carved validation rows.
type imagePTM struct {
	Config convtrain.ImageConfig
	File   *modelfile.ConvFile
	// TrainS is the wall time of TrainConv (training and the mapping's fit,
	// seconds), PeakRSSMB the peak resident set of the process after it
	// (MB), ModelBytes the size of the encoded model file
	// (modelfile.EncodeConv).
	TrainS, PeakRSSMB float64
	ModelBytes        int
}

// trainImagePTM trains the convolutional PTM of cfg on the training
// images of train with pipeline.TrainConv (the model file records test's
// rows as its test split): it carves
// pipeline.DefaultConvValRows (at most a tenth) stratified validation rows
// from them, seeded with seed, trains on the rest and fits the mapping's
// parameter on the carve. progress, if set, gets (done, total) training
// images over all epochs.
func trainImagePTM(ctx context.Context, cfg convtrain.ImageConfig, train, test *imageSet, seed uint64, progress func(done, total int)) (*imagePTM, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data := &pipeline.Data{Dataset: train.Data.Dataset, FixedTrain: train.Rows, FixedTest: test.Rows}
	cc := pipeline.ConvConfig{Recipe: cfg, Seed: seed}
	if progress != nil {
		epoch := 0
		cc.Progress = func(e, _ int) { epoch = e }
		cc.RowProgress = func(done, total int) { progress(epoch*total+done, cfg.Epochs*total) }
	}
	start := time.Now()
	f, err := pipeline.TrainConv(data, cc)
	if err != nil {
		return nil, err
	}
	p := &imagePTM{Config: cfg, File: f, TrainS: time.Since(start).Seconds(), PeakRSSMB: peakRSSMB()}
	b, err := modelfile.EncodeConv(f)
	if err != nil {
		return nil, fmt.Errorf("encode the model file: %w", err)
	}
	p.ModelBytes = len(b)
	return p, ctx.Err()
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
