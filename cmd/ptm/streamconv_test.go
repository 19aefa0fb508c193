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
)

// softBoardCLI starts `ptm board --soft args...` (this test binary as
// ptm) and returns the pseudo-terminal it prints; the board is stopped
// with SIGTERM when the test ends and must exit cleanly.
func softBoardCLI(t *testing.T, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard only
	cmd := exec.CommandContext(ctx, exe, append([]string{"board", "--soft"}, args...)...)
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
			t.Errorf("ptm board --soft after SIGTERM: %v\n%s", err, stderr.String())
		} else {
			t.Logf("ptm board --soft: %s", strings.TrimSpace(stderr.String()))
		}
	})
	if port == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("ptm board --soft printed no UART line")
	}
	return port
}

// TestStreamMNISTEqualsEvalFixed: a convolutional model trained by `ptm
// train` on 400 MNIST images (32 clauses, 2 epochs), `ptm stream --data
// DIR` of its 120 test images at K = 16 to a blank convolutional
// software board, `ptm board --soft`, on a pseudo-terminal (protocol
// version 7: the bank uploaded, each image sent as one booleanized
// 98-byte plane) is
// verified against the golden core on every image, and every row's
// prediction, confidence, entropy and mutual information equal `ptm eval
// --fixed --per-query` with the same seed and lanes.
func TestStreamMNISTEqualsEvalFixed(t *testing.T) {
	dir := mnistSubset(t, 400, 120)
	tmp := t.TempDir()
	model := filepath.Join(tmp, "m.ptm")
	start := time.Now()
	if code, _, errs := runCLI("train", "--data", dir, "--clauses", "32", "-T", "100", "--epochs", "2", "--val-rows", "40", "--workers", "2", "-o", model); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	t.Logf("[progress] trained in %.1fs (load %s)", time.Since(start).Seconds(), testenv.LoadString())
	f, _, err := modelfile.ReadConv(model)
	if err != nil {
		t.Fatal(err)
	}
	port := softBoardCLI(t, "--model", model, "--baud", "3000000")
	res := filepath.Join(tmp, "stream.json")
	start = time.Now()
	code, out, errs := runCLI("stream", "--uart", port+"@3000000", "--model", model, "--data", dir, "--samples", "16", "--seed", "4", "--json", "--out", res)
	if code != 0 {
		t.Fatalf("stream: exit %d: %s\n%s", code, errs, out)
	}
	var j streamJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	t.Logf("[progress] streamed: %d verified of %d, %.0f queries/s, upload %.2fs, %.1fs (load %s)", j.Verified, j.Requested, j.QueriesPerS, j.UploadS, time.Since(start).Seconds(), testenv.LoadString())
	if j.Requested != 120 || j.Verified != 120 || j.Lost != 0 || j.Mismatches != 0 || !j.Uploaded || j.K != 16 || j.Mode != "sums" {
		t.Fatalf("stream summary %+v", j)
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
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(sum.Rows)+1 {
		t.Fatalf("eval wrote %d rows, stream %d", len(recs)-1, len(sum.Rows))
	}
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for i, r := range sum.Rows {
		e := recs[i+1]
		got := []string{strconv.Itoa(r.Row + 1), f.Classes[*r.Label], f.Classes[r.Pred], ff(r.Probs[r.Pred]), ff(float64(r.Entropy)), ff(float64(r.MutualInfo))}
		for k, w := range got {
			if e[k] != w {
				t.Fatalf("row %d: stream %v, eval --fixed %v (column %s)", r.Row, got, e[:6], recs[0][k])
			}
		}
		for c, p := range r.Probs {
			if e[7+c] != ff(p) {
				t.Fatalf("row %d class %d: stream %s, eval --fixed %s", r.Row, c, ff(p), e[7+c])
			}
		}
	}
}
