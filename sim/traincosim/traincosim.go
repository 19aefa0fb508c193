package traincosim

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/internal/simcache"
	"github.com/ptmhw/ptm/sim/internal/verilator"
)

//go:embed harness.cpp.tmpl
var harnessText string

var harnessTmpl = template.Must(template.New("harness").Parse(harnessText))

// ErrNoVerilator is returned when the verilator executable is not found.
var ErrNoVerilator = errors.New("traincosim: verilator not found on PATH: run scripts/install-deps.sh")

// ErrOptions is wrapped by the errors of options that do not fit together.
var ErrOptions = errors.New("traincosim: bad options")

// Options are a co-simulation's model and hardware settings.
type Options struct {
	// Shape is the model shape (NT, NC, m, o, T, binary).
	Shape fixed.Shape
	// N, S, Seed and Feedback are the training hyper-parameters (the
	// shape's m and T are used for Clauses and T).
	N        int
	S        float64
	Seed     uint64
	Feedback ptm.Feedback
	// Bits is B (8..15); LiteralLanes the trainer's literal lanes (1..4,
	// 0 for 4).
	Bits         int
	LiteralLanes int
	// CacheDir holds the simulator builds (sim/cosim.DefaultCacheDir's
	// rule with $PTM_COSIM_CACHE when empty); Jobs is verilator's -j.
	CacheDir string
	Jobs     int
	// Progress, when not nil, gets a line when a Verilator build starts
	// and every 20 s while it runs.
	Progress io.Writer
}

// Params returns the golden trainer's configuration of o (one worker).
func (o Options) Params() fixedtrain.Config {
	return fixedtrain.Config{Params: ptm.Params{Clauses: o.Shape.Clauses, T: o.Shape.T, S: o.S, N: o.N, Seed: o.Seed, Feedback: o.Feedback},
		Bits: o.Bits, Workers: 1}
}

// Mismatch is one SPV word or include mass on which the engine and the
// golden trainer differ.
type Mismatch struct {
	Example  int    `json:"example"`  // examples trained when compared
	TM       int    `json:"tm"`       // t
	Clause   int    `json:"clause"`   // j
	Literal  int    `json:"literal"`  // i
	State    int    `json:"state"`    // n; -1 the include mass, -2 the inference threshold
	Expected uint16 `json:"expected"` // golden
	Actual   uint16 `json:"actual"`   // engine
}

func (m Mismatch) String() string {
	what := fmt.Sprintf("state n=%d", m.State)
	switch m.State {
	case -1:
		what = "include mass I"
	case -2:
		what = "inference threshold min(I, 2^B-1)"
	}
	return fmt.Sprintf("after example %d: TA (t=%d, j=%d, i=%d) %s: golden %d, RTL %d", m.Example, m.TM, m.Clause, m.Literal, what, m.Expected, m.Actual)
}

// Session is a running simulator of the trainer and its golden twin.
type Session struct {
	opts     Options
	design   *hw.TrainerDesign
	golden   *fixedtrain.Trainer
	cmd      *exec.Cmd
	in       *bufio.Writer
	inPipe   io.WriteCloser
	out      *bufio.Reader
	stderr   *bytes.Buffer
	shuffle  *lfsr.LFSR
	order    []int
	examples int
	cycles   uint64 // training cycles, summed over examples
	// Cached is true when the simulator build was reused.
	Cached bool
}

// ShuffleSeed is the initial state of the host's shuffle lane for a model
// of clauses global clauses: lfsr.LaneSeed(Seed32(seed), clauses+1, 64).
func ShuffleSeed(seed uint64, clauses int) uint64 {
	return fixedtrain.ShuffleSeed(seed, clauses)
}

// Start generates and builds the trainer, starts the simulator, seeds its
// lanes and initializes its SPVs.
func Start(opts Options) (*Session, error) {
	cfg := opts.Params()
	golden, err := fixedtrain.New(cfg, opts.Shape.Classes, opts.Shape.Features, opts.Shape.Binary)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if golden.NumTAs() != opts.Shape.TAs() {
		return nil, fmt.Errorf("%w: shape %+v does not match the trainer", ErrOptions, opts.Shape)
	}
	d, err := hw.GenerateTrainer(hw.Config{Bits: golden.Bits(), LiteralLanes: opts.LiteralLanes},
		opts.Shape, hw.TrainParams{N: opts.N, S: opts.S, Feedback: opts.Feedback})
	if err != nil {
		return nil, err
	}
	bin, dir, cached, err := build(d, opts.CacheDir, opts.Jobs, opts.Progress)
	if err != nil {
		return nil, err
	}
	s := &Session{opts: opts, design: d, golden: golden, Cached: cached, stderr: &bytes.Buffer{}}
	s.shuffle, err = lfsr.New(fixedtrain.LaneWidth, 32, ShuffleSeed(opts.Seed, opts.Shape.TotalClauses()))
	if err != nil {
		return nil, fmt.Errorf("traincosim: %w", err)
	}
	// X values (a RAM's read data after a write, registers before their
	// first load) are random, so nothing may depend on them.
	s.cmd = exec.Command(bin, "+verilator+rand+reset+2", "+verilator+seed+"+strconv.FormatUint(opts.Seed%1000000+1, 10))
	s.cmd.Dir = dir
	s.cmd.Stderr = s.stderr
	if s.inPipe, err = s.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("traincosim: %w", err)
	}
	outPipe, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("traincosim: %w", err)
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("traincosim: start simulator: %w", err)
	}
	s.in = bufio.NewWriterSize(s.inPipe, 1<<16)
	s.out = bufio.NewReaderSize(outPipe, 1<<20)
	fmt.Fprintf(s.in, "s 0 %x\n", fixedtrain.ControlSeed(opts.Seed))
	for c := 0; c < opts.Shape.TotalClauses(); c++ {
		fmt.Fprintf(s.in, "s %d %x\n", c+1, fixedtrain.ClauseSeed(opts.Seed, c))
	}
	if _, err := s.command("i\n"); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Design returns the generated trainer.
func (s *Session) Design() *hw.TrainerDesign { return s.design }

// Golden returns the golden trainer (do not train it directly).
func (s *Session) Golden() *fixedtrain.Trainer { return s.golden }

// Examples is the number of examples trained.
func (s *Session) Examples() int { return s.examples }

// Cycles is the engine's clock cycles spent training, over all examples.
func (s *Session) Cycles() uint64 { return s.cycles }

// command sends one command that the harness answers with "ok <cycles>".
func (s *Session) command(c string) (uint64, error) {
	if _, err := io.WriteString(s.in, c); err != nil {
		return 0, s.fail(err)
	}
	if err := s.in.Flush(); err != nil {
		return 0, s.fail(err)
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		return 0, s.fail(err)
	}
	f := strings.Fields(line)
	if len(f) != 2 || f[0] != "ok" {
		return 0, fmt.Errorf("traincosim: bad simulator output %q", strings.TrimSpace(line))
	}
	n, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("traincosim: bad simulator output %q: %w", strings.TrimSpace(line), err)
	}
	return n, nil
}

func (s *Session) fail(err error) error {
	msg := strings.TrimSpace(s.stderr.String())
	if msg != "" {
		return fmt.Errorf("traincosim: simulator: %w: %s", err, msg)
	}
	return fmt.Errorf("traincosim: simulator: %w", err)
}

// Train trains the engine and the golden trainer on one example and
// returns the engine's cycles for it.
func (s *Session) Train(x []bool, y int) (uint64, error) {
	if err := s.golden.Update(x, y); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	c, err := s.command(fmt.Sprintf("x %s %d\n", featureHex(x), y))
	if err != nil {
		return 0, err
	}
	s.examples++
	s.cycles += c
	return c, nil
}

// Order returns the host's shuffled order of rows 0..r-1 for the next
// epoch (docs/fixed-point-training.md 5.1 step 1 with the shuffle lane).
func (s *Session) Order(r int) []int {
	if len(s.order) != r {
		s.order = make([]int, r)
	}
	for i := range s.order {
		s.order[i] = i
	}
	for i := r - 1; i >= 1; i-- {
		j := int(s.shuffle.Next() * uint64(i+1) >> 32)
		s.order[i], s.order[j] = s.order[j], s.order[i]
	}
	return s.order
}

// Epoch trains on every row once, in the host's shuffled order; after is
// called (when not nil) after every example with its index in the epoch.
func (s *Session) Epoch(X [][]bool, y []int, after func(k int) error) error {
	if err := s.golden.CheckData(X, y); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	for k, r := range s.Order(len(X)) {
		if _, err := s.Train(X[r], y[r]); err != nil {
			return err
		}
		if after != nil {
			if err := after(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// Readback reads every SPV word, include mass and inference threshold
// (min(I, 2^B - 1), derived on chip) out of the engine, in the golden
// trainer's flat order (TA (t, j, i) at (t*m+j)*2o+i, 2N words per TA).
func (s *Session) Readback() (spv, inc, thresh []uint16, err error) {
	p := s.design.Params
	if _, err := io.WriteString(s.in, "d\n"); err != nil {
		return nil, nil, nil, s.fail(err)
	}
	if err := s.in.Flush(); err != nil {
		return nil, nil, nil, s.fail(err)
	}
	lanesW := make([][]uint16, p.LL)
	lanesM := make([][]uint16, p.LL)
	lanesT := make([][]uint16, p.LL)
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			return nil, nil, nil, s.fail(err)
		}
		f := strings.Fields(line)
		if len(f) == 1 && f[0] == "end" {
			break
		}
		if len(f) < 2 || (f[0] != "w" && f[0] != "m" && f[0] != "t") {
			return nil, nil, nil, fmt.Errorf("traincosim: bad readback line %.60q", line)
		}
		k, err := strconv.Atoi(f[1])
		if err != nil || k < 0 || k >= p.LL {
			return nil, nil, nil, fmt.Errorf("traincosim: bad readback lane %q", f[1])
		}
		words := make([]uint16, len(f)-2)
		for a, h := range f[2:] {
			v, err := strconv.ParseUint(h, 16, 16)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("traincosim: bad readback word %q: %w", h, err)
			}
			words[a] = uint16(v)
		}
		switch f[0] {
		case "w":
			lanesW[k] = words
		case "m":
			lanesM[k] = words
		default:
			lanesT[k] = words
		}
	}
	for k := 0; k < p.LL; k++ {
		if len(lanesW[k]) != p.SPVDepth || len(lanesM[k]) != p.IncDepth || len(lanesT[k]) != p.IncDepth {
			return nil, nil, nil, fmt.Errorf("traincosim: lane %d read back %d SPV words, %d include masses and %d thresholds, want %d, %d and %d",
				k, len(lanesW[k]), len(lanesM[k]), len(lanesT[k]), p.SPVDepth, p.IncDepth, p.IncDepth)
		}
	}
	lits, n2 := 2*p.O, 2*p.N
	spv = make([]uint16, p.Clauses*lits*n2)
	inc = make([]uint16, p.Clauses*lits)
	thresh = make([]uint16, p.Clauses*lits)
	for c := 0; c < p.Clauses; c++ {
		for i := 0; i < lits; i++ {
			ta := c*lits + i
			for n := 0; n < n2; n++ {
				l, a := p.SPVAddr(c, i, n)
				spv[ta*n2+n] = lanesW[l][a]
			}
			l, a := p.IncAddr(c, i)
			inc[ta] = lanesM[l][a]
			thresh[ta] = lanesT[l][a]
		}
	}
	return spv, inc, thresh, nil
}

// Compare reads the engine back and compares every SPV word, include
// mass and inference threshold with the golden trainer's (SPVs,
// IncludeMass, Bank().Thresh). It returns the words compared and the
// mismatches (at most max of them listed; all counted in the total).
func (s *Session) Compare(max int) (words, total int, first []Mismatch, err error) {
	spv, inc, thresh, err := s.Readback()
	if err != nil {
		return 0, 0, nil, err
	}
	bank, err := s.golden.Bank()
	if err != nil {
		return 0, 0, nil, fmt.Errorf("traincosim: golden bank: %w", err)
	}
	want := s.golden.SPVs()
	p := s.design.Params
	lits, n2 := 2*p.O, 2*p.N
	note := func(ta, n int, e, a uint16) {
		total++
		if len(first) < max {
			c := ta / lits
			first = append(first, Mismatch{Example: s.examples, TM: c / p.M, Clause: c % p.M, Literal: ta % lits, State: n, Expected: e, Actual: a})
		}
	}
	for w, v := range want {
		if spv[w] != v {
			note(w/n2, w%n2, v, spv[w])
		}
	}
	for ta := range inc {
		if e := uint16(s.golden.IncludeMass(ta)); inc[ta] != e {
			note(ta, -1, e, inc[ta])
		}
		if e := uint16(bank.Thresh[ta]); thresh[ta] != e {
			note(ta, -2, e, thresh[ta])
		}
	}
	return len(want) + 2*len(inc), total, first, nil
}

// Close ends the simulator.
func (s *Session) Close() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	s.in.Flush()
	s.inPipe.Close()
	err := s.cmd.Wait()
	s.cmd = nil
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// featureHex formats features as hex, bit i = feature i.
func featureHex(x []bool) string {
	n := max(1, (len(x)+3)/4)
	b := make([]byte, n)
	for d := 0; d < n; d++ {
		v := 0
		for j := 0; j < 4; j++ {
			if i := 4*d + j; i < len(x) && x[i] {
				v |= 1 << j
			}
		}
		b[n-1-d] = "0123456789abcdef"[v]
	}
	return string(b)
}

// harness renders the C++ harness of a trainer design.
func harness(d *hw.TrainerDesign) ([]byte, error) {
	p := d.Params
	words := (p.O + 31) / 32
	var set strings.Builder
	switch {
	case p.O <= 32:
		set.WriteString("    top->ex_x = w[0];")
	case p.O <= 64:
		set.WriteString("    top->ex_x = (uint64_t)w[1] << 32 | w[0];")
	default:
		fmt.Fprintf(&set, "    for (int i = 0; i < %d; i++) top->ex_x[i] = w[i];", words)
	}
	var b bytes.Buffer
	err := harnessTmpl.Execute(&b, map[string]any{
		"Top": d.Top(), "FeatureWords": words, "SetFeatures": set.String(),
		"Lanes": p.LL, "SPVDepth": p.SPVDepth, "IncDepth": p.IncDepth, "Watchdog": 100_000_000,
	})
	if err != nil {
		return nil, fmt.Errorf("traincosim: harness: %w", err)
	}
	return b.Bytes(), nil
}

// buildFlags are the verilator flags of every trainer simulator build.
var buildFlags = []string{"--cc", "--exe", "--build", "-O3", "--x-assign", "unique", "--x-initial", "unique",
	"-Wno-fatal", "-CFLAGS", "-O1"}

// DefaultCacheDir is where builds are cached when Options.CacheDir is
// empty: the directory of sim/cosim ($PTM_COSIM_CACHE, else the user
// cache's ptm-cosim).
func DefaultCacheDir() string { return simcache.Dir("PTM_COSIM_CACHE", "ptm-cosim") }

// build compiles the trainer and its harness into cacheDir/<top>-<hash>
// through simcache.Build (sim/cosim.BuildDesign's scheme: the hash covers
// every source, the flags and the Verilator version; a cached build is
// verified before reuse).
func build(d *hw.TrainerDesign, cacheDir string, jobs int, progress io.Writer) (bin, dir string, cached bool, err error) {
	ver, err := verilator.Version()
	if errors.Is(err, verilator.ErrNotFound) {
		return "", "", false, ErrNoVerilator
	}
	if err != nil {
		return "", "", false, fmt.Errorf("traincosim: %w", err)
	}
	src, err := harness(d)
	if err != nil {
		return "", "", false, err
	}
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	dir, cached, err = simcache.Verilate(simcache.VerilatorBuild{
		CacheDir: cacheDir, Top: d.Top(), Version: ver, Flags: buildFlags,
		Files: d.Files, Verilog: d.VerilogFiles(), Harness: src, Jobs: jobs,
		During: func() func() { return heartbeat(progress, "verilator build of "+d.Top()) },
	})
	if err != nil {
		return "", "", false, fmt.Errorf("traincosim: %w", err)
	}
	return filepath.Join(dir, filepath.FromSlash(simcache.BinaryPath)), dir, cached, nil
}

// heartbeatEvery is how often a running build reports on Options.Progress.
const heartbeatEvery = 20 * time.Second

// heartbeat prints what is starting on w and then a line every
// heartbeatEvery until the returned stop is called (nothing when w is nil).
func heartbeat(w io.Writer, what string) (stop func()) {
	if w == nil {
		return func() {}
	}
	fmt.Fprintf(w, "traincosim: %s\n", what)
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(w, "traincosim: %s still running (%s)\n", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-finished }
}
