package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/internal/outfile"
)

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// pathFlag is a path given by a flag, for messages.
type pathFlag struct{ flag, path string }

// sameFile reports whether a and b name the same file: the same path once
// cleaned and made absolute, or (when both exist) the same inode, so that
// symlinks and hard links count.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if aa, err := filepath.Abs(a); err == nil {
		if bb, err := filepath.Abs(b); err == nil && aa == bb {
			return true
		}
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// checkOutput refuses an output path that is one of the inputs (or, for
// an output directory, that would hold or replace one of them).
func checkOutput(out pathFlag, inputs ...pathFlag) error {
	if out.path == "" {
		return nil
	}
	for _, in := range inputs {
		if sameFile(out.path, in.path) {
			return fmt.Errorf("%w: %s %s is also the input %s: refusing to overwrite it", errUsage, out.flag, out.path, in.flag)
		}
	}
	return nil
}

// checkFileOutput is checkOutput for an output file, which must also be
// writable by internal/outfile (a regular file, a new name in an existing
// directory, a character device or a FIFO): a directory, a block device
// or a socket is refused before any work.
func checkFileOutput(out pathFlag, inputs ...pathFlag) error {
	if err := checkOutput(out, inputs...); err != nil || out.path == "" {
		return err
	}
	if err := outfile.Check(out.path); err != nil {
		return fmt.Errorf("%s: %w", out.flag, err)
	}
	return nil
}

// checkTrace checks cosim --trace before the build: the simulator writes
// the FST waveform itself, seeking back to fill in its header, so the
// target must be a regular file or a new name (checkFileOutput's rules
// otherwise); a device or a FIFO is refused rather than written with
// seeks it cannot take.
func checkTrace(trace, model string) error {
	if trace == "" {
		return nil
	}
	if fi, err := os.Stat(trace); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return fmt.Errorf("--trace: output %s: %w: it is %s: the simulator writes an FST waveform with seeks; give a regular file", trace, outfile.ErrRefused, outfile.Describe(fi.Mode()))
	}
	return checkFileOutput(pathFlag{"--trace", trace}, pathFlag{"--model", model})
}

// checkDirOutput is checkOutput for an output directory (gen, synth and
// experiments --out), which must be a directory that can take a file or a
// new name below one (outfile.CheckDir): a regular file, a device or a
// FIFO is refused before any work.
func checkDirOutput(out pathFlag, inputs ...pathFlag) error {
	if err := checkOutput(out, inputs...); err != nil || out.path == "" {
		return err
	}
	if err := outfile.CheckDir(out.path); err != nil {
		return fmt.Errorf("%s: %w", out.flag, err)
	}
	return nil
}

// resolve returns the mapping the flags ask for, starting from base (the
// model's or the default mapping). --temperature implies --mapping softmax
// and --smoothing --mapping vote; a parameter of the other kind is refused
// instead of being silently ignored. Parameters not given keep base's
// value when base is of the chosen kind, else the flags' defaults.
func (m *mappingFlags) resolve(fs *flag.FlagSet, base ptm.Mapping) (ptm.Mapping, error) {
	setKind, setTemp, setSmooth := isSet(fs, "mapping"), isSet(fs, "temperature"), isSet(fs, "smoothing")
	kind := base.Kind
	switch {
	case setKind:
		kind = ptm.MappingKind(m.kind)
	case setTemp && setSmooth:
		return base, fmt.Errorf("%w: --temperature is for --mapping softmax and --smoothing for --mapping vote: give one, or --mapping", errUsage)
	case setTemp:
		kind = ptm.Softmax
	case setSmooth:
		kind = ptm.Vote
	}
	mp := ptm.Mapping{Kind: kind}
	switch kind {
	case ptm.Softmax:
		if setSmooth {
			return mp, fmt.Errorf("%w: --smoothing applies to --mapping vote, not softmax (use --temperature)", errUsage)
		}
		mp.Temperature = m.temp
		if !setTemp && base.Kind == ptm.Softmax {
			mp.Temperature = base.Temperature
		}
	case ptm.Vote:
		if setTemp {
			return mp, fmt.Errorf("%w: --temperature applies to --mapping softmax, not vote (use --smoothing)", errUsage)
		}
		mp.Smoothing = m.smooth
		if !setSmooth && base.Kind == ptm.Vote {
			mp.Smoothing = base.Smoothing
		}
	}
	if err := mp.Validate(); err != nil {
		return mp, fmt.Errorf("%w: %v", errUsage, err)
	}
	return mp, nil
}

// checkSetsMax refuses a --sets-max outside 1..255 (SETS_MAX, MMAX).
func checkSetsMax(m int) error {
	if m < 1 || m > 255 {
		return fmt.Errorf("%w: --sets-max %d, want 1..255", errUsage, m)
	}
	return nil
}
