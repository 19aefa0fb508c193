package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/modelfile"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/hw/refmodel"
	"github.com/ptmhw/ptm/internal/testenv"
	"github.com/ptmhw/ptm/sim/board"
)

// TestStreamTwoBoards: `ptm stream --uart A --uart B` on two Verilated
// boards for the shipped Iris model (the bank uploaded by the host, the
// build sim/board's tests cache) answers every test row once, equal to
// the golden model, and reports both boards.
func TestStreamTwoBoards(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	if _, err := exec.LookPath("verilator"); err != nil {
		t.Skip("verilator not on PATH")
	}
	m, err := refmodel.Iris()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "iris.ptm")
	if _, err := modelfile.Write(path, m.File); err != nil {
		t.Fatal(err)
	}
	var uarts []string
	for range 2 {
		o := board.DefaultOptions()
		o.Bank, o.ModelHash = m.Bank, m.Hash
		o.Config = hw.Config{Bits: m.Bank.Bits, LFSRWidth: 32, Lanes: 8, MaxK: 255}
		o.StartTimeout = testenv.Scale(10 * time.Minute)
		p, err := board.Start(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Stop() })
		uarts = append(uarts, p.UART)
	}
	code, out, errs := runCLI("stream", "--uart", uarts[0], "--uart", uarts[1], "--model", path, "--data", "iris", "--split", "test", "--samples", "20", "--json")
	if code != 0 {
		t.Fatalf("ptm stream over two boards: exit %d: %s%s", code, out, errs)
	}
	var j streamBoardsJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if j.Requested != 30 || j.Queries != 30 || j.Verified != 30 || j.Lost != 0 || j.Duplicated != 0 || j.Mismatches != 0 || len(j.Boards) != 2 {
		t.Fatalf("summary %+v", j)
	}
	for _, b := range j.Boards {
		if b.Queries == 0 || b.Failed != "" {
			t.Errorf("board %+v", b)
		}
	}
	t.Logf("two boards: %d rows at %.1f queries/s; boards %+v", j.Queries, j.QueriesPerS, j.Boards)
}
