package conformance_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/conformance"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

// TestSoftboardConformsConv: the convolutional software board passes
// CheckConv (a blank board uploaded by the check, random images in every
// mode with 1..4 sets, windows), and Check refuses it for a tabular bank
// before touching its model.
func TestSoftboardConformsConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	h := conv.Head{Shape: conv.Shape{H: 9, W: 8, Planes: 2, WY: 4, WX: 3}, Structure: conv.Coalesced, Classes: 4, Clauses: 10, T: 300}
	for range h.Classes * h.Clauses {
		h.Weights = append(h.Weights, int32(rng.IntN(121)-60))
	}
	bank := &conv.Bank{Head: h, Bits: 4, Thresh: make([]uint32, h.TAs())}
	for k := range bank.Thresh {
		bank.Thresh[k] = uint32([]int{0, 0, 0, 0, 15, 12, 2, 7}[rng.IntN(8)])
	}
	hw := fixed.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 3, LiteralLanes: 9}
	head := h
	b, err := softboard.New(softboard.Config{Conv: &head, HW: hw, QueueFrames: 4})
	if err != nil {
		t.Fatal(err)
	}
	host, _, stop := b.Pipe(context.Background(), transport.StreamOpts{}, softboard.StreamOpts{}, nil)
	defer host.Close()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := conformance.CheckConv(ctx, host, bank, conformance.Opts{Strict: true, Queries: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Failed() {
		t.Errorf("%s: %s", f.Name, f.Detail)
	}
	if len(rep.Results) < 15 {
		t.Errorf("only %d checks ran:\n%s", len(rep.Results), rep)
	}
	if testing.Verbose() {
		t.Logf("\n%s", rep)
	}
	tab := fixed.Shape{Classes: 4, TMs: 4, Clauses: 10, Features: 144, T: 300}
	_, err = conformance.Check(ctx, host, &fixed.Bank{Shape: tab, Bits: 4, Thresh: make([]uint32, tab.TAs())}, conformance.Opts{})
	if err == nil || !strings.Contains(err.Error(), "does not fit the board") {
		t.Errorf("Check with a tabular bank on a convolutional board: %v", err)
	}
}
