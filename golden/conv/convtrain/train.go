package convtrain

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/internal/phaseprof"
)

// Config is the trainer's configuration.
type Config struct {
	Shape     conv.Shape
	Structure conv.Structure
	Classes   int
	// Clauses is C, all clauses (per-class: a multiple of Classes).
	Clauses int
	T       int
	S       float64
	N       int
	// Bits is B of the SPVs (fixedtrain.MinBits..MaxBits); 0 means
	// fixedtrain.DefaultBits.
	Bits int
	Seed uint64
	// Workers is the number of goroutines updating disjoint clauses; 0
	// means runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int
	// WeightClip bounds the coalesced class weights: they saturate at
	// +-WeightClip (1..conv.MaxWeight); 0 means conv.MaxWeight. Per-class
	// weights are fixed at +-1, so it must be 0 for them.
	WeightClip int
	// LiteralBudget, when not 0 (1..literals), is the per-clause literal
	// budget: Type I feedback to a clause whose sampled action includes
	// LiteralBudget literals or more is given as if the clause had not
	// fired (package doc, step 3). 0 means no budget.
	LiteralBudget int
	// BoostTruePositive, when true, gives Type Ia feedback's TPM1 (a
	// literal of value 1 in the patch of a clause that fired) move
	// probability 1 instead of (s-1)/s: tmu's
	// boost_true_positive_feedback (package doc). false is the rule
	// before the knob, word for word.
	BoostTruePositive bool
}

// Clip returns the class weights' saturation bound (WeightClip, or
// conv.MaxWeight when it is 0).
func (c Config) Clip() int32 {
	if c.WeightClip == 0 {
		return conv.MaxWeight
	}
	return int32(c.WeightClip)
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	if err := c.Shape.Validate(); err != nil {
		return err
	}
	switch {
	case c.Classes < 2 || c.Classes > conv.MaxClasses:
		return fmt.Errorf("convtrain: %d classes, want 2..%d", c.Classes, conv.MaxClasses)
	case c.Clauses < 1:
		return fmt.Errorf("convtrain: %d clauses, want >= 1", c.Clauses)
	case c.Structure == conv.PerClass && c.Clauses%c.Classes != 0:
		return fmt.Errorf("convtrain: per-class structure needs clauses (%d) a multiple of classes (%d)", c.Clauses, c.Classes)
	case c.Structure != conv.PerClass && c.Structure != conv.Coalesced:
		return fmt.Errorf("convtrain: class structure %q, want %q or %q", c.Structure, conv.PerClass, conv.Coalesced)
	case c.T < 1:
		return fmt.Errorf("convtrain: T = %d, want >= 1", c.T)
	case c.Workers < 0:
		return fmt.Errorf("convtrain: %d workers, want >= 0", c.Workers)
	case c.WeightClip < 0 || c.WeightClip > conv.MaxWeight:
		return fmt.Errorf("convtrain: weight clip %d, want 1..%d (0: %d)", c.WeightClip, conv.MaxWeight, conv.MaxWeight)
	case c.WeightClip != 0 && c.Structure == conv.PerClass:
		return fmt.Errorf("convtrain: weight clip %d with the per-class structure, whose weights are fixed at +-1 (want 0)", c.WeightClip)
	case c.LiteralBudget < 0 || c.LiteralBudget > c.Shape.Literals():
		return fmt.Errorf("convtrain: literal budget %d, want 1..%d (the clause's literals) or 0 for none", c.LiteralBudget, c.Shape.Literals())
	}
	return nil
}

// Trainer is the fixed-point convolutional PTM in training.
type Trainer struct {
	cfg    Config
	head   conv.Head
	cl     *fixedtrain.Clauses
	ctl    *lfsr.LFSR
	nw, nl int
	inc    []uint64 // sampled include words per clause
	out    []bool   // clause outputs of the current step
	ninc   []int32  // included literals per clause of the current step (LiteralBudget only)
	clip   int32    // the weights' bound (Config.Clip)
	// The image's literals: lp (literal-major, planesFit shapes) or
	// patches (patch-major, the others); fmask holds, per clause, the
	// patches where it fired (lp's words per plane each).
	lp      *litPlanes
	fmask   []uint64
	patches *conv.Patches
	planes  []bool
	order   []int
	y, o    int
	vy, vo  int
	workers []*worker
	prof    *phaseprof.Profile // set only by the benchmarks
	// Epochs counts the epochs completed.
	Epochs int
	// Progress, if set, is called within RunEpoch every 1,000 images and
	// after the last one.
	Progress func(done, total int)
}

type worker struct {
	k    int // index in Trainer.workers
	a, b int // coalesced: the worker's clauses a..b-1
	// per-class: the worker's clauses of class k are k*m+ca..k*m+cb-1 (m
	// clauses per class), so the two classes of a step split evenly
	ca, cb int
	lit    []bool
	fire   []int32
	start  chan int
	done   *sync.WaitGroup
}

// New returns an untrained trainer. Call Close when done with it to stop
// its workers.
func New(cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Bits == 0 {
		cfg.Bits = fixedtrain.DefaultBits
	}
	sh := cfg.Shape
	cl, err := fixedtrain.NewClauses(cfg.Clauses, sh.Literals(), cfg.N, cfg.Bits, cfg.S, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("convtrain: %w", err)
	}
	ctl, err := lfsr.New(fixedtrain.LaneWidth, 32, fixedtrain.ControlSeed(cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("convtrain: control lane: %w", err)
	}
	tr := &Trainer{cfg: cfg, cl: cl, ctl: ctl, nw: sh.Words(), nl: sh.Literals(),
		inc: make([]uint64, cfg.Clauses*sh.Words()), out: make([]bool, cfg.Clauses), clip: cfg.Clip()}
	if cfg.LiteralBudget > 0 {
		tr.ninc = make([]int32, cfg.Clauses)
	}
	if usePlanes && planesFit(sh) {
		tr.lp = newLitPlanes(sh)
		tr.fmask = make([]uint64, cfg.Clauses*tr.lp.pw)
	} else {
		tr.patches = conv.NewPatches(sh)
	}
	tr.head = conv.Head{Shape: sh, Structure: cfg.Structure, Classes: cfg.Classes, Clauses: cfg.Clauses, T: cfg.T}
	if cfg.Structure == conv.PerClass {
		tr.head.Weights = conv.PerClassWeights(cfg.Classes, cfg.Clauses/cfg.Classes)
	} else {
		// Coalesced: random signs from the control lane, one bit per weight.
		tr.head.Weights = make([]int32, cfg.Classes*cfg.Clauses)
		for i := range tr.head.Weights {
			tr.head.Weights[i] = int32(tr.ctl.Next()&1)*2 - 1
		}
	}
	nwk := cfg.Workers
	if nwk == 0 {
		nwk = runtime.GOMAXPROCS(0)
	}
	nwk = max(1, min(nwk, cfg.Clauses))
	var wg sync.WaitGroup
	for k := 0; k < nwk; k++ {
		m := cfg.Clauses / cfg.Classes
		w := &worker{k: k, a: k * cfg.Clauses / nwk, b: (k + 1) * cfg.Clauses / nwk, ca: k * m / nwk, cb: (k + 1) * m / nwk, lit: make([]bool, tr.nl),
			fire: make([]int32, 0, sh.Patches()), done: &wg}
		if k > 0 {
			w.start = make(chan int)
			go tr.serve(w)
		}
		tr.workers = append(tr.workers, w)
	}
	return tr, nil
}

// Close stops the worker goroutines; the trainer must not train after it.
func (tr *Trainer) Close() {
	for _, w := range tr.workers[1:] {
		if w.start != nil {
			close(w.start)
			w.start = nil
		}
	}
}

func (tr *Trainer) serve(w *worker) {
	for phase := range w.start {
		if tr.prof != nil {
			tr.prof.Time(w.k, func() { tr.run(w, phase) })
		} else {
			tr.run(w, phase)
		}
		w.done.Done()
	}
}

// parallel runs phase on every worker's clauses, worker 0 on the calling
// goroutine, and waits for all.
func (tr *Trainer) parallel(phase int) {
	w0 := tr.workers[0]
	w0.done.Add(len(tr.workers) - 1)
	for _, w := range tr.workers[1:] {
		w.start <- phase
	}
	pr := tr.prof
	if pr == nil {
		tr.run(w0, phase)
		w0.done.Wait()
		return
	}
	pr.Begin()
	pr.Time(0, func() { tr.run(w0, phase) })
	w0.done.Wait()
	pr.End()
}

const (
	phaseSample = iota
	phaseFeedback
)

func (tr *Trainer) run(w *worker, phase int) {
	if tr.cfg.Structure == conv.PerClass {
		tr.runPerClass(w, phase)
		return
	}
	switch phase {
	case phaseSample:
		for c := w.a; c < w.b; c++ {
			tr.sample(c)
		}
	case phaseFeedback:
		for c := w.a; c < w.b; c++ {
			tr.feedback(w, c)
		}
	}
}

// runPerClass is run for the per-class structure: only the clauses of
// classes y and o are sampled and evaluated (the class sums and the
// feedback use no other), every other clause's lane is moved past its
// sampling draws (SkipSample), so each lane makes the same draws as if
// every clause were sampled.
func (tr *Trainer) runPerClass(w *worker, phase int) {
	m := tr.cfg.Clauses / tr.cfg.Classes
	switch phase {
	case phaseSample:
		for k := 0; k < tr.cfg.Classes; k++ {
			for c := k*m + w.ca; c < k*m+w.cb; c++ {
				if k == tr.y || k == tr.o {
					tr.sample(c)
				} else {
					tr.cl.SkipSample(c)
				}
			}
		}
	case phaseFeedback:
		for _, k := range [2]int{tr.y, tr.o} {
			for c := k*m + w.ca; c < k*m+w.cb; c++ {
				tr.feedback(w, c)
			}
		}
	}
}

// sample draws clause c's actions and evaluates it on the image's patches.
func (tr *Trainer) sample(c int) {
	inc := tr.inc[c*tr.nw : (c+1)*tr.nw]
	n := tr.cl.Sample(c, inc)
	if tr.ninc != nil {
		tr.ninc[c] = int32(n)
	}
	if lp := tr.lp; lp != nil {
		tr.out[c] = lp.fires(inc, tr.fmask[c*lp.pw:(c+1)*lp.pw])
		return
	}
	tr.out[c] = tr.patches.FiresAnywhere(inc)
}

// usePlanes selects the literal planes (litPlanes) for the shapes they
// fit; the tests turn it off to compare with conv.Patches, which gives
// the same clause outputs, firing patches and literals.
var usePlanes = true

// fill sets the image's literals from a booleanized image.
func (tr *Trainer) fill(planes []bool) error {
	if tr.lp != nil {
		return tr.lp.fill(planes)
	}
	return tr.patches.Fill(planes)
}

// unpack writes the literals of patch p into dst.
func (tr *Trainer) unpack(p int, dst []bool) {
	if tr.lp != nil {
		tr.lp.unpack(p, dst)
		return
	}
	tr.patches.Unpack(p, dst)
}

// Config returns the configuration (Bits resolved).
func (tr *Trainer) Config() Config { return tr.cfg }

// Head returns the model head with the current weights (shared, not a copy).
func (tr *Trainer) Head() *conv.Head { return &tr.head }

// Clauses returns the automata.
func (tr *Trainer) Clauses() *fixedtrain.Clauses { return tr.cl }

// Update trains on one booleanized image (planes: conv.Encoder's
// Booleanize layout) of label y.
func (tr *Trainer) Update(planes []bool, y int) error {
	if y < 0 || y >= tr.cfg.Classes {
		return fmt.Errorf("convtrain: label %d outside 0..%d", y, tr.cfg.Classes-1)
	}
	if err := tr.fill(planes); err != nil {
		return fmt.Errorf("convtrain: %w", err)
	}
	tr.step(y)
	return nil
}

// RunEpoch runs one pass over booleanized images X with labels y in an
// order shuffled with the control lane.
func (tr *Trainer) RunEpoch(X [][]bool, y []int) error {
	if len(X) != len(y) {
		return fmt.Errorf("convtrain: %d images but %d labels", len(X), len(y))
	}
	want := tr.cfg.Shape.Planes * tr.cfg.Shape.Pixels()
	for r := range X {
		if len(X[r]) != want {
			return fmt.Errorf("convtrain: image %d has %d bits, want %d", r, len(X[r]), want)
		}
		if y[r] < 0 || y[r] >= tr.cfg.Classes {
			return fmt.Errorf("convtrain: image %d label %d outside 0..%d", r, y[r], tr.cfg.Classes-1)
		}
	}
	if len(tr.order) != len(X) {
		tr.order = make([]int, len(X))
	}
	for i := range tr.order {
		tr.order[i] = i
	}
	for i := len(tr.order) - 1; i >= 1; i-- {
		j := int(tr.ctl.Next() * uint64(i+1) >> 32)
		tr.order[i], tr.order[j] = tr.order[j], tr.order[i]
	}
	for k, r := range tr.order {
		if err := tr.fill(X[r]); err != nil {
			return fmt.Errorf("convtrain: image %d: %w", r, err)
		}
		tr.step(y[r])
		if tr.Progress != nil && ((k+1)%1000 == 0 || k+1 == len(tr.order)) {
			tr.Progress(k+1, len(tr.order))
		}
	}
	tr.Epochs++
	return nil
}

func (tr *Trainer) step(y int) {
	// The negative class comes from the control lane, which sampling does
	// not touch: drawing it first lets the per-class structure sample only
	// the clauses of y and o.
	nc := tr.cfg.Classes
	o := int(tr.ctl.Next() * uint64(nc-1) >> 32)
	if o >= y {
		o++
	}
	tr.y, tr.o = y, o
	tr.parallel(phaseSample)
	T := tr.cfg.T
	tr.vy = max(-T, min(T, tr.sum(y)))
	tr.vo = max(-T, min(T, tr.sum(o)))
	tr.parallel(phaseFeedback)
}

// sum is class k's sum over the clause outputs of the step; per-class,
// only class k's clauses (the others have weight 0 for it and were not
// evaluated).
func (tr *Trainer) sum(k int) int {
	C := tr.cfg.Clauses
	w := tr.head.Weights[k*C : (k+1)*C]
	out := tr.out
	if tr.cfg.Structure == conv.PerClass {
		m := C / tr.cfg.Classes
		w, out = w[k*m:(k+1)*m], out[k*m:(k+1)*m]
	}
	s := 0
	for c, f := range out {
		if f {
			s += int(w[c])
		}
	}
	return s
}

// feedback gives clause c its feedback of the step (package doc, step 3).
func (tr *Trainer) feedback(w *worker, c int) {
	C := tr.cfg.Clauses
	T := tr.cfg.T
	twoT := uint64(2 * T)
	patch := -1
	for pass := 0; pass < 2; pass++ {
		k, positive := tr.y, true
		if pass == 1 {
			k, positive = tr.o, false
		}
		if tr.cfg.Structure == conv.PerClass && c/(C/tr.cfg.Classes) != k {
			continue
		}
		a := T - tr.vy
		if !positive {
			a = T + tr.vo
		}
		if uint64(tr.cl.Draw16(c))*twoT >= uint64(a)<<16 {
			continue
		}
		inc := tr.inc[c*tr.nw : (c+1)*tr.nw]
		if patch < 0 {
			patch = tr.choose(w, c, inc)
			tr.unpack(patch, w.lit)
		}
		wt := &tr.head.Weights[k*C+c]
		if (*wt >= 0) == positive {
			// Type Ia when the clause fired within its literal budget,
			// Type Ib (as if it had not fired) otherwise.
			fires := tr.out[c] && (tr.ninc == nil || int(tr.ninc[c]) < tr.cfg.LiteralBudget)
			if tr.cfg.BoostTruePositive {
				tr.cl.TypeIBoost(c, w.lit, fires)
			} else {
				tr.cl.TypeI(c, w.lit, fires)
			}
		} else {
			tr.cl.TypeII(c, w.lit, inc)
		}
		if tr.cfg.Structure == conv.Coalesced && tr.out[c] {
			if positive && *wt < tr.clip {
				*wt++
			} else if !positive && *wt > -tr.clip {
				*wt--
			}
		}
	}
}

// choose draws clause c's feedback patch: uniform among the patches where
// it fires, or among all when it fires nowhere (one 32-bit draw).
func (tr *Trainer) choose(w *worker, c int, inc []uint64) int {
	r := uint64(tr.cl.Draw32(c))
	if !tr.out[c] {
		return int(r * uint64(tr.cfg.Shape.Patches()) >> 32)
	}
	if lp := tr.lp; lp != nil {
		acc := tr.fmask[c*lp.pw : (c+1)*lp.pw]
		return nth(acc, int(r*uint64(count(acc))>>32))
	}
	w.fire = tr.patches.Firing(inc, w.fire[:0])
	return int(w.fire[r*uint64(len(w.fire))>>32])
}

// Model returns the float model: include probability = include mass / 2^B
// (exact), the current weights.
func (tr *Trainer) Model() *conv.Model {
	h := tr.head
	h.Weights = append([]int32(nil), tr.head.Weights...)
	m := &conv.Model{Head: h, Include: make([]float64, h.TAs())}
	scale := 1 / float64(uint32(1)<<uint(tr.cl.Bits()))
	for ta := range m.Include {
		m.Include[ta] = float64(tr.cl.IncludeMass(ta)) * scale
	}
	return m
}

// Bank returns the model quantized to bits-bit include thresholds
// (fixed.MinBits..fixed.MaxBits): every SPV is quantized by the largest
// remainder method (fixed.QuantizeSPV) and the threshold is
// fixed.ThresholdOf, as golden/fixed's Quantize does for tabular models.
func (tr *Trainer) Bank(bits int) (*conv.Bank, error) {
	if err := fixed.CheckBits(bits); err != nil {
		return nil, fmt.Errorf("convtrain: %w", err)
	}
	h := tr.head
	h.Weights = append([]int32(nil), tr.head.Weights...)
	b := &conv.Bank{Head: h, Bits: bits, Thresh: make([]uint32, h.TAs())}
	n2 := 2 * tr.cl.N()
	p := make([]float64, n2)
	q := make([]uint32, n2)
	for ta := range b.Thresh {
		for i, v := range tr.cl.SPV(ta) {
			p[i] = float64(v)
		}
		if err := fixed.QuantizeSPV(p, bits, q); err != nil {
			return nil, fmt.Errorf("convtrain: TA %d: %w", ta, err)
		}
		b.Thresh[ta] = fixed.ThresholdOf(q, bits)
	}
	return b, b.Check()
}
