package fixedtrain

import (
	"fmt"

	"github.com/ptmhw/ptm/golden/lfsr"
)

// ShuffleSeed is the initial state of the host's shuffle lane for a model
// of clauses global clauses (NT*m): lfsr.LaneSeed(Seed32(seed), clauses+1,
// 64), the lane after the last clause lane (docs/fixed-point-training.md
// 5.1). A trainer that leaves the epoch shuffle to the host (the RTL
// trainer, the training board) gets its rows in this lane's order.
func ShuffleSeed(seed uint64, clauses int) uint64 {
	return lfsr.LaneSeed(Seed32(seed), clauses+1, LaneWidth)
}

// Shuffler is the host's shuffle lane: one Fisher-Yates shuffle per epoch
// with 32-bit draws (docs/fixed-point-training.md 5.1 step 1 with this
// lane instead of the control lane).
type Shuffler struct{ l lane }

// NewShuffler returns the shuffle lane of a training run with this seed and
// clauses global clauses.
func NewShuffler(seed uint64, clauses int) *Shuffler {
	return &Shuffler{lane{ShuffleSeed(seed, clauses)}}
}

// Order returns the next epoch's order of rows 0..n-1.
func (s *Shuffler) Order(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	for i := n - 1; i >= 1; i-- {
		j := int(uint64(s.l.draw32()) * uint64(i+1) >> 32)
		order[i], order[j] = order[j], order[i]
	}
	return order
}

// Restore replaces the trainer's SPVs and include masses with spv (2N
// words per TA in flat TA order, as SPVs returns) and inc (one per TA, as
// IncludeMass), e.g. words read back from a hardware trainer, and checks
// them (every SPV sums to 2^B, every include mass is the sum of its
// include states). Model and Bank then export that state. The lanes are
// not restored: the trainer should not train further.
func (tr *Trainer) Restore(spv, inc []uint16) error {
	n2 := 2 * tr.n
	if len(spv) != len(tr.spv) || len(inc) != len(tr.inc) {
		return fmt.Errorf("fixedtrain: restore: %d SPV words and %d include masses, want %d and %d", len(spv), len(inc), len(tr.spv), len(tr.inc))
	}
	copy(tr.spv, spv)
	copy(tr.inc, inc)
	for ta := range tr.inc {
		q := tr.spv[ta*n2 : (ta+1)*n2]
		lo, hi := -1, 0
		for i, v := range q {
			if v != 0 {
				if lo < 0 {
					lo = i
				}
				hi = i
			}
		}
		if lo < 0 {
			return fmt.Errorf("fixedtrain: restore: TA %d has an empty SPV", ta)
		}
		tr.lo[ta], tr.hi[ta] = uint16(lo), uint16(hi)
	}
	if err := tr.Check(); err != nil {
		return fmt.Errorf("fixedtrain: restore: %w", err)
	}
	return nil
}

// Lane returns the state of lane idx: 0 the control lane, 1 + c the lane
// of global clause c (the numbering of a hardware trainer's seed port).
func (tr *Trainer) Lane(idx int) (uint64, error) {
	switch {
	case idx == 0:
		return tr.ctl.s, nil
	case idx >= 1 && idx <= len(tr.clane):
		return tr.clane[idx-1].s, nil
	}
	return 0, fmt.Errorf("fixedtrain: lane %d, want 0..%d", idx, len(tr.clane))
}

// SetLane sets the state of lane idx (numbered as Lane).
func (tr *Trainer) SetLane(idx int, s uint64) error {
	switch {
	case idx == 0:
		tr.ctl.s = s
	case idx >= 1 && idx <= len(tr.clane):
		tr.clane[idx-1].s = s
	default:
		return fmt.Errorf("fixedtrain: lane %d, want 0..%d", idx, len(tr.clane))
	}
	return nil
}
