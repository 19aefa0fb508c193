//go:build linux

package transport_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/driver"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

const netnsEnv = "PTM_HOST_NETNS_CHILD"

// TestEthernetNetns runs the Ethernet transport against a softboard on a
// veth pair inside a private network namespace: the test binary re-runs
// itself under "unshare -n" (root needed), creates veth0 (host) and veth1
// (board, MAC 02:50:54:4D:00:01), serves the board on a raw AF_PACKET
// socket on veth1 and drives it through gopacket/afpacket on veth0.
func TestEthernetNetns(t *testing.T) {
	if os.Getenv(netnsEnv) == "" {
		if os.Geteuid() != 0 {
			t.Skip("Ethernet test skipped: needs root (raw sockets and a network namespace); run go test as root")
		}
		for _, tool := range []string{"unshare", "ip"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("Ethernet test skipped: %s not found", tool)
			}
		}
		if _, err := transport.OpenEthernet(transport.EthernetOpts{Interface: "lo"}); err != nil && strings.Contains(err.Error(), "cgo") {
			t.Skipf("Ethernet test skipped: %v", err)
		}
		cmd := exec.Command("unshare", "-n", os.Args[0], "-test.run=^TestEthernetNetns$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), netnsEnv+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("in a new network namespace:\n%s", out)
		if err != nil {
			if strings.Contains(string(out), "unshare failed") || strings.Contains(string(out), "Operation not permitted") {
				t.Skipf("Ethernet test skipped: cannot create a network namespace: %v", err)
			}
			t.Fatalf("child: %v", err)
		}
		return
	}
	for _, args := range [][]string{
		{"link", "add", "veth0", "type", "veth", "peer", "name", "veth1"},
		{"link", "set", "veth1", "address", "02:50:54:4d:00:01"},
		{"link", "set", "veth0", "up"},
		{"link", "set", "veth1", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	sh := testmodel.Multiclass
	board, err := softboard.New(softboard.Config{Shape: sh, HW: testmodel.HW, QueueFrames: 4})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := softboard.OpenRawEthernet("veth1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bctx, bcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- board.ServeEthernet(bctx, raw, transport.DefaultBoardMAC) }()
	defer func() {
		bcancel()
		if err := <-done; err != nil {
			t.Errorf("board: %v", err)
		}
	}()
	eth, err := transport.OpenEthernet(transport.EthernetOpts{Interface: "veth0"})
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	d := driver.New(eth, driver.Opts{})
	defer d.Close()
	in, err := d.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.BitRate != 0 || in.Shape() != sh {
		t.Fatalf("INFO %v", in)
	}
	// The board's MAC drops a frame of another EtherType and a frame for
	// another address (sent from a second raw socket on the host side).
	hostRaw, err := softboard.OpenRawEthernet("veth0")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := frame.Append(nil, frame.TypeInfo, 0, 7, nil)
	ethFrame := func(dst, src []byte, typ uint16, payload []byte) []byte {
		b := append(append(append([]byte(nil), dst...), src...), byte(typ>>8), byte(typ))
		b = append(b, payload...)
		for len(b) < 60 {
			b = append(b, 0)
		}
		return b
	}
	for _, f := range [][]byte{
		ethFrame(transport.DefaultBoardMAC, eth.LocalMAC(), 0x88b6, info),
		ethFrame([]byte{0x02, 0x50, 0x54, 0x4d, 0x00, 0x02}, eth.LocalMAC(), transport.EtherType, info),
	} {
		if err := hostRaw.WritePacket(f); err != nil {
			t.Fatal(err)
		}
	}
	hostRaw.Close()
	// The host ignores a protocol frame from another source MAC.
	resp, _ := frame.Append(nil, frame.TypeInfo.Response(), 0, 7, make([]byte, 72))
	if err := raw.WritePacket(ethFrame(eth.LocalMAC(), []byte{0x02, 0x50, 0x54, 0x4d, 0x00, 0x09}, transport.EtherType, resp)); err != nil {
		t.Fatal(err)
	}
	bank := testmodel.Bank(sh, testmodel.HW.Bits, 12)
	if err := d.Load(ctx, softboard.BankWords(bank, testmodel.HW)); err != nil {
		t.Fatal(err)
	}
	core, _ := fixed.NewCore(bank, testmodel.HW)
	n := 2000
	xs := testmodel.Features(n, sh.Features, 12)
	reqs := make([]driver.Request, n)
	for i, x := range xs {
		reqs[i] = driver.Request{Index: i, Features: frame.PackFeatures(nil, x), K: 8, Seed: uint32(i), Mode: frame.Mode(i % 2)}
	}
	start := time.Now()
	res, err := d.InferAll(ctx, reqs)
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("request %d: %v", i, r.Err)
		}
		sums, st, _ := core.Run(xs[i], 8, uint32(i), nil)
		want := []uint32{}
		if reqs[i].Mode == frame.ModeSamples {
			for _, v := range sums {
				want = append(want, uint32(v))
			}
		} else {
			for _, v := range st.Votes {
				want = append(want, uint32(v))
			}
			for _, v := range st.Sum {
				want = append(want, uint32(int32(v)))
			}
			for _, v := range st.SumSq {
				want = append(want, uint32(v))
			}
		}
		if len(want) != len(r.Words) {
			t.Fatalf("request %d: %d words, want %d", i, len(r.Words), len(want))
		}
		for k := range want {
			if want[k] != r.Words[k] {
				t.Fatalf("request %d word %d: %d, golden %d", i, k, r.Words[k], want[k])
			}
		}
	}
	st, err := d.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d queries in %v (%.0f/s); driver %+v; board %v", eth.Name(), n, wall.Round(time.Millisecond), float64(n)/wall.Seconds(), d.Stats(), st.Map())
	if st.Counters[frame.CounterInferred] < uint32(n) {
		t.Fatalf("board inferred %d", st.Counters[frame.CounterInferred])
	}
	if st.Counters[frame.CounterEthDropped] < 2 {
		t.Errorf("board dropped %d foreign frames, want at least 2", st.Counters[frame.CounterEthDropped])
	}
	// A request retried after a spurious timeout (the machine under load:
	// the RTO is about 20 ms) is answered twice and its late answer is
	// stray; more stray answers than retries would be frames the host
	// should have filtered (the foreign-MAC response above).
	if ds := d.Stats(); ds.Link.Filtered < 1 || ds.Stray > ds.Retries {
		t.Errorf("host filtered %d frames from another MAC, stray %d (retries %d)", ds.Link.Filtered, ds.Stray, ds.Retries)
	}
}
