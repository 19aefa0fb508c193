package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/lfsr"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/hw"
)

func init() {
	register("gen", "generate the Verilog inference core for a model", cmdGen)
}

// hwFlags are the hardware parameters shared by gen, cosim and synth.
type hwFlags struct {
	bits, width, lanes, lc, ll, maxK int
	pn                               int    // --patch-lanes (convolutional core)
	scan                             string // --scan (convolutional core)
	prefix                           string
}

// addPatchLanes adds --patch-lanes, the convolutional core's patches per
// scan cycle (hw.Config.PatchLanes), and --scan, its scan (hw.Config.Scan).
func (h *hwFlags) addPatchLanes(fs *flag.FlagSet) {
	fs.IntVar(&h.pn, "patch-lanes", 1, "convolutional core: adjacent patches evaluated per scan cycle (each costs every clause lane an AND over the patch features: F with the full scan, the WY*WX*P window bits with range and compact)")
	fs.StringVar(&h.scan, "scan", "", "convolutional core: the patch scan, range (default: only the patches the included position thermometers allow), full, or compact (range in the least logic, slower)")
}

// convScan is --scan checked: "" (the default, range), range or full.
func (h *hwFlags) convScan() (string, error) {
	switch h.scan {
	case "", hw.ScanRange, hw.ScanFull, hw.ScanCompact:
		return h.scan, nil
	}
	return "", fmt.Errorf("%w: --scan %q: want %s, %s or %s", errUsage, h.scan, hw.ScanRange, hw.ScanFull, hw.ScanCompact)
}

func (h *hwFlags) add(fs *flag.FlagSet) {
	h.addLanes(fs)
	fs.IntVar(&h.maxK, "max-k", hw.DefaultMaxK, "largest K a request may ask for")
	fs.StringVar(&h.prefix, "prefix", hw.DefaultPrefix, "module name prefix")
}

// Defaults of --bits and --lfsr-width for the commands that build or
// model a board image (synth, board): B = 4 keeps the predictions and the
// uncertainty (docs/fixed-point.md 2.3) and puts four lanes in one block
// RAM; W = 16 is the narrowest LFSR that leaps 4 bits.
const (
	imageBits      = 4
	imageLFSRWidth = 16
)

// addImage is add with the board image's defaults (imageBits,
// imageLFSRWidth).
func (h *hwFlags) addImage(fs *flag.FlagSet) {
	h.add(fs)
	setDefault(fs, "bits", imageBits, &h.bits)
	setDefault(fs, "lfsr-width", imageLFSRWidth, &h.width)
}

// setDefault changes the default of an int flag before parsing.
func setDefault(fs *flag.FlagSet, name string, v int, p *int) {
	*p = v
	fs.Lookup(name).DefValue = strconv.Itoa(v)
}

// addLanes adds the flags that decide the fixed-point model's numbers
// (width, LFSR and lanes), for commands that model a board without
// generating one.
func (h *hwFlags) addLanes(fs *flag.FlagSet) {
	fs.IntVar(&h.bits, "bits", 16, "probability width B (4..16)")
	fs.IntVar(&h.width, "lfsr-width", lfsr.DefaultWidth, "LFSR width W per lane")
	fs.IntVar(&h.lanes, "lanes", 0, "lane count L, split into clause x literal lanes automatically (default: hw.DefaultLanes, 2o: one literal lane per literal)")
	fs.IntVar(&h.lc, "clause-lanes", 0, "clause lanes LC (with --literal-lanes, instead of --lanes)")
	fs.IntVar(&h.ll, "literal-lanes", 0, "literal lanes LL (with --clause-lanes, instead of --lanes)")
	h.maxK, h.prefix = hw.DefaultMaxK, hw.DefaultPrefix
}

// hwFlagsSet reports whether any flag of addLanes was given.
func hwFlagsSet(fs *flag.FlagSet) bool {
	for _, n := range []string{"bits", "lfsr-width", "lanes", "clause-lanes", "literal-lanes"} {
		if isSet(fs, n) {
			return true
		}
	}
	return false
}

// config resolves the flags into a generator configuration for shape.
func (h *hwFlags) config(sh fixed.Shape) (hw.Config, error) {
	c := hw.Config{Bits: h.bits, LFSRWidth: h.width, ClauseLanes: h.lc, LiteralLanes: h.ll, Lanes: h.lanes, MaxK: h.maxK, Prefix: h.prefix}
	if h.pn > 1 || h.scan != "" {
		return c, fmt.Errorf("%w: --patch-lanes and --scan are for a convolutional model", errUsage)
	}
	if (h.lc == 0) != (h.ll == 0) {
		return c, fmt.Errorf("%w: give both --clause-lanes and --literal-lanes, or --lanes", errUsage)
	}
	if h.lc == 0 && h.lanes == 0 {
		c.Lanes = hw.DefaultLanes(sh)
	}
	c, err := c.Resolve(sh)
	if err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := c.Check(sh); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	limit, err := pipeline.MemoryLimit()
	if err != nil {
		return c, err
	}
	if need := c.PlanBytes(sh); need > float64(limit) {
		lay := c.HW().LayoutOf(sh)
		return c, fmt.Errorf("the design would need about %.3g GiB of memory to generate (bank depth D = %d, %d clause groups, %d TAs), over the %.3g GiB limit (PTM_MAX_MEMORY): use more lanes (--lanes) or a smaller shape",
			need/(1<<30), lay.Depth, lay.Groups, sh.TAs(), float64(limit)/(1<<30))
	}
	return c, nil
}

// loadBank reads a model file and quantizes it to the requested width.
func loadBank(path string, bits int) (*modelfile.File, *fixed.Bank, string, error) {
	f, hash, err := modelfile.Read(path)
	if err != nil {
		return nil, nil, "", err
	}
	if err := fixed.CheckBits(bits); err != nil {
		return nil, nil, "", fmt.Errorf("%w: %v", errUsage, err)
	}
	b := f.Bank
	if b.Bits != bits {
		if b, err = fixed.Quantize(f.Model, bits); err != nil {
			return nil, nil, "", err
		}
	}
	return f, b, hash, nil
}

func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", "--model MODEL --out DIR [--lanes L | --clause-lanes LC --literal-lanes LL] [--bits B] [flags]", stderr)
	model := fs.String("model", "", "model `file` (omit with --random-shape)")
	shapeSpec := fs.String("random-shape", "", "generate for an untrained shape instead: classes=N,clauses=M,features=O,t=T[,binary]")
	out := fs.String("out", "", "output `directory`")
	init := fs.Bool("init-banks", false, "emit the model's thresholds as the banks' initial contents ($readmemh)")
	var hf hwFlags
	hf.add(fs)
	hf.addPatchLanes(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" || (*model == "") == (*shapeSpec == "") {
		return fmt.Errorf("%w: --out and exactly one of --model or --random-shape are required", errUsage)
	}
	if err := checkDirOutput(pathFlag{"--out", *out}, pathFlag{"--model", *model}); err != nil {
		return err
	}
	if *model != "" {
		if _, cv, hash, err := modelfile.ReadAny(*model); err == nil && cv != nil {
			return genConv(fs, cv, hash, &hf, *out, *init, stdout)
		}
	}
	var (
		sh   fixed.Shape
		bank *fixed.Bank
		hash string
	)
	if *model != "" {
		_, b, h, err := loadBank(*model, hf.bits)
		if err != nil {
			return err
		}
		sh, bank, hash = b.Shape, b, h
	} else {
		var err error
		if sh, err = parseShape(*shapeSpec); err != nil {
			return err
		}
		if *init {
			return fmt.Errorf("%w: --init-banks needs --model", errUsage)
		}
	}
	cfg, err := hf.config(sh)
	if err != nil {
		return err
	}
	cfg.InitBanks = *init
	if !*init {
		bank = nil
	}
	d, err := hw.Generate(cfg, sh, bank, hash)
	if err != nil {
		return err
	}
	if err := d.Write(*out); err != nil {
		return err
	}
	lay := cfg.HW().LayoutOf(sh)
	fmt.Fprintf(stdout, "generated %s (generator %s) in %s: %d files\n", d.Top(), hw.Version, *out, len(d.Files))
	fmt.Fprintf(stdout, "  shape: %d TMs x %d clauses x %d literals = %d TAs, %d classes, T=%d\n", sh.TMs, sh.Clauses, sh.Literals(), sh.TAs(), sh.Classes, sh.T)
	fmt.Fprintf(stdout, "  hardware: B=%d, W=%d, L=%d (%d clause x %d literal lanes), bank depth D=%d, MaxK=%d\n", cfg.Bits, cfg.LFSRWidth, cfg.Lanes, cfg.ClauseLanes, cfg.LiteralLanes, lay.Depth, cfg.MaxK)
	fmt.Fprintf(stdout, "  one sample takes D=%d beats (ideal TAs/L = %.1f)\n", lay.Depth, float64(sh.TAs())/float64(cfg.Lanes))
	return nil
}

// parseShape parses classes=N,clauses=M,features=O,t=T[,binary].
func parseShape(spec string) (fixed.Shape, error) {
	sh := fixed.Shape{T: 0}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			if k == "binary" {
				sh.Binary = true
				continue
			}
			return sh, fmt.Errorf("%w: --random-shape: %q is not key=value", errUsage, part)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return sh, fmt.Errorf("%w: --random-shape: %s=%q is not an integer", errUsage, k, v)
		}
		switch k {
		case "classes":
			sh.Classes = n
		case "clauses":
			sh.Clauses = n
		case "features":
			sh.Features = n
		case "t", "T":
			sh.T = n
		default:
			return sh, fmt.Errorf("%w: --random-shape: unknown key %q (classes, clauses, features, t, binary)", errUsage, k)
		}
	}
	if sh.Binary {
		if sh.Classes == 0 {
			sh.Classes = 2
		}
		sh.TMs = 1
	} else {
		sh.TMs = sh.Classes
	}
	if sh.T == 0 {
		sh.T = max(1, sh.Clauses/2)
	}
	if err := sh.Validate(); err != nil {
		return sh, fmt.Errorf("%w: --random-shape: %v", errUsage, err)
	}
	// A random shape is bounded as a model file's shape is: clauses and
	// Boolean features by the format's limits, TAs by its SPV values (at
	// least two per TA). The memory of the design is planned later, with
	// the lanes (hwFlags.config).
	switch tas := float64(sh.TMs) * float64(sh.Clauses) * 2 * float64(sh.Features); {
	case sh.Clauses > modelfile.MaxClauses:
		return sh, fmt.Errorf("%w: --random-shape: clauses=%d, the limit is %d (a model file's)", errUsage, sh.Clauses, modelfile.MaxClauses)
	case sh.Features > modelfile.MaxBoolFeatures:
		return sh, fmt.Errorf("%w: --random-shape: features=%d, the limit is %d (a model file's Boolean features)", errUsage, sh.Features, modelfile.MaxBoolFeatures)
	case sh.T > hw.MaxT:
		return sh, fmt.Errorf("%w: --random-shape: t=%d, the limit is %d (hw.MaxT: T^2 fills the core's 32-bit sum of squares)", errUsage, sh.T, hw.MaxT)
	case 2*tas > modelfile.MaxSPVValues:
		return sh, fmt.Errorf("%w: --random-shape: %d TMs x %d clauses x %d literals = %.4g TAs, the limit is %d (a model file's SPV values / 2): lower clauses or features",
			errUsage, sh.TMs, sh.Clauses, 2*sh.Features, tas, modelfile.MaxSPVValues/2)
	}
	return sh, nil
}

// randomBank draws a bank for an untrained shape.
func randomBank(sh fixed.Shape, bits int, seed uint64) (*fixed.Bank, error) {
	rng := rand.New(rand.NewPCG(seed, 0x72616e64_62616e6b))
	return fixed.RandomBank(sh, bits, rng.Uint64)
}
