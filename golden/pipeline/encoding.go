package pipeline

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/booleanize"
	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// DefaultEncoding is the input encoding `ptm train` uses when no encoding
// flag is given: 8 threshold sets jittered by 0.15 feature standard
// deviations, and whole-row reversion beyond 1..3 standard deviations
// outside the training range. It was chosen on validation rows carved from
// the training rows of 20 splits of iris, wine and breast cancer
// (docs/uncertainty.md).
var DefaultEncoding = Encoding{Sets: 8, Bandwidth: 0.15, Margin: 1, WholeRow: true}

// DefaultCalibrate tells whether the default protocol fits the parameter
// of DefaultMapping's kind (vote smoothing or softmax temperature) by
// cross-validation on the training rows (ProtocolConfig.Calibrate,
// Calibrate) instead of using DefaultMapping as is. The experiments' "ptm"
// model follows it.
var DefaultCalibrate = true

// augmenter returns the function that gives the training inputs of each
// epoch. Without sets it is X every epoch (the plain PTM, unchanged). With
// M sets every training row is encoded by one set drawn uniformly per row
// and epoch from a PCG seeded with the training seed ("PTMaug!!"), so the
// automata learn from inputs jittered the way inference samples them.
func augmenter(sets *booleanize.Sets, tr *dataset.Dataset, X [][]bool, seed uint64) (func() [][]bool, error) {
	if sets == nil {
		return func() [][]bool { return X }, nil
	}
	M := sets.M()
	enc := make([][][]bool, M)
	for m := range M {
		enc[m] = make([][]bool, len(tr.X))
		for i, x := range tr.X {
			v, err := sets.Encode(m, x, nil)
			if err != nil {
				return nil, fmt.Errorf("pipeline: training row %d: %w", i, err)
			}
			enc[m][i] = v
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5054_4d61_7567_2121))
	out := make([][]bool, len(X))
	return func() [][]bool {
		for i := range out {
			out[i] = enc[rng.IntN(M)][i]
		}
		return out
	}, nil
}

// SampleRow draws K samples (raw class sums, K*NT) for one raw row of data
// through the model's input encoding: every set encodes the row and draws
// its share of the K samples (ptm.Sampler.SampleSets).
func SampleRow(f *modelfile.File, s *ptm.Sampler, x []float64, K int, dst []int) ([]int, error) {
	xs, err := f.EncodeSets(x)
	if err != nil {
		return nil, err
	}
	return s.SampleSets(xs, K, dst)
}

// TrainAndCalibrate is what `ptm train` does: Train, then, when calibrate
// is set, Calibrate the mapping parameter of cfg's mapping kind by
// cross-validation on the training rows and store it in the file.
//
// The memory of the calibration (CalibrationFolds more models trained
// while this one is kept, and K = 100 samples of every training row) is
// planned with the training's, before anything is trained (TrainBytes,
// CalibrationBytes); cfg.CalibrationProgress reports its progress.
func TrainAndCalibrate(d *Data, cfg TrainConfig, calibrate bool) (*modelfile.File, error) {
	cfg.planCalibration = calibrate
	f, err := Train(d, cfg)
	if err != nil || !calibrate {
		return f, err
	}
	cv := cfg
	cv.Progress, cv.RowProgress, cv.planCalibration, cv.resume = nil, nil, false, nil
	if f.Mapping, err = Calibrate(d, f, cv); err != nil {
		return nil, err
	}
	return f, nil
}
