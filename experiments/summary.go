package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/ptmhw/ptm/internal/outfile"
)

// Summary holds every number of the report under a stable dotted key
// (Values, e.g. "iris.splits20.ptm.ece_mean"), the textual settings behind
// them (Labels, e.g. "iris.splits20.ptm.mapping"), and the figures written.
// Undefined values (an AUROC on a split without errors, a mean over no
// rows) are NaN in Values and null in summary.json.
type Summary struct {
	// Quick is true for a quick (CI) run.
	Quick bool
	// Values maps keys to numbers.
	Values map[string]float64
	// Labels maps keys to strings.
	Labels map[string]string
	// Figures lists the PNG files written, relative to the output directory.
	Figures []string
	// Elapsed is the wall-clock time of the run.
	Elapsed time.Duration

	mu sync.Mutex
}

func newSummary(quick bool) *Summary {
	return &Summary{Quick: quick, Values: map[string]float64{}, Labels: map[string]string{}}
}

func (s *Summary) set(key string, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Values[key] = v
}

func (s *Summary) label(key, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Labels[key] = v
}

func (s *Summary) addFigure(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.Figures, name) {
		s.Figures = append(s.Figures, name)
	}
}

// Value returns the number stored under key.
func (s *Summary) Value(key string) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.Values[key]
	return v, ok
}

// get returns the number under key, NaN if there is none.
func (s *Summary) get(key string) float64 {
	if v, ok := s.Value(key); ok {
		return v
	}
	return math.NaN()
}

func (s *Summary) setMeta(c config) {
	mode := "full"
	if c.quick {
		mode = "quick"
	}
	s.label("meta.mode", mode)
	s.label("meta.selection", string(c.sel))
	s.label("meta.choose_on", map[bool]string{false: "carve", true: "cv"}[c.cv])
	s.set("meta.k", float64(c.K))
	s.set("meta.ece_bins", float64(c.bins))
}

// MarshalJSON encodes the summary as one flat JSON object with sorted keys:
// every Values key with its number (null for NaN or an infinity), every
// Labels key with its string, and "figures" with the list of figures.
func (s *Summary) MarshalJSON() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.Values)+len(s.Labels))
	for k := range s.Values {
		keys = append(keys, k)
	}
	for k := range s.Labels {
		if _, dup := s.Values[k]; dup {
			return nil, fmt.Errorf("experiments: key %q is both a value and a label", k)
		}
		keys = append(keys, k)
	}
	if _, dup := s.Values["figures"]; dup {
		return nil, fmt.Errorf("experiments: key \"figures\" is reserved")
	}
	keys = append(keys, "figures")
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range keys {
		kj, _ := json.Marshal(k)
		b.WriteString("  ")
		b.Write(kj)
		b.WriteString(": ")
		switch v, isValue := s.Values[k]; {
		case k == "figures":
			fj, err := json.Marshal(append([]string{}, s.Figures...))
			if err != nil {
				return nil, err
			}
			b.Write(fj)
		case isValue && (math.IsNaN(v) || math.IsInf(v, 0)):
			b.WriteString("null")
		case isValue:
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		default:
			lj, err := json.Marshal(s.Labels[k])
			if err != nil {
				return nil, err
			}
			b.Write(lj)
		}
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// WriteFile writes the summary as JSON (see MarshalJSON).
func (s *Summary) WriteFile(path string) error {
	data, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("experiments: summary: %w", err)
	}
	return nil
}

// Stat is the spread of one metric over repeated runs (splits).
type Stat struct {
	Mean, Std, Min, Max float64
	// N counts the defined (non-NaN) values the statistics use; Missing
	// counts the NaN values left out (an AUROC on a split without errors).
	N, Missing int
}

// Describe returns the mean, sample standard deviation (n-1), minimum and
// maximum of the non-NaN values of v, and how many values were NaN. With no
// defined value every statistic is NaN; with one the standard deviation is
// 0.
func Describe(v []float64) Stat {
	st := Stat{Mean: math.NaN(), Std: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	var def []float64
	for _, x := range v {
		if math.IsNaN(x) {
			st.Missing++
		} else {
			def = append(def, x)
		}
	}
	st.N = len(def)
	if st.N == 0 {
		return st
	}
	st.Mean, st.Min, st.Max = 0, def[0], def[0]
	for _, x := range def {
		st.Mean += x
		st.Min, st.Max = min(st.Min, x), max(st.Max, x)
	}
	st.Mean /= float64(st.N)
	st.Std = 0
	if st.N > 1 {
		for _, x := range def {
			d := x - st.Mean
			st.Std += d * d
		}
		st.Std = math.Sqrt(st.Std / float64(st.N-1))
	}
	return st
}

// setStat stores a Stat under prefix+"_mean", "_std", "_min", "_max" and
// prefix+"_n" (the number of defined values).
func (s *Summary) setStat(prefix string, st Stat) {
	s.set(prefix+"_mean", st.Mean)
	s.set(prefix+"_std", st.Std)
	s.set(prefix+"_min", st.Min)
	s.set(prefix+"_max", st.Max)
	s.set(prefix+"_n", float64(st.N))
}
