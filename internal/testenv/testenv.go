// Package testenv holds what every test suite of the project shares about
// its environment: the long-test switch (PTM_LONG_TESTS, set by
// `make test-long`), progress lines so that `go test -v` never stays
// silent for a minute, and deadlines that follow the machine's speed
// instead of fixed wall-clock limits.
//
// The default run (`make test`) keeps every kind of check at a reduced
// size; the full repetitions (10,000-query fault runs, design sweeps,
// millions of samples) run only when Long reports true:
//
//	n := testenv.Size(500, 10_000) // 500 by default, 10,000 under PTM_LONG_TESTS
//	testenv.SkipUnlessLong(t, "full design sweep")
package testenv

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// LongEnv is the environment variable that turns the long tests on.
const LongEnv = "PTM_LONG_TESTS"

// Long reports whether the long tests were asked for: PTM_LONG_TESTS is
// set to anything but "", "0", "false", "no" or "off".
func Long() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(LongEnv))) {
	case "", "0", "false", "no", "off":
		return false
	}
	return true
}

// SkipUnlessLong skips the test unless Long() (what says what is skipped;
// it may be empty).
func SkipUnlessLong(t testing.TB, what ...any) {
	t.Helper()
	if Long() {
		return
	}
	msg := "long test"
	if len(what) > 0 {
		msg = strings.TrimSpace(fmt.Sprintln(what...))
	}
	t.Skipf("%s: runs under `make test-long` (%s=1)", msg, LongEnv)
}

// Size returns short in the default run and long under PTM_LONG_TESTS:
// the reduced and the full size of the same check.
func Size[T any](short, long T) T {
	if Long() {
		return long
	}
	return short
}

// Heartbeat logs a progress line ("still running after 1m0s") every
// `every` (at most every 50 s when every <= 0) until the test ends, so
// that `go test -v` never stays silent for a minute during long tool runs.
// It returns a function that logs the given progress note in the next
// heartbeat line (e.g. "3/9 benches built"); the heartbeat stops in a
// t.Cleanup.
func Heartbeat(t testing.TB, every time.Duration) func(format string, args ...any) {
	t.Helper()
	if every <= 0 || every > 50*time.Second {
		every = 50 * time.Second
	}
	var (
		mu   sync.Mutex
		note string
	)
	start := time.Now()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				mu.Lock()
				n := note
				mu.Unlock()
				if n != "" {
					n = ": " + n
				}
				t.Logf("[progress] %s still running after %v%s (load %s)", t.Name(),
					time.Since(start).Round(time.Second), n, LoadString())
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-stopped
	})
	return func(format string, args ...any) {
		mu.Lock()
		note = fmt.Sprintf(format, args...)
		mu.Unlock()
	}
}

// graceFrac and graceMin set how long before the test binary's deadline
// Context ends: a tenth of the time left, at least 10 s (less when the
// time left is shorter), so a hung tool is killed with a clear error
// before go test's timeout panic.
const (
	graceFrac = 10
	graceMin  = 10 * time.Second
)

// Context returns a context for the external tools (Verilator, yosys,
// nextpnr, simulators) a test runs. It carries no fixed wall-clock limit:
// it ends shortly before the deadline of `go test -timeout`, whatever the
// machine's speed or load, and is cancelled when the test ends. Without a
// test deadline (-timeout 0) it ends only with the test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := deadline(t); ok {
		left := time.Until(d)
		grace := max(left/graceFrac, min(graceMin, left/2))
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-grace))
	}
	t.Cleanup(cancel)
	return ctx
}

// deadline is t.Deadline for tests (testing.TB has no Deadline method).
func deadline(t testing.TB) (time.Time, bool) {
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return dt.Deadline()
	}
	return time.Time{}, false
}

// Slowness is how much slower than idle the machine runs now: the
// one-minute load average per CPU (at least 1), times PTM_TIMEOUT_SCALE
// when that is set to a number > 0 (for machines that are slow even when
// idle).
func Slowness() float64 {
	f := 1.0
	if l, ok := loadAvg(); ok {
		f = max(1, l/float64(runtime.NumCPU()))
	}
	if s, err := strconv.ParseFloat(os.Getenv("PTM_TIMEOUT_SCALE"), 64); err == nil && s > 0 {
		f *= s
	}
	return f
}

// Scale stretches a timeout chosen for an idle machine by Slowness: for
// protocol timers (a retry after no answer) that must stay finite but
// must not fire only because the machine is busy.
func Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Slowness())
}

// LoadString is the load average as in uptime ("1.95 2.10 1.80"), or "?".
func LoadString() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func loadAvg() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	l, err := strconv.ParseFloat(f[0], 64)
	return l, err == nil
}
