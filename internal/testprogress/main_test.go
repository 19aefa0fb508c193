package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const stream = `{"Action":"start","Package":"github.com/ptmhw/ptm/a"}
{"Action":"run","Package":"github.com/ptmhw/ptm/a","Test":"TestOK"}
{"Action":"output","Package":"github.com/ptmhw/ptm/a","Test":"TestOK","Output":"    a_test.go:9: [progress] TestOK still running after 50s\n"}
{"Action":"pass","Package":"github.com/ptmhw/ptm/a","Test":"TestOK","Elapsed":61.5}
{"Action":"run","Package":"github.com/ptmhw/ptm/a","Test":"TestLong"}
{"Action":"output","Package":"github.com/ptmhw/ptm/a","Test":"TestLong","Output":"    a_test.go:20: full sweep: runs under make test-long\n"}
{"Action":"skip","Package":"github.com/ptmhw/ptm/a","Test":"TestLong","Elapsed":0}
{"Action":"pass","Package":"github.com/ptmhw/ptm/a","Elapsed":62}
{"Action":"start","Package":"github.com/ptmhw/ptm/b"}
{"Action":"run","Package":"github.com/ptmhw/ptm/b","Test":"TestBad"}
{"Action":"output","Package":"github.com/ptmhw/ptm/b","Test":"TestBad","Output":"    b_test.go:5: 3 mismatches\n"}
{"Action":"fail","Package":"github.com/ptmhw/ptm/b","Test":"TestBad","Elapsed":1}
{"Action":"output","Package":"github.com/ptmhw/ptm/b","Output":"FAIL\n"}
{"Action":"fail","Package":"github.com/ptmhw/ptm/b","Elapsed":1.2}
`

func run(t *testing.T, in string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	s := &state{w: &out, last: time.Now(), start: time.Now(), running: map[key]time.Time{},
		pkgStart: map[string]time.Time{}, output: map[key][]string{}, slow: 10}
	code := s.read(strings.NewReader(in))
	return out.String(), code
}

func TestReport(t *testing.T) {
	out, code := run(t, stream)
	if code != 1 {
		t.Errorf("exit code %d with a failed test, want 1", code)
	}
	for _, want := range []string{"a: a_test.go:9: [progress] TestOK", "a TestOK 61.5s", "skip a TestLong: full sweep: runs under make test-long",
		"ok   a", "--- FAIL b TestBad", "b_test.go:5: 3 mismatches", "FAIL b", "failed: b TestBad, b"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	pass := stream[:strings.Index(stream, `{"Action":"start","Package":"github.com/ptmhw/ptm/b"}`)]
	if out, code := run(t, pass); code != 0 || !strings.Contains(out, "PASS: 1 packages") {
		t.Errorf("passing stream: exit %d\n%s", code, out)
	}
	if _, code := run(t, "go: downloading x\n"); code != 1 {
		t.Errorf("no package result: exit %d, want 1", code)
	}
}

func TestRunningList(t *testing.T) {
	s := &state{running: map[key]time.Time{}, pkgStart: map[string]time.Time{}}
	if got := s.runningList(); got != "building" {
		t.Errorf("nothing running: %q", got)
	}
	t0 := time.Now().Add(-90 * time.Second)
	s.running[key{"github.com/ptmhw/ptm/rtl/board", "TestBench/proto_rx"}] = t0
	s.running[key{"github.com/ptmhw/ptm/rtl/board", "TestBench/proto_tx"}] = t0
	if got := s.runningList(); !strings.Contains(got, "rtl/board TestBench 1m30s [2 subtests]") {
		t.Errorf("running list %q", got)
	}
}
