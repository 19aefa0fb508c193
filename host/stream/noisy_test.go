package stream_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

// TestLongAnswersNoisyLine: at 1% flipped and 1% dropped bytes each way,
// long answers (K = 100 in sums mode: 300 bytes per Iris row; samples
// mode: 1,200 bytes in two fragments) all arrive verified, with the
// driver's default settings (issue 31 item 5: 2 of 30 rows verified, 28
// lost). A version-6 board answers them in windows sized for the line
// (docs/protocol.md section 4, "Windows"): every answer reassembled from
// windows, none verified by the golden answer's CRC. A version-5 board
// (no windows: the lean RTL board, `--sets-max 1`) still gets through by the CRC
// fallback. The board's receiver does not rescan, as the real one.
func TestLongAnswersNoisyLine(t *testing.T) {
	f, X, labels, ids := testRows(t)
	for _, c := range []struct {
		mode    frame.Mode
		version uint32
	}{{frame.ModeSums, 6}, {frame.ModeSamples, 6}, {frame.ModeSums, 5}} {
		t.Run(fmt.Sprintf("%s/v%d", c.mode, c.version), func(t *testing.T) {
			b := boardFor(t, f, softboard.Config{KMax: 255, Bank: f.Bank, Version: c.version, QueueFrames: 31}) // preloaded: the upload at these rates is TestStreamUnderFaults' business
			faults := &softboard.Faults{Seed: 31, FlipToBoard: 0.01, DropToBoard: 0.01, FlipToHost: 0.01, DropToHost: 0.01}
			host, _, stop := b.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{NoRescan: true}, faults)
			t.Cleanup(func() {
				stop()
				host.Close()
			})
			start := time.Now()
			s, err := stream.Run(context.Background(), host, f, "", X, stream.Config{K: 100, Mode: c.mode, Seed: 7, Labels: labels, RowIDs: ids})
			if err != nil {
				t.Fatalf("%v (summary %+v)", err, s)
			}
			t.Logf("%s mode, K = 100, 1%%/1%% faults, protocol %d: %d rows, %d lost, %d mismatches, %d verified (%d of them by CRC, %d fragments), %d windows, %d split, %d retries, %.1fs (load %s)",
				c.mode, c.version, s.Requested, s.Lost, s.Mismatches, s.Verified, s.VerifiedByCRC, s.CRCMatched, s.Windows, s.WindowSplits, s.Retries, time.Since(start).Seconds(), testenv.LoadString())
			if s.Lost != 0 || s.Mismatches != 0 || s.Verified != len(X) || s.Duplicated != 0 {
				t.Fatalf("lost %d, mismatches %d, verified %d of %d, duplicated %d", s.Lost, s.Mismatches, s.Verified, len(X), s.Duplicated)
			}
			if c.version >= 6 && (s.VerifiedByCRC != 0 || s.CRCMatched != 0 || s.Windows < uint64(len(X))) {
				t.Fatalf("protocol 6: %d rows verified by CRC (%d fragments), %d windows: want every answer from windows", s.VerifiedByCRC, s.CRCMatched, s.Windows)
			}
			if c.version == 5 && s.Windows != 0 {
				t.Fatalf("protocol 5: %d windows", s.Windows)
			}
		})
	}
}

// TestCountersResetMidStream: a RESET_STATUS that reaches the board during
// the stream (a second host, or a board reset) clears its counters; the
// report must not subtract counters that went backwards (issue 31 item 6:
// receive-line utilization 10.00 and framing_errors 4294967224). The
// counters since the reset are reported, flagged, and the utilization is
// the host's estimate. Two cases: a board that was uploaded before the
// stream, reset half-way (its counters end below their values before the
// stream), and a preloaded board reset a quarter of the way (its counters
// were near 0 before and end above: only the board's count of frames it
// executed, below the requests the host got answers for, shows the reset).
func TestCountersResetMidStream(t *testing.T) {
	for _, c := range []struct {
		name    string
		preload bool
		at      int // reset after total/at rows
	}{{"uploaded/half", false, 2}, {"preloaded/quarter", true, 4}} {
		t.Run(c.name, func(t *testing.T) {
			f, X, labels, ids := testRows(t)
			cfg := softboard.Config{BitRate: 115200}
			if c.preload {
				cfg.Bank = f.Bank
			}
			b := boardFor(t, f, cfg)
			tr := pipeTo(t, b, nil)
			var rows [][]float64
			var lab, id []int
			for i := range 4 {
				rows = append(rows, X...)
				lab = append(lab, labels...)
				for _, r := range ids {
					id = append(id, r+1000*i)
				}
			}
			reset := false
			scfg := stream.Config{K: 10, Mode: frame.ModeStats, Labels: lab, RowIDs: id, Progress: func(done, total int) {
				if !reset && done >= total/c.at {
					reset = true
					b.Execute(nil, frame.Frame{Type: frame.TypeResetStatus, Seq: 0xbeef})
				}
			}}
			s, err := stream.Run(context.Background(), tr, f, "", rows, scfg)
			if err != nil {
				t.Fatal(err)
			}
			if !reset {
				t.Fatal("the reset was not injected")
			}
			t.Logf("after a reset at row %d of %d: utilization %.3f (%s), counters %v, warnings %q", len(rows)/c.at, len(rows), s.LinkUtilization, s.LinkUtilSource, s.Board.Counters, s.Board.Warnings)
			if !s.Board.CountersReset || s.LinkUtilSource == "board" || s.LinkUtilization != s.LinkUtilHost {
				t.Errorf("counters reset %v, utilization %.3f measured by %q", s.Board.CountersReset, s.LinkUtilization, s.LinkUtilSource)
			}
			for name, v := range s.Board.Counters {
				if v > 1<<31 {
					t.Errorf("counter %s = %d: a difference across the reset", name, v)
				}
			}
			if n := s.Board.Counters[frame.CounterName(frame.CounterExecuted)]; n >= uint32(len(rows)) {
				t.Errorf("%d frames executed reported for %d rows reset after %d: not the count since the reset", n, len(rows), len(rows)/c.at)
			}
			if len(s.Board.Warnings) == 0 || s.Board.Warnings[len(s.Board.Warnings)-1] != stream.CountersResetWarning {
				t.Errorf("no warning: %q", s.Board.Warnings)
			}
			if s.Lost != 0 || s.Mismatches != 0 {
				t.Errorf("lost %d mismatches %d", s.Lost, s.Mismatches)
			}
		})
	}
}

// TestCountersNoReset: a stream without a reset is not reported as one,
// on a fresh board (counters near 0 before the stream) and on one whose
// counters are about to wrap past 2^32 during the stream.
func TestCountersNoReset(t *testing.T) {
	f, X, labels, ids := testRows(t)
	for _, c := range []struct {
		name   string
		faults *softboard.Faults
	}{{"clean", nil}, {"noisy", &softboard.Faults{Seed: 6, FlipToBoard: 0.01, DropToBoard: 0.01, FlipToHost: 0.01, DropToHost: 0.01}}} {
		t.Run(c.name, func(t *testing.T) {
			b := boardFor(t, f, softboard.Config{BitRate: 115200, Bank: f.Bank, QueueFrames: 31})
			tr := pipeTo(t, b, c.faults)
			s, err := stream.Run(context.Background(), tr, f, "", X, stream.Config{K: 10, Mode: frame.ModeStats, Labels: labels, RowIDs: ids})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: utilization %.3f (%s), counters %v, retries %d", c.name, s.LinkUtilization, s.LinkUtilSource, s.Board.Counters, s.Retries)
			if s.Board.CountersReset || s.LinkUtilSource != "board" || len(s.Board.Warnings) != 0 {
				t.Errorf("no reset happened: counters reset %v, utilization by %q, warnings %q", s.Board.CountersReset, s.LinkUtilSource, s.Board.Warnings)
			}
			if n := s.Board.Counters[frame.CounterName(frame.CounterInferred)]; n < uint32(len(X)) {
				t.Errorf("%d vectors inferred for %d rows", n, len(X))
			}
		})
	}
}
