// Package multi spreads one stream of queries over several boards: the
// layer above the single-board session (host/stream.Run), which it runs
// unchanged on each board for one piece of the rows at a time.
//
// The rows are cut into pieces (Config.Piece rows each, in row order) on
// one queue; every board takes the next piece when it has finished its
// last, so a faster board answers more rows. Each piece is one
// stream.Run on that board's link: INFO checked against the model
// (stream.CheckFit), the bank uploaded unless the board already holds it
// (so once per board), every answer compared word for word with the golden
// model. A row keeps its seed whichever board runs it (seed = Config.Seed
// + its row id, as in stream.Run), so the answers are the ones one board
// would give.
//
// A board that fails (its stream.Run returns an error, or leaves rows
// unanswered: the link hung up, the board stopped answering until the
// driver's deadline) is dropped: the rows of its piece that it answered
// are kept, the others go to the front of the queue for the remaining
// boards. No row is answered twice (a row is only re-sent when its board
// gave no answer for it) and none is lost while a board works. When every
// board has failed, the rows left are reported lost.
//
// The Summary is a stream.Summary over all rows in input order (counts,
// per-row results, the metrics over the verified rows) with Boards, one
// report per link, and Resent, the rows re-sent after their board failed.
package multi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/golden/metrics"
	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
)

// Config configures Run.
type Config struct {
	// Stream is the configuration of every board's session; its RowIDs
	// and Labels (when set) are those of all rows, its Progress counts
	// the answered rows of all boards.
	Stream stream.Config
	// Piece is the number of rows a board takes at a time (0: the rows
	// divided by 8 per board, 16..512).
	Piece int
}

// BoardReport is what one board did.
type BoardReport struct {
	Link      string  `json:"link"`
	Queries   int     `json:"queries"`    // rows it answered
	Pieces    int     `json:"pieces"`     // pieces it ran
	Uploaded  bool    `json:"uploaded"`   // it got the bank uploaded
	UploadS   float64 `json:"upload_s"`   // upload wall time
	StreamS   float64 `json:"stream_s"`   // wall time of its pieces' streams (stream.Summary.WallS summed)
	Retries   uint64  `json:"retries"`    // resends on its link
	CRCErrors uint64  `json:"crc_errors"` // frames dropped for a bad CRC on its link
	// Failed says why it was dropped ("" when it worked to the end);
	// Unanswered counts the rows it left, re-sent to the other boards.
	Failed     string `json:"failed,omitempty"`
	Unanswered int    `json:"unanswered,omitempty"`
	// CountersReset: the board's STATUS counters went backwards during
	// one of its pieces (stream.Board.CountersReset).
	CountersReset bool `json:"counters_reset,omitempty"`
}

// Summary is the result of a stream over several boards.
type Summary struct {
	stream.Summary
	Boards []BoardReport `json:"boards"`
	// Resent counts the rows re-sent to another board after theirs
	// failed.
	Resent int `json:"resent"`
}

// piece is a run of row positions (indices into the rows given to Run).
type piece []int

// queue hands out pieces to the boards' workers; a piece whose board
// failed comes back to its front.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	pieces []piece
	busy   int // pieces taken and not yet returned
	stop   bool
}

// take returns the next piece, waiting while the queue is empty but a
// piece is still out (it may come back); false when there is no more
// work or the stream was stopped.
func (q *queue) take() (piece, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pieces) == 0 && q.busy > 0 && !q.stop {
		q.cond.Wait()
	}
	if q.stop || len(q.pieces) == 0 {
		return nil, false
	}
	p := q.pieces[0]
	q.pieces = q.pieces[1:]
	q.busy++
	return p, true
}

// done returns a taken piece's unanswered rows (if any) to the front.
func (q *queue) done(again piece) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.busy--
	if len(again) > 0 {
		q.pieces = append([]piece{again}, q.pieces...)
	}
	q.cond.Broadcast()
}

func (q *queue) halt() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stop = true
	q.cond.Broadcast()
}

// left returns the rows never answered.
func (q *queue) left() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []int
	for _, p := range q.pieces {
		out = append(out, p...)
	}
	return out
}

// Run streams rows over the boards behind links with the model of f
// (hash: modelfile.Read's second result, or ""). Every row is answered by
// exactly one board; see the package documentation. On an error after
// streaming began the partial summary is returned too.
func Run(ctx context.Context, links []transport.Transport, f *modelfile.File, hash string, rows [][]float64, cfg Config) (*Summary, error) {
	if len(links) == 0 {
		return nil, fmt.Errorf("multi: no board links")
	}
	sc := cfg.Stream
	if sc.RowIDs != nil && len(sc.RowIDs) != len(rows) {
		return nil, fmt.Errorf("multi: %d row ids for %d rows", len(sc.RowIDs), len(rows))
	}
	if sc.Labels != nil && len(sc.Labels) != len(rows) {
		return nil, fmt.Errorf("multi: %d labels for %d rows", len(sc.Labels), len(rows))
	}
	if sc.Bins <= 0 {
		sc.Bins = metrics.DefaultBins
	}
	n := cfg.Piece
	if n <= 0 {
		n = min(max(len(rows)/(8*len(links)), 16), 512)
	}
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	for i := 0; i < len(rows); i += n {
		p := make(piece, 0, n)
		for j := i; j < min(i+n, len(rows)); j++ {
			p = append(p, j)
		}
		q.pieces = append(q.pieces, p)
	}
	stopWatch := context.AfterFunc(ctx, q.halt)
	defer stopWatch()

	res := make([]*stream.Row, len(rows))
	var mu sync.Mutex // guards res, out's counters and reports
	out := &Summary{Boards: make([]BoardReport, len(links))}
	var answered atomic.Int64
	var firstBoard *stream.Board
	var errs []error
	var wg sync.WaitGroup
	start := time.Now()
	for b, t := range links {
		rep := &out.Boards[b]
		rep.Link = t.Name()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				p, ok := q.take()
				if !ok {
					return
				}
				pc := sc
				pc.RowIDs, pc.Labels = make([]int, len(p)), nil
				if sc.Labels != nil {
					pc.Labels = make([]int, len(p))
				}
				X := make([][]float64, len(p))
				for k, i := range p {
					X[k], pc.RowIDs[k] = rows[i], rowID(sc, i)
					if sc.Labels != nil {
						pc.Labels[k] = sc.Labels[i]
					}
				}
				var seen atomic.Int64
				pc.Progress = func(done, total int) {
					if sc.Progress != nil {
						prev := seen.Swap(int64(done))
						sc.Progress(int(answered.Add(int64(done)-prev)), len(rows))
					}
				}
				s, err := stream.Run(ctx, t, f, hash, X, pc)
				answered.Add(-seen.Load()) // replaced by the rows kept below
				var again piece
				mu.Lock()
				rep.Pieces++
				if s == nil {
					again = p
				} else {
					if firstBoard == nil {
						firstBoard = &s.Board
					}
					rep.Uploaded = rep.Uploaded || s.Board.Uploaded
					rep.UploadS += s.Board.UploadS
					rep.StreamS += s.WallS
					rep.Retries += s.Retries
					rep.CRCErrors += s.CRCErrors
					rep.CountersReset = rep.CountersReset || s.Board.CountersReset
					out.Retries += s.Retries
					out.CRCErrors += s.CRCErrors
					out.Timeouts += s.Timeouts
					out.Busy += s.Busy
					out.LateDuplicates += s.LateDuplicates
					out.FramingErrors += s.FramingErrors
					out.CRCMatched += s.CRCMatched
					out.BytesSent += s.BytesSent
					out.BytesReceived += s.BytesReceived
					out.Duplicated += s.Duplicated
					if out.FirstMismatch == "" {
						out.FirstMismatch = s.FirstMismatch
					}
					for k := range s.Rows {
						r := &s.Rows[k]
						i := p[k]
						switch r.Status {
						case stream.StatusLost:
							again = append(again, i)
						case stream.StatusNotRun:
						default:
							if res[i] != nil {
								out.Duplicated++
								continue
							}
							res[i] = r
							rep.Queries++
						}
					}
				}
				answered.Add(int64(len(p) - len(again)))
				if err == nil && len(again) > 0 {
					err = fmt.Errorf("%d rows unanswered", len(again))
				}
				if err != nil && ctx.Err() == nil {
					rep.Failed = err.Error()
					rep.Unanswered += len(again)
					out.Resent += len(again)
					errs = append(errs, fmt.Errorf("%s: %w", rep.Link, err))
				}
				mu.Unlock()
				q.done(again)
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)

	s := &out.Summary
	s.Requested = len(rows)
	s.Mode, s.K, s.Seed = sc.Mode.String(), sc.K, sc.Seed
	if sc.K == 0 {
		s.K = 100
	}
	s.WallS = wall.Seconds()
	if firstBoard != nil {
		s.Board = *firstBoard
	}
	names := make([]string, len(links))
	for b := range links {
		names[b] = links[b].Name()
	}
	s.Board.Link = strings.Join(names, ", ")
	s.Board.CountersReset = false
	for _, b := range out.Boards {
		s.Board.CountersReset = s.Board.CountersReset || b.CountersReset
	}
	left := map[int]bool{}
	for _, i := range q.left() {
		left[i] = true
	}
	var qs []metrics.QueryStats
	var labels []int
	s.Rows = make([]stream.Row, len(rows))
	for i := range rows {
		r := res[i]
		if r == nil {
			r = &stream.Row{Row: rowID(sc, i), Seed: sc.Seed + uint32(rowID(sc, i)), Pred: -1,
				Entropy: stream.Num(math.NaN()), MutualInfo: stream.Num(math.NaN())}
			if sc.Labels != nil {
				y := sc.Labels[i]
				r.Label = &y
			}
			if ctx.Err() != nil {
				s.NotRun++
				r.Status, r.Error = stream.StatusNotRun, "not run: the stream was stopped"
			} else {
				s.Lost++
				r.Status, r.Error = stream.StatusLost, "no answer: every board failed"
				if left[i] {
					r.Error = "not run: every board had failed"
				}
			}
			s.Rows[i] = *r
			continue
		}
		s.Rows[i] = *r
		s.Queries++
		switch {
		case r.Status == stream.StatusMismatch:
			s.Mismatches++
		case r.Status == stream.StatusOK:
			s.Verified++
			if r.CRCMatched {
				s.VerifiedByCRC++
			}
			if sc.Labels != nil && len(r.Probs) > 0 {
				qs = append(qs, rowQuery(r))
				labels = append(labels, sc.Labels[i])
			}
		}
	}
	if sc.Labels != nil {
		rep := metrics.Evaluate(qs, labels, sc.Bins)
		s.Metrics = &stream.Metrics{N: rep.N, Bins: sc.Bins, Accuracy: stream.Num(rep.Accuracy), ECE: stream.Num(rep.ECE), NLL: stream.Num(rep.NLL),
			Brier: stream.Num(rep.Brier), AUROCEntropy: stream.Num(rep.AUROCEntropy), AUROCMI: stream.Num(rep.AUROCMI),
			EntropyCorrect: stream.Num(rep.EntropyCorrect), EntropyIncorrect: stream.Num(rep.EntropyIncorrect),
			MICorrect: stream.Num(rep.MICorrect), MIIncorrect: stream.Num(rep.MIIncorrect)}
	}
	if wall > 0 {
		s.QueriesPerS = float64(s.Queries) / wall.Seconds()
	}
	switch {
	case ctx.Err() != nil:
		return out, fmt.Errorf("multi: %w", ctx.Err())
	case s.Lost > 0:
		return out, fmt.Errorf("multi: every board failed, %d rows unanswered: %w", s.Lost, errors.Join(errs...))
	}
	return out, nil
}

// rowID is row i's id: its position, or Config.RowIDs[i].
func rowID(c stream.Config, i int) int {
	if c.RowIDs != nil {
		return c.RowIDs[i]
	}
	return i
}

// rowQuery rebuilds the query statistics the metrics need from a verified
// row: its predictive mean, entropy, mutual information and prediction.
func rowQuery(r *stream.Row) metrics.QueryStats {
	q := metrics.QueryStats{Mean: r.Probs, Entropy: float64(r.Entropy), MutualInfo: float64(r.MutualInfo), Pred: r.Pred}
	if r.Pred >= 0 && r.Pred < len(r.Probs) {
		q.Conf = r.Probs[r.Pred]
	}
	return q
}
