package board

import (
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/conformance"
	"github.com/ptmhw/ptm/host/transport"
	"github.com/ptmhw/ptm/internal/testenv"
)

// TestConformance runs the host's conformance suite (host/conformance:
// upload, INFO, INFER against the golden model in both modes, malformed
// commands with the ERROR details host/softboard chose where the protocol
// leaves a choice, garbage resynchronization, STATUS) against the
// Verilated board through the host's own UART transport on the
// pseudo-terminal.
func TestConformance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	conformUART(t, false)
}

// conformUART runs the conformance suite over the UART of the Iris-shaped
// board, single-clock or (coreClock) dual-clock.
func conformUART(t *testing.T, coreClock bool) {
	t.Helper()
	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	o.CoreClock = coreClock
	p := start(t, o)
	tr, err := transport.OpenUART(p.UART, transport.UARTOpts{Baud: DefaultReportedBaud})
	if err != nil {
		t.Fatalf("opening the pty with host/transport: %v", err)
	}
	defer tr.Close()
	conform(t, tr)
}

// TestConformanceEthernet runs the same suite over Ethernet with the
// host's AF_PACKET transport, opened inside the board's network namespace.
// It needs root.
func TestConformanceEthernet(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	ns := needNetNS(t, "ptmconf")
	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	o.UART = false
	o.TAP = "ptmconf0"
	o.NetNS = ns
	p := start(t, o)
	conform(t, openEthernetIn(t, ns, p.TAP))
}

// conform runs host/conformance in strict mode on a transport.
func conform(t *testing.T, tr transport.Transport) {
	t.Helper()
	bank, err := fixed.RandomBank(irisShape, irisConfig.Bits, rand.New(rand.NewPCG(21, 22)).Uint64)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Check(testenv.Context(t), tr, bank, conformance.Opts{Strict: true, Queries: 20})
	if err != nil {
		t.Fatalf("conformance: %v\n%v", err, rep)
	}
	for _, f := range rep.Failed() {
		t.Errorf("%s: %s", f.Name, f.Detail)
	}
	t.Logf("\n%s", rep)
}
