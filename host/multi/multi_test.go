package multi_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/golden/pipeline"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/multi"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
)

var hw = fixed.HW{Bits: 12, LFSRWidth: 32, ClauseLanes: 6, LiteralLanes: 8}

var irisOnce struct {
	sync.Once
	f   *modelfile.File
	X   [][]float64
	y   []int
	err error
}

// rows returns a small Iris model and n rows cycled from its test rows
// (ids 0..n-1, so distinct seeds) with their labels.
func rows(t testing.TB, n int) (*modelfile.File, [][]float64, []int, []int) {
	irisOnce.Do(func() {
		d, err := pipeline.LoadData(pipeline.Iris, "")
		if err != nil {
			irisOnce.err = err
			return
		}
		f, err := pipeline.Train(d, pipeline.TrainConfig{
			Params:     ptm.Params{Clauses: 10, T: 6, S: 3, N: 16, Epochs: 8, Seed: 1, Feedback: ptm.ConsistentFeedback},
			Thresholds: 4, Bits: 12, SplitSeed: 1, Mapping: ptm.Mapping{Kind: ptm.Vote},
		})
		if err != nil {
			irisOnce.err = err
			return
		}
		test, err := pipeline.Rows(f, d, "test")
		if err != nil {
			irisOnce.err = err
			return
		}
		irisOnce.f = f
		irisOnce.y, irisOnce.err = pipeline.Labels(f, d, test)
		for _, r := range test {
			irisOnce.X = append(irisOnce.X, d.X[r])
		}
	})
	if irisOnce.err != nil {
		t.Fatal(irisOnce.err)
	}
	var X [][]float64
	var y, ids []int
	for i := range n {
		X = append(X, irisOnce.X[i%len(irisOnce.X)])
		y = append(y, irisOnce.y[i%len(irisOnce.y)])
		ids = append(ids, i)
	}
	return irisOnce.f, X, y, ids
}

// boards starts n software boards behind pipes; kill[i] stops board i
// (its end of the pipe closes, as a board's pty does when it dies).
func boards(t *testing.T, f *modelfile.File, n int) (links []transport.Transport, kill []func()) {
	for i := range n {
		b, err := softboard.New(softboard.Config{Shape: f.Bank.Shape, HW: hw})
		if err != nil {
			t.Fatal(err)
		}
		host, _, stop := b.Pipe(context.Background(), transport.StreamOpts{Name: "soft" + string(rune('A'+i))}, softboard.StreamOpts{}, nil)
		var once sync.Once
		k := func() { once.Do(func() { stop() }) }
		t.Cleanup(func() { k(); host.Close() })
		links, kill = append(links, host), append(kill, k)
	}
	return links, kill
}

func config(y, ids []int) stream.Config {
	return stream.Config{K: 20, Seed: 5, Mode: frame.ModeSums, Labels: y, RowIDs: ids, Driver: driver.Opts{Deadline: 30 * time.Second}}
}

// dyingLink is a link whose board dies after it has sent `after` INFER
// answer frames: the frame that would be next is never delivered, the
// board's end is stopped, and every later Recv fails. The death falls
// inside a piece, so the piece's unanswered rows must be re-sent.
type dyingLink struct {
	transport.Transport
	after  int
	kill   func()
	seen   int
	killed atomic.Bool
}

func (l *dyingLink) Recv(ctx context.Context) ([]byte, error) {
	if l.killed.Load() {
		return nil, fmt.Errorf("%s: board died: %w", l.Name(), io.EOF)
	}
	b, err := l.Transport.Recv(ctx)
	if err != nil || len(b) < 2 || frame.Type(b[1]) != frame.TypeInfer.Response() {
		return b, err
	}
	if l.seen++; l.seen > l.after {
		l.killed.Store(true)
		l.kill()
		return nil, fmt.Errorf("%s: board died: %w", l.Name(), io.EOF)
	}
	return b, nil
}

// TestThreeBoardsOneKilled streams 600 rows over three software boards;
// the second dies after 25 answers, inside its first 40-row piece: every
// row is answered once, equal to the golden model, and the rows and
// metrics equal one board's stream of the same rows.
func TestThreeBoardsOneKilled(t *testing.T) {
	f, X, y, ids := rows(t, 600)
	links, kill := boards(t, f, 3)
	cfg := config(y, ids)
	dying := &dyingLink{Transport: links[1], after: 25, kill: kill[1]}
	links[1] = dying
	killed := &dying.killed
	s, err := multi.Run(context.Background(), links, f, "", X, multi.Config{Stream: cfg, Piece: 40})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lost != 0 || s.Duplicated != 0 || s.Mismatches != 0 || s.Verified != len(X) || s.Queries != len(X) {
		t.Fatalf("lost %d, duplicated %d, mismatches %d, verified %d of %d", s.Lost, s.Duplicated, s.Mismatches, s.Verified, len(X))
	}
	if !killed.Load() || s.Boards[1].Failed == "" || s.Boards[0].Failed != "" || s.Boards[2].Failed != "" {
		t.Fatalf("boards %+v", s.Boards)
	}
	if s.Resent != s.Boards[1].Unanswered || s.Resent == 0 {
		t.Errorf("resent %d, board B left %d", s.Resent, s.Boards[1].Unanswered)
	}
	n := 0
	for _, b := range s.Boards {
		n += b.Queries
	}
	if n != len(X) {
		t.Errorf("boards answered %d rows, want %d", n, len(X))
	}
	t.Logf("boards: %+v; resent %d", s.Boards, s.Resent)

	// One board, the same rows: the same answers.
	one, _ := boards(t, f, 1)
	c1 := config(y, ids)
	s1, err := stream.Run(context.Background(), one[0], f, "", X, c1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range X {
		a, b := s.Rows[i], s1.Rows[i]
		if a.Row != b.Row || a.Seed != b.Seed || a.Status != b.Status || a.Pred != b.Pred || !slices.Equal(a.Probs, b.Probs) || a.Entropy != b.Entropy {
			t.Fatalf("row %d: %+v over three boards, %+v on one", i, a, b)
		}
	}
	if *s.Metrics != *s1.Metrics {
		t.Errorf("metrics %+v over three boards, %+v on one", *s.Metrics, *s1.Metrics)
	}
}

// TestAllBoardsFail: when every board fails, the rows left are lost,
// each named, and the error says so.
func TestAllBoardsFail(t *testing.T) {
	f, X, y, ids := rows(t, 200)
	links, kill := boards(t, f, 2)
	for _, k := range kill {
		k()
	}
	cfg := config(y, ids)
	cfg.Connect = 2 * time.Second
	s, err := multi.Run(context.Background(), links, f, "", X, multi.Config{Stream: cfg})
	if err == nil || !strings.Contains(err.Error(), "every board failed") {
		t.Fatalf("error %v, want every board failed", err)
	}
	if s.Lost != len(X) || s.Queries != 0 || s.Rows[0].Status != stream.StatusLost {
		t.Fatalf("lost %d, queries %d, row 0 %+v", s.Lost, s.Queries, s.Rows[0])
	}
	for _, b := range s.Boards {
		if b.Failed == "" {
			t.Errorf("board %s not marked failed", b.Link)
		}
	}
}

// TestCancel: a cancelled stream reports its rows not run, none lost.
func TestCancel(t *testing.T) {
	f, X, y, ids := rows(t, 400)
	links, _ := boards(t, f, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := config(y, ids)
	cfg.Progress = func(done, total int) {
		if done >= 50 {
			cancel()
		}
	}
	s, err := multi.Run(ctx, links, f, "", X, multi.Config{Stream: cfg, Piece: 20})
	if err == nil {
		t.Fatal("no error after cancel")
	}
	if s.Lost != 0 || s.NotRun == 0 || s.Queries+s.NotRun != len(X) || s.Duplicated != 0 {
		t.Fatalf("lost %d, not run %d, queries %d of %d, duplicated %d", s.Lost, s.NotRun, s.Queries, len(X), s.Duplicated)
	}
}
