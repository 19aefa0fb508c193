package main

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/golden/ptm"
	"github.com/ptmhw/ptm/host/trainboard"
	"github.com/ptmhw/ptm/host/transport"
)

// closeCounter is a link that counts its Close calls.
type closeCounter struct {
	transport.Transport
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return c.Transport.Close()
}

// TestTrainBoardClosesLink: `ptm train --board` closes its link when it
// returns, after a training and after refusing a board of another shape.
// It used to leave the link open (driver.Close does not close its
// transport): on a UART the stream's reader goroutine went on reading the
// device, so in TestTrainBoardCLI, whose three ptm commands run in one
// process on one Verilated board, the third command's TRAIN_INFO answers
// were read by the first command's leftover reader (two readers on one
// pty take turns), and the board seemed silent: "TRAIN_INFO ... 21
// transmissions over 5m0s", intermittently. Here the board is the
// software training board (host/trainboard.Soft), so the check is exact
// and needs no Verilator.
func TestTrainBoardClosesLink(t *testing.T) {
	p := ptm.Params{Clauses: 6, T: 10, S: 2, N: 8, Epochs: 1, Seed: 3, Feedback: ptm.ConsistentFeedback}
	var links []*closeCounter
	saved := openBoardLink
	t.Cleanup(func() { openBoardLink = saved })
	openBoardLink = func(spec string) (transport.Transport, error) {
		if spec != "soft" {
			t.Errorf("--board %q reached the link opener, want \"soft\"", spec)
		}
		soft, err := trainboard.NewSoft(fixedtrain.Config{Params: p}, 3, 24, false, 4)
		if err != nil {
			return nil, err
		}
		l := &closeCounter{Transport: soft}
		links = append(links, l)
		return l, nil
	}
	dir := t.TempDir()
	args := []string{"train", "--data", "iris", "--seed", "3", "--states", "8", "--epochs", "1", "--board", "soft"}
	code, out, errs := runCLI(append(args, "--clauses", "6", "-o", filepath.Join(dir, "board.ptm"))...)
	if code != 0 || !strings.Contains(out, "trained on the board: 5 models") {
		t.Fatalf("train --board: exit %d: %s%s", code, out, errs)
	}
	code, _, errs = runCLI(append(args, "--clauses", "7", "-o", filepath.Join(dir, "y.ptm"))...)
	if code == 0 || !strings.Contains(errs, "m=6") || !strings.Contains(errs, "m=7") {
		t.Errorf("train --board with another shape: exit %d: %s", code, errs)
	}
	if len(links) != 2 {
		t.Fatalf("%d links opened, want 2 (one per command)", len(links))
	}
	for i, l := range links {
		if n := l.closes.Load(); n != 1 {
			t.Errorf("command %d closed its link %d times, want once", i+1, n)
		}
	}
}
