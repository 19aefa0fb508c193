package pipeline

import (
	"fmt"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Ensemble is the per-set variant of the sampled input encoding
// (docs/uncertainty.md section 11): instead of one PTM trained on rows
// encoded by a set drawn per row and epoch, every threshold set m has its
// own PTM, trained only on the rows as set m encodes them (optionally a
// bootstrap resample of them). Inference sample k draws set m's share
// (ptm.Sampler.SampleSets' split of K) from PTM m, so the samples of a
// query come from M differently trained automata banks. On hardware it is
// M banks, one request per set as today, each against its own bank.
// It is a study model, not (yet) a model file: File holds the encoding,
// the booleanizer, the split and Models[0].
type Ensemble struct {
	File   *modelfile.File
	Models []*ptm.Model
}

// EnsembleSeedStep separates the training seeds of an ensemble's PTMs:
// PTM m trains with seed Params.Seed + m*EnsembleSeedStep.
const EnsembleSeedStep = 0x9E37_79B9

// TrainEnsemble trains the per-set ensemble of cfg: the encoding of cfg
// (at least 2 sets) is fitted on the training rows as Train fits it, then
// one PTM per set is trained on the rows encoded by that set, each with
// its own seed; with bootstrap, PTM m sees a bootstrap resample of the
// rows (a PCG seeded by its seed), the same resample every epoch.
func TrainEnsemble(d *Data, cfg TrainConfig, bootstrap bool) (*Ensemble, error) {
	cfg.defaults()
	if cfg.Encoding.Sets < 2 {
		return nil, fmt.Errorf("pipeline: a per-set ensemble needs >= 2 encoding sets, not %d", cfg.Encoding.Sets)
	}
	if cfg.Fixed {
		return nil, fmt.Errorf("pipeline: a per-set ensemble trains with the float trainer only")
	}
	shape := cfg
	shape.Params.Epochs = 0
	f, err := Train(d, shape)
	if err != nil {
		return nil, err
	}
	f.Model.Epochs = cfg.Params.Epochs
	rows := f.Split.Train
	if cfg.Rows != nil {
		rows = cfg.Rows
	}
	sets := f.Sets()
	M := sets.M()
	e := &Ensemble{File: f, Models: make([]*ptm.Model, M)}
	nc := len(d.Classes)
	for m := range M {
		idx := make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
		p := cfg.Params
		p.Seed = cfg.Params.Seed + uint64(m)*EnsembleSeedStep
		if bootstrap {
			rng := rand.New(rand.NewPCG(p.Seed, 0x626f_6f74_7374_7261)) // "bootstra"
			for i := range idx {
				idx[i] = rng.IntN(len(rows))
			}
		}
		X := make([][]bool, len(idx))
		y := make([]int, len(idx))
		for i, j := range idx {
			if X[i], err = sets.Encode(m, d.X[rows[j]], nil); err != nil {
				return nil, fmt.Errorf("pipeline: ensemble set %d, row %d: %w", m, rows[j]+1, err)
			}
			y[i] = d.Y[rows[j]]
		}
		c := cfg
		c.Params = p
		mod, _, _, err := trainModel(c, nc, sets.NumBits(), func() [][]bool { return X }, y)
		if err != nil {
			return nil, fmt.Errorf("pipeline: ensemble set %d: %w", m, err)
		}
		e.Models[m] = mod
	}
	e.File.Model = e.Models[0]
	if e.File.Bank, err = fixed.Quantize(e.Models[0], cfg.Bits); err != nil {
		return nil, err
	}
	return e, nil
}

// SampleRow draws K samples (raw class sums, K*NT) of one raw row: set m's
// share of K (booleanize.SplitK) is drawn from PTM m through set m's
// encoding with sampler ss[m].
func (e *Ensemble) SampleRow(ss []*ptm.Sampler, x []float64, K int, dst []int) ([]int, error) {
	xs, err := e.File.EncodeSets(x)
	if err != nil {
		return nil, err
	}
	nt := e.Models[0].NumTMs()
	if cap(dst) < K*nt {
		dst = make([]int, K*nt)
	}
	dst = dst[:K*nt]
	off := 0
	var buf []int
	for m, xm := range xs {
		k := fixed.SetK(K, len(xs), m)
		if k == 0 {
			continue
		}
		if buf, err = ss[m].Sample(xm, k, buf); err != nil {
			return nil, fmt.Errorf("set %d: %w", m, err)
		}
		copy(dst[off:], buf[:k*nt])
		off += k * nt
	}
	return dst, nil
}

// SampleRows draws K samples of each of d's rows through the ensemble:
// PTM m's sampler is seeded seed + m*EnsembleSeedStep.
func (e *Ensemble) SampleRows(d *Data, rows []int, K int, seed uint64) (*Samples, error) {
	labels, err := Labels(e.File, d, rows)
	if err != nil {
		return nil, err
	}
	ss := make([]*ptm.Sampler, len(e.Models))
	for m, mod := range e.Models {
		ss[m] = ptm.NewSampler(mod, seed+uint64(m)*EnsembleSeedStep)
	}
	s := &Samples{}
	s.p.K = K
	for i, r := range rows {
		sums, err := e.SampleRow(ss, d.X[r], K, nil)
		if err != nil {
			return nil, fmt.Errorf("pipeline: row %d: %w", r+1, err)
		}
		s.p.models = append(s.p.models, e.Models[0])
		s.p.sums = append(s.p.sums, sums)
		s.p.labels = append(s.p.labels, labels[i])
	}
	return s, nil
}

// SampleRowsFixed is SampleRows on the fixed-point cores the hardware
// runs: every PTM quantized to bits-bit SPVs (fixed.Quantize), set m's
// share of K drawn on PTM m's core with the seed of set m's request
// (fixed.SubSeed of seed + row index), as fixed.Core.RunSets draws it with
// one bank for all sets.
func (e *Ensemble) SampleRowsFixed(d *Data, rows []int, K int, h fixed.HW, seed uint32) (*Samples, error) {
	labels, err := Labels(e.File, d, rows)
	if err != nil {
		return nil, err
	}
	cores := make([]*fixed.Core, len(e.Models))
	for m, mod := range e.Models {
		b, err := fixed.Quantize(mod, h.Bits)
		if err != nil {
			return nil, err
		}
		if cores[m], err = fixed.NewCore(b, h); err != nil {
			return nil, fmt.Errorf("pipeline: ensemble set %d: %w", m, err)
		}
	}
	nt := e.Models[0].NumTMs()
	s := &Samples{}
	s.p.K = K
	var buf []int32
	for i, r := range rows {
		xs, err := e.File.EncodeSets(d.X[r])
		if err != nil {
			return nil, err
		}
		sums := make([]int, 0, K*nt)
		for m, xm := range xs {
			k := fixed.SetK(K, len(xs), m)
			if k == 0 {
				continue
			}
			if buf, _, err = cores[m].Run(xm, k, fixed.SubSeed(seed+uint32(r), m), buf); err != nil {
				return nil, fmt.Errorf("pipeline: row %d, set %d: %w", r+1, m, err)
			}
			for _, v := range buf[:k*nt] {
				sums = append(sums, int(v))
			}
		}
		s.p.models = append(s.p.models, e.Models[0])
		s.p.sums = append(s.p.sums, sums)
		s.p.labels = append(s.p.labels, labels[i])
	}
	return s, nil
}
