package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/host/stream"
	"github.com/ptmhw/ptm/internal/testenv"
	"github.com/ptmhw/ptm/sim/board"
)

// verilatedBoardCLI starts `ptm board args...` (the Verilated board; this
// test binary as ptm) and returns the pseudo-terminal it prints; the board
// is stopped with SIGTERM when the test ends and must exit cleanly. The
// first run builds the simulator (minutes; cached afterwards).
func verilatedBoardCLI(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := board.VerilatorVersion(); err != nil {
		t.Skip(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Scale(30*time.Minute)) // a hang guard only
	cmd := exec.CommandContext(ctx, exe, append([]string{"board"}, args...)...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	port := ""
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "UART: "); ok {
			port = p
			break
		}
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		cancel()
		if err != nil {
			t.Errorf("ptm board after SIGTERM: %v\n%s", err, stderr.String())
		} else {
			t.Logf("ptm board: %s", strings.TrimSpace(stderr.String()))
		}
	})
	if port == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("ptm board printed no UART line: %s", stderr.String())
	}
	return port
}

// TestBoardStreamMNIST: a convolutional model trained by `ptm train` on
// 300 MNIST images (16 clauses, 1 epoch), `ptm board --model` (the
// Verilated convolutional board, protocol 7, UART only) and `ptm stream
// --data DIR` of its 24 test images at K = 16 in every mode: every answer
// verified against the golden core (0 lost, 0 mismatches), and in sums
// mode every row's prediction, probabilities, entropy and mutual
// information equal `ptm eval --fixed --per-query` with the same seed.
func TestBoardStreamMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	testenv.Heartbeat(t, 0)
	dir := mnistSubset(t, 300, 24)
	tmp := t.TempDir()
	model := filepath.Join(tmp, "m.ptm")
	start := time.Now()
	if code, _, errs := runCLI("train", "--data", dir, "--clauses", "16", "-T", "100", "--epochs", "1", "--val-rows", "40", "--workers", "2", "-o", model); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	t.Logf("[progress] trained in %.1fs (load %s)", time.Since(start).Seconds(), testenv.LoadString())
	f, _, err := modelfile.ReadConv(model)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	port := verilatedBoardCLI(t, "--model", model, "--no-eth", "--baud", "3000000")
	t.Logf("[progress] board up in %.1fs (load %s)", time.Since(start).Seconds(), testenv.LoadString())
	for _, mode := range []string{"sums", "samples", "stats", "votes"} {
		res := filepath.Join(tmp, mode+".json")
		start = time.Now()
		code, out, errs := runCLI("stream", "--uart", port+"@3000000", "--model", model, "--data", dir, "--samples", "16", "--seed", "4", "--mode", mode, "--json", "--out", res)
		if code != 0 {
			t.Fatalf("stream --mode %s: exit %d: %s\n%s", mode, code, errs, out)
		}
		var j streamJSON
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		t.Logf("[progress] %s mode: %d verified of %d, %d mismatches, %.1f queries/s (simulated board), uploaded %v, %.1fs (load %s)",
			mode, j.Verified, j.Requested, j.Mismatches, j.QueriesPerS, j.Uploaded, time.Since(start).Seconds(), testenv.LoadString())
		if j.Requested != 24 || j.Verified != 24 || j.Lost != 0 || j.Mismatches != 0 || j.K != 16 || j.Mode != mode || j.Uploaded != (mode == "sums") {
			t.Fatalf("stream --mode %s summary %+v", mode, j)
		}
		if mode != "sums" {
			continue
		}
		var sum stream.Summary
		raw, err := os.ReadFile(res)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &sum); err != nil {
			t.Fatal(err)
		}
		pq := filepath.Join(tmp, "eval.csv")
		if code, _, errs := runCLI("eval", "--model", model, "--data", dir, "--fixed", "--samples", "16", "--seed", "4", "--per-query", pq); code != 0 {
			t.Fatalf("eval --fixed: exit %d: %s", code, errs)
		}
		fh, err := os.Open(pq)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(sum.Rows)+1 || len(sum.Rows) != 24 {
			t.Fatalf("eval wrote %d rows, stream %d", len(recs)-1, len(sum.Rows))
		}
		ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
		for i, r := range sum.Rows {
			e := recs[i+1]
			got := []string{strconv.Itoa(r.Row + 1), f.Classes[*r.Label], f.Classes[r.Pred], ff(r.Probs[r.Pred]), ff(float64(r.Entropy)), ff(float64(r.MutualInfo))}
			for k, w := range got {
				if e[k] != w {
					t.Fatalf("row %d: Verilated board %v, eval --fixed %v (column %s)", r.Row, got, e[:6], recs[0][k])
				}
			}
			for c, p := range r.Probs {
				if e[7+c] != ff(p) {
					t.Fatalf("row %d class %d: Verilated board %s, eval --fixed %s", r.Row, c, ff(p), e[7+c])
				}
			}
		}
	}
}
