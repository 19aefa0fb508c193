package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/modelfile"
)

// convLiteralName names literal i of a convolutional shape: a window
// pixel "p<plane>(dy,dx)", a position bit "row>k" or "col>k", or the
// negation of one ("NOT ...").
func convLiteralName(sh conv.Shape, i int) string {
	f := sh.Features()
	neg := ""
	if i >= f {
		neg, i = "NOT ", i-f
	}
	wb := sh.WindowBits()
	switch {
	case i < wb:
		p, r := i/(sh.WY*sh.WX), i%(sh.WY*sh.WX)
		return fmt.Sprintf("%sp%d(%d,%d)", neg, p, r/sh.WX, r%sh.WX)
	case i < wb+sh.H-sh.WY:
		return fmt.Sprintf("%srow>%d", neg, i-wb)
	}
	return fmt.Sprintf("%scol>%d", neg, i-wb-(sh.H-sh.WY))
}

// inspectConv is `ptm inspect` for a convolutional model: the shape,
// training record, weights and thresholds summaries, and with --clause J
// that clause's weights and literals with P(include) >= --min.
func inspectConv(fs *flag.FlagSet, path, hash string, f *modelfile.ConvFile, clause int, minP float64, stdout io.Writer) error {
	for _, n := range []string{"tm", "spv", "all"} {
		if isSet(fs, n) {
			return fmt.Errorf("%w: --%s applies to tabular models; a convolutional model takes --clause and --min", errUsage, n)
		}
	}
	h := &f.Head
	sh := h.Shape
	if clause < -1 || clause >= h.Clauses {
		return fmt.Errorf("%w: --clause %d: the model has %d clauses (0..%d)", errUsage, clause, h.Clauses, h.Clauses-1)
	}
	m := f.Model()
	bank, err := f.Bank(f.BankBits)
	if err != nil {
		return err
	}
	exact := "exactly the trainer's"
	if f.SPVBits < f.Trainer.Bits {
		exact = fmt.Sprintf("the trainer's %d-bit SPVs rounded; include masses and the bank exact", f.Trainer.Bits)
	}
	fmt.Fprintf(stdout, "model %s (model hash %s, format %d, convolutional, SPVs stored at %d bits: %s)\n", path, hash[:16], modelfile.Version, f.SPVBits, exact)
	fmt.Fprintf(stdout, "  %d classes (%s); %dx%d images, %d bit-plane(s) (%s), %dx%d window, %d patches; %d literals\n",
		h.Classes, strings.Join(f.Classes, ", "), sh.H, sh.W, sh.Planes, describeEncoder(f.Encoder), sh.WY, sh.WX, sh.Patches(), sh.Literals())
	fmt.Fprintf(stdout, "  %d %s clauses x %d literals = %d TAs; T=%d s=%g N=%d seed=%d epochs=%d\n",
		h.Clauses, h.Structure, sh.Literals(), h.TAs(), h.T, f.Trainer.S, f.Trainer.N, f.Trainer.Seed, f.Trainer.Epochs)
	if t := f.Trainer; t.WeightClip != 0 || t.LiteralBudget != 0 {
		budget := "none"
		if t.LiteralBudget != 0 {
			budget = fmt.Sprint(t.LiteralBudget)
		}
		clip := conv.MaxWeight
		if t.WeightClip != 0 {
			clip = t.WeightClip
		}
		fmt.Fprintf(stdout, "  trained with the class weights clipped at +-%d, literal budget %s\n", clip, budget)
	}
	if f.Trainer.BoostTruePositive {
		fmt.Fprintf(stdout, "  trained with boosted true-positive feedback (Type Ia's TPM1 at probability 1)\n")
	}
	fmt.Fprintf(stdout, "  inference: K=%d, mapping %s, %d threshold set(s) spread +-%d; trained on %s (%d train / %d test rows)\n",
		f.K, describeMapping(f.Mapping), f.JitterSets, f.JitterSpread, f.Split.Dataset, len(f.Split.Train), len(f.Split.Test))
	if c := f.Calibration; c != nil {
		fmt.Fprintf(stdout, "  mapping fitted on %d validation rows carved from the training rows (seed %d, K %d): NLL %.4f, accuracy %.4f; final model trained on them too: %v\n",
			c.Rows, c.Seed, c.K, c.NLL, c.Accuracy, c.FinalOnCarve)
	}
	printFixedMapping(stdout, f, "  ")
	if r := f.Recipe; r != nil {
		over := "none"
		if len(r.Overridden) > 0 {
			over = strings.Join(r.Overridden, ", ")
		}
		fmt.Fprintf(stdout, "  recipe: %s; overridden by flags: %s\n", r.Source, over)
	}
	var zero, full int
	for _, q := range bank.Thresh {
		switch q {
		case 0:
			zero++
		case 1<<uint(bank.Bits) - 1:
			full++
		}
	}
	fmt.Fprintf(stdout, "  %d-bit bank: %.4f of thresholds at 0 (never include), %.4f at %d (always include)\n",
		bank.Bits, float64(zero)/float64(len(bank.Thresh)), float64(full)/float64(len(bank.Thresh)), 1<<uint(bank.Bits)-1)
	nl := sh.Literals()
	inc := make([]int, h.Clauses)
	empty := 0
	for c := range inc {
		for i := 0; i < nl; i++ {
			if m.Include[c*nl+i] >= minP {
				inc[c]++
			}
		}
		if inc[c] == 0 {
			empty++
		}
	}
	s := slices.Clone(inc)
	slices.Sort(s)
	fmt.Fprintf(stdout, "  literals with P(include) >= %g per clause: min %d, median %d, max %d; %d clauses with none\n", minP, s[0], s[len(s)/2], s[len(s)-1], empty)
	fmt.Fprintf(stdout, "  weights per class (sum over clauses, min, max, positive fraction):\n")
	for k := 0; k < h.Classes; k++ {
		w := h.Weights[k*h.Clauses : (k+1)*h.Clauses]
		var sum int64
		pos := 0
		for _, v := range w {
			sum += int64(v)
			if v > 0 {
				pos++
			}
		}
		fmt.Fprintf(stdout, "    %-12s %8d %7d %7d %.3f\n", f.Classes[k], sum, slices.Min(w), slices.Max(w), float64(pos)/float64(len(w)))
	}
	if clause >= 0 {
		fmt.Fprintf(stdout, "\nclause %d: weights", clause)
		for k := 0; k < h.Classes; k++ {
			fmt.Fprintf(stdout, " %s:%d", f.Classes[k], h.Weights[k*h.Clauses+clause])
		}
		var terms []string
		for i := 0; i < nl; i++ {
			if p := m.Include[clause*nl+i]; p >= minP {
				terms = append(terms, fmt.Sprintf("%s[%.2f]", convLiteralName(sh, i), p))
			}
		}
		conj := strings.Join(terms, " AND ")
		if conj == "" {
			conj = "(empty)"
		}
		fmt.Fprintf(stdout, "\n  %s\n", conj)
	}
	return nil
}
