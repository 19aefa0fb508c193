package main

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/sim/cosim"
)

func init() {
	register("cosim", "co-simulate the generated core in Verilator against the bit-exact golden model", cmdCosim)
}

func cmdCosim(args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "--train" || a == "-train" || a == "--train=true" || a == "-train=true" {
			return cmdCosimTrain(args, stdout, stderr)
		}
		if a == "--" {
			break
		}
	}
	fs := newFlags("cosim", "--model MODEL | --random-shape SPEC [--vectors N] [--k K] [--lanes L] [--bits B] [--json] | --model CONVMODEL [--data mnist [--split test]] [--vectors N] [--k K] [--clause-lanes LC --literal-lanes LL] [--json] | --train ... (ptm cosim --train -h)", stderr)
	model := fs.String("model", "", "model `file`")
	shapeSpec := fs.String("random-shape", "", "co-simulate an untrained shape with a random bank: classes=N,clauses=M,features=O,t=T[,binary]")
	vectors := fs.Int("vectors", 1000, "input vectors (requests) to send")
	K := fs.Int("k", 10, "samples per request")
	mode := fs.String("mode", "mixed", "request modes: mixed, samples or stats")
	seed := fs.Uint64("seed", 1, "seed of the random bank, inputs and request seeds")
	ready := fs.Int("ready", 100, "percentage of cycles the result stream is ready (back-pressure test)")
	trace := fs.String("trace", "", "write an FST waveform to this `file`")
	asJSON := fs.Bool("json", false, "print one JSON object")
	sets := fs.Int("sets", 0, "set queries (docs/fixed-point.md section 8): with --model every request is a query of M sets (default: the model's input encoding's M); with --random-shape M is uniform in 1..N (default 1)")
	data := fs.String("data", "", "convolutional model: the images to send (mnist, fashion-mnist, an IDX folder; default: random images)")
	split := fs.String("split", "test", "convolutional model with --data: the rows (test, train or all)")
	var hf hwFlags
	hf.add(fs)
	hf.addPatchLanes(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *model != "" && *shapeSpec == "" {
		if _, cv, hash, err := modelfile.ReadAny(*model); err == nil && cv != nil {
			if *vectors < 1 || *K < 1 || *K > hf.maxK {
				return fmt.Errorf("%w: --vectors %d, --k %d: want >= 1 and 1..%d (--max-k)", errUsage, *vectors, *K, hf.maxK)
			}
			return cosimConv(fs, *model, cv, hash, &hf, *data, *split, *vectors, *K, *seed, *ready, *asJSON, stdout, stderr)
		}
	}
	if isSet(fs, "data") || isSet(fs, "split") {
		return fmt.Errorf("%w: --data and --split apply to convolutional models only", errUsage)
	}
	if (*model == "") == (*shapeSpec == "") {
		return fmt.Errorf("%w: exactly one of --model or --random-shape is required", errUsage)
	}
	if *vectors < 1 {
		return fmt.Errorf("%w: --vectors %d, want >= 1", errUsage, *vectors)
	}
	if *K < 1 || *K > hf.maxK {
		return fmt.Errorf("%w: --k %d, want 1..%d (--max-k)", errUsage, *K, hf.maxK)
	}
	if *mode != "mixed" && *mode != "samples" && *mode != "stats" {
		return fmt.Errorf("%w: --mode %q, want mixed, samples or stats", errUsage, *mode)
	}
	if *sets < 0 || *sets > 255 {
		return fmt.Errorf("%w: --sets %d, want 1..255", errUsage, *sets)
	}
	if err := checkTrace(*trace, *model); err != nil {
		return err
	}
	opts := cosim.Options{Seed: *seed, Ready: *ready, Trace: *trace}
	var err error
	exactSets := false
	if *model != "" {
		var hash string
		var f *modelfile.File
		f, opts.Bank, hash, err = loadBank(*model, hf.bits)
		if err != nil {
			return err
		}
		opts.Shape, opts.ModelHash = opts.Bank.Shape, hash
		if *sets == 0 {
			*sets = f.Sets().M()
		}
		exactSets = true
	} else {
		if opts.Shape, err = parseShape(*shapeSpec); err != nil {
			return err
		}
		if opts.Bank, err = randomBank(opts.Shape, hf.bits, *seed); err != nil {
			return err
		}
	}
	if opts.Config, err = hf.config(opts.Shape); err != nil {
		return err
	}
	opts.Requests = randomRequests(opts.Shape, *vectors, *K, *mode, *seed, max(1, *sets), exactSets)
	res, err := cosim.Run(opts)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "co-simulated %d requests, %d samples: %d mismatches; %.2f cycles per sample on %d lanes (B=%d); build %.1fs%s, simulation %.1fs\n",
			res.Requests, res.SamplesCompared, res.Mismatches, res.CyclesPerSample, res.Lanes, res.Bits, res.BuildTime, cachedNote(res.BuildCached), res.SimTime)
	}
	if res.Mismatches > 0 {
		m := res.FirstMismatch
		if m != nil {
			fmt.Fprintf(stderr, "first mismatch: input %d, sample %d (stats=%v): expected %v, got %v %s\n", m.Input, m.Sample, m.Stats, m.Expected, m.Actual, m.Note)
		}
		return fmt.Errorf("%d mismatches between the RTL and the golden model", res.Mismatches)
	}
	return nil
}

func cachedNote(c bool) string {
	if c {
		return " (cached)"
	}
	return ""
}

// randomRequests draws n requests with K samples each: random features and
// seeds; modes as asked (mixed: one in four in stats mode); queries of
// exactly sets sets (exact) or of 1..sets sets.
func randomRequests(sh fixed.Shape, n, K int, mode string, seed uint64, sets int, exact bool) []cosim.Request {
	rng := rand.New(rand.NewPCG(seed, 0x636f_7369_6d72_6571)) // "cosimreq"
	vec := func() []bool {
		x := make([]bool, sh.Features)
		for j := range x {
			x[j] = rng.IntN(2) == 1
		}
		return x
	}
	reqs := make([]cosim.Request, n)
	for i := range reqs {
		x := vec()
		stats := mode == "stats" || (mode == "mixed" && rng.IntN(4) == 0)
		reqs[i] = cosim.Request{Features: x, K: K, Seed: rng.Uint32(), Stats: stats}
		m := sets
		if !exact {
			m = 1 + rng.IntN(sets)
		}
		if m > 1 {
			reqs[i].Sets = [][]bool{x}
			for len(reqs[i].Sets) < m {
				reqs[i].Sets = append(reqs[i].Sets, vec())
			}
		}
	}
	return reqs
}
