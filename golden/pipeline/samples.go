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
	for i, x := range X {
		sums, err := SampleRow(f, sm, x, K, nil)
		if err != nil {
			return nil, fmt.Errorf("pipeline: input %d: %w", i, err)
		}
		s.p.models = append(s.p.models, f.Model)
		s.p.sums = append(s.p.sums, sums)
		s.p.labels = append(s.p.labels, -1)
	}
	s.p.K = K
	return s, nil
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

func (p *pooled) nll(mp ptm.Mapping) float64 {
	var nll float64
	for i, sums := range p.sums {
		q := metrics.Query(p.models[i].SumsToProbs(sums, p.K, mp))
		nll -= math.Log(math.Max(q.Mean[p.labels[i]], metrics.NLLFloor))
	}
	return nll
}
