package hw

import (
	"fmt"
	"strings"
)

// This file holds the computed parts of the templates (exported only
// because text/template calls them): XOR equations,
// ROM tables, adder trees and width conversions. Every method returns
// Verilog text indented for its place in the template.

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

// slice is the constant part-select of element i (width w) of a packed vector.
func slice(vec string, i, w int) string {
	if w == 1 {
		return fmt.Sprintf("%s[%d]", vec, i)
	}
	return fmt.Sprintf("%s[%d:%d]", vec, i*w+w-1, i*w)
}

// LFSREquations are the XOR equations of the B new bits of one draw.
func (p *Params) LFSREquations() string {
	var b strings.Builder
	for k := 0; k < p.Bits; k++ {
		terms := make([]string, len(p.Taps))
		for i, e := range p.Taps {
			terms[i] = fmt.Sprintf("state[%d]", e+k)
		}
		fmt.Fprintf(&b, "    assign next[%d] = %s;\n", k, strings.Join(terms, " ^ "))
	}
	return b.String()
}

// TapList is the exponent list of the characteristic polynomial.
func (p *Params) TapList() string {
	s := make([]string, len(p.Taps))
	for i, e := range p.Taps {
		s[i] = fmt.Sprint(e)
	}
	return strings.Join(s, ", ")
}

// PhiLit is the seeding constant PHI as a sized literal.
func (p *Params) PhiLit() string { return fmt.Sprintf("%d'h%x", p.W, p.Phi) }

// SeedW is the 32-bit request seed reduced or zero-extended to W bits.
func (p *Params) SeedW() string {
	if p.W <= 32 {
		if p.W == 32 {
			return "seed"
		}
		return fmt.Sprintf("seed[%d:0]", p.W-1)
	}
	return zext("seed", 32, p.W)
}

// SeedUnused is true when some seed bits are dropped (W < 32).
func (p *Params) SeedUnused() bool { return p.W < 32 }

// ----- lanes (core) -----

// BankFileLen is the length of the longest bank image name.
func (p *Params) BankFileLen() int { return len(p.bankFile(p.L - 1)) }

// BankFileExpr is the name of lane l's bank image as a constant expression
// of the genvar l, right-aligned in BankFileLen characters (zero bytes in
// front of shorter names): a conditional on the number of digits of l.
func (p *Params) BankFileExpr() string {
	nd := len(fmt.Sprint(p.L - 1))
	name := func(digits int) string {
		parts := []string{fmt.Sprintf("%q", p.Prefix+"_bank_lane")}
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
func (p *Params) CtrlGroups() int { return (p.L + p.CtrlLanes - 1) / p.CtrlLanes }

// LitSlots is BT*LL, the literal slots of all beats.
func (p *Params) LitSlots() int { return p.BT * p.LL }

// LitVector is the literal vector of all slots: features, their
// negations, then padding.
func (p *Params) LitVector() string {
	pad := p.LitSlots() - p.Literals
	if pad == 0 {
		return "{~features, features}"
	}
	return fmt.Sprintf("{%d'd0, ~features, features}", pad)
}

// PresentVector marks the literal slots that are not padding.
func (p *Params) PresentVector() string {
	pad := p.LitSlots() - p.Literals
	ones := fmt.Sprintf("{%d{1'b1}}", p.Literals)
	if pad == 0 {
		return ones
	}
	return fmt.Sprintf("{%d'd0, %s}", pad, ones)
}

// MaxKCheck is the run-time test of req_k against 1..MaxK.
func (p *Params) MaxKCheck() string {
	zero := fmt.Sprintf("req_k == %d'd0", p.KW)
	if uint64(p.MaxK) == uint64(1)<<uint(p.KW)-1 {
		return zero
	}
	return fmt.Sprintf("%s || req_k > %d'd%d", zero, p.KW, p.MaxK)
}

// StatWords is the number of stats-mode result words.
func (p *Params) StatWords() int { return p.StatsWords() }

// StatIdxW is the width of the stats word index.
func (p *Params) StatIdxW() int { return clog2(p.StatsWords()) }

// StatWordAssigns builds the stats-mode result words from the accumulators.
func (p *Params) StatWordAssigns() string {
	var b strings.Builder
	i := 0
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "    assign stat_word[%d] = %s; // votes, class %d\n", i, zext(slice("votes_acc", c, p.VoteW), p.VoteW, 32), c)
		i++
	}
	for t := 0; t < p.NT; t++ {
		v := slice("sum_acc", t, p.SumW)
		fmt.Fprintf(&b, "    assign stat_word[%d] = %s; // sum, TM %d\n", i, sext(v, fmt.Sprintf("sum_acc[%d]", t*p.SumW+p.SumW-1), p.SumW, 32), t)
		i++
	}
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "    assign stat_word[%d] = %s; // sumsq, TM %d\n", i, zext(slice("sumsq_acc", t, p.SqW), p.SqW, 32), t)
		i++
	}
	return b.String()
}

// SerWord is the sign-extended class sum at the bottom of the serializer's
// shift register.
func (p *Params) SerWord() string {
	return sext(fmt.Sprintf("ser_sums[%d:0]", p.VW-1), fmt.Sprintf("ser_sums[%d]", p.VW-1), p.VW, 32)
}

// SerShift is the serializer's shift register after a word is taken.
func (p *Params) SerShift() string {
	if p.NT == 1 {
		return "ser_sums"
	}
	return fmt.Sprintf("{%d'd0, ser_sums[%d:%d]}", p.VW, p.NT*p.VW-1, p.VW)
}

// FifoCountW is the width of the in-flight sample counter (0..FifoDepth).
func (p *Params) FifoCountW() int { return ubits(uint64(p.FifoDepth)) }

// ----- class sum -----

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

func binLit(w int, v uint64) string {
	s := fmt.Sprintf("%0*b", w, v)
	return fmt.Sprintf("%d'b%s", w, s)
}

// ClassROM is the group ROM of the class sum: for group g, base = the TM
// of clause g*LC, and per slot s the clause lanes whose clause belongs to
// TM base+s with positive (pos) or negative (neg) polarity.
func (p *Params) ClassROM() string {
	if p.LC > 64 {
		panic("hw: more than 64 clause lanes")
	}
	var b strings.Builder
	assign := func(ind string, base int, pos, neg []uint64) {
		fmt.Fprintf(&b, "%sbase_rom = %d'd%d;", ind, p.TMW, base)
		for s := 0; s < p.Slots; s++ {
			fmt.Fprintf(&b, " pos_rom_%d = %s; neg_rom_%d = %s;", s, binLit(p.LC, pos[s]), s, binLit(p.LC, neg[s]))
		}
		b.WriteString("\n")
	}
	b.WriteString("        case (group)\n")
	for g := 0; g < p.G; g++ {
		base, pos, neg := p.groupRow(g)
		fmt.Fprintf(&b, "        %d'd%d: begin\n", p.GroupW, g)
		assign("            ", base, pos, neg)
		b.WriteString("        end\n")
	}
	b.WriteString("        default: begin\n")
	assign("            ", 0, make([]uint64, p.Slots), make([]uint64, p.Slots))
	b.WriteString("        end\n        endcase\n")
	return b.String()
}

// ChunkW is the width of one popcount chunk's count.
func (p *Params) ChunkW() int { return ubits(uint64(p.ChunkSize)) }

// Chunked is true when the popcount takes two stages.
func (p *Params) Chunked() bool { return p.Chunks > 1 }

// popSum is the sum of bits lo..hi-1 of vec, each zero-extended to w bits.
func popSum(vec string, lo, hi, w int) string {
	terms := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		terms = append(terms, zext(fmt.Sprintf("%s[%d]", vec, i), 1, w))
	}
	return strings.Join(terms, " + ")
}

// PopcountStages emits the popcount of every slot's pos and neg bits:
// one stage (LC <= 8) or chunks of 8 then their sum.
func (p *Params) PopcountStages() string {
	var b strings.Builder
	pols := []string{"pos", "neg"}
	if !p.Chunked() {
		b.WriteString("    always @(posedge clk) begin\n")
		for s := 0; s < p.Slots; s++ {
			for _, pol := range pols {
				fmt.Fprintf(&b, "        %s_cnt_%d <= %s;\n", pol, s, popSum(fmt.Sprintf("%s_bits_%d", pol, s), 0, p.LC, p.PCW))
			}
		}
		b.WriteString("    end\n")
		return b.String()
	}
	cw := p.ChunkW()
	for s := 0; s < p.Slots; s++ {
		for _, pol := range pols {
			for ch := 0; ch < p.Chunks; ch++ {
				fmt.Fprintf(&b, "    reg [%d:0] %s_chunk_%d_%d;\n", cw-1, pol, s, ch)
			}
		}
	}
	b.WriteString("    always @(posedge clk) begin\n")
	for s := 0; s < p.Slots; s++ {
		for _, pol := range pols {
			for ch := 0; ch < p.Chunks; ch++ {
				lo, hi := ch*p.ChunkSize, min((ch+1)*p.ChunkSize, p.LC)
				fmt.Fprintf(&b, "        %s_chunk_%d_%d <= %s;\n", pol, s, ch, popSum(fmt.Sprintf("%s_bits_%d", pol, s), lo, hi, cw))
			}
		}
	}
	b.WriteString("    end\n    always @(posedge clk) begin\n")
	for s := 0; s < p.Slots; s++ {
		for _, pol := range pols {
			terms := make([]string, p.Chunks)
			for ch := range terms {
				terms[ch] = zext(fmt.Sprintf("%s_chunk_%d_%d", pol, s, ch), cw, p.PCW)
			}
			fmt.Fprintf(&b, "        %s_cnt_%d <= %s;\n", pol, s, strings.Join(terms, " + "))
		}
	}
	b.WriteString("    end\n")
	return b.String()
}

// PopTagStages names the popcount stages' tag registers: _p is the
// (optional) chunk stage, _c the count stage (_a, the mask stage, precedes them).
func (p *Params) PopTagStages() []string {
	if p.Chunked() {
		return []string{"p", "c"}
	}
	return []string{"c"}
}

// SlotDiffs are the signed per-slot differences pos - neg in VW bits.
func (p *Params) SlotDiffs() string {
	var b strings.Builder
	for s := 0; s < p.Slots; s++ {
		fmt.Fprintf(&b, "    wire [%d:0] diff_%d = %s - %s;\n", p.VW-1, s,
			zext(fmt.Sprintf("pos_cnt_%d", s), p.PCW, p.VW), zext(fmt.Sprintf("neg_cnt_%d", s), p.PCW, p.VW))
	}
	return b.String()
}

// TMAdds selects, for every TM t, the slot difference that belongs to it
// in this group (slot t - base), or 0.
func (p *Params) TMAdds() string {
	var b strings.Builder
	maxBase := (p.G - 1) * p.LC / p.M
	for t := 0; t < p.NT; t++ {
		expr := fmt.Sprintf("%d'd0", p.VW)
		for s := p.Slots - 1; s >= 0; s-- {
			if t-s < 0 || t-s > maxBase {
				continue
			}
			expr = fmt.Sprintf("(base_c == %d'd%d) ? diff_%d : %s", p.TMW, t-s, s, expr)
		}
		fmt.Fprintf(&b, "    wire [%d:0] add_%d = %s;\n", p.VW-1, t, expr)
	}
	return b.String()
}

// TMAccumulate updates every TM's running class sum.
func (p *Params) TMAccumulate() string {
	var b strings.Builder
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "            sum_%d <= (first_c ? %d'd0 : sum_%d) + add_%d;\n", t, p.VW, t, t)
	}
	return b.String()
}

// TMSums declares the running class sums.
func (p *Params) TMSums() string {
	var b strings.Builder
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "    reg [%d:0] sum_%d;\n", p.VW-1, t)
	}
	return b.String()
}

// SumsConcat packs the class sums, TM 0 in the low bits.
func (p *Params) SumsConcat() string {
	s := make([]string, p.NT)
	for t := 0; t < p.NT; t++ {
		s[p.NT-1-t] = fmt.Sprintf("sum_%d", t)
	}
	if p.NT == 1 {
		return s[0]
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// ----- vote -----

// CW is the compare width of the clipping: wide enough for v and +-T.
func (p *Params) CW() int { return max(p.VW, p.UW) }

// VUW is the width of one sample's vote units (U/|A| <= U).
func (p *Params) VUW() int { return ubits(p.Unit) }

// MaxLevels is the depth of the max tree, ceil(log2 NC).
func (p *Params) MaxLevels() int { return clog2(p.NC) }

// clipTableMax is the widest class sum whose clipping is emitted as a case
// table (2^VW entries) instead of two comparisons with +-T: a table of a
// 5-bit sum is two LUT levels, the comparisons carry chains (the UP5K
// core's critical path after the statistics square).
const clipTableMax = 6

// ClipTable reports whether the clipping is a case table.
func (p *Params) ClipTable() bool { return p.VW <= clipTableMax }

// Clip clips every TM's class sum to [-T, T].
func (p *Params) Clip() string {
	var b strings.Builder
	if p.ClipTable() {
		for t := 0; t < p.NT; t++ {
			fmt.Fprintf(&b, "    reg [%d:0] uc_%d;\n    always @(*) begin\n        case (%s)\n", p.UW-1, t, slice("sums", t, p.VW))
			for r := 0; r < 1<<p.VW; r++ {
				v := r
				if r >= 1<<(p.VW-1) {
					v = r - 1<<p.VW
				}
				u := min(max(v, -p.T), p.T)
				fmt.Fprintf(&b, "        %d'd%d: uc_%d = %s; // %d -> %d\n", p.VW, r, t, binLit(p.UW, uint64(u)&(1<<p.UW-1)), v, u)
			}
			b.WriteString("        endcase\n    end\n")
		}
		b.WriteString("    always @(posedge clk) begin\n")
		for t := 0; t < p.NT; t++ {
			fmt.Fprintf(&b, "        u_%d <= uc_%d;\n", t, t)
		}
		b.WriteString("    end\n")
		return b.String()
	}
	cw := p.CW()
	fmt.Fprintf(&b, "    localparam signed [%d:0] T_POS   = %d'sd%d;\n", cw-1, cw, p.T)
	fmt.Fprintf(&b, "    localparam signed [%d:0] T_NEG   = -%d'sd%d;\n", cw-1, cw, p.T)
	fmt.Fprintf(&b, "    localparam        [%d:0] T_POS_U = %d'd%d;\n", p.UW-1, p.UW, p.T)
	fmt.Fprintf(&b, "    localparam        [%d:0] T_NEG_U = -%d'd%d;\n", p.UW-1, p.UW, p.T)
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "    wire signed [%d:0] v_%d = %s;\n", cw-1, t,
			sext(slice("sums", t, p.VW), fmt.Sprintf("sums[%d]", t*p.VW+p.VW-1), p.VW, cw))
	}
	b.WriteString("    always @(posedge clk) begin\n")
	for t := 0; t < p.NT; t++ {
		keep := fmt.Sprintf("v_%d", t)
		if cw > p.UW {
			keep = fmt.Sprintf("v_%d[%d:0]", t, p.UW-1)
		}
		fmt.Fprintf(&b, "        u_%d <= (v_%d > T_POS) ? T_POS_U : (v_%d < T_NEG) ? T_NEG_U : %s;\n", t, t, t, keep)
	}
	b.WriteString("    end\n")
	return b.String()
}

// ClippedDecl declares the clipped sums.
func (p *Params) ClippedDecl() string {
	var b strings.Builder
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "    reg signed [%d:0] u_%d;\n", p.UW-1, t)
	}
	return b.String()
}

// UConcat packs the clipped sums, TM 0 in the low bits.
func (p *Params) UConcat() string {
	s := make([]string, p.NT)
	for t := 0; t < p.NT; t++ {
		s[p.NT-1-t] = fmt.Sprintf("u_%d", t)
	}
	if p.NT == 1 {
		return s[0]
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// Scores are the class scores (spec 5.5) from the clipped sums.
func (p *Params) Scores() string {
	var b strings.Builder
	if p.Binary {
		fmt.Fprintf(&b, "    wire signed [%d:0] score_0 = -u_0; // binary: class 0 scores -u, class 1 scores u\n", p.UW-1)
		fmt.Fprintf(&b, "    wire signed [%d:0] score_1 = u_0;\n", p.UW-1)
		return b.String()
	}
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "    wire signed [%d:0] score_%d = u_%d;\n", p.UW-1, c, c)
	}
	return b.String()
}

// MaxTree is the pipelined maximum of the scores, one register level per
// tree level, carrying the scores alongside.
func (p *Params) MaxTree() string {
	var b strings.Builder
	n := p.NC
	prev := "score"
	for lvl := 1; lvl <= p.MaxLevels(); lvl++ {
		m := (n + 1) / 2
		for i := 0; i < m; i++ {
			fmt.Fprintf(&b, "    reg signed [%d:0] max_l%d_%d;\n", p.UW-1, lvl, i)
		}
		for c := 0; c < p.NC; c++ {
			fmt.Fprintf(&b, "    reg signed [%d:0] score_l%d_%d;\n", p.UW-1, lvl, c)
		}
		fmt.Fprintf(&b, "    reg               valid_l%d, last_l%d;\n", lvl, lvl)
		b.WriteString("    always @(posedge clk) begin\n")
		for i := 0; i < m; i++ {
			a := fmt.Sprintf("%s_%d", prev, 2*i)
			if 2*i+1 < n {
				c := fmt.Sprintf("%s_%d", prev, 2*i+1)
				fmt.Fprintf(&b, "        max_l%d_%d <= (%s >= %s) ? %s : %s;\n", lvl, i, a, c, a, c)
			} else {
				fmt.Fprintf(&b, "        max_l%d_%d <= %s;\n", lvl, i, a)
			}
		}
		src := "score"
		if lvl > 1 {
			src = fmt.Sprintf("score_l%d", lvl-1)
		}
		for c := 0; c < p.NC; c++ {
			fmt.Fprintf(&b, "        score_l%d_%d <= %s_%d;\n", lvl, c, src, c)
		}
		pv, pl := "u_valid", "u_last"
		if lvl > 1 {
			pv, pl = fmt.Sprintf("valid_l%d", lvl-1), fmt.Sprintf("last_l%d", lvl-1)
		}
		fmt.Fprintf(&b, "        last_l%d <= %s;\n", lvl, pl)
		fmt.Fprintf(&b, "        if (rst) valid_l%d <= 1'b0;\n        else     valid_l%d <= %s;\n", lvl, lvl, pv)
		b.WriteString("    end\n\n")
		prev = fmt.Sprintf("max_l%d", lvl)
		n = m
	}
	return b.String()
}

// TopLevel is the last level of the max tree.
func (p *Params) TopLevel() int { return p.MaxLevels() }

// Winners marks the classes whose score equals the maximum.
func (p *Params) Winners() string {
	var b strings.Builder
	l := p.MaxLevels()
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "        win[%d] <= (score_l%d_%d == max_l%d_0);\n", c, l, c, l)
	}
	return b.String()
}

// TieW is the width of the number of tied classes (1..NC).
func (p *Params) TieW() int { return ubits(uint64(p.NC)) }

// TieCount is the popcount of the winners.
func (p *Params) TieCount() string { return popSum("win", 0, p.NC, p.TieW()) }

// UnitTable is U/n for n tied classes.
func (p *Params) UnitTable() string {
	var b strings.Builder
	for n := 1; n <= p.NC; n++ {
		fmt.Fprintf(&b, "        %d'd%d: share = %d'd%d;\n", p.TieW(), n, p.VUW(), p.Unit/uint64(n))
	}
	fmt.Fprintf(&b, "        default: share = %d'd0;\n", p.VUW())
	return b.String()
}

// VoteOut assigns every class its share when it is a winner.
func (p *Params) VoteOut() string {
	var b strings.Builder
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "        votes_%d <= win[%d] ? share : %d'd0;\n", c, c, p.VUW())
	}
	return b.String()
}

// VotesPacked packs the per-sample votes, class 0 in the low bits.
func (p *Params) VotesPacked() string {
	var b strings.Builder
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "    assign votes_out[%d:%d] = votes_%d;\n", c*p.VUW()+p.VUW()-1, c*p.VUW(), c)
	}
	return b.String()
}

// ----- stats -----

// MagW is the width of |u| (u in -T..T).
func (p *Params) MagW() int { return p.UW - 1 }

// SqW1 is the width of u^2 for one sample.
func (p *Params) SqW1() int { return 2 * p.MagW() }

// sqTableMax is the widest |u| whose square is emitted as a case table
// (one LUT level per bit up to 4 bits); wider magnitudes use a multiply.
const sqTableMax = 6

// StatsSquares computes |u| of every TM (|u| <= T fits MagW bits) into the
// mag registers and u^2 of the registered magnitude, in two pipeline
// stages: the magnitude's negation and the square each get a cycle of
// their own (the one-cycle version was the UP5K core's critical path).
func (p *Params) StatsSquares() string {
	var b strings.Builder
	mw, sw := p.MagW(), p.SqW1()
	for t := 0; t < p.NT; t++ {
		msb := fmt.Sprintf("u[%d]", t*p.UW+p.UW-1)
		low := fmt.Sprintf("u[%d:%d]", t*p.UW+mw-1, t*p.UW)
		fmt.Fprintf(&b, "    wire [%d:0] umag_%d = %s ? -%s : %s;\n", mw-1, t, msb, low, low)
	}
	for t := 0; t < p.NT; t++ {
		if mw <= sqTableMax {
			fmt.Fprintf(&b, "    reg  [%d:0] usq_%d;\n", sw-1, t)
			fmt.Fprintf(&b, "    always @(*) begin\n        case (mag_%d)\n", t)
			for v := 0; v <= p.T && v < 1<<mw; v++ {
				fmt.Fprintf(&b, "        %d'd%d: usq_%d = %d'd%d;\n", mw, v, t, sw, v*v)
			}
			fmt.Fprintf(&b, "        default: usq_%d = {%d{1'bx}}; // |u| <= T\n        endcase\n    end\n", t, sw)
		} else {
			fmt.Fprintf(&b, "    wire [%d:0] usq_%d = %s * %s;\n", sw-1, t, zext(fmt.Sprintf("mag_%d", t), mw, sw), zext(fmt.Sprintf("mag_%d", t), mw, sw))
		}
	}
	return b.String()
}

// StatsUpdates emits the accumulator updates.
func (p *Params) StatsUpdates() string {
	var b strings.Builder
	b.WriteString("    always @(posedge clk) begin\n        if (clear) begin\n")
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "            sum_%d   <= %d'd0;\n            sumsq_%d <= %d'd0;\n", t, p.SumW, t, p.SqW)
	}
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "            votes_%d <= %d'd0;\n", c, p.VoteW)
	}
	b.WriteString("        end else begin\n            if (u_valid) begin\n")
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "                sum_%d <= sum_%d + %s;\n", t, t, sext(slice("u", t, p.UW), fmt.Sprintf("u[%d]", t*p.UW+p.UW-1), p.UW, p.SumW))
	}
	b.WriteString("            end\n            if (sq_valid) begin\n")
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "                sumsq_%d <= sumsq_%d + %s;\n", t, t, zext(fmt.Sprintf("sq_%d", t), p.SqW1(), p.SqW))
	}
	b.WriteString("            end\n            if (vote_valid) begin\n")
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "                votes_%d <= votes_%d + %s;\n", c, c, zext(slice("votes", c, p.VUW()), p.VUW(), p.VoteW))
	}
	b.WriteString("            end\n        end\n    end\n")
	return b.String()
}

// StatsDecls declares the accumulators and squares.
func (p *Params) StatsDecls() string {
	var b strings.Builder
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "    reg [%d:0] sum_%d;\n    reg [%d:0] sumsq_%d;\n    reg [%d:0] mag_%d;\n    reg [%d:0] sq_%d;\n", p.SumW-1, t, p.SqW-1, t, p.MagW()-1, t, p.SqW1()-1, t)
	}
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "    reg [%d:0] votes_%d;\n", p.VoteW-1, c)
	}
	return b.String()
}

// SqRegs registers the squares.
func (p *Params) SqRegs() string {
	var b strings.Builder
	for t := 0; t < p.NT; t++ {
		fmt.Fprintf(&b, "        mag_%d <= umag_%d;\n        sq_%d  <= usq_%d;\n", t, t, t, t)
	}
	return b.String()
}

// packed concatenates name_0..name_{n-1}, index 0 in the low bits.
func packed(name string, n int) string {
	s := make([]string, n)
	for i := 0; i < n; i++ {
		s[n-1-i] = fmt.Sprintf("%s_%d", name, i)
	}
	if n == 1 {
		return s[0]
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// SumPacked, SqPacked and VotesAccPacked are the accumulator outputs.
func (p *Params) SumPacked() string      { return packed("sum", p.NT) }
func (p *Params) SqPacked() string       { return packed("sumsq", p.NT) }
func (p *Params) VotesAccPacked() string { return packed("votes", p.NC) }

// ----- info -----

// InfoCases are the info ROM's words.
func (p *Params) InfoCases() string {
	var b strings.Builder
	for i, w := range infoLayout {
		fmt.Fprintf(&b, "        4'd%-2d: data = 32'h%08x; // %s\n", i, w.val(p), w.name)
	}
	return b.String()
}

// SlotRegs declares pos_<what>_s and neg_<what>_s of width w for every slot.
func (p *Params) SlotRegs(what string, w int) string {
	var b strings.Builder
	for s := 0; s < p.Slots; s++ {
		fmt.Fprintf(&b, "    reg [%d:0] pos_%s_%d, neg_%s_%d;\n", w-1, what, s, what, s)
	}
	return b.String()
}

// SlotMasks selects every slot's clause outputs by polarity.
func (p *Params) SlotMasks() string {
	var b strings.Builder
	for s := 0; s < p.Slots; s++ {
		fmt.Fprintf(&b, "        pos_bits_%d <= clause & pos_rom_%d;\n        neg_bits_%d <= clause & neg_rom_%d;\n", s, s, s, s)
	}
	return b.String()
}

// VoteRegs declares the per-class vote registers.
func (p *Params) VoteRegs() string {
	var b strings.Builder
	for c := 0; c < p.NC; c++ {
		fmt.Fprintf(&b, "    reg [%d:0] votes_%d;\n", p.VUW()-1, c)
	}
	return b.String()
}
