package pipeline

import (
	"fmt"
	"math"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Samples holds the K-sample class sums of rows, from one or several
// models, with their labels, so that a mapping can be fitted on them and
// applied to them without sampling again (Calibrate's out-of-fold
// predictions, a study's test rows).
type Samples struct{ p pooled }

// SampleRows draws K samples of each of d's rows through f (sampler seed
// seed). Labels are d's labels.
func SampleRows(f *modelfile.File, d *Data, rows []int, K int, seed uint64) (*Samples, error) {
	s := &Samples{}
	if err := s.p.add(f, d, rows, K, seed); err != nil {
		return nil, err
	}
	return s, nil
}

// SampleInputs draws K samples of each raw input row through f (sampler
// seed seed), for rows without a label known to the model (e.g. a class
// held out of training); their labels are -1 and they may only be mapped
// (Queries), not scored.
func SampleInputs(f *modelfile.File, X [][]float64, K int, seed uint64) (*Samples, error) {
	s := &Samples{}
	sm := ptm.NewSampler(f.Model, seed)
	mm := mappingModel(f.Model)
	for i, x := range X {
		sums, err := SampleRow(f, sm, x, K, nil)
		if err != nil {
			return nil, fmt.Errorf("pipeline: input %d: %w", i, err)
		}
		s.p.models = append(s.p.models, mm)
		s.p.sums = append(s.p.sums, sums)
		s.p.labels = append(s.p.labels, -1)
	}
	s.p.K = K
	return s, nil
}

// mappingModel returns what of m the mapping of class sums reads (T, the
// number of classes, binary or not: ptm.Model.SumsToProbs), without its
// SPVs. Samples keep it per row instead of m, so that a model sampled
// and dropped is not held in memory by its samples: Calibrate's and
// Tune's fold models were (issue 31 item 4: ptm train --data iris
// --clauses 1000 --epochs 5 peaked at 5.47 GB while tuning, 0.96 GB
// without).
func mappingModel(m *ptm.Model) *ptm.Model {
	return &ptm.Model{Params: ptm.Params{T: m.T}, Binary: m.Binary, NumClasses: m.NumClasses}
}

// Len is the number of rows.
func (s *Samples) Len() int { return len(s.p.sums) }

// Labels returns the rows' labels (-1 where unknown).
func (s *Samples) Labels() []int { return s.p.labels }

// Queries maps every row's samples with mp and summarises them.
func (s *Samples) Queries(mp ptm.Mapping) []metrics.QueryStats {
	out := make([]metrics.QueryStats, len(s.p.sums))
	for i, sums := range s.p.sums {
		out[i] = metrics.Query(s.p.models[i].SumsToProbs(sums, s.p.K, mp))
	}
	return out
}

// NLL is the mean negative log-likelihood of the rows' labels under the
// K-sample predictive mean mapped with mp (probabilities floored at
// metrics.NLLFloor).
func (s *Samples) NLL(mp ptm.Mapping) float64 {
	return s.p.nll(mp) / float64(max(len(s.p.sums), 1))
}

// Fit chooses the parameter of a mapping kind that minimizes the NLL of
// the rows (the grids of FitMapping).
func (s *Samples) Fit(kind ptm.MappingKind) (ptm.Mapping, error) { return s.p.fit(kind) }

// FitAbove is Fit with the softmax temperature restricted to the grid's
// values >= min (the largest grid value if none is); the vote smoothing
// ignores min.
func (s *Samples) FitAbove(kind ptm.MappingKind, min float64) (ptm.Mapping, error) {
	return s.p.fitAbove(kind, min)
}

func (p *pooled) nll(mp ptm.Mapping) float64 {
	var nll float64
	var sc, pr []float64
	for i, sums := range p.sums {
		nll -= math.Log(math.Max(meanProb(p.models[i], sums, p.K, mp, p.labels[i], &sc, &pr), metrics.NLLFloor))
		p.tick(i)
	}
	return nll
}

// tick calls rowsDone (if set) after row i of a pass: every passStep
// rows and after the last.
func (p *pooled) tick(i int) {
	if p.rowsDone != nil && ((i+1)%passStep == 0 || i+1 == len(p.sums)) {
		p.rowsDone(i + 1)
	}
}

// SamplesData is the plain form of Samples, for storing a study's samples
// (encoding/gob) and re-mapping them later without the models: per row
// its class sums, label and the clip bound T of the model that drew them.
type SamplesData struct {
	K, NumClasses int
	Binary        bool
	T             []int
	Sums          [][]int
	Labels        []int
}

// Data returns s in plain form (all rows must come from models of the same
// shape, as in every use here).
func (s *Samples) Data() SamplesData {
	out := SamplesData{K: s.p.K, Sums: s.p.sums, Labels: s.p.labels}
	for i, m := range s.p.models {
		if i == 0 {
			out.NumClasses, out.Binary = m.NumClasses, m.Binary
		}
		out.T = append(out.T, m.T)
	}
	return out
}

// SamplesFrom rebuilds Samples from their plain form; the rows are mapped
// by models that hold only the shape and T (enough for Queries and NLL).
func SamplesFrom(d SamplesData) *Samples {
	s := &Samples{p: pooled{K: d.K, sums: d.Sums, labels: d.Labels}}
	byT := map[int]*ptm.Model{}
	for _, t := range d.T {
		m := byT[t]
		if m == nil {
			m = &ptm.Model{Params: ptm.Params{T: t}, Binary: d.Binary, NumClasses: d.NumClasses}
			byT[t] = m
		}
		s.p.models = append(s.p.models, m)
	}
	return s
}

// Slice returns the rows lo..hi-1 of s (sharing their samples).
func (s *Samples) Slice(lo, hi int) *Samples {
	return &Samples{p: pooled{K: s.p.K, models: s.p.models[lo:hi], sums: s.p.sums[lo:hi], labels: s.p.labels[lo:hi]}}
}

// Join returns the rows of all parts in order (sharing their samples); the
// parts must have the same K.
func Join(parts ...*Samples) *Samples {
	out := &Samples{}
	for _, s := range parts {
		out.p.K = s.p.K
		out.p.models = append(out.p.models, s.p.models...)
		out.p.sums = append(out.p.sums, s.p.sums...)
		out.p.labels = append(out.p.labels, s.p.labels...)
	}
	return out
}

// FoldSizes returns the sizes of OutOfFold's folds for n training rows, in
// the order OutOfFold stores them (the rows are dealt round-robin, so fold
// j holds ceil((n-j)/CalibrationFolds) rows).
func FoldSizes(n int) []int {
	out := make([]int, CalibrationFolds)
	for j := range out {
		out[j] = (n - j + CalibrationFolds - 1) / CalibrationFolds
	}
	return out
}

// ClipT returns the clip bound T of the model of the first row (0 if
// empty): the unit of the class scores the mapping sees.
func (s *Samples) ClipT() int {
	if len(s.p.models) == 0 {
		return 0
	}
	return s.p.models[0].T
}

// Score scores the rows as Validate scores validation rows: the report
// under mp and under mp's kind with its parameter fitted on the same
// rows.
func (s *Samples) Score(mp ptm.Mapping, bins int) (ValScore, error) {
	if err := mp.Validate(); err != nil {
		return ValScore{}, err
	}
	return scorePooled(&s.p, mp, bins)
}
