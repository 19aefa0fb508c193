//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/softboard"
)

// TestStreamCountersResetReported: a RESET_STATUS reaching the board
// mid-stream (a second host, a board reset) is reported as a counter
// reset, in the text summary and in --json, and no counter or utilization
// is computed across it (issue 31 item 6: utilization 10.00, counters near
// 4.29e9).
func TestStreamCountersResetReported(t *testing.T) {
	model := tinyIrisModel(t, t.TempDir())
	port, b := softboardPTY(t, model)
	b.SetExecTime(2 * time.Millisecond)
	for _, asJSON := range []bool{false, true} {
		// Reset the board's counters once 20 more rows have run.
		done := resetCountersAfter(b, 20)
		args := []string{"stream", "--uart", port, "--model", model, "--data", "iris", "--split", "all", "--samples", "5"}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, errs := runCLI(args...)
		<-done
		if code != 0 {
			t.Fatalf("stream: exit %d\n%s\n%s", code, out, errs)
		}
		if !asJSON {
			if !strings.Contains(out, "board counters reset during the stream") || !strings.Contains(out, "(measured by: host)") {
				t.Errorf("the text summary does not report the reset:\n%s", out)
			}
			continue
		}
		var j struct {
			Reset       bool     `json:"board_counters_reset"`
			Utilization float64  `json:"link_utilization"`
			Source      string   `json:"link_utilization_source"`
			Warnings    []string `json:"warnings"`
			Verified    int      `json:"verified"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("--json: %v\n%s", err, out)
		}
		if !j.Reset || j.Source != "host" || len(j.Warnings) == 0 || j.Verified != 150 {
			t.Errorf("--json after a reset: %+v", j)
		}
	}
}

// resetCountersAfter clears b's STATUS counters (RESET_STATUS, as a
// second host would) once it has inferred rows more rows than now; the
// channel closes when it did, or after 10 minutes without.
func resetCountersAfter(b *softboard.Board, rows uint32) <-chan struct{} {
	inferred := func() uint32 { return b.Status().Counters[frame.CounterInferred] }
	before := inferred()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if inferred() >= before+rows {
				b.Execute(nil, frame.Frame{Type: frame.TypeResetStatus, Seq: 0xbeef})
				return
			}
		}
	}()
	return done
}

// TestStreamInterruptProgress: SIGINT in the middle of a stream stops it
// with its summary, the rows not sent counted as not run (not lost), and
// the progress shown no further than the rows done (issue 31 item 9: the
// bar jumped to 150/150 as the cancelled rows came back).
func TestStreamInterruptProgress(t *testing.T) {
	model := tinyIrisModel(t, t.TempDir())
	port, b := softboardPTY(t, model)
	b.SetExecTime(20 * time.Millisecond)
	inferred := func() uint32 { return b.Status().Counters[frame.CounterInferred] }
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "stream", "--uart", port, "--model", model, "--data", "iris", "--split", "all", "--samples", "5")
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	before := inferred()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Past the progress delay (1 s) with rows left: 60 rows of 8 sets
	// take 1.2 s at 20 ms each.
	for inferred() < before+8*60 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	t.Logf("stdout:\n%s\nstderr:\n%s", so.String(), se.String())
	if err == nil || !strings.Contains(so.String(), "not run (the stream was interrupted)") || !strings.Contains(so.String(), "lost 0,") {
		t.Errorf("interrupted stream: %v: want its summary, lost 0 and the rows not run", err)
	}
	if strings.Contains(se.String(), "150/150") {
		t.Errorf("the progress reached 150/150 in an interrupted stream")
	}
}

// TestStreamBoardsCountersReset: over several boards, a board whose
// counters are cleared during one of its pieces is named in the text
// summary, and the run's JSON says the counters reset (the single-board
// line above; before, the multi-board summary dropped it).
func TestStreamBoardsCountersReset(t *testing.T) {
	model := tinyIrisModel(t, t.TempDir())
	portA, a := softboardPTY(t, model)
	portB, b := softboardPTY(t, model)
	a.SetExecTime(2 * time.Millisecond)
	b.SetExecTime(2 * time.Millisecond)
	for _, asJSON := range []bool{false, true} {
		// Reset board B's counters 5 rows into its first piece.
		done := resetCountersAfter(b, 5)
		args := []string{"stream", "--uart", portA, "--uart", portB, "--model", model, "--data", "iris", "--split", "all", "--samples", "5"}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, errs := runCLI(args...)
		<-done
		if code != 0 {
			t.Fatalf("stream: exit %d\n%s\n%s", code, out, errs)
		}
		if !asJSON {
			if !strings.Contains(out, "board counters reset during the stream") || strings.Count(out, "its counters reset during the stream") != 1 {
				t.Errorf("the text summary does not name the one board whose counters reset:\n%s", out)
			}
			continue
		}
		var j struct {
			Reset  bool `json:"board_counters_reset"`
			Boards []struct {
				Link  string `json:"link"`
				Reset bool   `json:"counters_reset"`
			} `json:"boards"`
			Verified int `json:"verified"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("--json: %v\n%s", err, out)
		}
		resets := 0
		for _, bd := range j.Boards {
			if bd.Reset {
				resets++
			}
		}
		if !j.Reset || len(j.Boards) != 2 || resets != 1 || j.Verified != 150 {
			t.Errorf("--json after a reset of one board: %+v", j)
		}
	}
}
