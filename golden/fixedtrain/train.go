package fixedtrain

import (
	"fmt"
	"runtime"

	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/phaseprof"
)

// Widths of the SPV mass.
const (
	// MinBits is the smallest B of the trainer's SPVs (inference banks
	// may be narrower: fixed.MinBits).
	MinBits = 8
	// MaxBits is the largest B: a state holding the whole mass 2^B must fit
	// a 16-bit word (an SPRAM word on the UP5K, a uint16 here).
	MaxBits = 15
	// DefaultBits is the B used when none is given.
	DefaultBits = 15
)

// Config is the trainer's configuration: the PTM hyper-parameters (the
// float trainer's, so that the two are compared on equal terms) and the
// fixed-point width.
type Config struct {
	ptm.Params
	// Bits is B: every SPV holds integer masses summing to exactly 2^B,
	// and P(include) is the include mass over 2^B. MinBits..MaxBits;
	// 0 means DefaultBits.
	Bits int
	// Workers bounds the goroutines that update disjoint clauses of one
	// TM at once; 0 means runtime.GOMAXPROCS(0). The result does not
	// depend on it (every clause has its own random lane).
	Workers int
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	if err := c.Params.Validate(); err != nil {
		return err
	}
	if c.Bits != 0 && (c.Bits < MinBits || c.Bits > MaxBits) {
		return fmt.Errorf("fixedtrain: %d-bit SPVs, want %d..%d", c.Bits, MinBits, MaxBits)
	}
	if c.Workers < 0 {
		return fmt.Errorf("fixedtrain: %d workers, want >= 0", c.Workers)
	}
	return nil
}

// Trainer is the fixed-point PTM and its training state: the integer SPVs,
// the include masses, the random lanes.
type Trainer struct {
	cfg                  Config
	bits                 int
	binary               bool
	classes, features    int
	tms, clauses, lits   int
	spvs                            // TA (t, j, i) at ((t*m+j)*2o+i)*2N
	clane                []lane     // one lane per global clause
	scratch              [][]uint16 // per worker: transfers of one TPM (2N+2 words)
	ctl                  lane       // the control lane: shuffles and negative classes
	lit                  []bool     // the literal values of the current example
	lit0                 []int32    // its literals of value 0, in increasing order
	zeros                []uint8    // included 0-literals sampled per global clause, capped at 2
	who                  []int32    // the last included 0-literal per global clause
	order                []int
	workers, parallelMin int
	pool                 *pool     // the worker goroutines, started on first use
	par                  *parState // the parallel schedule's scratch
	prof                 *phaseprof.Profile
	// Epochs counts the epochs completed.
	Epochs int
	// Progress, if set, is called within RunEpoch every ptm.ProgressRows
	// rows and after the last one, with the rows done and the rows of the
	// epoch.
	Progress func(done, total int)
}

// parallelTAs is the fewest TAs per TM from which an example takes the
// parallel schedule (sched.go) when there are several workers. Below it
// an example lasts a few microseconds and two hand-offs per example cost
// more than they save: the benchmark's fixed-forced rows run 12 features
// x 100 clauses (2,400 TAs per TM) at twice the serial CPU time for no
// wall-clock gain on the loaded 2-core machine, while 784 features x 10
// clauses (15,680) gain (docs/fixed-point-training.md 10).
const parallelTAs = 4096

// New returns an untrained fixed-point PTM: every SPV holds 2^(B-1) in
// states N-1 and N (the float trainer's p(S_N) = p(S_N+1) = 0.5), and
// every lane seeded from cfg.Seed.
func New(cfg Config, numClasses, numFeatures int, binary bool) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Bits == 0 {
		cfg.Bits = DefaultBits
	}
	switch {
	case numClasses < 2:
		return nil, fmt.Errorf("%w: %d classes, want >= 2", ptm.ErrShape, numClasses)
	case binary && numClasses != 2:
		return nil, fmt.Errorf("%w: binary model with %d classes", ptm.ErrShape, numClasses)
	case numFeatures < 1:
		return nil, fmt.Errorf("%w: %d features, want >= 1", ptm.ErrShape, numFeatures)
	}
	tr := &Trainer{cfg: cfg, bits: cfg.Bits, binary: binary, classes: numClasses, features: numFeatures,
		tms: numClasses, clauses: cfg.Clauses, lits: 2 * numFeatures, spvs: spvs{n: cfg.N, mv: MovesOf(cfg.S)}}
	if binary {
		tr.tms = 1
	}
	tas := tr.tms * tr.clauses * tr.lits
	if uint64(tas)*uint64(2*cfg.N) > 1<<34 {
		return nil, fmt.Errorf("%w: %d TAs of %d states is too large", ptm.ErrShape, tas, 2*cfg.N)
	}
	n2 := 2 * tr.n
	tr.spv = make([]uint16, tas*n2)
	tr.inc = make([]uint16, tas, tas+1) // sample8's gather reads one word past a TA
	tr.lo = make([]uint16, tas)
	tr.hi = make([]uint16, tas)
	half := uint16(1) << uint(tr.bits-1)
	for ta := 0; ta < tas; ta++ {
		tr.spv[ta*n2+tr.n-1] = half
		tr.spv[ta*n2+tr.n] = half
		tr.inc[ta] = half
		tr.lo[ta], tr.hi[ta] = uint16(tr.n-1), uint16(tr.n)
	}
	tr.clane = make([]lane, tr.tms*tr.clauses)
	for c := range tr.clane {
		tr.clane[c].s = ClauseSeed(cfg.Seed, c)
	}
	tr.ctl.s = ControlSeed(cfg.Seed)
	tr.lit = make([]bool, tr.lits)
	tr.lit0 = make([]int32, 0, tr.lits)
	tr.zeros = make([]uint8, len(tr.clane))
	tr.who = make([]int32, len(tr.clane))
	tr.workers = cfg.Workers
	if tr.workers == 0 {
		tr.workers = runtime.GOMAXPROCS(0)
	}
	tr.parallelMin = parallelTAs
	tr.dith = ditherTable(n2)
	tr.ct = newChunkTables(n2, tr.mv)
	return tr, nil
}

// Config returns the configuration (with Bits resolved).
func (tr *Trainer) Config() Config { return tr.cfg }

// Bits returns B.
func (tr *Trainer) Bits() int { return tr.bits }

// NumTAs is NT * m * 2o.
func (tr *Trainer) NumTAs() int { return len(tr.inc) }

// TAIndex returns the flat index of TA (tm, clause, literal).
func (tr *Trainer) TAIndex(tm, clause, literal int) int {
	return (tm*tr.clauses+clause)*tr.lits + literal
}

// SPV returns a copy of the SPV of TA ta (flat index).
func (tr *Trainer) SPV(ta int) []uint16 {
	n2 := 2 * tr.n
	return append([]uint16(nil), tr.spv[ta*n2:(ta+1)*n2]...)
}

// SPVs returns a copy of every SPV, 2N words per TA in flat TA order: the
// words a hardware trainer's banks must hold.
func (tr *Trainer) SPVs() []uint16 { return append([]uint16(nil), tr.spv...) }

// IncludeMass returns the include mass of TA ta: P(include) * 2^B.
func (tr *Trainer) IncludeMass(ta int) int { return int(tr.inc[ta]) }

// CheckData verifies that X and y fit the trainer.
func (tr *Trainer) CheckData(X [][]bool, y []int) error {
	if len(X) != len(y) {
		return fmt.Errorf("fixedtrain: %d inputs but %d labels", len(X), len(y))
	}
	for r, x := range X {
		if len(x) != tr.features {
			return fmt.Errorf("fixedtrain: row %d has %d features, model has %d", r, len(x), tr.features)
		}
		if y[r] < 0 || y[r] >= tr.classes {
			return fmt.Errorf("fixedtrain: row %d label %d outside 0..%d", r, y[r], tr.classes-1)
		}
	}
	return nil
}

// RunEpoch runs one pass over the data in an order shuffled with the
// control lane (docs/fixed-point-training.md 5.1).
func (tr *Trainer) RunEpoch(X [][]bool, y []int) error {
	if err := tr.CheckData(X, y); err != nil {
		return err
	}
	if len(tr.order) != len(X) {
		tr.order = make([]int, len(X))
	}
	for i := range tr.order {
		tr.order[i] = i
	}
	for i := len(tr.order) - 1; i >= 1; i-- {
		j := int(uint64(tr.ctl.draw32()) * uint64(i+1) >> 32)
		tr.order[i], tr.order[j] = tr.order[j], tr.order[i]
	}
	for k, r := range tr.order {
		tr.update(X[r], y[r])
		if tr.Progress != nil && ((k+1)%ptm.ProgressRows == 0 || k+1 == len(tr.order)) {
			tr.Progress(k+1, len(tr.order))
		}
	}
	tr.Epochs++
	return nil
}

// Update trains on one example (docs/fixed-point-training.md 5.2).
func (tr *Trainer) Update(x []bool, y int) error {
	if err := tr.CheckData([][]bool{x}, []int{y}); err != nil {
		return err
	}
	tr.update(x, y)
	return nil
}

func (tr *Trainer) update(x []bool, y int) {
	o := tr.features
	// The literals and the 0-literals in increasing order, without a
	// branch on the (random) feature values: every index is written and
	// the end advances only past the 0-literals.
	lit, neg := tr.lit[:o:o], tr.lit[o:2*o:2*o]
	z := tr.lit0[: 2*o : 2*o]
	x = x[:o:o]
	n := 0
	for i, v := range x {
		lit[i], neg[i] = v, !v
		z[n] = int32(i)
		n += int(b2u(!v))
	}
	for i, v := range x {
		z[n] = int32(o + i)
		n += int(b2u(v))
	}
	tr.lit0 = z[:n]
	if tr.useParallel() {
		tr.updateParallel(y)
		return
	}
	if tr.binary {
		tr.updateTM(0, y == 1)
		return
	}
	// The negative class is drawn first (the control lane serves nothing
	// else within an example) and both classes' clauses are sampled
	// before either gets feedback, as on the parallel schedule: the two
	// TMs share no clause, lane or TA, so the words are those of one TM
	// update after the other. Adjacent classes (always, with two) are
	// sampled as one range, 8 clauses per sample8 call.
	other := int(uint64(tr.ctl.draw32()) * uint64(tr.classes-1) >> 32)
	if other >= y {
		other++
	}
	m := tr.clauses
	var vy, vo int
	if lo := min(y, other); max(y, other) == lo+1 {
		tr.sample(lo*m, lo*m+2*m)
		vy, vo = tr.classSum(y), tr.classSum(other)
	} else {
		vy = tr.sample(y*m, y*m+m)
		vo = tr.sample(other*m, other*m+m)
	}
	tr.feedbackTM(y, true, vy)
	tr.feedbackTM(other, false, vo)
}

// classSum is the class sum of TM t from its clauses' sampled 0-literal
// counts (sample's partial sum over the TM's clauses).
func (tr *Trainer) classSum(t int) (v int) {
	m := tr.clauses
	for j, z := range tr.zeros[t*m : t*m+m] {
		if z == 0 {
			v += 1 - 2*(j%2) // even clauses vote for the class
		}
	}
	return v
}

// b2u is 1 for true and 0 for false (a flag move, not a branch).
func b2u(b bool) uint8 {
	var u uint8
	if b {
		u = 1
	}
	return u
}

// updateTM samples the clauses of TM t, then gives them feedback towards
// target positive (y = 1) or negative, on the calling goroutine
// (updateParallel is the schedule on several).
func (tr *Trainer) updateTM(t int, positive bool) {
	c0 := t * tr.clauses
	tr.feedbackTM(t, positive, tr.sample(c0, c0+tr.clauses))
}

// feedbackTM gives the clauses of TM t, sampled with class sum v, their
// feedback towards target positive or negative.
func (tr *Trainer) feedbackTM(t int, positive bool, v int) {
	m := tr.clauses
	c0 := t * m
	T := tr.cfg.T
	v = max(-T, min(T, v))
	a := T - v
	if !positive {
		a = T + v
	}
	tr.feedback(c0, c0+m, positive, a)
}

// sample draws, for every global clause c in a..b-1, the actions of its
// TAs of literals of value 0 from the clause's lane, records how many were
// included (capped at 2) and the last one, and returns the partial class
// sum of the clauses that fire.
func (tr *Trainer) sample(a, b int) (v int) {
	if useSample8 && useChunked {
		return tr.sampleAVX512(a, b)
	}
	shift := uint(16 - tr.bits)
	nl := tr.lits
	c := a
	// Four clauses at a time: their lanes are independent, so the four
	// draw chains overlap; the results are those of one clause at a time.
	for ; c+4 <= b; c += 4 {
		s0, s1, s2, s3 := tr.clane[c].s, tr.clane[c+1].s, tr.clane[c+2].s, tr.clane[c+3].s
		inc0 := tr.inc[c*nl : (c+1)*nl : (c+1)*nl]
		inc1 := tr.inc[(c+1)*nl : (c+2)*nl : (c+2)*nl]
		inc2 := tr.inc[(c+2)*nl : (c+3)*nl : (c+3)*nl]
		inc3 := tr.inc[(c+3)*nl : (c+4)*nl : (c+4)*nl]
		var z0, z1, z2, z3 uint32
		var w0, w1, w2, w3 int32
		for _, i := range tr.lit0 {
			r0 := (s0 ^ s0>>1 ^ s0>>3 ^ s0>>4) & 0xFFFF
			r1 := (s1 ^ s1>>1 ^ s1>>3 ^ s1>>4) & 0xFFFF
			r2 := (s2 ^ s2>>1 ^ s2>>3 ^ s2>>4) & 0xFFFF
			r3 := (s3 ^ s3>>1 ^ s3>>3 ^ s3>>4) & 0xFFFF
			s0 = s0>>16 | r0<<48
			s1 = s1>>16 | r1<<48
			s2 = s2>>16 | r2<<48
			s3 = s3>>16 | r3<<48
			b0 := (r0 - uint64(inc0[i])<<shift) >> 63 // 1 iff included
			z0 += uint32(b0)
			w0 ^= (w0 ^ i) & -int32(b0)
			b1 := (r1 - uint64(inc1[i])<<shift) >> 63 // 1 iff included
			z1 += uint32(b1)
			w1 ^= (w1 ^ i) & -int32(b1)
			b2 := (r2 - uint64(inc2[i])<<shift) >> 63 // 1 iff included
			z2 += uint32(b2)
			w2 ^= (w2 ^ i) & -int32(b2)
			b3 := (r3 - uint64(inc3[i])<<shift) >> 63 // 1 iff included
			z3 += uint32(b3)
			w3 ^= (w3 ^ i) & -int32(b3)
		}
		tr.clane[c].s, tr.clane[c+1].s, tr.clane[c+2].s, tr.clane[c+3].s = s0, s1, s2, s3
		for k, z := range [4]uint32{z0, z1, z2, z3} {
			tr.zeros[c+k], tr.who[c+k] = uint8(min(z, 2)), [4]int32{w0, w1, w2, w3}[k]
			if z == 0 {
				if (c+k)%tr.clauses%2 == 0 { // even clauses vote for the class
					v++
				} else {
					v--
				}
			}
		}
	}
	for ; c < b; c++ {
		l := tr.clane[c]
		inc := tr.inc[c*nl : (c+1)*nl : (c+1)*nl]
		var z uint8
		var who int32
		for _, i := range tr.lit0 {
			if l.draw16() < uint32(inc[i])<<shift {
				z++
				who = i
			}
		}
		tr.clane[c] = l
		if z > 2 {
			z = 2
		}
		tr.zeros[c], tr.who[c] = z, who
		if z == 0 {
			if c%tr.clauses%2 == 0 { // even clauses vote for the class
				v++
			} else {
				v--
			}
		}
	}
	return v
}

// feedback selects each global clause c in a..b-1 with probability
// about a/2T (one draw) and applies Type I or Type II feedback to it.
func (tr *Trainer) feedback(a0, b0 int, positive bool, a int) {
	lim := uint64(a) << 16
	twoT := uint64(2 * tr.cfg.T)
	for c := a0; c < b0; c++ {
		l := &tr.clane[c]
		if uint64(l.draw16())*twoT >= lim {
			continue
		}
		if (c%tr.clauses%2 == 0) == positive {
			tr.typeI(c)
		} else {
			tr.typeII(c)
		}
	}
}

// typeI is Type I feedback for global clause c: every TA of the clause
// gets one rounding draw, in literal order, and TPM1 (literal 1, clause
// fires), TPM2 (literal 0, clause fires, paper rule only) or TPM3.
func (tr *Trainer) typeI(c int) {
	if typeIHook != nil {
		typeIHook(tr, c, tr.zeros[c] == 0)
	}
	tr.clane[c].s = tr.typeIRange(c, 0, tr.lits, tr.zeros[c] == 0, tr.clane[c].s)
}

// typeIHook, when set (by a benchmark, on one goroutine), is called
// before each serial Type I feedback with the clause and whether it fired.
var typeIHook func(tr *Trainer, c int, fires bool)

// typeIRange is Type I feedback for the literals i0..i1-1 of global
// clause c, whose lane holds s before the draw of literal i0; it returns
// the lane after the draw of literal i1-1 (and leaves tr.clane alone).
func (tr *Trainer) typeIRange(c, i0, i1 int, fires bool, s uint64) uint64 {
	n2 := 2 * tr.n
	paper := tr.cfg.Feedback == ptm.PaperFeedback
	if useTypeI32 && useChunked && tr.ct != nil && !paper {
		return tr.typeIChunked(c, i0, i1, fires, s)
	}
	l := lane{s: s}
	base := c * tr.lits
	top := uint16(n2 - 1)
	for i := i0; i < i1; i++ {
		r := l.draw16()
		ta := base + i
		k := TPM3
		if fires {
			if tr.lit[i] {
				k = TPM1
			} else if paper {
				k = TPM2
			}
		}
		lo, hi := tr.lo[ta], tr.hi[ta]
		// Fixed points: all mass in the bottom state under TPM2/TPM3, in
		// the top state under TPM1.
		if (k != TPM1 && hi == 0) || (k == TPM1 && lo == top) {
			continue
		}
		tr.apply(k, ta, lo, hi, r)
	}
	return l.s
}

// typeII is Type II feedback for global clause c (no draws): TPM4 on the
// TAs of literals of value 0 when no 0-literal was sampled included, and
// (consistent rule) on the single included one when exactly one was.
func (tr *Trainer) typeII(c int) {
	z := tr.zeros[c]
	if z >= 2 || (z == 1 && tr.cfg.Feedback == ptm.PaperFeedback) {
		return
	}
	base := c * tr.lits
	if z == 1 {
		tr.tpm4(base + int(tr.who[c]))
		return
	}
	tr.tpm4List(base, tr.lit0)
}
