package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/host/multi"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/outfile"
)

// linkFlag is a repeatable link flag (--uart, --eth): one value per
// board.
type linkFlag []string

func (l *linkFlag) String() string { return strings.Join(*l, ",") }

func (l *linkFlag) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty link")
	}
	*l = append(*l, v)
	return nil
}

// Repeatable tells parse that the flag may be given more than once.
func (l *linkFlag) Repeatable() bool { return true }

// one returns the single value (or "") for the one-board path.
func (l linkFlag) one() *string {
	s := ""
	if len(l) > 0 {
		s = l[0]
	}
	return &s
}

// linkSpecs returns the transport specs of every --uart and --eth, each
// once.
func linkSpecs(uarts, eths linkFlag) ([]string, error) {
	var specs []string
	seen := map[string]bool{}
	for _, u := range uarts {
		sp := "uart:" + u
		if strings.HasPrefix(u, "uart:") {
			sp = u
		}
		specs = append(specs, sp)
	}
	for _, e := range eths {
		specs = append(specs, "eth:"+e)
	}
	for _, sp := range specs {
		key, _, _ := strings.Cut(sp, "@")
		if seen[key] {
			return nil, fmt.Errorf("%w: %s given twice: one link per board", errUsage, key)
		}
		seen[key] = true
	}
	return specs, nil
}

// streamBoardsJSON is the summary `ptm stream --json` prints for several
// boards: the one-board fields over all rows, then each board's share.
type streamBoardsJSON struct {
	streamJSON
	Boards []multi.BoardReport `json:"boards"`
	Resent int                 `json:"resent"`
}

// streamBoards streams X over several boards (host/multi) and reports
// like the one-board path, with a line per board.
func streamBoards(uarts, eths linkFlag, f *modelfile.File, hash string, X [][]float64, cfg stream.Config, asJSON bool, outFile *outfile.File, stdout, stderr io.Writer) error {
	specs, err := linkSpecs(uarts, eths)
	if err != nil {
		return err
	}
	var links []transport.Transport
	defer func() {
		for _, t := range links {
			t.Close()
		}
	}()
	for _, sp := range specs {
		t, err := transport.Open(sp)
		if err != nil {
			return err
		}
		links = append(links, t)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newProgress(stderr, fmt.Sprintf("streaming over %d boards", len(links)))
	cfg.Progress = bar.update
	sum, err := multi.Run(ctx, links, f, hash, X, multi.Config{Stream: cfg})
	bar.end()
	var outErr error
	if sum != nil && outFile != nil {
		outErr = writeOut(outFile, sum)
	}
	if sum == nil {
		return errors.Join(err, outErr)
	}
	s := &sum.Summary
	j := streamBoardsJSON{streamJSON: streamJSON{
		Queries: s.Queries, Requested: s.Requested, Verified: s.Verified, VerifiedByCRC: s.VerifiedByCRC, Lost: s.Lost, Duplicated: s.Duplicated,
		Mismatches: s.Mismatches, Retries: s.Retries, CRCErrors: s.CRCErrors, QueriesPerS: s.QueriesPerS, FirstMismatch: s.FirstMismatch,
		Link: s.Board.Link, Mode: s.Mode, K: s.K, WallS: s.WallS, Metrics: s.Metrics, NotRun: s.NotRun,
		CountersReset: s.Board.CountersReset,
	}, Boards: sum.Boards, Resent: sum.Resent}
	for _, b := range sum.Boards {
		j.Uploaded = j.Uploaded || b.Uploaded
		j.UploadS = max(j.UploadS, b.UploadS)
	}
	if asJSON {
		if err := writeJSON(stdout, j); err != nil {
			return err
		}
	} else {
		printStream(stdout, j.streamJSON)
		for _, b := range sum.Boards {
			fmt.Fprintf(stdout, "  board %s: %d rows in %d pieces, %.2fs streaming (%.0f queries/s), uploaded %v, retries %d", b.Link, b.Queries, b.Pieces, b.StreamS,
				float64(b.Queries)/max(b.StreamS, 1e-9), b.Uploaded, b.Retries)
			if b.Failed != "" {
				fmt.Fprintf(stdout, "; dropped (%s), %d rows re-sent to the others", b.Failed, b.Unanswered)
			}
			if b.CountersReset {
				fmt.Fprintf(stdout, "; its counters reset during the stream")
			}
			fmt.Fprintln(stdout)
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.Join(fmt.Errorf("interrupted: %d rows not run (%d answered): %w", s.NotRun, s.Queries, err), outErr)
		}
		return errors.Join(err, outErr)
	}
	if s.Lost > 0 || s.Duplicated > 0 || s.Mismatches > 0 {
		return errors.Join(fmt.Errorf("%d lost, %d duplicated, %d results differ from the golden model", s.Lost, s.Duplicated, s.Mismatches), outErr)
	}
	return outErr
}
