package booleanize

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Sets is the sampled input encoding (docs/uncertainty.md): M thermometer
// encoders that share one bit layout (the same number of thresholds per
// feature). The K inference samples of a query are shared among the sets as
// evenly as possible ([SplitK]; set 0's samples first), so the encoding
// itself is part of what a query samples: a row near a threshold is encoded
// differently by different sets, and the samples disagree there.
//
// Set m holds the base thresholds (Fit on the training rows) shifted, for
// feature f, by Shift[m] * Bandwidth * Scale[f]: Scale[f] is the standard
// deviation of f on the training rows and Shift[m] the (m+1/2)/M quantile of
// the standard normal distribution, so the M sets are a stratified sample of
// thresholds jittered by Gaussian noise of standard deviation Bandwidth
// feature standard deviations.
//
// Optionally (Margin > 0) a set also has a range per feature: a value more
// than Margin*(1+2m/M) standard deviations outside the training range
// [Min[f], Max[f]] is replaced, in set m, by Replace[m][f], the value of
// feature f in a training row chosen for set m (a row of class m mod NC).
// Far outside the data the sets then encode M different training rows, so
// the samples disagree there (real disagreement, not tied votes); inside the
// extended range nothing changes.
//
// The JSON form stores every set's thresholds, ranges and replacement values
// explicitly, so a model file reproduces the encoder bit for bit whatever
// produced it; the fitting parameters are kept for the record.
type Sets struct {
	Bandwidth float64 `json:"bandwidth"`
	Margin    float64 `json:"margin,omitempty"`
	// WholeRow replaces the whole row by the set's replacement row when
	// any feature is out of the set's range (instead of that feature only).
	WholeRow bool `json:"whole_row,omitempty"`
	// Cuts records the threshold placement the sets were fitted with
	// (SetsConfig.Cuts; "" for quantiles), for provenance only.
	Cuts Cuts  `json:"cuts,omitempty"`
	Set  []Set `json:"sets"`
}

// Set is one encoder of a [Sets]: a thermometer, and when Lo/Hi are
// present, per-feature bounds outside which a value is replaced by Replace.
type Set struct {
	Thermometer
	Lo      []float64 `json:"lo,omitempty"`
	Hi      []float64 `json:"hi,omitempty"`
	Replace []float64 `json:"replace,omitempty"`
}

// SetsConfig configures [FitSets].
type SetsConfig struct {
	PerFeature int     // thresholds per feature, as in Fit
	M          int     // number of sets (1 = the plain thermometer)
	Bandwidth  float64 // threshold jitter in feature standard deviations (0 = none)
	Margin     float64 // reversion margin in feature standard deviations (0 = none)
	Seed       uint64  // chooses the replacement rows
	WholeRow   bool    // see Sets.WholeRow
	// Cuts places the base thresholds: "" or quantile ([Fit]), supervised
	// or mdl ([FitSupervised]); with the -boot suffix, set 0 keeps the
	// placement fitted on all rows and every other set m refits it on its
	// own stratified bootstrap resample of the rows (a PCG seeded with Seed
	// and "PTMboot!", resamples drawn in set order), feature by feature
	// where the refit has as many thresholds as set 0 (set 0's otherwise).
	// The jitter then shifts every set's thresholds as without it.
	Cuts Cuts
}

// MaxSets bounds M.
const MaxSets = 64

// NormalQuantile returns the p-quantile of the standard normal distribution.
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// FitSets fits the sampled encoding on the training rows X with labels y
// (classes 0..nc-1). With M = 1 and no margin it is the plain thermometer of
// Fit.
func FitSets(X [][]float64, y []int, nc int, cfg SetsConfig) (*Sets, error) {
	if cfg.M < 1 || cfg.M > MaxSets {
		return nil, fmt.Errorf("booleanize: FitSets: %d sets, want 1..%d", cfg.M, MaxSets)
	}
	if !(cfg.Bandwidth >= 0) || math.IsInf(cfg.Bandwidth, 0) || !(cfg.Margin >= 0) || math.IsInf(cfg.Margin, 0) {
		return nil, fmt.Errorf("booleanize: FitSets: bandwidth %v and margin %v must be finite and >= 0", cfg.Bandwidth, cfg.Margin)
	}
	if len(y) != len(X) {
		return nil, fmt.Errorf("booleanize: FitSets: %d rows, %d labels", len(X), len(y))
	}
	if err := cfg.Cuts.Validate(); err != nil {
		return nil, fmt.Errorf("booleanize: FitSets: %w", err)
	}
	if nc < 1 {
		return nil, fmt.Errorf("booleanize: FitSets: %d classes", nc)
	}
	byClass := make([][]int, nc)
	for i, c := range y {
		if c < 0 || c >= nc {
			return nil, fmt.Errorf("booleanize: FitSets: row %d label %d outside 0..%d", i, c, nc-1)
		}
		byClass[c] = append(byClass[c], i)
	}
	base, err := FitCuts(X, y, nc, cfg.PerFeature, cfg.Cuts)
	if err != nil {
		return nil, err
	}
	nf := base.NumFeatures()
	scale, lo, hi := make([]float64, nf), make([]float64, nf), make([]float64, nf)
	for f := range nf {
		var mu float64
		lo[f], hi[f] = math.Inf(1), math.Inf(-1)
		for _, row := range X {
			mu += row[f]
			lo[f], hi[f] = min(lo[f], row[f]), max(hi[f], row[f])
		}
		mu /= float64(len(X))
		var ss float64
		for _, row := range X {
			ss += (row[f] - mu) * (row[f] - mu)
		}
		scale[f] = math.Sqrt(ss / float64(len(X)))
	}
	// Replacement rows: set m takes a row of class m mod nc, drawn with a
	// seeded PCG ("PTMsets!").
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5054_4d73_6574_7321))
	s := &Sets{Bandwidth: cfg.Bandwidth, Margin: cfg.Margin, WholeRow: cfg.WholeRow && cfg.Margin > 0, Set: make([]Set, cfg.M)}
	if cfg.Cuts != "" && cfg.Cuts != Quantile {
		s.Cuts = cfg.Cuts
	}
	bases := make([]*Thermometer, cfg.M)
	bases[0] = base
	boot := rand.New(rand.NewPCG(cfg.Seed, 0x5054_4d62_6f6f_7421))
	for m := 1; m < cfg.M; m++ {
		bases[m] = base
		if !cfg.Cuts.Boot() {
			continue
		}
		rows := bootstrapRows(y, nc, boot)
		Xb, yb := make([][]float64, len(rows)), make([]int, len(rows))
		for i, r := range rows {
			Xb[i], yb[i] = X[r], y[r]
		}
		tb, err := FitCuts(Xb, yb, nc, cfg.PerFeature, cfg.Cuts)
		if err != nil {
			// Every feature constant in the resample: keep set 0's.
			continue
		}
		for f := range tb.Thresholds {
			if len(tb.Thresholds[f]) != len(base.Thresholds[f]) {
				tb.Thresholds[f] = base.Thresholds[f]
			}
		}
		bases[m] = tb
	}
	for m := range cfg.M {
		z := 0.0
		if cfg.M > 1 {
			z = NormalQuantile((float64(m) + 0.5) / float64(cfg.M))
		}
		th := make([][]float64, nf)
		for f, base := range bases[m].Thresholds {
			th[f] = make([]float64, len(base))
			for k, c := range base {
				th[f][k] = c + z*cfg.Bandwidth*scale[f]
			}
		}
		set := Set{Thermometer: Thermometer{Thresholds: th}}
		if cfg.Margin > 0 {
			rows := byClass[m%nc]
			for k := 1; len(rows) == 0 && k < nc; k++ {
				rows = byClass[(m+k)%nc]
			}
			r := rows[rng.IntN(len(rows))]
			rho := cfg.Margin * (1 + 2*float64(m)/float64(cfg.M))
			set.Lo, set.Hi, set.Replace = make([]float64, nf), make([]float64, nf), make([]float64, nf)
			for f := range nf {
				set.Lo[f] = lo[f] - rho*scale[f]
				set.Hi[f] = hi[f] + rho*scale[f]
				set.Replace[f] = X[r][f]
			}
		}
		s.Set[m] = set
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("booleanize: FitSets: %w", err)
	}
	return s, nil
}

// Plain wraps a thermometer as a one-set encoding.
func Plain(t *Thermometer) *Sets {
	return &Sets{Set: []Set{{Thermometer: *t}}}
}

// M returns the number of sets.
func (s *Sets) M() int { return len(s.Set) }

// NumFeatures returns the number of raw features.
func (s *Sets) NumFeatures() int { return s.Set[0].NumFeatures() }

// NumBits returns the length of an encoded vector.
func (s *Sets) NumBits() int { return s.Set[0].NumBits() }

// Base returns set 0's thermometer (the bit layout and names of every set).
func (s *Sets) Base() *Thermometer { return &s.Set[0].Thermometer }

// BitNames names the bits after the set whose shift is nearest 0 (the
// middle set), which for M = 1 is the plain thermometer.
func (s *Sets) BitNames(features []string) []string {
	return s.Set[(len(s.Set)-1)/2].BitNames(features)
}

// Validate checks every set and that they share one bit layout.
func (s *Sets) Validate() error {
	if len(s.Set) == 0 || len(s.Set) > MaxSets {
		return fmt.Errorf("booleanize: %d encoding sets, want 1..%d", len(s.Set), MaxSets)
	}
	if !(s.Bandwidth >= 0) || math.IsInf(s.Bandwidth, 0) || !(s.Margin >= 0) || math.IsInf(s.Margin, 0) {
		return fmt.Errorf("booleanize: bandwidth %v and margin %v must be finite and >= 0", s.Bandwidth, s.Margin)
	}
	if err := s.Cuts.Validate(); err != nil {
		return err
	}
	t0 := &s.Set[0].Thermometer
	for m := range s.Set {
		set := &s.Set[m]
		if err := set.Validate(); err != nil {
			return fmt.Errorf("set %d: %w", m, err)
		}
		if len(set.Thresholds) != len(t0.Thresholds) {
			return fmt.Errorf("booleanize: set %d has %d features, set 0 has %d", m, len(set.Thresholds), len(t0.Thresholds))
		}
		for f := range set.Thresholds {
			if len(set.Thresholds[f]) != len(t0.Thresholds[f]) {
				return fmt.Errorf("booleanize: set %d feature %d has %d thresholds, set 0 has %d", m, f, len(set.Thresholds[f]), len(t0.Thresholds[f]))
			}
		}
		nf := len(set.Thresholds)
		if set.Lo == nil && set.Hi == nil && set.Replace == nil {
			continue
		}
		if len(set.Lo) != nf || len(set.Hi) != nf || len(set.Replace) != nf {
			return fmt.Errorf("booleanize: set %d: lo, hi and replace need %d values each (got %d, %d, %d)", m, nf, len(set.Lo), len(set.Hi), len(set.Replace))
		}
		for f := range nf {
			if !isFinite(set.Lo[f]) || !isFinite(set.Hi[f]) || !isFinite(set.Replace[f]) || set.Lo[f] > set.Hi[f] {
				return fmt.Errorf("booleanize: set %d feature %d: range [%v, %v] and replacement %v must be finite with lo <= hi", m, f, set.Lo[f], set.Hi[f], set.Replace[f])
			}
		}
	}
	return nil
}

// Encode encodes x with set m into dst (reused when large enough), as
// Thermometer.Encode does after replacing out-of-range values.
func (s *Sets) Encode(m int, x []float64, dst []bool) ([]bool, error) {
	if m < 0 || m >= len(s.Set) {
		return nil, fmt.Errorf("booleanize: Encode: set %d of %d", m, len(s.Set))
	}
	set := &s.Set[m]
	if set.Lo != nil && len(x) == len(set.Lo) {
		var buf [64]float64
		y := buf[:0]
		if len(x) > len(buf) {
			y = make([]float64, 0, len(x))
		}
		out := false
		for f, v := range x {
			if v < set.Lo[f] || v > set.Hi[f] {
				v = set.Replace[f]
				out = true
			}
			y = append(y, v)
		}
		if out && s.WholeRow {
			y = append(y[:0], set.Replace...)
		}
		x = y
	}
	out, err := set.encode(x, dst)
	if err != nil {
		return nil, fmt.Errorf("booleanize: Encode: set %d: %w", m, err)
	}
	return out, nil
}

// EncodeSets encodes x with every set: M vectors of NumBits bits.
func (s *Sets) EncodeSets(x []float64) ([][]bool, error) {
	out := make([][]bool, len(s.Set))
	for m := range s.Set {
		v, err := s.Encode(m, x, nil)
		if err != nil {
			return nil, err
		}
		out[m] = v
	}
	return out, nil
}

// SplitK returns how many of a query's K samples use set m: K/M, plus one
// when m < K mod M.
func SplitK(K, M, m int) int {
	n := K / M
	if m < K%M {
		n++
	}
	return n
}
