package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/buildcache"
	"github.com/ptmhw/ptm/internal/outfile"
	"github.com/ptmhw/ptm/rtl"
)

// DefaultCache is the result cache of `ptm synth`: $PTM_SYNTH_CACHE, else
// <user cache dir>/ptm-synth (a per-user 0700 folder, as the simulator
// caches).
func DefaultCache() string { return buildcache.DefaultRoot("PTM_SYNTH_CACHE", "ptm-synth") }

// cacheFormat changes when what a cache entry holds or means changes, and
// whenever the flow builds differently from the same inputs (the UART
// divider rule, the parameters it derives, the bank pass, tool flags).
const cacheFormat = "synth-cache-2"

// cacheKey is the hash of everything a run's result depends on: the
// tool versions, the options that change the build, the generated core
// with its bank images and the board's Verilog (rtl.FS).
func cacheKey(o Options) (string, error) {
	k := buildcache.NewHasher()
	k.Add(cacheFormat, toolVersions().key, o.Device, strconv.FormatFloat(o.FreqMHz, 'g', -1, 64),
		strconv.FormatFloat(o.PlaceMHz, 'g', -1, 64), strconv.Itoa(o.Seed),
		fmt.Sprint(o.CoreOnly, o.NoEth, o.NoPack, o.NoRelax, o.SynthOnly))
	if o.SetsMax != 0 && o.SetsMax != hw.DefaultSetsMax {
		// Only a non-default SETS_MAX enters the key, so the results
		// cached before the option existed stay valid.
		k.Add("sets_max", strconv.Itoa(o.SetsMax))
	}
	if o.CoreClockRatio == 2 {
		k.Add("core_clock_ratio", "2") // only then: earlier keys stay valid
	}
	for _, f := range o.Design.Files {
		k.Add(f.Name, string(f.Data))
	}
	// A preloaded bank is in the design's files (its $readmemh images).
	err := fsWalk(func(name string, data []byte) { k.Add(name, string(data)) })
	return k.Key(), err
}

// fsWalk calls f on every embedded RTL source, in a fixed order.
func fsWalk(f func(name string, data []byte)) error {
	names := append(append(rtl.ShellSources(), rtl.DualClockSources()...), rtl.Includes()...)
	for _, b := range rtl.Boards {
		t, err := rtl.TopSources(b)
		if err != nil {
			return err
		}
		c, err := rtl.CoreTopSources(b)
		if err != nil {
			return err
		}
		names = append(append(names, t[0], c[0]), b+".pcf")
	}
	for _, n := range names {
		if filepath.Ext(n) == ".pcf" {
			data, err := rtl.PCF(n[:len(n)-4])
			if err != nil {
				return err
			}
			f(n, data)
			continue
		}
		data, err := rtl.FS.ReadFile(n)
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		f(n, data)
	}
	return nil
}

// Cached is Run through the result cache o.Cache: a run whose key
// (cacheKey) is there returns the stored Result (Cached set) and copies
// the stored bitstream into o.Dir, without running a tool; otherwise the
// flow runs and its Result is stored, a timing failure included (it is
// returned with its ErrTiming again on a hit). Other failures are not
// stored. With o.Cache empty it is Run.
func Cached(ctx context.Context, o Options) (*Result, error) {
	if o.Cache == "" {
		return Run(ctx, o)
	}
	if o.Design == nil || o.Dir == "" {
		return Run(ctx, o) // its own error
	}
	o.defaults()
	if _, err := LookupDevice(o.Device); err != nil {
		return nil, err
	}
	if err := checkScriptPaths(o.Dir); err != nil {
		return nil, err
	}
	key, err := cacheKey(o)
	if err != nil {
		return nil, err
	}
	stored, entry, cached, err := cachedResult(o.Cache, "synth-"+key,
		func() (*Result, error) { return Run(ctx, o) },
		func(msg string) Result { return Result{NoFit: msg} }, // kept: the search steps over it again
		func(r *Result) string { return r.Bitstream })
	if !cached {
		return stored, err
	}
	r := *stored
	if r.NoFit != "" {
		o.step("cached result (%s): does not fit", entry)
		return nil, fmt.Errorf("%w (cached result %s)", errNoFitText{r.NoFit}, entry)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	r.Cached, r.BuildDir, r.Logs, r.Model = true, dir, nil, o.Model
	// The key holds the tool versions: an entry stored before results
	// named them was made with these tools.
	r.Toolchain, r.ToolVersions = string(ActiveToolchain()), toolVersions().named
	bin := filepath.Join(dir, "top.bin")
	os.Remove(bin)
	if r.Bitstream != "" {
		if err := copyFile(filepath.Join(entry, "top.bin"), bin); err != nil {
			return nil, fmt.Errorf("synth: result cache: %w", err)
		}
		r.Bitstream = bin
	}
	if r.SynthOnly {
		o.step("cached result (%s): %d lanes, yosys estimate %d LUT4", entry, r.Lanes, r.LUT4)
	} else {
		o.step("cached result (%s): %d lanes, %d/%d LCs, Fmax %.1f MHz, PLL %.1f MHz", entry, r.Lanes, r.LUTs, r.LUTsAvailable, r.FmaxMHz, r.ClockMHz)
	}
	if !r.TimingMet && !r.SynthOnly {
		return &r, fmt.Errorf("%w: core clock %.2f MHz below the %.2f MHz target (cached result %s; no bitstream written)",
			ErrTiming, r.FmaxMHz, r.TargetMHz, entry)
	}
	return &r, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := outfile.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}

// errNoFitText is a cached no-fit error: its text, wrapping ErrNoFit.
type errNoFitText struct{ msg string }

func (e errNoFitText) Error() string { return e.msg }
func (e errNoFitText) Unwrap() error { return ErrNoFit }

// cachedResult runs run through the result cache at root under name, the
// one mechanism of Cached and CachedConv. A fresh result is returned with
// run's error and cached false; no-fit results (stored as noFit(msg)) and
// timing failures are stored as well as successes, a result's bitstream
// (bitstream(r), if any) beside it as top.bin. A stored result is read back
// with its entry and cached true.
func cachedResult[R any](root, name string, run func() (*R, error), noFit func(string) R, bitstream func(*R) string) (*R, string, bool, error) {
	var (
		res    *R
		runErr error
	)
	entry, cached, err := buildcache.Get(root, name, "result.json", func(tmp string) error {
		res, runErr = run()
		if errors.Is(runErr, ErrNoFit) {
			b, err := json.Marshal(noFit(runErr.Error()))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(tmp, "result.json"), b, 0o600)
		}
		if runErr != nil && !errors.Is(runErr, ErrTiming) {
			return runErr
		}
		if bin := bitstream(res); bin != "" {
			if err := copyFile(bin, filepath.Join(tmp, "top.bin")); err != nil {
				return err
			}
		}
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, "result.json"), b, 0o600)
	})
	if err != nil {
		if runErr != nil {
			return res, "", false, runErr
		}
		return nil, "", false, fmt.Errorf("synth: result cache %s: %w", root, err)
	}
	if !cached {
		return res, "", false, runErr
	}
	b, err := os.ReadFile(filepath.Join(entry, "result.json"))
	if err != nil {
		return nil, "", false, fmt.Errorf("synth: result cache: %w", err)
	}
	var r R
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, "", false, fmt.Errorf("synth: result cache %s: %w", entry, err)
	}
	return &r, entry, true, nil
}
