package experiments

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/internal/outfile"
)

// A unit is one independent piece of the sweep's computation: a data set x
// split x model, a held-out class's split, one model of the 2-D experiment.
// Its results (*out) are all that the report reads from it, so a unit can
// run in another process (a shard, Options.Shard) and its results be
// merged later (Merge). A section joins the sharding by declaring its
// units in its plan function; everything a unit needs is fixed by the
// configuration and its own seeds, never by another unit's results.
type unit struct {
	// name is unique within the sweep and the same in every run of one
	// configuration: section, data set, split, model ("iris.s02.ptm").
	// Letters, digits, '.', '_' and '-' only (it names a file).
	name string
	// cost is the relative cost: the most expensive units run first, and
	// shards balance it.
	cost float64
	// out points to the unit's results; it must survive encoding/gob
	// (exported fields, no funcs or interfaces).
	out any
	// run computes *out.
	run func() error
	// apply, if set, installs *out into the section's state; it is
	// called after run, or after *out was loaded from a shard's file.
	apply func()

	section string // set by plan
}

var unitName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Shard selects part I (1-based) of N disjoint parts of the sweep's units.
// The zero Shard is the whole sweep.
type Shard struct{ I, N int }

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// MaxShards bounds N in a Shard.
const MaxShards = 10000

// ParseShard reads "I/N" with 1 <= I <= N <= MaxShards.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 2/4 for the second of four parts", s)
	}
	if n < 1 || n > MaxShards || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %q: want 1 <= I <= N <= %d", s, MaxShards)
	}
	return Shard{I: i, N: n}, nil
}

// assign returns, for every unit, the shard (0-based) it belongs to among
// n: the units in decreasing cost (ties by name) each go to the shard with
// the least total cost so far (the lowest index on ties). It depends only
// on the units' names and costs, so every shard of one configuration
// computes the same assignment.
func assign(units []unit, n int) []int {
	idx := make([]int, len(units))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ua, ub := units[idx[a]], units[idx[b]]
		if ua.cost != ub.cost {
			return ua.cost > ub.cost
		}
		return ua.name < ub.name
	})
	load := make([]float64, n)
	out := make([]int, len(units))
	for _, i := range idx {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		out[i] = best
		load[best] += units[i].cost
	}
	return out
}

// unitsDir is the directory of a shard's unit files inside its output
// directory.
const unitsDir = "units"

// unitHeader starts every unit file: which unit, the settings it was
// computed with, and how long it took.
type unitHeader struct {
	Unit     string
	Settings settings
	Seconds  float64
}

// settings are the options that change a sweep's numbers; every unit file
// records them and Merge requires them equal.
type settings struct {
	Quick, WideGrids bool
	Only             string // Options.Only
	Select           string // resolved rule
	ChooseOn         string // carve or cv
}

func (s settings) String() string {
	return fmt.Sprintf("quick=%v wide-grids=%v only=%q select=%s choose-on=%s", s.Quick, s.WideGrids, s.Only, s.Select, s.ChooseOn)
}

// saveUnit writes u's results to dir/units/<name>.gob (through a temporary
// file, so that a shard killed mid-write leaves no partial unit).
func saveUnit(dir string, u unit, st settings, secs float64) error {
	var b bytes.Buffer
	enc := gob.NewEncoder(&b)
	if err := enc.Encode(unitHeader{Unit: u.name, Settings: st, Seconds: secs}); err != nil {
		return fmt.Errorf("unit %s: %w", u.name, err)
	}
	if err := enc.Encode(u.out); err != nil {
		return fmt.Errorf("unit %s: %w", u.name, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, unitsDir), 0o755); err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(dir, unitsDir, u.name+".gob"), b.Bytes())
}

// unitFile is one unit file found by Merge.
type unitFile struct {
	path string
	head unitHeader
}

// readUnitHeader reads the header of a unit file.
func readUnitHeader(path string) (unitHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return unitHeader{}, err
	}
	defer f.Close()
	var h unitHeader
	if err := gob.NewDecoder(f).Decode(&h); err != nil {
		return h, fmt.Errorf("%s: not a unit file: %w", path, err)
	}
	return h, nil
}

// loadUnit decodes a unit file's results into u.out.
func loadUnit(path string, u unit) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := gob.NewDecoder(bytes.NewReader(data))
	var h unitHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := dec.Decode(u.out); err != nil {
		return fmt.Errorf("%s: unit %s: %w", path, u.name, err)
	}
	var extra struct{}
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: unit %s: trailing data", path, u.name)
	}
	return nil
}

// execute runs units on GOMAXPROCS workers, the most expensive first,
// reporting progress per section; after each unit, apply (if set) and
// save (if not nil) are called.
func (r *runner) execute(units []unit, save func(u unit, secs float64) error) error {
	order := make([]int, len(units))
	total := map[string]int{}
	for i, u := range units {
		order[i] = i
		total[u.section]++
	}
	sort.SliceStable(order, func(a, b int) bool { return units[order[a]].cost > units[order[b]].cost })
	var mu sync.Mutex
	done := map[string]int{}
	var failed atomic.Bool
	return parallel(r.ctx, len(units), func(j int) error {
		if failed.Load() {
			return nil
		}
		u := units[order[j]]
		if err := r.ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		if err := u.run(); err != nil {
			failed.Store(true)
			return fmt.Errorf("%s: unit %s: %w", u.section, u.name, err)
		}
		if u.apply != nil {
			u.apply()
		}
		if save != nil {
			if err := save(u, time.Since(start).Seconds()); err != nil {
				failed.Store(true)
				return err
			}
		}
		mu.Lock()
		done[u.section]++
		d := done[u.section]
		mu.Unlock()
		r.progress(u.section, d, total[u.section])
		return nil
	})
}

// plan runs every section's plan function and returns all units, each
// tagged with its section; it checks that names are valid and unique.
func (r *runner) plan(secs []section) ([]unit, error) {
	var all []unit
	seen := map[string]string{}
	for _, s := range secs {
		if s.plan == nil {
			continue
		}
		us, err := s.plan()
		if err != nil {
			return nil, fmt.Errorf("experiments: %s: %w", s.name, err)
		}
		for _, u := range us {
			if !unitName.MatchString(u.name) {
				return nil, fmt.Errorf("experiments: %s: bad unit name %q", s.name, u.name)
			}
			if prev, dup := seen[u.name]; dup {
				return nil, fmt.Errorf("experiments: unit %q declared by %s and %s", u.name, prev, s.name)
			}
			seen[u.name] = s.name
			u.section = s.name
			all = append(all, u)
		}
	}
	return all, nil
}

// MergeOptions configures Merge.
type MergeOptions struct {
	// Dirs are the output directories of the shards (Options.Out of each
	// Run with Options.Shard).
	Dirs []string
	// Out is where report.md, summary.json and the figures go.
	Out string
	// Partial writes a report and summary of the sections whose units
	// are all present when some are missing (summary key
	// "meta.missing_units"); without it missing units are an error.
	Partial bool
	// Progress is called as sections are reported (see Options.Progress).
	Progress func(stage string, done, total int)
}

// MergeError lists the units a merge found missing or more than once.
type MergeError struct {
	Missing    []string
	Duplicated map[string][]string // unit -> the files holding it
}

func (e *MergeError) Error() string {
	var b strings.Builder
	b.WriteString("experiments: merge:")
	if len(e.Duplicated) > 0 {
		names := make([]string, 0, len(e.Duplicated))
		for n := range e.Duplicated {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, " %d units found more than once:", len(names))
		for _, n := range names {
			fmt.Fprintf(&b, " %s (%s);", n, strings.Join(e.Duplicated[n], ", "))
		}
	}
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, " %d units missing: %s (re-run their shards, or merge with --partial)", len(e.Missing), strings.Join(e.Missing, ", "))
	}
	return b.String()
}

// Merge reads the unit files of shard directories (written by Run with
// Options.Shard), checks that every unit of the sweep is there exactly
// once and that all were computed with the same settings, and writes
// report.md, summary.json and the figures to opt.Out, as Run would have
// written them: the same numbers, only timing differs.
func Merge(ctx context.Context, opt MergeOptions) (*Summary, error) {
	if opt.Out == "" {
		return nil, fmt.Errorf("experiments: merge: no output directory")
	}
	if len(opt.Dirs) == 0 {
		return nil, fmt.Errorf("experiments: merge: no shard directories")
	}
	start := time.Now()
	found := map[string][]unitFile{}
	var st *settings
	var stFrom string
	for _, dir := range opt.Dirs {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("experiments: merge: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("experiments: merge: %s is not a directory", dir)
		}
		paths, err := filepath.Glob(filepath.Join(dir, unitsDir, "*.gob"))
		if err != nil {
			return nil, fmt.Errorf("experiments: merge: %w", err)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("experiments: merge: %s holds no unit files (%s/*.gob): not a shard's output directory", dir, unitsDir)
		}
		for _, p := range paths {
			h, err := readUnitHeader(p)
			if err != nil {
				return nil, fmt.Errorf("experiments: merge: %w", err)
			}
			if h.Unit+".gob" != filepath.Base(p) {
				return nil, fmt.Errorf("experiments: merge: %s holds unit %q", p, h.Unit)
			}
			if st == nil {
				st, stFrom = &h.Settings, p
			} else if h.Settings != *st {
				return nil, fmt.Errorf("experiments: merge: %s was computed with %s, %s with %s: merge shards of one sweep only", p, h.Settings, stFrom, *st)
			}
			found[h.Unit] = append(found[h.Unit], unitFile{path: p, head: h})
		}
	}
	r, secs, err := newRunner(ctx, Options{Out: opt.Out, Quick: st.Quick, Only: st.Only, WideGrids: st.WideGrids, Select: pipeline.Selection(st.Select), ChooseOn: st.ChooseOn, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	units, err := r.plan(secs)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	me := &MergeError{Duplicated: map[string][]string{}}
	var present []bool
	for _, u := range units {
		known[u.name] = true
		fs := found[u.name]
		switch {
		case len(fs) == 0:
			me.Missing = append(me.Missing, u.name)
		case len(fs) > 1:
			for _, f := range fs {
				me.Duplicated[u.name] = append(me.Duplicated[u.name], f.path)
			}
		}
		present = append(present, len(fs) == 1)
	}
	for name, fs := range found {
		if !known[name] {
			return nil, fmt.Errorf("experiments: merge: %s: unit %q is not part of the sweep with %s", fs[0].path, name, *st)
		}
	}
	if len(me.Duplicated) > 0 || (len(me.Missing) > 0 && !opt.Partial) {
		return nil, me
	}
	if err := outfile.CheckDir(opt.Out); err != nil {
		return nil, fmt.Errorf("experiments: merge: %w", err)
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: merge: %w", err)
	}
	skip := map[string]bool{}
	for i, u := range units {
		if !present[i] {
			skip[u.section] = true
			continue
		}
		if err := loadUnit(found[u.name][0].path, u); err != nil {
			return nil, fmt.Errorf("experiments: merge: %w", err)
		}
		if u.apply != nil {
			u.apply()
		}
	}
	if len(me.Missing) > 0 {
		r.sum.label("meta.missing_units", strings.Join(me.Missing, ","))
	}
	return r.finish(secs, skip, start)
}
