package board

// Streams over several Verilated boards at once (host/multi, `ptm stream
// --uart A --uart B ...`): the rows spread over the boards, every answer
// checked against the golden model, a board stopped mid-stream.

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/driver"
	pframe "github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/multi"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

// startBoards starts n Verilated boards for the shipped Iris model (one
// cached build) and opens their pseudo-terminals.
func startBoards(t *testing.T, n int, preload bool) ([]*Process, []transport.Transport) {
	t.Helper()
	iris := loadIris(t)
	var ps []*Process
	var links []transport.Transport
	for range n {
		p := start(t, irisOptions(iris.m, 8, preload))
		ps, links = append(ps, p), append(links, openUART(t, p))
	}
	return ps, links
}

// multiStream streams rows x K over links and fails the test unless every
// row got exactly one answer equal to the golden model's.
func multiStream(t *testing.T, links []transport.Transport, rows int, k int, mode pframe.Mode, progress func(done, total int)) *multi.Summary {
	t.Helper()
	iris := loadIris(t)
	X, labels, ids := iris.repeat(rows)
	beat := testenv.Heartbeat(t, 30*time.Second)
	cfg := stream.Config{K: k, Seed: 3, Labels: labels, RowIDs: ids, Mode: mode, Driver: driver.Opts{Deadline: testenv.Scale(2 * time.Minute)}}
	cfg.Progress = func(done, total int) {
		beat("%d of %d rows answered", done, total)
		if progress != nil {
			progress(done, total)
		}
	}
	s, err := multi.Run(testenv.Context(t), links, iris.m.File, iris.m.Hash, X, multi.Config{Stream: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if s.Queries != rows || s.Verified != rows || s.Lost != 0 || s.Duplicated != 0 || s.Mismatches != 0 {
		t.Fatalf("%d boards: %d queries, %d verified, %d lost, %d duplicated, %d mismatches vs golden (%s)", len(links), s.Queries, s.Verified, s.Lost,
			s.Duplicated, s.Mismatches, s.FirstMismatch)
	}
	for _, b := range s.Boards {
		t.Logf("board %s: %d rows in %d pieces, %.2f s streaming, uploaded %v, retries %d, failed %q (%d rows re-sent)", b.Link, b.Queries, b.Pieces, b.StreamS,
			b.Uploaded, b.Retries, b.Failed, b.Unanswered)
	}
	t.Logf("%d boards, %s mode K=%d: %d rows, 0 lost/duplicated/mismatched, %.1f queries/s over %.2f s, %d re-sent", len(links), s.Mode, s.K, s.Queries,
		s.QueriesPerS, s.WallS, s.Resent)
	return s
}

// TestTwoBoards streams the Iris rows over two Verilated boards (the bank
// uploaded to each): both answer, nothing is lost, duplicated or wrong.
func TestTwoBoards(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	_, links := startBoards(t, 2, false)
	s := multiStream(t, links, 96, 20, pframe.ModeSums, nil)
	for _, b := range s.Boards {
		if b.Queries == 0 || !b.Uploaded || b.Failed != "" {
			t.Errorf("board %s: %+v, want rows answered after an upload", b.Link, b)
		}
	}
}

// TestFourBoardsOneKilled streams over four Verilated boards and stops one
// of them (its simulator ends, its pty closes) after a third of the rows:
// its unanswered rows go to the other three, none is lost, answered twice
// or wrong.
func TestFourBoardsOneKilled(t *testing.T) {
	testenv.SkipUnlessLong(t, "four Verilated boards, one stopped mid-stream")
	t.Parallel()
	ps, links := startBoards(t, 4, false)
	var killed atomic.Bool
	s := multiStream(t, links, 1200, 20, pframe.ModeSums, func(done, total int) {
		if done >= total/3 && !killed.Swap(true) {
			t.Logf("stopping board %s after %d of %d rows", links[2].Name(), done, total)
			go ps[2].Stop()
		}
	})
	if !killed.Load() || s.Boards[2].Failed == "" || s.Resent == 0 {
		t.Fatalf("board 2 stopped %v: %+v, %d re-sent", killed.Load(), s.Boards[2], s.Resent)
	}
	for i, b := range s.Boards {
		if i != 2 && b.Failed != "" {
			t.Errorf("board %s failed: %s", b.Link, b.Failed)
		}
	}
}

// TestBoardsThroughput measures queries/s over 1, 2 and 4 Verilated
// boards with the bank preloaded (votes mode, K = 100, the same rows):
// the figures of docs/howto-stream.md. Verilated boards share the host's
// CPUs, so the figure shows the layer's overhead and scaling on this
// machine, not that of real boards.
func TestBoardsThroughput(t *testing.T) {
	testenv.SkipUnlessLong(t, "throughput over 1, 2 and 4 Verilated boards")
	_, links := startBoards(t, 4, true)
	rows := testenv.Size(400, 2000)
	var base float64
	for _, n := range []int{1, 2, 4} {
		s := multiStream(t, links[:n], rows, 100, pframe.ModeVotes, nil)
		if n == 1 {
			base = s.QueriesPerS
		}
		t.Logf("[throughput] %d boards: %.1f queries/s (%.2fx one board), load %s", n, s.QueriesPerS, s.QueriesPerS/base, testenv.LoadString())
	}
}
