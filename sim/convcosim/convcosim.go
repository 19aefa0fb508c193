package convcosim

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/sim/internal/simcache"
	"github.com/ptmhw/ptm/sim/internal/verilator"
)

//go:embed harness.cpp.tmpl
var harnessText string

var harnessTmpl = template.Must(template.New("harness").Parse(harnessText))

// ErrNoVerilator is returned when the verilator executable is not found.
var ErrNoVerilator = errors.New("convcosim: verilator not found on PATH: run scripts/install-deps.sh")

// Options configure one co-simulation run.
type Options struct {
	// Bank is the model; Config the hardware (Bits must be the bank's).
	Bank   *conv.Bank
	Config hw.Config
	// ModelHash goes into the generated headers.
	ModelHash string
	// Requests are sent in order.
	Requests []Request
	// LoadPorts loads the memories through the write ports instead of
	// generating them with the model as initial contents.
	LoadPorts bool
	// Ready is the percentage of cycles the harness holds res_ready high
	// (default 100; lower values test back-pressure).
	Ready int
	// Seed seeds the harness's back-pressure pattern and Verilator's
	// random initial values.
	Seed uint64
	// CacheDir holds cached builds (default DefaultCacheDir()).
	CacheDir string
	// Jobs is verilator's -j (default 2).
	Jobs int
	// Progress, when set, is called after every response with the
	// responses compared so far.
	Progress func(done, total int)

	// badK lets requests with K outside 1..MaxK through (tests of the
	// error word).
	badK bool
}

// Request is one inference request: an image's bit-planes (Planes*H*W
// bits, plane p's pixel (y, x) at (p*H + y)*W + x, conv.Encoder's
// Booleanize order), K samples, seed Q.
type Request struct {
	Planes []bool
	K      int
	Seed   uint32
}

// Mismatch is the first difference between the core and the golden model.
type Mismatch struct {
	Request  int     `json:"request_index"`
	Sample   int     `json:"sample_index"` // -1: the response's length or error flag
	Expected []int64 `json:"expected"`     // the sample's class sums
	Actual   []int64 `json:"actual"`
	Note     string  `json:"note,omitempty"`
}

// Result is the outcome of a co-simulation run.
type Result struct {
	SamplesCompared int       `json:"samples_compared"`
	WordsCompared   int       `json:"words_compared"`
	NonZeroWords    int       `json:"nonzero_words"`    // class sums other than 0 (clauses fired)
	DistinctSums    int       `json:"distinct_samples"` // distinct class-sum vectors among the samples (counted up to 1,000)
	Mismatches      int       `json:"mismatches"`
	CyclesPerSample float64   `json:"cycles_per_sample"`
	Lanes           int       `json:"lanes"`
	Scan            string    `json:"scan"` // the design's scan (hw.ConvParams.Scan)
	Bits            int       `json:"bits"`
	FirstMismatch   *Mismatch `json:"first_mismatch"`

	Requests int    `json:"requests"`
	Cycles   uint64 `json:"cycles"` // first accept to last result word
	// PatchEvals is the golden model's count of clause-patch evaluations
	// of a sequential early-exit scan (conv.Core.PatchEvals), per sample.
	PatchEvalsPerSample float64 `json:"patch_evals_per_sample"`
	BuildCached         bool    `json:"build_cached"`
	BuildDir            string  `json:"build_dir"`
	BuildTime           float64 `json:"build_seconds"`
	SimTime             float64 `json:"sim_seconds"`
}

// DefaultCacheDir is where builds are cached when Options.CacheDir is
// empty: sim/cosim's directory ($PTM_COSIM_CACHE, else <user cache
// dir>/ptm-cosim); the build directories are named by top module and hash.
func DefaultCacheDir() string {
	return simcache.Dir("PTM_COSIM_CACHE", "ptm-cosim")
}

// buildFlags are the verilator flags of every simulator build.
// --unroll-count: conv_mem writes a row lane by lane in a for loop over
// its LANES lanes (the idiom yosys maps onto a block RAM's bit mask);
// Verilator 5.006 refuses a delayed array write in a loop it does not
// unroll (BLKLOOPINIT), and unrolls only 64 iterations by default, fewer
// than an 8 x 16-lane core's 128.
var buildFlags = []string{"--cc", "--exe", "--build", "-O3", "--x-assign", "unique", "--x-initial", "unique",
	"--unroll-count", "4096", "-Wno-fatal", "-CFLAGS", "-O1"}

// setter is the C++ statement setting a port of width bits from w[].
func setter(port string, bits int) string {
	switch {
	case bits <= 32:
		return fmt.Sprintf("    top->%s = w[0];", port)
	case bits <= 64:
		return fmt.Sprintf("    top->%s = (uint64_t)w[1] << 32 | w[0];", port)
	}
	return fmt.Sprintf("    for (int i = 0; i < %d; i++) top->%s[i] = w[i];", (bits+31)/32, port)
}

// allOnes is the C++ statement setting a port of width bits to all ones.
func allOnes(port string, bits int) string {
	switch {
	case bits < 64:
		return fmt.Sprintf("    top->%s = (1ULL << %d) - 1;", port, bits)
	case bits == 64:
		return fmt.Sprintf("    top->%s = ~0ULL;", port)
	}
	return fmt.Sprintf("    for (int i = 0; i < %d; i++) top->%s[i] = i < %d ? 0xFFFFFFFFu : (1u << %d) - 1;",
		(bits+31)/32, port, bits/32, bits%32)
}

// harness renders the C++ harness for a design.
func harness(d *hw.ConvDesign) ([]byte, error) {
	p := d.Params
	bankBits, wtBits := p.L*p.Bits, p.NC*hw.ConvWeightBits
	var b bytes.Buffer
	err := harnessTmpl.Execute(&b, map[string]any{
		"Top": d.Top(), "Watchdog": 1_000_000, "KW": p.KW, "Depth": p.D, "WDepth": p.WDepth, "RowGap": p.RowInterval() - 1,
		"ImageWords": (p.ImgBits + 31) / 32, "Rows": p.P * p.H, "RowBits": p.W, "RowWords": (p.W + 31) / 32,
		"SetRow":    setter("img_wr_data", p.W),
		"BankWords": (bankBits + 31) / 32, "SetBank": setter("bank_wr_data", bankBits),
		"BankMask":    allOnes("bank_wr_mask", p.L),
		"WeightWords": (wtBits + 31) / 32, "SetWeights": setter("wt_wr_data", wtBits),
	})
	if err != nil {
		return nil, fmt.Errorf("convcosim: harness: %w", err)
	}
	return b.Bytes(), nil
}

// Build is a compiled simulator of a design.
type Build struct {
	Dir    string // holds the design files and the simulator
	Binary string // the simulator executable
	Cached bool   // reused from an earlier build
}

// BuildDesign compiles a design and its harness with Verilator into
// cacheDir/<top>-<hash> (sim/internal/simcache), so that an identical
// design is built only once. jobs is verilator's -j (0: 2).
func BuildDesign(d *hw.ConvDesign, cacheDir string, jobs int) (*Build, error) {
	ver, err := verilator.Version()
	if errors.Is(err, verilator.ErrNotFound) {
		return nil, ErrNoVerilator
	}
	if err != nil {
		return nil, fmt.Errorf("convcosim: %w", err)
	}
	src, err := harness(d)
	if err != nil {
		return nil, err
	}
	if cacheDir == "" {
		cacheDir = DefaultCacheDir()
	}
	dir, cached, err := simcache.Verilate(simcache.VerilatorBuild{
		CacheDir: cacheDir, Top: d.Top(), Version: ver, Flags: buildFlags,
		Files: d.Files, Verilog: d.VerilogFiles(), Harness: src, Jobs: jobs,
	})
	if err != nil {
		return nil, fmt.Errorf("convcosim: %w", err)
	}
	return &Build{Dir: dir, Binary: filepath.Join(dir, filepath.FromSlash(simcache.BinaryPath)), Cached: cached}, nil
}

// bitsHex formats bits as hex, bit i = x[i].
func bitsHex(x []bool) string {
	n := max((len(x)+3)/4, 1)
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

// Run generates the design, builds it (or reuses a cached build), streams
// the requests through one simulator process and compares every result
// word with conv.Core.Run.
func Run(opts Options) (*Result, error) {
	if opts.Bank == nil {
		return nil, errors.New("convcosim: no bank")
	}
	cfg := opts.Config
	cfg.InitBanks = !opts.LoadPorts
	d, err := hw.GenerateConv(cfg, opts.Bank, opts.ModelHash)
	if err != nil {
		return nil, err
	}
	cfg = d.Config
	core, err := conv.NewCore(opts.Bank, cfg.HW())
	if err != nil {
		return nil, fmt.Errorf("convcosim: golden model: %w", err)
	}
	sh := opts.Bank.Shape
	for i, r := range opts.Requests {
		if len(r.Planes) != sh.Planes*sh.Pixels() {
			return nil, fmt.Errorf("convcosim: request %d has %d image bits, shape needs %d", i, len(r.Planes), sh.Planes*sh.Pixels())
		}
		if (r.K < 1 || r.K > cfg.MaxK) && !opts.badK {
			return nil, fmt.Errorf("convcosim: request %d: K = %d outside 1..%d (MaxK)", i, r.K, cfg.MaxK)
		}
	}
	t0 := time.Now()
	b, err := BuildDesign(d, opts.CacheDir, opts.Jobs)
	if err != nil {
		return nil, err
	}
	res := &Result{Lanes: d.Params.L, Scan: d.Params.Scan, Bits: d.Params.Bits, BuildCached: b.Cached, BuildDir: b.Dir, BuildTime: time.Since(t0).Seconds()}
	t1 := time.Now()

	ready := opts.Ready
	if ready <= 0 || ready > 100 {
		ready = 100
	}
	cmd := exec.Command(b.Binary, "ready="+strconv.Itoa(ready), "rseed="+strconv.FormatUint(opts.Seed, 10),
		"+verilator+rand+reset+2", "+verilator+seed+"+strconv.FormatUint(opts.Seed%1000000+1, 10))
	cmd.Dir = b.Dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("convcosim: %w", err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("convcosim: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("convcosim: start simulator: %w", err)
	}
	writeErr := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(in, 1<<16)
		var err error
		if opts.LoadPorts {
			for a, row := range hw.ConvThreshRows(opts.Bank, cfg.HW()) {
				if err == nil {
					_, err = fmt.Fprintf(w, "w %d %s", a, hw.RowHex([][]uint32{row}, d.Params.L*d.Params.Bits))
				}
			}
			for a, row := range hw.ConvWeightRows(&opts.Bank.Head, cfg.HW()) {
				if err == nil {
					_, err = fmt.Fprintf(w, "v %d %s", a, hw.RowHex([][]uint32{row}, d.Params.NC*hw.ConvWeightBits))
				}
			}
		}
		for _, r := range opts.Requests {
			if err != nil {
				break
			}
			_, err = fmt.Fprintf(w, "r %s %d %x\n", bitsHex(r.Planes), r.K, r.Seed)
		}
		if err == nil {
			err = w.Flush()
		}
		if cerr := in.Close(); err == nil {
			err = cerr
		}
		writeErr <- err
	}()

	nc := opts.Bank.Classes
	pt := conv.NewPatches(sh)
	var sums []int32
	var words []uint32
	isErr := false
	n := 0
	var first, lastEnd uint64
	var perr error
	distinct := map[string]bool{}
	compare := func(i int, acc, end uint64) error {
		if i >= len(opts.Requests) {
			return errors.New("convcosim: simulator answered a request that was not sent")
		}
		r := opts.Requests[i]
		if i == 0 {
			first = acc
		}
		lastEnd = end
		if r.K < 1 || r.K > cfg.MaxK {
			// One error word, 1 (docs/conv-core.md 2).
			res.Requests++
			res.WordsCompared++
			if !isErr || len(words) != 1 || words[0] != 1 {
				res.Mismatches++
				if res.FirstMismatch == nil {
					res.FirstMismatch = &Mismatch{Request: i, Sample: -1, Expected: []int64{1}, Actual: toI64(words),
						Note: fmt.Sprintf("K = %d: want one error word 1 (error flag %v)", r.K, isErr)}
				}
			}
			return nil
		}
		if err := pt.Fill(r.Planes); err != nil {
			return fmt.Errorf("convcosim: request %d: %w", i, err)
		}
		var gerr error
		sums, _, gerr = core.Run(pt, r.K, r.Seed, sums)
		if gerr != nil {
			return fmt.Errorf("convcosim: golden model, request %d: %w", i, gerr)
		}
		res.Requests++
		res.SamplesCompared += r.K
		if isErr || len(words) != r.K*nc {
			res.Mismatches++
			if res.FirstMismatch == nil {
				res.FirstMismatch = &Mismatch{Request: i, Sample: -1, Note: fmt.Sprintf("%d words (error %v), want %d", len(words), isErr, r.K*nc)}
			}
			return nil
		}
		for k := 0; k < r.K; k++ {
			bad := false
			for c := 0; c < nc; c++ {
				res.WordsCompared++
				if int32(words[k*nc+c]) != sums[k*nc+c] {
					bad = true
				}
				if sums[k*nc+c] != 0 {
					res.NonZeroWords++
				}
			}
			if len(distinct) < 1000 {
				distinct[fmt.Sprint(sums[k*nc:(k+1)*nc])] = true
			}
			if bad {
				res.Mismatches++
				if res.FirstMismatch == nil {
					m := &Mismatch{Request: i, Sample: k}
					for c := 0; c < nc; c++ {
						m.Expected = append(m.Expected, int64(sums[k*nc+c]))
						m.Actual = append(m.Actual, int64(int32(words[k*nc+c])))
					}
					res.FirstMismatch = m
				}
			}
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(opts.Requests))
		}
		return nil
	}
	sc := bufio.NewScanner(outPipe)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if perr != nil {
			continue // drain so that the simulator can finish
		}
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "o":
			v, e1 := strconv.ParseUint(f[1], 16, 32)
			if e1 != nil {
				perr = fmt.Errorf("convcosim: bad simulator output %q", sc.Text())
				continue
			}
			words = append(words, uint32(v))
			isErr = isErr || f[3] == "1"
		case len(f) == 3 && f[0] == "e":
			acc, _ := strconv.ParseUint(f[1], 10, 64)
			end, _ := strconv.ParseUint(f[2], 10, 64)
			perr = compare(n, acc, end)
			n++
			words, isErr = words[:0], false
		case len(f) == 2 && f[0] == "done":
		default:
			perr = fmt.Errorf("convcosim: bad simulator output %q", sc.Text())
		}
	}
	werr := <-writeErr
	runErr := cmd.Wait()
	switch {
	case runErr != nil:
		return res, fmt.Errorf("convcosim: simulator: %w: %s", runErr, strings.TrimSpace(stderr.String()))
	case perr != nil:
		return res, perr
	case werr != nil:
		return res, fmt.Errorf("convcosim: writing requests: %w", werr)
	case sc.Err() != nil:
		return res, fmt.Errorf("convcosim: reading simulator output: %w", sc.Err())
	case len(words) != 0:
		return res, errors.New("convcosim: simulator output ends inside a response")
	case n != len(opts.Requests):
		return res, fmt.Errorf("convcosim: %d responses to %d requests", n, len(opts.Requests))
	}
	res.SimTime = time.Since(t1).Seconds()
	res.DistinctSums = len(distinct)
	if n > 0 {
		res.Cycles = lastEnd - first + 1
	}
	if res.SamplesCompared > 0 {
		res.CyclesPerSample = float64(res.Cycles) / float64(res.SamplesCompared)
		res.PatchEvalsPerSample = float64(core.PatchEvals()) / float64(res.SamplesCompared)
	}
	return res, nil
}

func toI64(w []uint32) []int64 {
	out := make([]int64, len(w))
	for i, v := range w {
		out[i] = int64(v)
	}
	return out
}

// RandomBank returns a bank of head h whose clauses include few literals,
// so that on random images some clauses fire on some patches and others
// on none: per clause, none (1 in 8) or 1..6 literals get a random
// non-zero threshold (a third of them "always"), and every other TA gets
// a random threshold with probability 1/200.
func RandomBank(h conv.Head, bits int, rng *rand.Rand) *conv.Bank {
	b := &conv.Bank{Head: h, Bits: bits, Thresh: make([]uint32, h.TAs())}
	nl := h.Shape.Literals()
	max := uint32(1)<<uint(bits) - 1
	for c := 0; c < h.Clauses; c++ {
		row := b.Thresh[c*nl : (c+1)*nl]
		for i := range row {
			if rng.IntN(200) == 0 {
				row[i] = rng.Uint32N(max + 1)
			}
		}
		if rng.IntN(8) == 0 {
			clear(row)
			continue
		}
		for n := 1 + rng.IntN(6); n > 0; n-- {
			if rng.IntN(3) == 0 {
				row[rng.IntN(nl)] = max
			} else {
				row[rng.IntN(nl)] = 1 + rng.Uint32N(max)
			}
		}
	}
	return b
}

// RandomHead returns a head of shape s with random weights: per-class
// (clauses must be a multiple of classes) or coalesced with weights
// uniform in -wmax..wmax.
func RandomHead(s conv.Shape, classes, clauses int, st conv.Structure, T int, wmax int32, rng *rand.Rand) conv.Head {
	h := conv.Head{Shape: s, Structure: st, Classes: classes, Clauses: clauses, T: T}
	if st == conv.PerClass {
		h.Weights = conv.PerClassWeights(classes, clauses/classes)
		return h
	}
	h.Weights = make([]int32, classes*clauses)
	for i := range h.Weights {
		h.Weights[i] = rng.Int32N(2*wmax+1) - wmax
	}
	return h
}

// RandomRequests returns n requests on random images of shape s (each
// image's pixels set with its own density, 0.2..0.8), K uniform in
// 1..kmax and random seeds.
func RandomRequests(s conv.Shape, n, kmax int, rng *rand.Rand) []Request {
	reqs := make([]Request, n)
	for i := range reqs {
		x := make([]bool, s.Planes*s.Pixels())
		d := 0.2 + 0.6*rng.Float64()
		for j := range x {
			x[j] = rng.Float64() < d
		}
		reqs[i] = Request{Planes: x, K: 1 + rng.IntN(kmax), Seed: rng.Uint32()}
	}
	return reqs
}
