//go:build linux

package stream_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/pty"
	"github.com/ptmhw/ptm/host/internal/race"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

// TestConvUARTFigures: 400 queries of the one-set model's 120 MNIST
// images at K = 16 over a pseudo-terminal with the line emulated at the nominal
// baud on both sides (softboard and host pacing, as TestUARTFigures):
// queries/s and the board's receive-line utilization. At 115,200 baud
// in votes mode the request line is the bound (119-byte requests,
// 31-byte answers: at most 96.8 queries/s); at 3 Mbaud (at most 2,521)
// the software board's core on this machine is. The utilization is
// asserted (>= 0.95 where the UART binds) only with PTM_TIMING_TESTS=1
// on a quiet machine.
func TestConvUARTFigures(t *testing.T) {
	fx := convModel(t, 1)
	// 400 queries: the 120 images again and again, each repeat with new
	// row ids (seeds).
	var images [][]uint8
	var labels, ids []int
	for r := 0; len(images) < 400; r++ {
		for i := range fx.images {
			images, labels, ids = append(images, fx.images[i]), append(labels, fx.labels[i]), append(ids, fx.ids[i]+1000*r)
		}
	}
	images, labels, ids = images[:400], labels[:400], ids[:400]
	for _, c := range []struct {
		baud int
		mode frame.Mode
	}{{115200, frame.ModeVotes}, {3000000, frame.ModeVotes}, {3000000, frame.ModeSums}} {
		t.Run(fmt.Sprintf("%d-%v", c.baud, c.mode), func(t *testing.T) {
			pair, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal: %v", err)
			}
			defer pair.Close()
			b := convBoard(t, fx, softboard.Config{BitRate: c.baud, QueueFrames: 31})
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			bctx, bcancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- b.Serve(bctx, pair.Master, softboard.StreamOpts{Pace: true}) }()
			defer func() {
				bcancel()
				<-done
			}()
			u, err := transport.OpenUART(pair.SlavePath, transport.UARTOpts{Baud: c.baud, Pace: true})
			if err != nil {
				t.Fatal(err)
			}
			defer u.Close()
			s, err := stream.RunConv(ctx, u, fx.f, "", images, stream.Config{K: 16, Mode: c.mode, Seed: 1, Labels: labels, RowIDs: ids})
			if err != nil {
				t.Fatal(err)
			}
			if s.Verified != len(images) || s.Lost != 0 || s.Mismatches != 0 {
				t.Fatalf("verified %d of %d, lost %d, mismatches %d", s.Verified, len(images), s.Lost, s.Mismatches)
			}
			req := float64(frame.Overhead + frame.InferHeaderLen + 98)
			ans := float64(frame.Overhead + s.Board.Info.ResultBytes(c.mode, 16))
			bound := float64(c.baud) / 10 / max(req, ans)
			t.Logf("%d baud (line emulated), %v mode, K = 16: %d images in %.3f s = %.0f queries/s (line bound %.0f: %.0f-byte requests, %.0f-byte answers); board receive line %.3f (%s), host estimate host->board %.3f, board->host %.3f; upload %.3f s (load %s)",
				c.baud, c.mode, s.Queries, s.WallS, s.QueriesPerS, bound, req, ans, s.LinkUtilization, s.LinkUtilSource, s.LinkUtilHost, s.LinkUtilRx, s.Board.UploadS, testenv.LoadString())
			timing := !race.Enabled && os.Getenv("PTM_TIMING_TESTS") != ""
			if c.baud == 115200 && s.LinkUtilization < 0.95 && timing {
				t.Errorf("board receive-line utilization %.3f (%s), want >= 0.95 where the UART binds", s.LinkUtilization, s.LinkUtilSource)
			}
		})
	}
}
