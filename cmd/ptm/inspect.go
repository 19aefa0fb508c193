package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ptmhw/ptm/golden/modelfile"
)

func init() {
	register("inspect", "print a model's clauses with every literal's P(include), or one TA's SPV (a convolutional model: shape, training record, weights and thresholds summaries)", cmdInspect)
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", "--model MODEL [--tm T] [--clause J] [--min P] [--spv T,J,I]", stderr)
	model := fs.String("model", "", "model `file`")
	tm := fs.Int("tm", -1, "only this TM (class index; a binary model has TM 0)")
	clause := fs.Int("clause", -1, "only this clause")
	min := fs.Float64("min", 0.5, "literals with P(include) >= `p` form the printed conjunction")
	all := fs.Bool("all", false, "list every literal's P(include) under each clause")
	spv := fs.String("spv", "", "print the SPV of TA `tm,clause,literal` instead")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return fmt.Errorf("%w: --model is required", errUsage)
	}
	// Names with control characters are refused by every command that uses
	// a model; inspect shows such a file (written before the rule) with
	// the names escaped, so they never act on the terminal.
	f, cv, hash, quoted, err := modelfile.ReadAnyQuoted(*model)
	if err != nil {
		return err
	}
	if len(quoted) > 0 {
		fmt.Fprintf(stderr, "ptm inspect: %s: %s hold control characters, shown escaped as Go strings; eval, gen, stream and the other commands refuse this file (rename them: ptm train writes names without them)\n",
			*model, strings.Join(quoted, ", "))
	}
	if cv != nil {
		return inspectConv(fs, *model, hash, cv, *clause, *min, stdout)
	}
	m := f.Model
	if *tm < -1 || *tm >= m.NumTMs() {
		return fmt.Errorf("%w: --tm %d: the model has %d TMs (0..%d)", errUsage, *tm, m.NumTMs(), m.NumTMs()-1)
	}
	if *clause < -1 || *clause >= m.Clauses {
		return fmt.Errorf("%w: --clause %d: the model has %d clauses per TM (0..%d)", errUsage, *clause, m.Clauses, m.Clauses-1)
	}
	if !(*min >= 0 && *min <= 1) {
		return fmt.Errorf("%w: --min %v, want a probability in 0..1", errUsage, *min)
	}
	names := literalNames(f)
	if *spv != "" {
		var t, j, i int
		if _, err := fmt.Sscanf(*spv, "%d,%d,%d", &t, &j, &i); err != nil {
			return fmt.Errorf("%w: --spv %q: want tm,clause,literal", errUsage, *spv)
		}
		if t < 0 || t >= m.NumTMs() || j < 0 || j >= m.Clauses || i < 0 || i >= m.NumLiterals() {
			return fmt.Errorf("%w: --spv %d,%d,%d outside %d TMs x %d clauses x %d literals", errUsage, t, j, i, m.NumTMs(), m.Clauses, m.NumLiterals())
		}
		p := m.TASPV(t, j, i)
		fmt.Fprintf(stdout, "SPV of TM %d clause %d literal %d (%s): P(include) = %.4f\n", t, j, i, names[i], m.Include(t, j, i))
		n2 := len(p)
		q := f.Bank.SPV[m.TAIndex(t, j, i)*n2 : (m.TAIndex(t, j, i)+1)*n2]
		for n, v := range p {
			side := "exclude"
			if n >= m.N {
				side = "include"
			}
			fmt.Fprintf(stdout, "  state %4d %s %.6f  q%d=%-6d %s\n", n+1, side, v, f.Bank.Bits, q[n], strings.Repeat("#", int(v*50+0.5)))
		}
		return nil
	}
	format := fmt.Sprintf("format %d, SPVs at %d bits", f.Format, f.SPVBits)
	if f.Format == modelfile.VersionV1 {
		format = fmt.Sprintf("format %d, float64 SPVs: `ptm convert` rewrites it in format %d", f.Format, modelfile.Version)
	}
	fmt.Fprintf(stdout, "model %s (model hash %s, %s)\n", *model, hash[:16], format)
	fmt.Fprintf(stdout, "  %d classes (%s), binary=%v; %d TMs x %d clauses; %d Boolean features from %s\n",
		m.NumClasses, strings.Join(f.Classes, ", "), m.Binary, m.NumTMs(), m.Clauses, m.NumFeatures, strings.Join(f.Features, ", "))
	fmt.Fprintf(stdout, "  T=%d s=%g N=%d epochs=%d seed=%d feedback=%s; trained on %s (%d train / %d test rows); quantized to %d bits\n",
		m.T, m.S, m.N, m.Epochs, m.Seed, m.Feedback, f.Split.Dataset, len(f.Split.Train), len(f.Split.Test), f.Bank.Bits)
	if tu := f.Tuning; tu != nil {
		fmt.Fprintf(stdout, "  %s\n", describeTuning(tu))
	}
	for t := 0; t < m.NumTMs(); t++ {
		if *tm >= 0 && t != *tm {
			continue
		}
		cls := f.Classes[t]
		if m.Binary {
			cls = f.Classes[1] + " vs " + f.Classes[0]
		}
		fmt.Fprintf(stdout, "\nTM %d (%s)\n", t, cls)
		for j := 0; j < m.Clauses; j++ {
			if *clause >= 0 && j != *clause {
				continue
			}
			pol := "+"
			if j%2 == 1 {
				pol = "-"
			}
			var terms []string
			for i := 0; i < m.NumLiterals(); i++ {
				if p := m.Include(t, j, i); p >= *min {
					terms = append(terms, fmt.Sprintf("%s[%.2f]", names[i], p))
				}
			}
			conj := strings.Join(terms, " AND ")
			if conj == "" {
				conj = "(empty)"
			}
			fmt.Fprintf(stdout, "  C%s%-3d %s\n", pol, j, conj)
			if *all {
				for i := 0; i < m.NumLiterals(); i++ {
					fmt.Fprintf(stdout, "        %-28s %.4f\n", names[i], m.Include(t, j, i))
				}
			}
		}
	}
	return nil
}

// literalNames names the 2o literals: the booleanizer's bits, then their
// negations.
func literalNames(f *modelfile.File) []string {
	bits := f.Booleanizer.BitNames(f.Features)
	out := append([]string(nil), bits...)
	for _, b := range bits {
		out = append(out, "NOT "+b)
	}
	return out
}

// describeTuning says how a model's hyper-parameters were chosen (the
// model file's tuning record).
func describeTuning(tu *modelfile.Tuning) string {
	c := tu.Chosen
	s := fmt.Sprintf("tuned: clauses %d, T %d, s %g, epochs %d, thresholds %d", c.Clauses, c.T, c.S, c.Epochs, c.Thresholds)
	if c.Sets > 1 {
		s += fmt.Sprintf(", jitter %g sd", c.Bandwidth)
	}
	if tu.Score == nil {
		s += fmt.Sprintf(": the first of %d candidates, unscored (the budget %s admitted fewer than two)", tu.Candidates, tu.Budget)
	} else {
		s += fmt.Sprintf(", chosen among %d scored of %d candidates by %s; validation accuracy %.4f, NLL %.4f over %d rows; budget %s",
			tu.Scored, tu.Candidates, tu.Rule, tu.Score.Accuracy, tu.Score.NLL, tu.Score.Rows, tu.Budget)
	}
	if len(tu.Fixed) > 0 {
		s += "; kept as given: " + strings.Join(tu.Fixed, ", ")
	}
	return s
}
