package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/outfile"
)

// Options configures Run.
type Options struct {
	// Out is the output directory (created if missing): report.md,
	// summary.json and the PNG figures are written there.
	Out string
	// Quick selects the small CI configuration: fewer Iris splits, fewer
	// samples per query, fewer epochs, coarser grids and a smaller GP
	// training subset. Its numbers are only a smoke test.
	Quick bool
	// WideGrids adds the encoding and epoch candidates of
	// docs/uncertainty.md section 10 to the full run's Iris, wine and
	// breast-cancer grids (wideCandidates). Off by default until a full
	// run with them is committed to docs/results (see that section).
	WideGrids bool
	// Select is the rule that picks each PTM's grid point on validation
	// rows ("" = pipeline.DefaultSelection).
	Select pipeline.Selection
	// ChooseOn is where each PTM's grid point is chosen: "carve" (one
	// validation carve of 25% of each split's training rows), "cv" (inner
	// cross-validation on all training rows, pipeline.ScoreGridCV) or ""
	// (pipeline.DefaultCV).
	ChooseOn string
	// Only, if set, runs a part of the experiments: OnlyImages (the
	// images section alone, its report and summary keys) or OnlyTables
	// (every section but the images).
	Only string
	// Progress, if set, is called as work proceeds: stage names a unit of
	// work and done counts its finished steps out of total. Calls are
	// serialized but may interleave stages that run concurrently.
	Progress func(stage string, done, total int)
	// Shard, if set, runs only that part of the sweep's units and writes
	// their results to Out/units for Merge, not the report.
	Shard Shard
}

// config holds every setting that differs between the full and the quick
// run.
type config struct {
	quick bool
	sel   pipeline.Selection // PTM model-selection rule
	cv    bool               // choose the PTM grid point by inner cross-validation
	K     int                // samples per query, every model
	bins  int                // ECE bins

	xorEpochs int

	synthParams     ptm.Params
	synthThresholds int
	synthGrid       int // heat-map resolution per axis
	synthGPSubset   int // GP training rows (0 = all)
	synthSweep      []ptm.Params

	irisSplits int
	irisGrid   []pipeline.Candidate
	// datasets are the data sets of the five-model comparison (Iris
	// first, with irisSplits and irisGrid), with their out-of-distribution
	// splits per held-out class.
	datasets []dsSpec

	quantBits    []int
	clauseLanes  int
	literalLanes int
	lfsrWidth    int
}

// irisCandidate is one point of the Iris PTM grid: N = 100 states, the
// consistent feedback rule.
func irisCandidate(clauses, T int, s float64, epochs, thresholds int) pipeline.Candidate {
	return pipeline.Candidate{
		Params:     ptm.Params{Clauses: clauses, T: T, S: s, N: 100, Epochs: epochs, Feedback: ptm.ConsistentFeedback},
		Thresholds: thresholds,
	}
}

// withBandwidth gives c its own encoding: pipeline.DefaultEncoding with
// threshold jitter h (feature standard deviations), an encoding grid
// dimension chosen on validation rows like the rest of the candidate.
func withBandwidth(c pipeline.Candidate, h float64) pipeline.Candidate {
	e := pipeline.DefaultEncoding
	e.Bandwidth = h
	c.Encoding = &e
	return c
}

func synthParams(clauses, T int, s float64, epochs int) ptm.Params {
	return ptm.Params{Clauses: clauses, T: T, S: s, N: 100, Epochs: epochs, Seed: 1, Feedback: ptm.ConsistentFeedback}
}

// wideCandidates are the candidates docs/uncertainty.md section 10 adds
// to each data set's full-run grid with Options.WideGrids: threshold
// jitter as a grid dimension (and, for breast cancer, 100 epochs).
func wideCandidates(key string) []pipeline.Candidate {
	switch key {
	case "iris":
		return []pipeline.Candidate{withBandwidth(irisCandidate(60, 30, 2, 100, 6), 0.1), withBandwidth(irisCandidate(60, 30, 2, 100, 6), 0.2)}
	case "wine":
		return []pipeline.Candidate{withBandwidth(irisCandidate(40, 15, 2, 60, 6), 0.2), withBandwidth(irisCandidate(60, 20, 2, 60, 6), 0.2)}
	case "breast_cancer":
		return []pipeline.Candidate{withBandwidth(irisCandidate(40, 15, 2, 50, 6), 0.075), withBandwidth(irisCandidate(60, 20, 2, 50, 6), 0.075), irisCandidate(60, 20, 2, 100, 6)}
	}
	return nil
}

func newConfig(quick, wide bool) config {
	c := config{
		quick: quick, K: 100, bins: 10,
		xorEpochs:       200,
		synthParams:     synthParams(20, 10, 3, 60),
		synthThresholds: 8,
		synthGrid:       81,
		synthSweep:      []ptm.Params{synthParams(10, 5, 3, 60), synthParams(20, 10, 3, 60), synthParams(40, 15, 3, 60), synthParams(20, 10, 3, 200)},
		irisSplits:      20,
		// The lead engineer's grid (10 splits, vote mapping): 60/30/2,
		// 20/10/2, 150/30/3 and 60/10/5; N = 100, 6 thresholds, 100 epochs
		// (pipeline.KnownGrid, which `ptm train` tunes over too). With
		// wide, the encoding's jitter is a grid dimension too
		// (wideCandidates, docs/uncertainty.md section 10).
		irisGrid:    pipeline.KnownGrid(pipeline.Iris),
		quantBits:   []int{8, 10, 12, 16},
		clauseLanes: 4, literalLanes: 8, lfsrWidth: 32,
	}
	if quick {
		c.K = 20
		c.synthParams = synthParams(20, 10, 3, 20)
		c.synthGrid = 31
		c.synthGPSubset = 200
		c.synthSweep = nil
		c.irisSplits = 3
		c.irisGrid = []pipeline.Candidate{irisCandidate(20, 10, 2, 30, 6), irisCandidate(40, 10, 3, 30, 6)}
	}
	// Wine has 13 features and breast cancer 30: with 6 thresholds per
	// feature the PTM sees 78 and 180 Boolean inputs. Wine: 20/10/2,
	// 40/15/2, 60/20/2 at 60 epochs; breast cancer the same at 50
	// (pipeline.KnownGrid, which `ptm train` tunes over too).
	wineGrid := pipeline.KnownGrid(pipeline.Wine)
	bcGrid := pipeline.KnownGrid(pipeline.BreastCancer)
	if wide && !quick {
		c.irisGrid = append(c.irisGrid, wideCandidates("iris")...)
		wineGrid = append(wineGrid, wideCandidates("wine")...)
		bcGrid = append(bcGrid, wideCandidates("breast_cancer")...)
	}
	splits, ood := 20, 5
	if quick {
		wineGrid = []pipeline.Candidate{irisCandidate(20, 10, 2, 20, 6)}
		bcGrid = []pipeline.Candidate{irisCandidate(20, 10, 2, 15, 6)}
		splits, ood = 2, 1
	}
	c.datasets = []dsSpec{
		{key: "iris", name: "Iris", data: pipeline.Iris, splits: c.irisSplits, oodSplits: ood, grid: c.irisGrid},
		{key: "wine", name: "Wine", data: pipeline.Wine, splits: splits, oodSplits: ood, grid: wineGrid},
		{key: "breast_cancer", name: "Breast cancer", data: pipeline.BreastCancer, splits: splits, grid: bcGrid},
	}
	return c
}

// section is one part of the report: plan declares its units (nil when
// it has none), needs names the sections whose results its report reads,
// and report writes its summary keys, figures and report text from the
// results of the units. A new section joins Run, the shards and Merge by
// being listed in sections with its units.
type section struct {
	name   string
	plan   func() ([]unit, error)
	needs  []string
	report func() (string, error)
}

// sections lists the report's sections in order.
func (r *runner) sections() []section {
	all := []section{
		{name: "noisy XOR", plan: r.planXOR, report: r.xor},
		{name: "2D synthetic", plan: r.planSynth, report: r.synth},
		{name: "data sets", plan: r.planDatasets, report: r.datasets},
		{name: "Iris", needs: []string{"data sets"}, report: r.iris},
		{name: "quantization", needs: []string{"Iris"}, report: r.quant},
		{name: "wine and breast cancer", needs: []string{"data sets"}, report: r.uciReport},
		{name: "out of distribution", needs: []string{"data sets"}, report: r.oodReport},
		{name: imagesSection, plan: r.planImages, report: r.images},
	}
	var secs []section
	for _, s := range all {
		if runsSection(r.only, s.name) {
			secs = append(secs, s)
		}
	}
	return secs
}

// Run runs every experiment, writes report.md, summary.json and the figures
// to opt.Out and returns the summary. With opt.Shard it runs only that
// part of the sweep's units and writes their results to opt.Out/units
// (for Merge) instead, and returns nil. Cancellation is checked between
// units; a unit already running is abandoned, not interrupted, so its
// goroutine finishes in the background.
func Run(ctx context.Context, opt Options) (*Summary, error) {
	if opt.Out == "" {
		return nil, fmt.Errorf("experiments: no output directory")
	}
	if opt.Shard != (Shard{}) {
		if _, err := ParseShard(opt.Shard.String()); err != nil {
			return nil, fmt.Errorf("experiments: %w", err)
		}
	}
	// The output folder is checked before any work (internal/outfile): a
	// run of hours must not end on a folder it cannot write.
	if err := outfile.CheckDir(opt.Out); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	start := time.Now()
	r, secs, err := newRunner(ctx, opt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	units, err := r.plan(secs)
	if err != nil {
		return nil, err
	}
	if opt.Shard == (Shard{}) {
		if err := r.execute(units, nil); err != nil {
			return nil, fmt.Errorf("experiments: %w", err)
		}
		return r.finish(secs, nil, start)
	}
	var mine []unit
	for i, s := range assign(units, opt.Shard.N) {
		if s == opt.Shard.I-1 {
			mine = append(mine, units[i])
		}
	}
	st := r.settings()
	if err := r.execute(mine, func(u unit, secs float64) error { return saveUnit(opt.Out, u, st, secs) }); err != nil {
		return nil, fmt.Errorf("experiments: shard %s: %w", opt.Shard, err)
	}
	return nil, nil
}

// ShardUnits returns the names of the units of shard sh of the sweep opt
// configures (all units for the zero Shard), in the sweep's order.
func ShardUnits(opt Options, sh Shard) ([]string, error) {
	r, secs, err := newRunner(context.Background(), opt)
	if err != nil {
		return nil, err
	}
	units, err := r.plan(secs)
	if err != nil {
		return nil, err
	}
	var names []string
	var as []int
	if sh.N > 0 {
		as = assign(units, sh.N)
	}
	for i, u := range units {
		if sh.N == 0 || as[i] == sh.I-1 {
			names = append(names, u.name)
		}
	}
	return names, nil
}

// newRunner checks opt and returns a runner with its configuration and
// the report's sections.
func newRunner(ctx context.Context, opt Options) (*runner, []section, error) {
	if err := checkOnly(opt.Only); err != nil {
		return nil, nil, fmt.Errorf("experiments: %w", err)
	}
	sel, err := pipeline.ParseSelection(string(opt.Select))
	if err != nil {
		return nil, nil, fmt.Errorf("experiments: %w", err)
	}
	r := &runner{ctx: ctx, cfg: newConfig(opt.Quick, opt.WideGrids), out: opt.Out, sum: newSummary(opt.Quick), wide: opt.WideGrids, only: opt.Only}
	r.cfg.sel = sel
	switch opt.ChooseOn {
	case "":
		r.cfg.cv = pipeline.DefaultCV
	case "cv":
		r.cfg.cv = true
	case "carve":
	default:
		return nil, nil, fmt.Errorf("experiments: choose the grid point on %q: want carve or cv", opt.ChooseOn)
	}
	if opt.Progress != nil {
		var mu sync.Mutex
		r.progress = func(stage string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			opt.Progress(stage, done, total)
		}
	} else {
		r.progress = func(string, int, int) {}
	}
	r.sum.setMeta(r.cfg)
	return r, r.sections(), nil
}

// settings are the options of r's sweep that change its numbers.
func (r *runner) settings() settings {
	return settings{Quick: r.cfg.quick, WideGrids: r.wide, Only: r.only, Select: string(r.cfg.sel), ChooseOn: map[bool]string{false: "carve", true: "cv"}[r.cfg.cv]}
}

// finish writes every section's report from its units' results (which
// must all be there, run or loaded), skipping the sections in skip and
// those that need them, then report.md and summary.json.
func (r *runner) finish(secs []section, skip map[string]bool, start time.Time) (*Summary, error) {
	var bodies []string
	for _, s := range secs {
		if err := r.ctx.Err(); err != nil {
			return nil, fmt.Errorf("experiments: %w", err)
		}
		for _, n := range s.needs {
			if skip[n] {
				skip[s.name] = true
			}
		}
		if skip[s.name] {
			bodies = append(bodies, fmt.Sprintf("## %s: not in this partial merge (units missing: meta.missing_units)\n", s.name))
			continue
		}
		body, err := s.report()
		if err != nil {
			return nil, fmt.Errorf("experiments: %s: %w", s.name, err)
		}
		bodies = append(bodies, body)
	}
	r.sum.Elapsed = time.Since(start)
	r.sum.set("meta.seconds", r.sum.Elapsed.Seconds())
	report := r.header() + r.findings() + strings.Join(bodies, "\n") + r.notes()
	if r.only == OnlyImages {
		report = r.header() + strings.Join(bodies, "\n")
	}
	if err := outfile.WriteFile(filepath.Join(r.out, "report.md"), []byte(report)); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	if err := r.sum.WriteFile(filepath.Join(r.out, "summary.json")); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	return r.sum, nil
}

// runner carries the state shared by the experiments of one Run.
type runner struct {
	ctx      context.Context
	cfg      config
	out      string
	sum      *Summary
	wide     bool // Options.WideGrids
	progress func(stage string, done, total int)
	only     string // Options.Only

	// results of the noisy XOR and 2-D sections' units
	xorOut  []xorOut
	synthSt *synthState
	// Iris results shared with the quantization section.
	irisRes *irisResult
	// ds holds the five-model comparison of every data set, by key.
	ds map[string]*dsResult
	// img is the images section's state.
	img *imgState
}

// figure records a written figure and returns its markdown image link.
func (r *runner) figure(name, alt string) string {
	r.sum.addFigure(name)
	return fmt.Sprintf("![%s](%s)\n", alt, name)
}

// parallel runs n jobs on at most GOMAXPROCS goroutines and returns the
// first error (by job index). Jobs must write only their own results. It
// stops starting new jobs once ctx is cancelled.
func parallel(ctx context.Context, n int, job func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = job(i)
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// await runs f in a goroutine and waits for it or for ctx, whichever comes
// first; on cancellation f keeps running in the background.
func await(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
