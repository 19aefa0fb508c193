// Command testprogress turns `go test -json` on its standard input into a
// short progress report for `make test` and CI:
//
//   - one line per finished package (ok / FAIL / no tests, seconds);
//   - one line per top-level test that took 10 s or more, and per skipped
//     top-level test with its reason (the long tests say so);
//   - every "[progress]" line a test logs (internal/testenv.Heartbeat);
//   - the whole output of every failed test, and of a package that failed
//     outside its tests (build errors, panics, timeouts);
//   - when nothing was printed for -quiet (30 s), the tests still running
//     and the load average, so a silent minute never happens.
//
// It exits 1 when a test or package failed, or when the input held no
// package result at all.
//
//	go test -json ./... 2>&1 | go run ./internal/testprogress
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ptmhw/ptm/internal/testenv"
)

type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

type key struct{ pkg, test string }

type state struct {
	mu       sync.Mutex
	w        io.Writer
	last     time.Time         // last line printed
	start    time.Time         // first event
	running  map[key]time.Time // started (or continued) tests
	pkgStart map[string]time.Time
	output   map[key][]string // output per test ("" = package level)
	slow     float64          // report top-level tests at least this long (s)
	failed   []string         // failed packages and tests
	pkgs     int              // package results seen
	passed   int              // packages passed
}

func main() {
	quiet := flag.Duration("quiet", 30*time.Second, "print the running tests after this long without output")
	slow := flag.Float64("slow", 10, "report top-level tests that took at least this many seconds")
	flag.Parse()
	s := &state{w: os.Stdout, last: time.Now(), start: time.Now(), running: map[key]time.Time{},
		pkgStart: map[string]time.Time{}, output: map[key][]string{}, slow: *slow}
	done := make(chan struct{})
	go s.watch(*quiet, done)
	code := s.read(os.Stdin)
	close(done)
	os.Exit(code)
}

// printf prints a line and resets the silence timer (call with mu held).
func (s *state) printf(format string, args ...any) {
	fmt.Fprintf(s.w, format+"\n", args...)
	s.last = time.Now()
}

func (s *state) watch(quiet time.Duration, done chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		if time.Since(s.last) >= quiet {
			s.printf("... %s running: %s (load %s)", time.Since(s.start).Round(time.Second), s.runningList(), testenv.LoadString())
		}
		s.mu.Unlock()
	}
}

// runningList names the running top-level tests (their subtests are
// counted), or the packages being built or started.
func (s *state) runningList() string {
	type item struct {
		name string
		t0   time.Time
		subs int
	}
	top := map[key]*item{}
	for k, t0 := range s.running {
		name, _, sub := strings.Cut(k.test, "/")
		tk := key{k.pkg, name}
		it := top[tk]
		if it == nil {
			it = &item{name: short(k.pkg) + " " + name, t0: t0}
			top[tk] = it
		}
		if sub {
			it.subs++
		}
		if t0.Before(it.t0) {
			it.t0 = t0
		}
	}
	if len(top) == 0 {
		var pk []string
		for p := range s.pkgStart {
			pk = append(pk, short(p))
		}
		sort.Strings(pk)
		if len(pk) == 0 {
			return "building"
		}
		return "package " + strings.Join(pk, ", ") + " (no test started yet)"
	}
	var items []*item
	for _, it := range top {
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].t0.Before(items[j].t0) })
	var parts []string
	for _, it := range items {
		p := fmt.Sprintf("%s %s", it.name, time.Since(it.t0).Round(time.Second))
		if it.subs > 0 {
			p += fmt.Sprintf(" [%d subtests]", it.subs)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func (s *state) read(r io.Reader) int {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			s.mu.Lock()
			s.printf("%s", line) // go command output (downloads, vet, errors)
			s.mu.Unlock()
			continue
		}
		s.mu.Lock()
		s.handle(e)
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := sc.Err(); err != nil {
		s.printf("testprogress: reading go test -json: %v", err)
		return 1
	}
	total := time.Since(s.start).Round(time.Second)
	switch {
	case len(s.failed) > 0:
		s.printf("FAIL: %d of %d packages passed in %v; failed: %s", s.passed, s.pkgs, total, strings.Join(s.failed, ", "))
		return 1
	case s.pkgs == 0:
		s.printf("FAIL: no package result in the input")
		return 1
	}
	s.printf("PASS: %d packages in %v", s.pkgs, total)
	return 0
}

func (s *state) handle(e event) {
	if e.Package == "" && e.ImportPath != "" { // build-output, build-fail
		switch e.Action {
		case "build-output":
			s.printf("%s", strings.TrimRight(e.Output, "\n"))
		case "build-fail":
			s.failed = append(s.failed, "build "+short(e.ImportPath))
		}
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "start":
		s.pkgStart[e.Package] = e.Time
	case "run", "cont":
		if e.Test != "" {
			s.running[k] = time.Now()
		}
	case "pause":
		delete(s.running, k)
	case "output":
		if strings.Contains(e.Output, "[progress]") {
			s.printf("  %s: %s", short(e.Package), strings.TrimSpace(e.Output))
		}
		s.output[k] = append(s.output[k], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			s.packageDone(e)
			return
		}
		delete(s.running, k)
		top := !strings.Contains(e.Test, "/")
		switch {
		case e.Action == "fail":
			s.printf("--- FAIL %s %s (%.1fs)", short(e.Package), e.Test, e.Elapsed)
			for _, o := range s.output[k] {
				fmt.Fprint(s.w, "    "+o)
			}
			s.failed = append(s.failed, short(e.Package)+" "+e.Test)
		case e.Action == "skip" && top:
			s.printf("    skip %s %s: %s", short(e.Package), e.Test, skipReason(s.output[k]))
		case e.Action == "pass" && top && e.Elapsed >= s.slow:
			s.printf("    %s %s %.1fs", short(e.Package), e.Test, e.Elapsed)
		}
		delete(s.output, k)
	}
}

func (s *state) packageDone(e event) {
	s.pkgs++
	delete(s.pkgStart, e.Package)
	for k := range s.running {
		if k.pkg == e.Package {
			delete(s.running, k)
		}
	}
	pk := key{e.Package, ""}
	switch e.Action {
	case "pass":
		s.passed++
		s.printf("ok   %-40s %6.1fs  (load %s)", short(e.Package), e.Elapsed, testenv.LoadString())
	case "skip":
		s.passed++
		s.printf("--   %-40s (no test files)", short(e.Package))
	case "fail":
		s.printf("FAIL %-40s %6.1fs", short(e.Package), e.Elapsed)
		reported := false
		for _, f := range s.failed {
			if strings.HasPrefix(f, short(e.Package)+" ") {
				reported = true
			}
		}
		// package-level output: panics, timeouts, build errors
		for _, o := range s.output[pk] {
			if !reported || !strings.HasPrefix(o, "FAIL") && !strings.HasPrefix(o, "--- FAIL") {
				fmt.Fprint(s.w, "    "+o)
			}
		}
		s.failed = append(s.failed, short(e.Package))
	}
	for k := range s.output {
		if k.pkg == e.Package {
			delete(s.output, k)
		}
	}
}

// skipReason is the t.Skip message of a skipped test's output.
func skipReason(out []string) string {
	for _, o := range out {
		o = strings.TrimSpace(o)
		if strings.HasPrefix(o, "---") || strings.HasPrefix(o, "===") || o == "" {
			continue
		}
		if i := strings.Index(o, ": "); i >= 0 && strings.Contains(o[:i], ".go:") {
			o = o[i+2:]
		}
		return o
	}
	return "skipped"
}

const modulePrefix = "github.com/ptmhw/ptm/"

func short(pkg string) string {
	if p := strings.TrimPrefix(pkg, modulePrefix); p != pkg {
		return p
	}
	if pkg == strings.TrimSuffix(modulePrefix, "/") {
		return "."
	}
	return pkg
}
