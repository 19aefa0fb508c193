package fixed

import "fmt"

// SetSeedStep separates the seeds of a request's set runs: set m of a
// request with seed q runs with seed SubSeed(q, m) = q + m*SetSeedStep
// (mod 2^32), so set 0 runs with q itself and a one-set request is exactly
// Run.
const SetSeedStep = 0x9E37_79B9

// SubSeed returns the seed of set m's run within a request of seed q.
func SubSeed(q uint32, m int) uint32 { return q + uint32(m)*SetSeedStep }

// SetK returns how many of a request's K samples set m of M draws: K/M, plus
// one when m < K mod M (docs/fixed-point.md, sampled encoding).
func SetK(K, M, m int) int {
	n := K / M
	if m < K%M {
		n++
	}
	return n
}

// RunSets executes one request of a model with a sampled input encoding:
// xs[m] is the query encoded by set m. It is M runs, one per set with at
// least one sample: set m's run draws SetK(K, M, m) samples with seed
// SubSeed(q, m). The sums of the runs are concatenated in set order and
// their statistics added. With one set it is Run.
func (c *Core) RunSets(xs [][]bool, K int, q uint32, sums []int32) ([]int32, Stats, error) {
	M := len(xs)
	if M == 0 {
		return nil, Stats{}, fmt.Errorf("fixed: no input sets")
	}
	if K < 1 {
		return nil, Stats{}, fmt.Errorf("fixed: K = %d, want >= 1", K)
	}
	if M == 1 {
		return c.Run(xs[0], K, q, sums)
	}
	b := c.bank
	nt := b.TMs
	if cap(sums) < K*nt {
		sums = make([]int32, K*nt)
	}
	sums = sums[:K*nt]
	st := Stats{Votes: make([]uint64, b.Classes), Sum: make([]int64, nt), SumSq: make([]uint64, nt)}
	off := 0
	var buf []int32
	for m, x := range xs {
		k := SetK(K, M, m)
		if k == 0 {
			continue
		}
		var s Stats
		var err error
		if buf, s, err = c.Run(x, k, SubSeed(q, m), buf); err != nil {
			return nil, Stats{}, fmt.Errorf("set %d: %w", m, err)
		}
		copy(sums[off:], buf[:k*nt])
		off += k * nt
		st.Add(s)
	}
	return sums, st, nil
}

// Add adds the statistics of another run of the same model to st.
func (st *Stats) Add(o Stats) {
	for i, v := range o.Votes {
		st.Votes[i] += v
	}
	for i, v := range o.Sum {
		st.Sum[i] += v
	}
	for i, v := range o.SumSq {
		st.SumSq[i] += v
	}
}
