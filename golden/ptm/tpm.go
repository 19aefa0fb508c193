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
	return applyRange(k, p, newMoves(s), 0, len(p)-1)
}

// moves holds the two transition probabilities of specificity s, derived
// once per update rather than once per TA.
type moves struct {
	up   float64 // (s-1)/s: TPM1's move up, TPM2's and TPM3's stay
	down float64 // 1/s: TPM1's stay, TPM2's and TPM3's move down
}

func newMoves(s float64) moves { return moves{up: (s - 1) / s, down: 1 / s} }

// applyRange is ApplyTPM restricted to states a..b, which is exact when every
// state outside a+1..b-1 holds zero mass (mass moves at most one state).
func applyRange(k TPM, p []float64, mv moves, a, b int) (dInclude float64) {
	n2 := len(p)
	n := n2 / 2
	up, down := mv.up, mv.down
	switch k {
	case TPM1: // up with (s-1)/s, stay with 1/s; the top state absorbs
		dInclude = float64(up * p[n-1])
		i := b
		if i == n2-1 {
			p[i] += float64(up * p[i-1])
			i--
		}
		if lo := max(a, 1); i >= lo {
			stayUp(p[lo-1:i+1], down, up)
		}
		if a == 0 {
			p[0] *= down
		}
	case TPM2: // exclude states down with 1/s; include states unchanged
		if n == 1 {
			return 0
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
	case TPM3: // down with 1/s, stay with (s-1)/s; the bottom state absorbs
		dInclude = float64(-down * p[n])
		i := a
		if i == 0 {
			p[0] += float64(down * p[1])
			i++
		}
		if hi := min(b, n2-2); i <= hi {
			stayDown(p[i:hi+2], up, down)
		}
		if b == n2-1 {
			p[n2-1] *= up
		}
	case TPM4: // exclude states up with probability 1; include unchanged
		dInclude = p[n-1]
		top := min(b, n-1)
		if top < a {
			return dInclude
		}
		if top == n-1 {
			p[n] += p[n-1]
		}
		if lo := max(a+1, 1); top >= lo {
			copy(p[lo:top+1], p[lo-1:top])
		}
		if a == 0 {
			p[0] = 0
		} else {
			p[a] = 0
		}
	default:
		panic("ptm: unknown TPM")
	}
	return dInclude
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
