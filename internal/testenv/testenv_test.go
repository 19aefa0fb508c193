package testenv

import (
	"strings"
	"testing"
	"time"
)

func TestLong(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{{"", false}, {"0", false}, {"false", false}, {"No", false}, {"off", false}, {"1", true}, {"yes", true}, {"true", true}} {
		t.Setenv(LongEnv, c.v)
		if got := Long(); got != c.want {
			t.Errorf("%s=%q: Long() = %v, want %v", LongEnv, c.v, got, c.want)
		}
		if got, want := Size(1, 2), map[bool]int{false: 1, true: 2}[c.want]; got != want {
			t.Errorf("%s=%q: Size(1, 2) = %d, want %d", LongEnv, c.v, got, want)
		}
	}
}

func TestSkipUnlessLong(t *testing.T) {
	t.Setenv(LongEnv, "")
	ran := false
	t.Run("skipped", func(t *testing.T) {
		SkipUnlessLong(t, "a sweep")
		ran = true
	})
	if ran {
		t.Error("SkipUnlessLong did not skip without " + LongEnv)
	}
	t.Setenv(LongEnv, "1")
	t.Run("runs", func(t *testing.T) {
		SkipUnlessLong(t)
		ran = true
	})
	if !ran {
		t.Error("SkipUnlessLong skipped with " + LongEnv + "=1")
	}
}

// logRecorder is a testing.TB that records Logf lines.
type logRecorder struct {
	testing.TB
	lines chan string
}

func (r *logRecorder) Logf(format string, args ...any) {
	select {
	case r.lines <- format:
	default:
	}
}

func TestHeartbeat(t *testing.T) {
	var note func(string, ...any)
	rec := &logRecorder{lines: make(chan string, 100)}
	t.Run("beating", func(t *testing.T) {
		rec.TB = t
		note = Heartbeat(rec, 20*time.Millisecond)
		note("%d of %d", 1, 3)
		select {
		case l := <-rec.lines:
			if !strings.Contains(l, "[progress]") {
				t.Errorf("heartbeat line %q lacks [progress]", l)
			}
		case <-time.After(5 * time.Second):
			t.Error("no heartbeat within 5 s at a 20 ms period")
		}
	})
	// stopped by the subtest's cleanup: no line after it ended
	for len(rec.lines) > 0 {
		<-rec.lines
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(rec.lines); n != 0 {
		t.Errorf("%d heartbeat lines after the test ended", n)
	}
}

func TestContext(t *testing.T) {
	ctx := Context(t)
	d, ok := t.Deadline()
	cd, cok := ctx.Deadline()
	if ok != cok {
		t.Fatalf("test deadline %v (%v), context deadline %v (%v)", d, ok, cd, cok)
	}
	if ok && !cd.Before(d) {
		t.Errorf("context deadline %v not before the test deadline %v", cd, d)
	}
	if ctx.Err() != nil {
		t.Errorf("context already done: %v", ctx.Err())
	}
}

func TestScale(t *testing.T) {
	t.Setenv("PTM_TIMEOUT_SCALE", "3")
	if s := Slowness(); s < 3 {
		t.Errorf("Slowness() = %v with PTM_TIMEOUT_SCALE=3, want >= 3", s)
	}
	if d := Scale(time.Second); d < 3*time.Second {
		t.Errorf("Scale(1s) = %v, want >= 3s", d)
	}
	t.Setenv("PTM_TIMEOUT_SCALE", "")
	if s := Slowness(); s < 1 {
		t.Errorf("Slowness() = %v, want >= 1", s)
	}
}
