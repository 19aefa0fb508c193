package conv

import (
	"fmt"
	"math"
)

// Structure names how clauses vote.
type Structure string

// The class structures.
const (
	// PerClass: clause c belongs to class c / m (m = Clauses/Classes) and
	// votes +1 for it when c%m is even, -1 when odd (the tabular layout).
	PerClass Structure = "per-class"
	// Coalesced: every clause votes for every class with a learned signed
	// integer weight (the Coalesced TM, ConvCoTM).
	Coalesced Structure = "coalesced"
)

// MaxWeight bounds the magnitude of a coalesced clause weight (trainers
// saturate there; a weight fits a 16-bit signed word).
const MaxWeight = 1<<15 - 1

// MaxClasses bounds the classes (lcm(1..NC) vote units stay small), as in
// golden/fixed.
const MaxClasses = 16

// Head is what inference needs besides the automata: shape, classes,
// clauses and their weights, T.
type Head struct {
	Shape     Shape     `json:"shape"`
	Structure Structure `json:"structure"`
	Classes   int       `json:"classes"`
	Clauses   int       `json:"clauses"` // C, all clauses
	T         int       `json:"t"`
	// Weights holds class k's weight of clause c at k*Clauses + c.
	Weights []int32 `json:"weights"`
}

// PerClassWeights returns the weights of the per-class structure with m
// clauses per class.
func PerClassWeights(classes, m int) []int32 {
	w := make([]int32, classes*classes*m)
	c := classes * m
	for k := 0; k < classes; k++ {
		for j := 0; j < m; j++ {
			v := int32(1)
			if j%2 == 1 {
				v = -1
			}
			w[k*c+k*m+j] = v
		}
	}
	return w
}

// Validate checks the head.
func (h *Head) Validate() error {
	if err := h.Shape.Validate(); err != nil {
		return err
	}
	switch {
	case h.Classes < 2 || h.Classes > MaxClasses:
		return fmt.Errorf("conv: %d classes, want 2..%d", h.Classes, MaxClasses)
	case h.Clauses < 1:
		return fmt.Errorf("conv: %d clauses, want >= 1", h.Clauses)
	case h.T < 1:
		return fmt.Errorf("conv: T = %d, want >= 1", h.T)
	case len(h.Weights) != h.Classes*h.Clauses:
		return fmt.Errorf("conv: %d weights, want classes x clauses = %d", len(h.Weights), h.Classes*h.Clauses)
	}
	switch h.Structure {
	case PerClass:
		if h.Clauses%h.Classes != 0 {
			return fmt.Errorf("conv: per-class structure with %d clauses for %d classes", h.Clauses, h.Classes)
		}
		want := PerClassWeights(h.Classes, h.Clauses/h.Classes)
		for i, v := range want {
			if h.Weights[i] != v {
				return fmt.Errorf("conv: per-class weight of class %d clause %d is %d, want %d", i/h.Clauses, i%h.Clauses, h.Weights[i], v)
			}
		}
	case Coalesced:
		for i, v := range h.Weights {
			if v > MaxWeight || v < -MaxWeight {
				return fmt.Errorf("conv: weight of class %d clause %d is %d, want |w| <= %d", i/h.Clauses, i%h.Clauses, v, MaxWeight)
			}
		}
	default:
		return fmt.Errorf("conv: class structure %q, want %q or %q", h.Structure, PerClass, Coalesced)
	}
	return nil
}

// TAs is Clauses * Literals.
func (h *Head) TAs() int { return h.Clauses * h.Shape.Literals() }

// Model is the float convolutional PTM for inference: the head and the
// include probability of every TA, TA (c, i) at c*Literals + i.
type Model struct {
	Head
	Include []float64 `json:"-"`
}

// Validate checks the model.
func (m *Model) Validate() error {
	if err := m.Head.Validate(); err != nil {
		return err
	}
	if len(m.Include) != m.TAs() {
		return fmt.Errorf("conv: %d include probabilities, want %d TAs", len(m.Include), m.TAs())
	}
	for ta, p := range m.Include {
		if !(p >= 0 && p <= 1) || math.IsNaN(p) {
			return fmt.Errorf("conv: TA %d include probability %v, want 0..1", ta, p)
		}
	}
	return nil
}

// clip clips v to [-T, T].
func clip(v, T int32) int32 {
	if v > T {
		return T
	}
	if v < -T {
		return -T
	}
	return v
}
