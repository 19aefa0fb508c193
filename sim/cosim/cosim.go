package cosim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/outfile"
)

// Options configure one co-simulation run.
type Options struct {
	// Shape and Config describe the design to generate.
	Shape  fixed.Shape
	Config hw.Config
	// Bank is the model loaded through the write port. When nil (and
	// BankFile is empty) a random bank (fixed.RandomBank) is drawn from
	// Seed.
	Bank *fixed.Bank
	// BankFile, when set, is a bank image (see ReadBankImage) loaded
	// instead of Bank.
	BankFile string
	// ModelHash goes into the generated headers and info ROM.
	ModelHash string
	// Seed drives the random bank, features, K, request seeds and modes.
	Seed uint64
	// Samples is the number of samples to compare (default 10,000):
	// random requests are generated until their K add up to it.
	Samples int
	// KMax caps the random K (default min(MaxK, 32)); K is uniform in
	// 1..KMax.
	KMax int
	// Mode chooses the request modes: "mixed" (default: one request in
	// four in stats mode), "samples" or "stats".
	Mode string
	// Ready is the percentage of cycles the harness holds res_ready high
	// (default 100; lower values test back-pressure).
	Ready int
	// Sets, when above 1, makes the random requests set queries
	// (Request.Sets) of M sets, M uniform in 1..Sets.
	Sets int
	// Requests, when set, are sent instead of random ones.
	Requests []Request
	// Trace writes an FST waveform to this path (builds with --trace-fst).
	Trace string
	// CacheDir holds cached builds (default DefaultCacheDir()).
	CacheDir string
	// Jobs is verilator's -j (default 2).
	Jobs int
	// MaxMismatches stops the comparison report after this many
	// mismatches are counted in detail (default: count them all).
	MaxMismatches int
}

// Request is one inference request: one run of the core, or, when Sets
// holds M > 1 feature vectors, a query of M sets (docs/fixed-point.md
// section 8): the runs m = 0..M-1 with K_m = fixed.SetK(K, M, m) >= 1
// samples and seed fixed.SubSeed(Seed, m), chained by req_more (1 on
// every run but the last), compared as one response with
// fixed.Core.RunSets (Features is then ignored).
type Request struct {
	Features []bool   `json:"features"`
	K        int      `json:"k"`
	Seed     uint32   `json:"seed"`
	Stats    bool     `json:"stats"`
	Sets     [][]bool `json:"sets,omitempty"`
}

// vectors returns the request's feature vectors, one per set.
func (r *Request) vectors() [][]bool {
	if len(r.Sets) > 1 {
		return r.Sets
	}
	return [][]bool{r.Features}
}

// Mismatch is the first difference between the core and the golden model.
type Mismatch struct {
	Input    int     `json:"input_index"`  // request index
	Sample   int     `json:"sample_index"` // sample k, or -1 for a stats or error response
	Stats    bool    `json:"stats"`
	Expected []int64 `json:"expected"` // class sums (samples) or votes, sums, sumsqs (stats)
	Actual   []int64 `json:"actual"`
	Note     string  `json:"note,omitempty"`
}

// Result is the outcome of a co-simulation run.
type Result struct {
	SamplesCompared int       `json:"samples_compared"`
	Mismatches      int       `json:"mismatches"`
	CyclesPerSample float64   `json:"cycles_per_sample"`
	Lanes           int       `json:"lanes"`
	Bits            int       `json:"bits"`
	FirstMismatch   *Mismatch `json:"first_mismatch"`

	Requests    int      `json:"requests"`
	Cycles      uint64   `json:"cycles"` // first accept to last result word
	Info        []uint32 `json:"info"`   // the info ROM as read from the core
	BuildCached bool     `json:"build_cached"`
	BuildDir    string   `json:"build_dir"`
	BuildTime   float64  `json:"build_seconds"`
	SimTime     float64  `json:"sim_seconds"`
}

// Response is one response of the core as the harness saw it.
type Response struct {
	Words  []uint32
	Error  bool   // the (single) word had res_error set
	Accept uint64 // cycle the request was accepted
	End    uint64 // cycle the last word was taken
}

// session is a design built, its bank and the requests to send.
type session struct {
	opts   Options
	design *hw.Design
	build  *Build
	bank   *fixed.Bank
	core   *fixed.Core
	words  [][]uint32 // per-lane bank words
}

func newSession(opts Options) (*session, error) {
	s := &session{opts: opts}
	cfg, err := opts.Config.Resolve(opts.Shape)
	if err != nil {
		return nil, err
	}
	if err := cfg.Check(opts.Shape); err != nil {
		return nil, err
	}
	switch {
	case opts.BankFile != "":
		words, err := ReadBankImage(opts.BankFile, cfg, opts.Shape)
		if err != nil {
			return nil, err
		}
		if s.bank, err = BankFromLaneWords(opts.Shape, cfg, words); err != nil {
			return nil, err
		}
	case opts.Bank != nil:
		s.bank = opts.Bank
	default:
		rng := rand.New(rand.NewPCG(opts.Seed, 0x636f_7369_6d2f_626b)) // "cosim/bk"
		if s.bank, err = fixed.RandomBank(opts.Shape, cfg.Bits, rng.Uint64); err != nil {
			return nil, fmt.Errorf("cosim: %w", err)
		}
	}
	var initBank *fixed.Bank
	if cfg.InitBanks {
		initBank = s.bank
	}
	if s.design, err = hw.Generate(cfg, opts.Shape, initBank, opts.ModelHash); err != nil {
		return nil, err
	}
	if s.core, err = fixed.NewCore(s.bank, cfg.HW()); err != nil {
		return nil, fmt.Errorf("cosim: golden model: %w", err)
	}
	s.words = s.bank.LaneWords(cfg.HW())
	return s, nil
}

// checkRequest is the Go side's refusal of requests the core would refuse.
func (s *session) checkRequest(i int, r Request) error {
	for _, x := range r.vectors() {
		if len(x) != s.design.Shape.Features {
			return fmt.Errorf("cosim: request %d has %d features, model has %d", i, len(x), s.design.Shape.Features)
		}
	}
	if r.K < 1 || r.K > s.design.Config.MaxK {
		return fmt.Errorf("cosim: request %d: K = %d outside 1..%d (MaxK)", i, r.K, s.design.Config.MaxK)
	}
	return nil
}

// featureHex formats features as hex, bit i = feature i.
func featureHex(x []bool) string {
	n := (len(x) + 3) / 4
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

// exchange runs the simulator: it writes the bank (unless the design has
// initial bank contents), sends the requests from next (nil ends) and
// calls got with every response in order. It returns the info ROM and the
// simulator's final cycle count.
func (s *session) exchange(next func() *Request, got func(i int, req *Request, r Response) error) (info []uint32, cycles uint64, err error) {
	args := []string{"ready=" + strconv.Itoa(max(1, min(100, s.readyPct()))), "rseed=" + strconv.FormatUint(s.opts.Seed, 10),
		"+verilator+rand+reset+2", "+verilator+seed+" + strconv.FormatUint(s.opts.Seed%1000000+1, 10)}
	if s.opts.Trace != "" {
		tr, err := filepath.Abs(s.opts.Trace)
		if err != nil {
			return nil, 0, fmt.Errorf("cosim: %w", err)
		}
		args = append(args, "trace="+tr)
	}
	cmd := exec.Command(s.build.Binary, args...)
	cmd.Dir = s.build.Dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, fmt.Errorf("cosim: %w", err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, fmt.Errorf("cosim: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("cosim: start simulator: %w", err)
	}
	writeErr := make(chan error, 1)
	sent := make(chan *Request, 4096) // requests written and not yet answered
	go func() {
		w := bufio.NewWriterSize(in, 1<<16)
		var err error
		if !s.design.Config.InitBanks {
			for l, ws := range s.words {
				for a, v := range ws {
					if _, err = fmt.Fprintf(w, "w %d %d %x\n", l, a, v); err != nil {
						break
					}
				}
			}
		}
		if err == nil {
			_, err = io.WriteString(w, "i\n")
		}
		for err == nil {
			r := next()
			if r == nil {
				break
			}
			sent <- r
			st := 0
			if r.Stats {
				st = 1
			}
			xs := r.vectors()
			last := len(xs) - 1
			for last > 0 && fixed.SetK(r.K, len(xs), last) == 0 {
				last--
			}
			for m := 0; m <= last && err == nil; m++ {
				more := 0
				if m < last {
					more = 1
				}
				_, err = fmt.Fprintf(w, "r %s %d %x %d %d\n", featureHex(xs[m]), fixed.SetK(r.K, len(xs), m),
					fixed.SubSeed(r.Seed, m), st, more)
			}
		}
		if err == nil {
			err = w.Flush()
		}
		cerr := in.Close()
		if err == nil {
			err = cerr
		}
		writeErr <- err
	}()
	sc := bufio.NewScanner(outPipe)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var cur Response
	n := 0
	var perr error
	for sc.Scan() {
		if perr != nil {
			continue // drain so that the simulator can finish
		}
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "o":
			v, e1 := strconv.ParseUint(f[1], 16, 32)
			if e1 != nil {
				perr = fmt.Errorf("cosim: bad simulator output %q", sc.Text())
				continue
			}
			cur.Words = append(cur.Words, uint32(v))
			if f[3] == "1" {
				cur.Error = true
			}
		case len(f) == 3 && f[0] == "e":
			cur.Accept, _ = strconv.ParseUint(f[1], 10, 64)
			cur.End, _ = strconv.ParseUint(f[2], 10, 64)
			select {
			case req := <-sent:
				perr = got(n, req, cur)
			default:
				perr = errors.New("cosim: simulator answered a request that was not sent")
			}
			n++
			cur = Response{}
		case len(f) == 3 && f[0] == "i":
			v, _ := strconv.ParseUint(f[2], 16, 32)
			info = append(info, uint32(v))
		case len(f) == 2 && f[0] == "done":
			cycles, _ = strconv.ParseUint(f[1], 10, 64)
		default:
			perr = fmt.Errorf("cosim: bad simulator output %q", sc.Text())
		}
	}
	werr := <-writeErr
	runErr := cmd.Wait()
	switch {
	case runErr != nil:
		return info, cycles, fmt.Errorf("cosim: simulator: %w: %s", runErr, strings.TrimSpace(stderr.String()))
	case perr != nil:
		return info, cycles, perr
	case werr != nil:
		return info, cycles, fmt.Errorf("cosim: writing requests: %w", werr)
	case sc.Err() != nil:
		return info, cycles, fmt.Errorf("cosim: reading simulator output: %w", sc.Err())
	case len(cur.Words) != 0:
		return info, cycles, errors.New("cosim: simulator output ends inside a response")
	}
	return info, cycles, nil
}

func (s *session) readyPct() int {
	if s.opts.Ready == 0 {
		return 100
	}
	return s.opts.Ready
}

// Run generates the design, builds it (or reuses a cached build), loads the
// bank through the write port, streams the requests through one simulator
// process and compares every result word with fixed.Core.Run.
func Run(opts Options) (*Result, error) { return run(opts, nil) }

// run is Run with a hook that may alter the session before simulation
// (tests use it to make the simulator's bank differ from the golden one).
func run(opts Options, tamper func(*session)) (*Result, error) {
	s, err := newSession(opts)
	if err != nil {
		return nil, err
	}
	if tamper != nil {
		tamper(s)
	}
	for i, r := range opts.Requests {
		if err := s.checkRequest(i, r); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	if s.build, err = BuildDesign(s.design, opts.CacheDir, opts.Jobs, opts.Trace != ""); err != nil {
		return nil, err
	}
	res := &Result{Lanes: s.design.Params.L, Bits: s.design.Params.Bits, BuildCached: s.build.Cached, BuildDir: s.build.Dir,
		BuildTime: time.Since(t0).Seconds()}
	t1 := time.Now()

	next := s.requestSource()
	var sums []int32
	var first, lastEnd uint64
	firstSet := false
	got := func(i int, req *Request, r Response) error {
		if !firstSet {
			first, firstSet = r.Accept, true
		}
		lastEnd = r.End
		res.Requests++
		var st fixed.Stats
		var gerr error
		sums, st, gerr = s.core.RunSets(req.vectors(), req.K, req.Seed, sums)
		if gerr != nil {
			return fmt.Errorf("cosim: golden model, request %d: %w", i, gerr)
		}
		res.SamplesCompared += req.K
		s.compare(res, i, *req, r, sums, st)
		return nil
	}
	info, _, err := s.exchange(next, got)
	if err != nil {
		return res, err
	}
	res.SimTime = time.Since(t1).Seconds()
	res.Info = info
	if want := s.design.InfoWords(); !slices.Equal(info, want) {
		res.Mismatches++
		if res.FirstMismatch == nil {
			res.FirstMismatch = &Mismatch{Input: -1, Sample: -1, Expected: toI64(want), Actual: toI64(info), Note: "info ROM"}
		}
	}
	if firstSet {
		res.Cycles = lastEnd - first + 1
	}
	if res.SamplesCompared > 0 {
		res.CyclesPerSample = float64(res.Cycles) / float64(res.SamplesCompared)
	}
	return res, nil
}

// requestSource returns the request generator: Options.Requests, or
// random requests until Options.Samples samples.
func (s *session) requestSource() func() *Request {
	if len(s.opts.Requests) > 0 {
		i := 0
		return func() *Request {
			if i == len(s.opts.Requests) {
				return nil
			}
			r := s.opts.Requests[i]
			i++
			return &r
		}
	}
	total := s.opts.Samples
	if total <= 0 {
		total = 10_000
	}
	kmax := s.opts.KMax
	if kmax <= 0 {
		kmax = min(s.design.Config.MaxK, 32)
	}
	kmax = min(kmax, s.design.Config.MaxK)
	rng := rand.New(rand.NewPCG(s.opts.Seed, 0x636f_7369_6d2f_7271)) // "cosim/rq"
	o := s.design.Shape.Features
	done := 0
	return func() *Request {
		if done >= total {
			return nil
		}
		r := Request{K: 1 + rng.IntN(kmax), Seed: rng.Uint32()}
		r.K = min(r.K, total-done)
		vec := func() []bool {
			x := make([]bool, o)
			bitsRand := rng.Uint64()
			for i := range x {
				if i%64 == 0 && i > 0 {
					bitsRand = rng.Uint64()
				}
				x[i] = bitsRand>>(uint(i)%64)&1 == 1
			}
			return x
		}
		r.Features = vec()
		if s.opts.Sets > 1 {
			if m := 1 + rng.IntN(s.opts.Sets); m > 1 {
				r.Sets = [][]bool{r.Features}
				for len(r.Sets) < m {
					r.Sets = append(r.Sets, vec())
				}
			}
		}
		switch s.opts.Mode {
		case "stats":
			r.Stats = true
		case "samples":
		default:
			r.Stats = rng.IntN(4) == 0
		}
		done += r.K
		return &r
	}
}

// compare checks one response against the golden model.
func (s *session) compare(res *Result, i int, req Request, r Response, sums []int32, st fixed.Stats) {
	p := s.design.Params
	bad := func(m Mismatch) {
		res.Mismatches++
		if res.FirstMismatch == nil {
			res.FirstMismatch = &m
		}
	}
	if r.Error {
		bad(Mismatch{Input: i, Sample: -1, Stats: req.Stats, Actual: toI64(r.Words), Note: "unexpected error word"})
		return
	}
	if req.Stats {
		want := make([]int64, 0, p.StatsWords())
		for _, v := range st.Votes {
			want = append(want, int64(uint32(v)))
		}
		for _, v := range st.Sum {
			want = append(want, int64(int32(v)))
		}
		for _, v := range st.SumSq {
			want = append(want, int64(uint32(v)))
		}
		got := make([]int64, len(r.Words))
		for j, w := range r.Words {
			if j >= p.NC && j < p.NC+p.NT {
				got[j] = int64(int32(w))
			} else {
				got[j] = int64(w)
			}
		}
		if !slices.Equal(want, got) {
			bad(Mismatch{Input: i, Sample: -1, Stats: true, Expected: want, Actual: got})
		}
		return
	}
	if len(r.Words) != req.K*p.NT {
		bad(Mismatch{Input: i, Sample: -1, Actual: toI64(r.Words), Note: fmt.Sprintf("%d words, want %d", len(r.Words), req.K*p.NT)})
		return
	}
	for k := 0; k < req.K; k++ {
		want := make([]int64, p.NT)
		got := make([]int64, p.NT)
		same := true
		for t := 0; t < p.NT; t++ {
			want[t] = int64(sums[k*p.NT+t])
			got[t] = int64(int32(r.Words[k*p.NT+t]))
			same = same && want[t] == got[t]
		}
		if !same {
			bad(Mismatch{Input: i, Sample: k, Expected: want, Actual: got})
		}
	}
}

func toI64(w []uint32) []int64 {
	v := make([]int64, len(w))
	for i, x := range w {
		v[i] = int64(x)
	}
	return v
}

// RunRaw sends requests exactly as given, without the Go side's checks
// (K may be 0 or above MaxK), and returns the core's responses. It exists
// to test the core's own refusal of bad requests.
func RunRaw(opts Options, reqs []Request) ([]Response, error) {
	s, err := newSession(opts)
	if err != nil {
		return nil, err
	}
	if s.build, err = BuildDesign(s.design, opts.CacheDir, opts.Jobs, opts.Trace != ""); err != nil {
		return nil, err
	}
	i := 0
	next := func() *Request {
		if i == len(reqs) {
			return nil
		}
		i++
		return &reqs[i-1]
	}
	var out []Response
	_, _, err = s.exchange(next, func(_ int, _ *Request, r Response) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// WriteBankImage writes a bank image: for every lane in order, its D
// thresholds in address order (fixed.Bank.LaneWords), one hex word per
// line, preceded by a header line "ptm-bank L D B".
func WriteBankImage(path string, words [][]uint32, bits int) error {
	var b strings.Builder
	depth := 0
	if len(words) > 0 {
		depth = len(words[0])
	}
	fmt.Fprintf(&b, "ptm-bank %d %d %d\n", len(words), depth, bits)
	for _, ws := range words {
		b.Write(hw.BankHex(ws, bits))
	}
	if err := outfile.WriteFile(path, []byte(b.String())); err != nil {
		return fmt.Errorf("cosim: %w", err)
	}
	return nil
}

// ReadBankImage reads a bank image written by WriteBankImage and checks it
// against the lanes, depth and bits of cfg on shape.
func ReadBankImage(path string, cfg hw.Config, shape fixed.Shape) ([][]uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cosim: bank image: %w", err)
	}
	defer f.Close()
	lay := cfg.HW().LayoutOf(shape)
	lanes := cfg.ClauseLanes * cfg.LiteralLanes
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return nil, fmt.Errorf("cosim: bank image %s: empty", path)
	}
	var l, d, b int
	if _, err := fmt.Sscanf(sc.Text(), "ptm-bank %d %d %d", &l, &d, &b); err != nil {
		return nil, fmt.Errorf("cosim: bank image %s: bad header %q: %w", path, sc.Text(), err)
	}
	if l != lanes || d != lay.Depth || b != cfg.Bits {
		return nil, fmt.Errorf("cosim: bank image %s is %d lanes x %d words of %d bits, design needs %d x %d of %d", path, l, d, b, lanes, lay.Depth, cfg.Bits)
	}
	words := make([][]uint32, lanes)
	line := 1
	for i := range words {
		words[i] = make([]uint32, d)
		for a := range words[i] {
			if !sc.Scan() {
				if err := sc.Err(); err != nil {
					return nil, fmt.Errorf("cosim: bank image %s: %w", path, err)
				}
				return nil, fmt.Errorf("cosim: bank image %s: ends after %d words, want %d", path, line-1, lanes*d)
			}
			line++
			v, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 16, 32)
			if err != nil || v >= 1<<uint(b) {
				return nil, fmt.Errorf("cosim: bank image %s line %d: %q is not a %d-bit hex word", path, line, sc.Text(), b)
			}
			words[i][a] = uint32(v)
		}
	}
	return words, nil
}

// BankFromLaneWords inverts fixed.Bank.LaneWords: it rebuilds the
// thresholds in TA order and refuses non-zero padding words.
func BankFromLaneWords(shape fixed.Shape, cfg hw.Config, words [][]uint32) (*fixed.Bank, error) {
	h := cfg.HW()
	lay := h.LayoutOf(shape)
	b := &fixed.Bank{Shape: shape, Bits: cfg.Bits, Thresh: make([]uint32, shape.TAs())}
	nl := shape.Literals()
	for l, ws := range words {
		ci, li := l/h.LiteralLanes, l%h.LiteralLanes
		for a, v := range ws {
			g, bt := a/lay.Beats, a%lay.Beats
			c, i := g*h.ClauseLanes+ci, bt*h.LiteralLanes+li
			if c >= shape.TotalClauses() || i >= nl {
				if v != 0 {
					return nil, fmt.Errorf("cosim: bank lane %d address %d is padding but holds %#x", l, a, v)
				}
				continue
			}
			b.Thresh[c*nl+i] = v
		}
	}
	return b, nil
}
