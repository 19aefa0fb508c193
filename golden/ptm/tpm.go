package ptm

import "gonum.org/v1/gonum/mat"

// TPM names one of the paper's four transition probability matrices.
type TPM int

// The four TPMs (paper Tables 2-5). Column = state at t-1, row = state at t,
// so spv_next = TPM * spv.
const (
	// TPM1 is Type I feedback, clause output 1, literal 1: every state moves
	// up one with probability (s-1)/s and stays with 1/s; the top state stays.
	TPM1 TPM = iota + 1
	// TPM2 is Type I feedback, clause output 1, literal 0: exclude states move
	// down one with probability 1/s and stay with (s-1)/s; the bottom state
	// stays; include states are unchanged.
	TPM2
	// TPM3 is Type I feedback, clause output 0: every state moves down one with
	// probability 1/s and stays with (s-1)/s; the bottom state stays.
	TPM3
	// TPM4 is Type II feedback, clause output 1, literal 0: exclude states move
	// up one with probability 1 (state N-1 enters the include side); include
	// states are unchanged.
	TPM4
)

// ApplyTPM multiplies the SPV p (length 2N) in place by the banded matrix
// k with specificity s, in O(2N), and returns the change in the include
// mass sum(p[N:]).
func ApplyTPM(k TPM, p []float64, s float64) (dInclude float64) {
	dInclude, _, _ = update(k, p, newMoves(s), 0, len(p)-1)
	return dInclude
}

// moves holds the two transition probabilities of specificity s, derived
// once per update rather than once per TA.
type moves struct {
	up   float64 // (s-1)/s: TPM1's move up, TPM2's and TPM3's stay
	down float64 // 1/s: TPM1's stay, TPM2's and TPM3's move down
}

func newMoves(s float64) moves { return moves{up: (s - 1) / s, down: 1 / s} }

// update multiplies the SPV p, which holds zero mass outside states lo..hi
// (lo <= hi), in place by TPM k with the moves mv, touching only the states
// that can change. It returns the change in the include mass and states
// a..b outside which p still holds zero mass. The result is bit for bit
// that of the whole-vector product: a state next to the support receives
// one rounded product added to +0 (or multiplied by it), which is exact,
// and a state that keeps only its own mass (the top state under TPM3)
// gets stay*p plus +0, which is stay*p.
func update(k TPM, p []float64, mv moves, lo, hi int) (dInclude float64, a, b int) {
	n2 := len(p)
	n := n2 / 2
	up, down := mv.up, mv.down
	switch k {
	case TPM1: // up with (s-1)/s, stay with 1/s; the top state absorbs
		dInclude = float64(up * p[n-1])
		top := hi + 1 // the highest state the loop writes
		if hi == n2-1 {
			p[hi] += float64(up * p[hi-1])
			top = hi - 1
		}
		bot := max(lo-1, 0) // the loop reads bot..top-1 and writes bot+1..top
		stayUp(p[bot:top+1], down, up)
		if lo == 0 {
			p[0] *= down
		}
		return dInclude, lo, min(hi+1, n2-1)
	case TPM2: // exclude states down with 1/s; include states unchanged
		a, b = max(lo-1, 0), min(hi+1, n2-1)
		if n == 1 {
			return 0, a, b
		}
		top := min(b, n-1)
		i := a
		if i == 0 {
			p[0] += float64(down * p[1])
			i++
		}
		if hi := min(top, n-2); i <= hi {
			stayDown(p[i:hi+2], up, down)
			i = hi + 1
		}
		if top == n-1 && i == n-1 {
			p[n-1] *= up
		}
		return 0, a, b
	case TPM3: // down with 1/s, stay with (s-1)/s; the bottom state absorbs
		dInclude = float64(-down * p[n])
		if hi == 0 { // all mass in the bottom state, which keeps it
			return dInclude, 0, 0
		}
		bot := lo - 1 // the loop writes bot..hi-1 and reads bot+1..hi
		if lo == 0 {
			p[0] += float64(down * p[1])
			bot = 1
		}
		stayDown(p[bot:hi+1], up, down)
		p[hi] *= up
		return dInclude, max(lo-1, 0), hi
	case TPM4: // exclude states up with probability 1; include unchanged
		a, b = max(lo-1, 0), min(hi+1, n2-1)
		dInclude = p[n-1]
		top := min(b, n-1)
		if top < a {
			return dInclude, a, b
		}
		if top == n-1 {
			p[n] += p[n-1]
		}
		if lo := max(a+1, 1); top >= lo {
			copy(p[lo:top+1], p[lo-1:top])
		}
		p[a] = 0
		return dInclude, a, b
	}
	panic("ptm: unknown TPM")
}

// TPMDense builds TPM k for 2N states and specificity s as an explicit
// column-stochastic matrix, straight from the feedback tables: entry (r, c)
// is the probability of moving from state c to state r. It is the slow,
// obviously-correct form that ApplyTPM is tested against.
func TPMDense(k TPM, n int, s float64) *mat.Dense {
	n2 := 2 * n
	m := mat.NewDense(n2, n2, nil)
	up := (s - 1) / s
	down := 1 / s
	for c := 0; c < n2; c++ {
		include := c >= n
		switch k {
		case TPM1: // reward include / penalize exclude towards include
			if c == n2-1 {
				m.Set(c, c, 1)
			} else {
				m.Set(c+1, c, up)
				m.Set(c, c, down)
			}
		case TPM2: // exclude: reward towards deeper exclude with 1/s
			switch {
			case include:
				m.Set(c, c, 1)
			case c == 0:
				m.Set(c, c, 1)
			default:
				m.Set(c-1, c, down)
				m.Set(c, c, up)
			}
		case TPM3:
			if c == 0 {
				m.Set(c, c, 1)
			} else {
				m.Set(c-1, c, down)
				m.Set(c, c, up)
			}
		case TPM4:
			if include {
				m.Set(c, c, 1)
			} else {
				m.Set(c+1, c, 1)
			}
		}
	}
	return m
}
