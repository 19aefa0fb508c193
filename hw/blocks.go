package hw

import (
	"fmt"
	"strings"
	"text/template"
)

// The module templates (verilog.go) are executed with a view: the Params
// and the values derived from them for the text, tables as rows of data.
// The replicated structure (lanes, clause lanes, slots, TMs, classes,
// draw bits) is written as Verilog generate loops; the template functions
// below only size constants and build the few expressions whose shape
// depends on widths (extensions, popcounts).

// view is the data of the module templates. Its methods are exported for
// text/template only; the type is not part of the package API.
type view struct {
	*Params
}

var funcs = template.FuncMap{
	"dec":    func(w int, v any) string { return fmt.Sprintf("%d'd%v", w, v) },
	"sub":    func(a, b int) int { return a - b },
	"add":    func(a, b int) int { return a + b },
	"mul":    func(a, b int) int { return a * b },
	"zext":   zext,
	"sext":   sext,
	"popsum": popSum,
}

// zext zero-extends expr of width w to width to.
func zext(expr string, w, to int) string {
	switch {
	case to == w:
		return expr
	case to < w:
		panic(fmt.Sprintf("hw: zext %s from %d to %d bits", expr, w, to))
	}
	return fmt.Sprintf("{%d'd0, %s}", to-w, expr)
}

// sext sign-extends the w-bit expression e (a plain identifier or
// part-select, whose top bit is msb) to width to.
func sext(expr, msb string, w, to int) string {
	switch {
	case to == w:
		return expr
	case to < w:
		panic(fmt.Sprintf("hw: sext %s from %d to %d bits", expr, w, to))
	case to == w+1:
		return fmt.Sprintf("{%s, %s}", msb, expr)
	}
	return fmt.Sprintf("{{%d{%s}}, %s}", to-w, msb, expr)
}

// popSum is the sum of bits lo..hi-1 of vec, each zero-extended to w bits.
func popSum(vec string, lo, hi, w int) string {
	terms := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		terms = append(terms, zext(fmt.Sprintf("%s[%d]", vec, i), 1, w))
	}
	return strings.Join(terms, " + ")
}

func binLit(w int, v uint64) string { return fmt.Sprintf("%d'b%0*b", w, w, v) }

// ----- LFSR and seeder -----

// TapList is the exponent list of the characteristic polynomial.
func (v view) TapList() string {
	s := make([]string, len(v.Taps))
	for i, e := range v.Taps {
		s[i] = fmt.Sprint(e)
	}
	return strings.Join(s, ", ")
}

// TapXor is draw bit k of the generate loop over k: the XOR of state[e+k]
// over the taps e.
func (v view) TapXor() string {
	s := make([]string, len(v.Taps))
	for i, e := range v.Taps {
		if e == 0 {
			s[i] = "state[k]"
		} else {
			s[i] = fmt.Sprintf("state[k + %d]", e)
		}
	}
	return strings.Join(s, " ^ ")
}

// PhiLit is the seeding constant PHI as a sized literal.
func (v view) PhiLit() string { return fmt.Sprintf("%d'h%x", v.W, v.Phi) }

// SeedW is the 32-bit request seed reduced or zero-extended to W bits.
func (v view) SeedW() string {
	switch {
	case v.W < 32:
		return "seed[W-1:0]"
	case v.W == 32:
		return "seed"
	}
	return zext("seed", 32, v.W)
}

// SeedUnused is true when some seed bits are dropped (W < 32).
func (v view) SeedUnused() bool { return v.W < 32 }

// ----- core -----

// BankFileLen is the length of the longest bank image name.
func (v view) BankFileLen() int { return len(v.bankFile(v.L - 1)) }

// BankFileExpr is the name of lane l's bank image as a constant expression
// of the genvar l, right-aligned in BankFileLen characters (zero bytes in
// front of shorter names): a conditional on the number of digits of l.
func (v view) BankFileExpr() string {
	nd := len(fmt.Sprint(v.L - 1))
	name := func(digits int) string {
		parts := []string{fmt.Sprintf("%q", v.Prefix+"_bank_lane")}
		div := 1
		for i := 1; i < digits; i++ {
			div *= 10
		}
		for ; div > 1; div /= 10 {
			parts = append(parts, fmt.Sprintf("DIGITS[8*(l / %d %% 10) +: 8]", div))
		}
		parts = append(parts, "DIGITS[8*(l % 10) +: 8]", `".hex"`)
		if pad := nd - digits; pad > 0 {
			parts = append([]string{fmt.Sprintf("%d'd0", 8*pad)}, parts...)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	const ind = "                "
	if nd == 1 {
		return ind + name(1)
	}
	var b strings.Builder
	limit := 10
	for d := 1; d < nd; d++ {
		fmt.Fprintf(&b, "%s(l < %d) ? %s :\n", ind, limit, name(d))
		limit *= 10
	}
	b.WriteString(ind + name(nd))
	return b.String()
}

// CtrlGroups is the number of copies of the lanes' control registers.
func (v view) CtrlGroups() int { return (v.L + v.CtrlLanes - 1) / v.CtrlLanes }

// LoW is the number of low lane-index bits decoded into the lane select
// columns (the rest into rows): half the index, rounded up.
func (v view) LoW() int { return (v.LaneW + 1) / 2 }

// LoN is the number of lane select columns, min(2^LoW, L).
func (v view) LoN() int { return min(1<<v.LoW(), v.L) }

// HiN is the number of lane select rows, ceil(L / 2^LoW).
func (v view) HiN() int { return (v.L + 1<<v.LoW() - 1) >> v.LoW() }

// LitSlots is BT*LL, the literal slots of all beats.
func (v view) LitSlots() int { return v.BT * v.LL }

// LitPad is the number of padding literal slots.
func (v view) LitPad() int { return v.LitSlots() - v.Literals }

// MaxKCheck is the run-time test of req_k against 1..MaxK.
func (v view) MaxKCheck() string {
	zero := fmt.Sprintf("req_k == %d'd0", v.KW)
	if uint64(v.MaxK) == uint64(1)<<uint(v.KW)-1 {
		return zero
	}
	return fmt.Sprintf("%s || req_k > %d'd%d", zero, v.KW, v.MaxK)
}

// StatWords is the number of stats-mode result words.
func (v view) StatWords() int { return v.StatsWords() }

// StatIdxW is the width of the stats word index.
func (v view) StatIdxW() int { return clog2(v.StatsWords()) }

// FifoCountW is the width of the in-flight sample counter (0..FifoDepth).
func (v view) FifoCountW() int { return ubits(uint64(v.FifoDepth)) }

// ----- class sum -----

// classRow is the group ROM row of one group: the TM of its first clause
// and, slot s in bits s*LC, the clause lanes that vote for (Pos) and
// against (Neg) TM Base+s.
type classRow struct {
	G, Base  int
	Pos, Neg string
}

// groupRow returns the ROM row of group g: the TM of its first clause
// and, per slot, the clause lanes that vote for and against it.
func (p *Params) groupRow(g int) (base int, pos, neg []uint64) {
	pos = make([]uint64, p.Slots)
	neg = make([]uint64, p.Slots)
	base = g * p.LC / p.M
	for ci := 0; ci < p.LC; ci++ {
		c := g*p.LC + ci
		if c >= p.TotalClauses {
			break
		}
		t, j := c/p.M, c%p.M
		if j%2 == 0 {
			pos[t-base] |= 1 << uint(ci)
		} else {
			neg[t-base] |= 1 << uint(ci)
		}
	}
	return base, pos, neg
}

// slotsLit packs per-slot masks of LC bits, slot 0 in the low bits.
func (v view) slotsLit(m []uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d'b", v.Slots*v.LC)
	for s := v.Slots - 1; s >= 0; s-- {
		fmt.Fprintf(&b, "%0*b", v.LC, m[s])
		if s > 0 {
			b.WriteString("_")
		}
	}
	return b.String()
}

// ClassRows is the group ROM of the class sum.
func (v view) ClassRows() []classRow {
	if v.LC > 64 {
		panic("hw: more than 64 clause lanes")
	}
	rows := make([]classRow, v.G)
	for g := range rows {
		base, pos, neg := v.groupRow(g)
		rows[g] = classRow{G: g, Base: base, Pos: v.slotsLit(pos), Neg: v.slotsLit(neg)}
	}
	return rows
}

// MaxBase is the largest base(g): TM t takes slot s only while t - s <= MaxBase.
func (v view) MaxBase() int { return (v.G - 1) * v.LC / v.M }

// ChunkW is the width of one popcount chunk's count.
func (v view) ChunkW() int { return ubits(uint64(v.ChunkSize)) }

// Chunked is true when the popcount takes two stages.
func (v view) Chunked() bool { return v.Chunks > 1 }

// chunkRange is one chunk of the two-stage popcount: clause lanes Lo..Hi-1.
type chunkRange struct{ I, Lo, Hi int }

// ChunkList are the popcount chunks.
func (v view) ChunkList() []chunkRange {
	c := make([]chunkRange, v.Chunks)
	for i := range c {
		c[i] = chunkRange{I: i, Lo: i * v.ChunkSize, Hi: min((i+1)*v.ChunkSize, v.LC)}
	}
	return c
}

// ChunkSum is the sum of the chunk counts of one polarity.
func (v view) ChunkSum(pol string) string {
	terms := make([]string, v.Chunks)
	for i := range terms {
		terms[i] = zext(fmt.Sprintf("%s_chunk_%d", pol, i), v.ChunkW(), v.PCW)
	}
	return strings.Join(terms, " + ")
}

// ----- vote -----

// CW is the compare width of the clipping: wide enough for v and +-T.
func (v view) CW() int { return max(v.VW, v.UW) }

// VUW is the width of one sample's vote units (U/|A| <= U).
func (v view) VUW() int { return ubits(v.Unit) }

// MaxLevels is the depth of the max tree, ceil(log2 NC).
func (v view) MaxLevels() int { return clog2(v.NC) }

// clipTableMax is the widest class sum whose clipping is emitted as a case
// table (2^VW entries) instead of two comparisons with +-T: a table of a
// 5-bit sum is two LUT levels, the comparisons carry chains (the UP5K
// core's critical path after the statistics square).
const clipTableMax = 6

// ClipTable reports whether the clipping is a case table.
func (v view) ClipTable() bool { return v.VW <= clipTableMax }

// clipRow is one entry of the clipping table: raw sum V (R as unsigned),
// clipped U (Lit).
type clipRow struct {
	R, V, U int
	Lit     string
}

// ClipRows is the clipping table.
func (v view) ClipRows() []clipRow {
	rows := make([]clipRow, 1<<v.VW)
	for r := range rows {
		x := r
		if r >= 1<<(v.VW-1) {
			x = r - 1<<v.VW
		}
		u := min(max(x, -v.T), v.T)
		rows[r] = clipRow{R: r, V: x, U: u, Lit: binLit(v.UW, uint64(u)&(1<<v.UW-1))}
	}
	return rows
}

// KeepU is the clipping's pass-through value v truncated to UW bits.
func (v view) KeepU() string {
	if v.CW() > v.UW {
		return fmt.Sprintf("v[%d:0]", v.UW-1)
	}
	return "v"
}

// treeLevel is one register level of the max tree: N maxima of the Prev
// values of level Lvl-1 (scores for level 1).
type treeLevel struct {
	Lvl, N, Prev int
	In           string // the previous level's maxima (or the scores)
	Scores       string // the previous level's scores
	Valid, Last  string // the previous level's tags
}

// TreeLevels are the levels of the max tree.
func (v view) TreeLevels() []treeLevel {
	var ls []treeLevel
	n := v.NC
	for lvl := 1; lvl <= v.MaxLevels(); lvl++ {
		l := treeLevel{Lvl: lvl, N: (n + 1) / 2, Prev: n, In: "scores", Scores: "scores", Valid: "u_valid", Last: "u_last"}
		if lvl > 1 {
			l.In = fmt.Sprintf("max_l%d", lvl-1)
			l.Scores = fmt.Sprintf("score_l%d", lvl-1)
			l.Valid, l.Last = fmt.Sprintf("valid_l%d", lvl-1), fmt.Sprintf("last_l%d", lvl-1)
		}
		ls = append(ls, l)
		n = l.N
	}
	return ls
}

// TopLevel is the last level of the max tree.
func (v view) TopLevel() int { return v.MaxLevels() }

// TieW is the width of the number of tied classes (1..NC).
func (v view) TieW() int { return ubits(uint64(v.NC)) }

// share is U/N, the vote units of each of N tied classes.
type share struct {
	N    int
	Unit uint64
}

// Shares is U/n for n = 1..NC tied classes.
func (v view) Shares() []share {
	s := make([]share, v.NC)
	for i := range s {
		s[i] = share{N: i + 1, Unit: v.Unit / uint64(i+1)}
	}
	return s
}

// ----- stats -----

// MagW is the width of |u| (u in -T..T).
func (v view) MagW() int { return v.UW - 1 }

// SqW1 is the width of u^2 for one sample.
func (v view) SqW1() int { return 2 * v.MagW() }

// sqTableMax is the widest |u| whose square is emitted as a case table
// (one LUT level per bit up to 4 bits); wider magnitudes use a multiply.
const sqTableMax = 6

// SqTable reports whether the square is a case table.
func (v view) SqTable() bool { return v.MagW() <= sqTableMax }

// square is one row of the square table.
type square struct{ M, Sq int }

// Squares is the square table: |u| = 0..T.
func (v view) Squares() []square {
	var s []square
	for m := 0; m <= v.T && m < 1<<v.MagW(); m++ {
		s = append(s, square{M: m, Sq: m * m})
	}
	return s
}

// ----- info -----

// infoRow is one info ROM word.
type infoRow struct {
	Addr int
	Val  string
	Name string
}

// InfoRows are the info ROM's words.
func (v view) InfoRows() []infoRow {
	r := make([]infoRow, len(infoLayout))
	for i, w := range infoLayout {
		r[i] = infoRow{Addr: i, Val: fmt.Sprintf("32'h%08x", w.val(v.Params)), Name: w.name}
	}
	return r
}
