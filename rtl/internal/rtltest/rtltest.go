// Package rtltest holds the helpers the Verilog test suites of rtl/ and
// rtl/board share: tool checks, commands bounded by the test deadline and
// bench builds cached by the hash of their inputs.
package rtltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ptmhw/ptm/internal/buildcache"
	"github.com/ptmhw/ptm/internal/testenv"
)

// NeedTools fails (or, with -short, skips) when a tool is missing.
func NeedTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if testing.Short() {
				t.Skipf("%s not found (skipped in -short mode); run scripts/install-deps.sh", tool)
			}
			t.Fatalf("%s not found in PATH: run scripts/install-deps.sh to install verilator, yosys and g++", tool)
		}
	}
}

// Run executes a command in dir and returns its combined output. It has
// no fixed wall-clock limit (a busy machine only makes it slower): a hung
// tool is killed shortly before the go test deadline (testenv.Context).
func Run(t *testing.T, dir string, name string, args ...string) (string, error) {
	t.Helper()
	ctx := testenv.Context(t)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("killed near the test deadline (go test -timeout): %w", err)
	}
	return string(out), err
}

// Abs is filepath.Abs that fails the test on an error.
func Abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// CacheRoot is where bench builds are kept: $PTM_RTL_CACHE, else
// <user cache dir>/ptm-rtl.
func CacheRoot() string { return buildcache.DefaultRoot("PTM_RTL_CACHE", "ptm-rtl") }

var (
	toolsOnce sync.Once
	toolsID   string
)

// toolVersions identifies the compilers a bench build depends on.
func toolVersions() string {
	toolsOnce.Do(func() {
		for _, c := range [][]string{{"verilator", "--version"}, {"g++", "--version"}} {
			out, err := exec.Command(c[0], c[1:]...).Output()
			if err != nil {
				out = []byte(err.Error())
			}
			first, _, _ := strings.Cut(string(out), "\n")
			toolsID += first + "\n"
		}
	})
	return toolsID
}

// Build describes one cached bench build.
type Build struct {
	Name string   // cache entry prefix (the bench's name)
	Args []string // the build's arguments (tool flags, parameters, file names)
	// Inputs are the files the build reads; a folder stands for every
	// file directly in it (the bench headers).
	Inputs []string
	// Rename maps folders that change from run to run (a temporary folder
	// holding generated files) to fixed names in the cache key.
	Rename map[string]string
	// Binary is the built executable's path relative to the build folder.
	Binary string
	// Make builds into dir (t.Fatal on failure).
	Make func(t *testing.T, dir string)
}

// CachedBench returns the path of a bench executable built by b.Make,
// reused from the cache when the tool versions, b.Args and the contents
// of b.Inputs are those of an earlier build (of this or any other run or
// checkout; builders of the same key wait for each other). Only the
// executable is kept. Absolute paths in b.Args are keyed relative to root
// (the rtl folder), so that checkouts share builds, and b.Rename's folders
// by their fixed names.
func CachedBench(t *testing.T, root string, b Build) (bin string, cached bool) {
	t.Helper()
	type pair struct{ from, to string }
	ps := []pair{{root, "<rtl>"}}
	for from, to := range b.Rename {
		ps = append(ps, pair{from, to})
	}
	// longest folders first: a folder inside another keeps its own name
	sort.Slice(ps, func(i, j int) bool { return len(ps[i].from) > len(ps[j].from) })
	var pairs []string
	for _, p := range ps {
		pairs = append(pairs, p.from, p.to)
	}
	norm := strings.NewReplacer(pairs...).Replace
	h := buildcache.NewHasher()
	h.Add(toolVersions(), b.Name, b.Binary)
	for _, a := range b.Args {
		h.Add(norm(a))
	}
	var files []string
	for _, in := range b.Inputs {
		fi, err := os.Stat(in)
		if err != nil {
			t.Fatalf("bench input: %v", err)
		}
		if !fi.IsDir() {
			files = append(files, in)
			continue
		}
		es, err := os.ReadDir(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(in, e.Name()))
			}
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Add(norm(f), string(b))
	}
	dir, cached, err := buildcache.Get(CacheRoot(), b.Name+"-"+h.Key(), b.Binary, func(tmp string) error {
		b.Make(t, tmp)
		exe := filepath.Join(tmp, b.Binary)
		if _, err := os.Stat(exe); err != nil {
			return fmt.Errorf("bench build made no %s: %w", b.Binary, err)
		}
		// keep the executable only
		es, err := os.ReadDir(tmp)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.Name() != b.Binary {
				if err := os.RemoveAll(filepath.Join(tmp, e.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bench build %s: %v", b.Name, err)
	}
	return filepath.Join(dir, b.Binary), cached
}
