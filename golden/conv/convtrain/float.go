package convtrain

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/ptm"
)

// Float is the float convolutional PTM trainer, the reference of the
// fixed-point Trainer: float64 SPVs of 2N states updated by golden/ptm's
// TPMs (ptm.ApplyTPM) under the consistent rule, every random choice from
// one PCG stream seeded with Config.Seed (Config.Bits and Workers are
// ignored; it runs on one goroutine). A training step is the Trainer's
// (package doc) with the draws taken from the PCG: every TA's action
// sampled from its SPV, clause = OR over patches, selection with
// probability (T - v_y)/2T or (T + v_o)/2T, feedback on one patch chosen
// uniformly among the firing ones (any patch when none fires).
type Float struct {
	cfg     Config
	head    conv.Head
	n2      int
	spv     []float64
	pinc    []float64
	rng     *rand.Rand
	nw, nl  int
	inc     []uint64
	out     []bool
	patches *conv.Patches
	lit     []bool
	fire    []int32
	order   []int
	// Epochs counts the epochs completed.
	Epochs int
}

// NewFloat returns an untrained float trainer: every SPV holds 1/2 in
// states N-1 and N.
func NewFloat(cfg Config) (*Float, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.N < 1 || cfg.N > 1<<15 {
		return nil, fmt.Errorf("convtrain: N = %d, want 1..32768", cfg.N)
	}
	if !(cfg.S >= 1) || cfg.S > 1e300 {
		return nil, fmt.Errorf("convtrain: s = %v, want a finite value >= 1", cfg.S)
	}
	sh := cfg.Shape
	f := &Float{cfg: cfg, n2: 2 * cfg.N, nw: sh.Words(), nl: sh.Literals(),
		rng:  rand.New(rand.NewPCG(cfg.Seed, 0x636f_6e76_5f74_726e)), // "conv_trn"
		inc:  make([]uint64, cfg.Clauses*sh.Words()),
		out:  make([]bool, cfg.Clauses),
		lit:  make([]bool, sh.Literals()),
		fire: make([]int32, 0, sh.Patches()), patches: conv.NewPatches(sh)}
	tas := cfg.Clauses * f.nl
	f.spv = make([]float64, tas*f.n2)
	f.pinc = make([]float64, tas)
	for ta := 0; ta < tas; ta++ {
		f.spv[ta*f.n2+cfg.N-1], f.spv[ta*f.n2+cfg.N] = 0.5, 0.5
		f.pinc[ta] = 0.5
	}
	f.head = conv.Head{Shape: sh, Structure: cfg.Structure, Classes: cfg.Classes, Clauses: cfg.Clauses, T: cfg.T}
	if cfg.Structure == conv.PerClass {
		f.head.Weights = conv.PerClassWeights(cfg.Classes, cfg.Clauses/cfg.Classes)
	} else {
		f.head.Weights = make([]int32, cfg.Classes*cfg.Clauses)
		for i := range f.head.Weights {
			f.head.Weights[i] = int32(f.rng.IntN(2))*2 - 1
		}
	}
	return f, nil
}

// Update trains on one booleanized image of label y.
func (f *Float) Update(planes []bool, y int) error {
	if y < 0 || y >= f.cfg.Classes {
		return fmt.Errorf("convtrain: label %d outside 0..%d", y, f.cfg.Classes-1)
	}
	if err := f.patches.Fill(planes); err != nil {
		return fmt.Errorf("convtrain: %w", err)
	}
	f.step(y)
	return nil
}

// RunEpoch runs one pass over booleanized images X with labels y in an
// order shuffled with the PCG stream.
func (f *Float) RunEpoch(X [][]bool, y []int) error {
	if len(X) != len(y) {
		return fmt.Errorf("convtrain: %d images but %d labels", len(X), len(y))
	}
	f.order = f.order[:0]
	for i := range X {
		f.order = append(f.order, i)
	}
	f.rng.Shuffle(len(f.order), func(i, j int) { f.order[i], f.order[j] = f.order[j], f.order[i] })
	for _, r := range f.order {
		if err := f.Update(X[r], y[r]); err != nil {
			return fmt.Errorf("image %d: %w", r, err)
		}
	}
	f.Epochs++
	return nil
}

func (f *Float) step(y int) {
	C, nl, nw := f.cfg.Clauses, f.nl, f.nw
	for c := 0; c < C; c++ {
		inc := f.inc[c*nw : (c+1)*nw]
		clear(inc)
		for i, p := range f.pinc[c*nl : (c+1)*nl] {
			if f.rng.Float64() < p {
				inc[i/64] |= 1 << uint(i%64)
			}
		}
		f.out[c] = f.patches.FiresAnywhere(inc)
	}
	nc := f.cfg.Classes
	o := f.rng.IntN(nc - 1)
	if o >= y {
		o++
	}
	T := f.cfg.T
	sum := func(k int) int {
		s := 0
		for c, on := range f.out {
			if on {
				s += int(f.head.Weights[k*C+c])
			}
		}
		return max(-T, min(T, s))
	}
	vy, vo := sum(y), sum(o)
	m := C / nc
	for c := 0; c < C; c++ {
		patch := -1
		for pass := 0; pass < 2; pass++ {
			k, positive, a := y, true, T-vy
			if pass == 1 {
				k, positive, a = o, false, T+vo
			}
			if f.cfg.Structure == conv.PerClass && c/m != k {
				continue
			}
			if f.rng.Float64()*float64(2*T) >= float64(a) {
				continue
			}
			inc := f.inc[c*nw : (c+1)*nw]
			if patch < 0 {
				if f.out[c] {
					f.fire = f.patches.Firing(inc, f.fire[:0])
					patch = int(f.fire[f.rng.IntN(len(f.fire))])
				} else {
					patch = f.rng.IntN(f.cfg.Shape.Patches())
				}
				f.patches.Unpack(patch, f.lit)
			}
			wt := &f.head.Weights[k*C+c]
			if (*wt >= 0) == positive {
				fires := f.out[c]
				if b := f.cfg.LiteralBudget; b > 0 && fires {
					n := 0
					for _, wd := range inc {
						n += bits.OnesCount64(wd)
					}
					fires = n < b
				}
				f.typeI(c, fires)
			} else {
				f.typeII(c, inc)
			}
			if f.cfg.Structure == conv.Coalesced && f.out[c] {
				if clip := f.cfg.Clip(); positive && *wt < clip {
					*wt++
				} else if !positive && *wt > -clip {
					*wt--
				}
			}
		}
	}
}

func (f *Float) apply(k ptm.TPM, ta int) {
	p := f.spv[ta*f.n2 : (ta+1)*f.n2]
	ptm.ApplyTPM(k, p, f.cfg.S)
	var s float64
	for _, v := range p[f.cfg.N:] {
		s += v
	}
	f.pinc[ta] = min(1, s)
}

// typeI: consistent rule, TPM1 for a literal of value 1 when the clause
// fired (within its literal budget; at probability 1, shiftUp, with
// Config.BoostTruePositive), TPM3 otherwise.
func (f *Float) typeI(c int, fires bool) {
	for i, v := range f.lit {
		k := ptm.TPM3
		if fires && v {
			if f.cfg.BoostTruePositive {
				f.shiftUp(c*f.nl + i)
				continue
			}
			k = ptm.TPM1
		}
		f.apply(k, c*f.nl+i)
	}
}

// shiftUp is TPM1 at move probability 1 (Config.BoostTruePositive):
// every state but the top hands all its mass up one state.
func (f *Float) shiftUp(ta int) {
	p := f.SPV(ta)
	top := f.n2 - 1
	p[top] += p[top-1]
	copy(p[1:top], p[:top-1])
	p[0] = 0
	var s float64
	for _, v := range p[f.cfg.N:] {
		s += v
	}
	f.pinc[ta] = min(1, s)
}

// typeII: TPM4 on the patch's 0-literals when none was sampled included,
// on the single included one when exactly one was.
func (f *Float) typeII(c int, inc []uint64) {
	z, who := 0, 0
	for i, v := range f.lit {
		if !v && inc[i/64]>>uint(i%64)&1 == 1 {
			z++
			who = i
		}
	}
	switch z {
	case 0:
		for i, v := range f.lit {
			if !v {
				f.apply(ptm.TPM4, c*f.nl+i)
			}
		}
	case 1:
		f.apply(ptm.TPM4, c*f.nl+who)
	}
}

// Model returns the float model: include probability = include mass of
// each SPV, the current weights.
func (f *Float) Model() *conv.Model {
	h := f.head
	h.Weights = append([]int32(nil), f.head.Weights...)
	return &conv.Model{Head: h, Include: append([]float64(nil), f.pinc...)}
}

// SPV returns the SPV of TA ta (2N values; the caller must not change it).
func (f *Float) SPV(ta int) []float64 { return f.spv[ta*f.n2 : (ta+1)*f.n2 : (ta+1)*f.n2] }
