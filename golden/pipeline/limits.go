package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/ptmhw/ptm/golden/dataset"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// BuiltinNames lists the built-in data sets LoadData knows, for messages.
var BuiltinNames = []string{Iris, Wine, BreastCancer, XOR, XORNoisy, XORClassic, MNIST, FashionMNIST}

// MaxThresholds bounds the thermometer thresholds per feature.
const MaxThresholds = 1024

// DefaultMemoryLimit is the memory a training run or an evaluation may
// plan to use unless $PTM_MAX_MEMORY says otherwise (4 GiB).
const DefaultMemoryLimit = 4 << 30

// MemoryLimit returns the planned-memory limit: $PTM_MAX_MEMORY (bytes,
// or a number with a K, M, G or T suffix, powers of 1024) or
// DefaultMemoryLimit. Train and Evaluate estimate what they will allocate
// and refuse beyond it, naming the flag that sets the size.
func MemoryLimit() (int64, error) {
	s := strings.TrimSpace(os.Getenv("PTM_MAX_MEMORY"))
	if s == "" {
		return DefaultMemoryLimit, nil
	}
	mult := int64(1)
	u := strings.TrimSuffix(strings.ToUpper(s), "B")
	if u != "" {
		if i := strings.IndexByte("KMGT", u[len(u)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			u = u[:len(u)-1]
		}
	}
	s = u
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > (1<<62)/mult {
		return 0, fmt.Errorf("pipeline: PTM_MAX_MEMORY=%q, want a positive byte count such as 8G", os.Getenv("PTM_MAX_MEMORY"))
	}
	return n * mult, nil
}

// bytesString formats a byte count for messages.
func bytesString(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.3g TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.3g GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.3g MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f bytes", b)
}

// TrainBytes estimates the peak memory of training a model of this shape
// and writing it: per SPV value 72 bytes, per TA 20. Measured 2026-11:
// Iris with 2000 clauses and 200 states (57.6 M SPV values) peaked at
// 4.12 GB, 71.5 bytes per value (the float trainer's state, the quantized
// bank, the encoded file and the garbage collector's headroom; the first
// estimate, 24 bytes per value, let that run pass a 4 GiB limit). Float64,
// so that absurd shapes do not overflow.
func TrainBytes(tms, clauses, boolFeatures, states int) float64 {
	tas := float64(tms) * float64(clauses) * 2 * float64(boolFeatures)
	spv := tas * 2 * float64(states)
	return spv*72 + tas*20
}

// CalibrationBytes estimates the memory Calibrate adds to a training run
// whose model (tms TMs, spv SPV values) it keeps while it trains
// CalibrationFolds more, one at a time, on rows training rows: the fold
// model being trained beyond the kept one, 32 bytes per SPV value, and the
// folds' row lists, 32 bytes per row. The samples are not kept (Calibrate
// adds up their NLL row by row), and a fold model is freed once its rows
// are sampled. Measured 2026-11-29, ptm train --data iris --clauses 2000
// --epochs 5 --no-tune (57.6 M SPV values): peak RSS 1.92 GB without
// calibration, 3.25 GB with it, 23 bytes per value more (before, the
// samples held every fold model: 6.61 GB, and K = 100 samples of every
// row were kept: 4.62 GiB planned for 800,000 rows).
func CalibrationBytes(tms int, spv float64, rows int) float64 {
	return spv*32 + float64(rows)*32
}

// checkTrainSize refuses a model too large for the memory limit or the
// model file format, before anything of its size is allocated. calibRows
// > 0: Calibrate follows on that many training rows, planned too.
func checkTrainSize(nc, boolFeatures int, p ptm.Params, calibRows int) error {
	tms := nc
	if nc == 2 {
		tms = 1
	}
	limit, err := MemoryLimit()
	if err != nil {
		return err
	}
	shape := fmt.Sprintf("%d TMs x %d clauses (--clauses) x %d literals (2 x %d Boolean features, --thresholds) x %d states (2 x --states)",
		tms, p.Clauses, 2*boolFeatures, boolFeatures, 2*p.N)
	need := TrainBytes(tms, p.Clauses, boolFeatures, p.N)
	if need > float64(limit) {
		return fmt.Errorf("pipeline: the model would need about %s of memory (%s), over the %s limit (PTM_MAX_MEMORY): lower --clauses, --states or --thresholds",
			bytesString(need), shape, bytesString(float64(limit)))
	}
	spv := float64(tms) * float64(p.Clauses) * 4 * float64(boolFeatures) * float64(p.N)
	if calibRows > 0 {
		if cal := CalibrationBytes(tms, spv, calibRows); need+cal > float64(limit) {
			return fmt.Errorf("pipeline: training with calibration would need about %s of memory (the model %s, %s; the calibration %s: %d folds on %d training rows, one fold model at a time beside the model), over the %s limit (PTM_MAX_MEMORY): use --calibrate=false, or lower --clauses, --states or --thresholds",
				bytesString(need+cal), bytesString(need), shape, bytesString(cal), CalibrationFolds, calibRows, bytesString(float64(limit)))
		}
	}
	if spv > modelfile.MaxSPVValues || p.Clauses > modelfile.MaxClauses {
		return fmt.Errorf("pipeline: the model would have %.4g SPV values (%s), over the model file limit of %d: lower --clauses, --states or --thresholds",
			spv, shape, modelfile.MaxSPVValues)
	}
	return nil
}

// EvalBytes estimates the memory Evaluate needs per query for K samples:
// the K x NT class sums and the K probability vectors.
func EvalBytes(f *modelfile.File, K int) float64 {
	return float64(K) * (8*float64(f.Model.NumTMs()) + 8*float64(f.Model.NumClasses) + 24) * 2
}

// CheckSamples refuses a sample count K whose per-query buffers would
// exceed the memory limit; the error names the --samples flag.
func CheckSamples(f *modelfile.File, K int) error {
	if K < 1 {
		return fmt.Errorf("pipeline: --samples %d, want >= 1", K)
	}
	limit, err := MemoryLimit()
	if err != nil {
		return err
	}
	if need := EvalBytes(f, K); need > float64(limit) {
		max := int(float64(limit) / EvalBytes(f, 1))
		return fmt.Errorf("pipeline: --samples %d would need about %s of memory per query, over the %s limit (PTM_MAX_MEMORY): at most %d samples for this model",
			K, bytesString(need), bytesString(float64(limit)), max)
	}
	return nil
}

// loadCSV reads a CSV data set; a missing file names the built-in data
// sets too, since a mistyped built-in name lands here.
func loadCSV(name string, opt dataset.CSVOptions) (*Data, error) {
	d, err := dataset.LoadCSV(name, opt)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pipeline: unknown data set %q: no built-in data set (%s) and no such file or IDX folder", name, strings.Join(BuiltinNames, ", "))
	}
	if err != nil {
		return nil, err
	}
	return &Data{Dataset: d}, nil
}

// LoadDataProgress is LoadData reporting progress while a CSV file, an
// IDX folder or a built-in image data set loads (bytes read and total, see
// dataset.CSVOptions.Progress).
func LoadDataProgress(name, label string, progress func(read, total int64)) (*Data, error) {
	return loadData(name, dataset.CSVOptions{Label: label, Progress: progress})
}

// splitRows returns the training and test rows of cfg: every row when
// cfg.NoTest is set (and the data set has no split of its own).
func (c *TrainConfig) splitRows(d *Data) (train, test []int, err error) {
	if c.NoTest && d.FixedTrain == nil {
		train = make([]int, d.Len())
		for i := range train {
			train[i] = i
		}
		return train, nil, nil
	}
	return d.Split(c.TestFraction, c.SplitSeed)
}

// checkConfig validates what the defaults leave: thresholds and test
// fraction ranges, and the size of the model.
func (c *TrainConfig) checkConfig() error {
	if c.Thresholds < 1 || c.Thresholds > MaxThresholds {
		return fmt.Errorf("pipeline: --thresholds %d, want 1..%d", c.Thresholds, MaxThresholds)
	}
	if c.NoTest {
		c.TestFraction = 0
	}
	return nil
}
