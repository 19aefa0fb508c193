package fixedtrain

import "github.com/ptmhw/ptm/golden/ptm"

// The parallel schedule of one example (docs/fixed-point-training.md 5.2,
// 5.3 and 10). The TM updates of an example touch disjoint clauses, lanes
// and TAs, and the negative class depends only on the control lane, so
// both TM updates of a multiclass example run at once:
//
//  1. phase A: the sampling of every clause of the example's TMs, split
//     into one contiguous range of clauses per worker;
//  2. on the caller: the class sums, the selection draw of every clause
//     and the feedback jobs;
//  3. phase B: the jobs, spread over the workers by their cost. The Type
//     I feedback of a clause is cut into one range of literals per worker:
//     the lane state at the start of each range is the lane after the
//     selection draw advanced by the draws of the literals before it, a
//     linear map of the 64-bit LFSR state (a jump matrix, computed once),
//     so every TA receives the draw it would receive serially. Type II
//     (no draws) is cut into ranges of the 0-literals.
//
// Every TA and every lane therefore ends in the state of the serial
// trainer, for any number of workers (TestParallelEqualsSerial).

// Phases of pool.run.
const (
	phaseSample = iota
	phaseFeedback
)

// Job kinds.
const (
	jobTypeI  = iota // Type I on literals i0..i1-1 of clause c
	jobTypeII        // TPM4 on the 0-literals lit0[i0:i1] of clause c
	jobTPM4          // TPM4 on literal i0 of clause c
)

// job is one unit of phase B.
type job struct {
	c, i0, i1 int32
	kind      uint8
	fires     bool
	last      bool   // Type I: the range ends at the clause's last literal
	lane      uint64 // Type I: the clause lane before the range's first draw
}

// sampleRange is a range of clauses a worker samples in phase A; slot
// selects the partial class sum (0: first TM of the example, 1: second).
type sampleRange struct{ a, b, slot int }

// parState is the scratch of the parallel schedule.
type parState struct {
	ranges [][]sampleRange // per worker
	part   [][2]int        // per worker: partial class sums
	jobs   []job
	mine   [][]int32 // per worker: indices into jobs
	load   []int
	jumps  [][64]uint64 // jumps[k]: the lane map of k*2o/w draws, k = 1..w-1 (jumps[0] unused)
	splitI bool         // Type I is cut into w literal ranges
}

// Jobs below these sizes stay whole: the jump and the hand-off cost more
// than the work they would share.
const (
	splitTypeILits  = 64  // literals per clause
	splitTypeIIZero = 256 // 0-literals per example
)

// jumpMatrix returns the columns of the linear map that advances a lane by
// k 16-bit draws: column b is the state reached from the state 1<<b.
func jumpMatrix(k int) (j [64]uint64) {
	for b := range j {
		l := lane{s: 1 << uint(b)}
		for i := 0; i < k; i++ {
			l.draw16()
		}
		j[b] = l.s
	}
	return j
}

// jump applies the jump matrix j to the lane state s.
func jump(j *[64]uint64, s uint64) uint64 {
	var r uint64
	for b := 0; b < 64; b++ {
		r ^= j[b] & -(s >> uint(b) & 1)
	}
	return r
}

// initPar prepares the parallel schedule's scratch for w workers.
func (tr *Trainer) initPar(w int) {
	ps := &parState{ranges: make([][]sampleRange, w), part: make([][2]int, w), mine: make([][]int32, w), load: make([]int, w)}
	ps.splitI = tr.lits >= splitTypeILits
	if ps.splitI {
		ps.jumps = make([][64]uint64, w)
		for k := 1; k < w; k++ {
			ps.jumps[k] = jumpMatrix(k * tr.lits / w)
		}
	}
	tr.par = ps
}

// useParallel reports whether an example takes the parallel schedule.
func (tr *Trainer) useParallel() bool {
	return tr.workers >= 2 && tr.clauses*tr.lits >= tr.parallelMin
}

// updateParallel is update's TM updates on the worker pool: the same
// words as updateTM on each of the example's TMs in turn.
func (tr *Trainer) updateParallel(y int) {
	w := tr.workers
	if tr.par == nil {
		tr.initPar(w)
	}
	ps := tr.par
	m := tr.clauses
	var tms [2]int
	var pos [2]bool
	nt := 1
	if tr.binary {
		tms[0], pos[0] = 0, y == 1
	} else {
		other := int(uint64(tr.ctl.draw32()) * uint64(tr.classes-1) >> 32)
		if other >= y {
			other++
		}
		tms[0], pos[0] = y, true
		tms[1], pos[1] = other, false
		nt = 2
	}
	// Phase A: the nt*m clauses cut into w contiguous ranges.
	total := nt * m
	for k := 0; k < w; k++ {
		ps.ranges[k] = ps.ranges[k][:0]
		ps.part[k] = [2]int{}
		a, b := k*total/w, (k+1)*total/w
		for a < b {
			slot := a / m
			e := min(b, (slot+1)*m)
			c0 := tms[slot] * m
			ps.ranges[k] = append(ps.ranges[k], sampleRange{c0 + a - slot*m, c0 + e - slot*m, slot})
			a = e
		}
	}
	pl := tr.workerPool()
	pl.run(tr, phaseSample)
	// Class sums, selection, jobs.
	ps.jobs = ps.jobs[:0]
	for k := range ps.mine {
		ps.mine[k] = ps.mine[k][:0]
		ps.load[k] = 0
	}
	T := tr.cfg.T
	twoT := uint64(2 * T)
	paper := tr.cfg.Feedback == ptm.PaperFeedback
	nl := tr.lits
	nz := len(tr.lit0)
	for s := 0; s < nt; s++ {
		v := 0
		for k := 0; k < w; k++ {
			v += ps.part[k][s]
		}
		v = max(-T, min(T, v))
		a := T - v
		if !pos[s] {
			a = T + v
		}
		lim := uint64(a) << 16
		c0 := tms[s] * m
		for c := c0; c < c0+m; c++ {
			l := &tr.clane[c]
			if uint64(l.draw16())*twoT >= lim {
				continue
			}
			if (c%m%2 == 0) == pos[s] {
				fires := tr.zeros[c] == 0
				if !ps.splitI {
					tr.addJob(job{c: int32(c), i0: 0, i1: int32(nl), kind: jobTypeI, fires: fires, last: true, lane: l.s}, nl*4)
					continue
				}
				for k := 0; k < w; k++ {
					i0, i1 := k*nl/w, (k+1)*nl/w
					s0 := l.s
					if k > 0 {
						s0 = jump(&ps.jumps[k], s0)
					}
					tr.addJob(job{c: int32(c), i0: int32(i0), i1: int32(i1), kind: jobTypeI, fires: fires, last: k == w-1, lane: s0}, (i1-i0)*4)
				}
				continue
			}
			z := tr.zeros[c]
			switch {
			case z >= 2 || (z == 1 && paper) || nz == 0:
			case z == 1:
				tr.addJob(job{c: int32(c), i0: tr.who[c], kind: jobTPM4}, 1)
			case nz < splitTypeIIZero:
				tr.addJob(job{c: int32(c), i0: 0, i1: int32(nz), kind: jobTypeII}, nz)
			default:
				for k := 0; k < w; k++ {
					tr.addJob(job{c: int32(c), i0: int32(k * nz / w), i1: int32((k + 1) * nz / w), kind: jobTypeII}, nz/w)
				}
			}
		}
	}
	if len(ps.jobs) > 0 {
		pl.run(tr, phaseFeedback)
	}
}

// addJob appends j to the jobs and gives it to the least loaded worker.
func (tr *Trainer) addJob(j job, cost int) {
	ps := tr.par
	best := 0
	for k := 1; k < len(ps.load); k++ {
		if ps.load[k] < ps.load[best] {
			best = k
		}
	}
	ps.load[best] += cost
	ps.mine[best] = append(ps.mine[best], int32(len(ps.jobs)))
	ps.jobs = append(ps.jobs, j)
}

// work is worker k's share of a phase.
func (tr *Trainer) work(kind, k int) {
	ps := tr.par
	switch kind {
	case phaseSample:
		for _, r := range ps.ranges[k] {
			ps.part[k][r.slot] += tr.sample(r.a, r.b)
		}
	case phaseFeedback:
		for _, ji := range ps.mine[k] {
			j := &ps.jobs[ji]
			c := int(j.c)
			switch j.kind {
			case jobTypeI:
				s := tr.typeIRange(c, int(j.i0), int(j.i1), j.fires, j.lane)
				if j.last {
					tr.clane[c].s = s
				}
			case jobTypeII:
				tr.tpm4List(c*tr.lits, tr.lit0[j.i0:j.i1])
			case jobTPM4:
				tr.tpm4(c*tr.lits + int(j.i0))
			}
		}
	}
}
