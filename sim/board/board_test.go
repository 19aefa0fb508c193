package board

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
	"github.com/ptmhw/ptm/internal/testenv"
)

// The end-to-end tests share one simulator build: an Iris-like shape
// (3 classes, 20 clauses per class, 16 Boolean features) on 8 lanes.
var (
	irisShape  = fixed.Shape{Classes: 3, TMs: 3, Clauses: 20, Features: 16, T: 10}
	irisConfig = hw.Config{Bits: 8, LFSRWidth: 32, Lanes: 8, MaxK: 255}
)

func needVerilator(t *testing.T) {
	t.Helper()
	if _, err := VerilatorVersion(); err != nil {
		if testing.Short() {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// start starts a board and stops it at the end of the test; its stderr
// goes to the test log.
func start(t *testing.T, o Options) *Process {
	t.Helper()
	needVerilator(t)
	o.Log = testWriter{t}
	if o.StartTimeout == 0 {
		o.StartTimeout = testenv.Scale(10 * time.Minute)
	}
	t0 := time.Now()
	p, err := Start(context.Background(), o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("board started in %v (cached build: %v) uart=%q tap=%q", time.Since(t0).Round(time.Millisecond),
		p.Build.Cached, p.UART, p.TAP)
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		s := p.Stats()
		t.Logf("simulator: %d cycles in %.2f s active (%.2f s wall): %.2f M cycles/s; %v", s.Cycles,
			s.ActiveSeconds, s.WallSeconds, s.CyclesPerSecond/1e6, s.Raw)
	})
	return p
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// openPty opens the board's UART in raw mode (non-blocking, so read
// deadlines work).
func openPty(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the UART pty: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var rawErr error
	if err := rc.Control(func(fd uintptr) { _, rawErr = term.MakeRaw(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	if rawErr != nil {
		t.Fatalf("raw mode: %v", rawErr)
	}
	return f
}

func infoCheck(t *testing.T, h *host, d *hw.Design, uart bool, loaded bool, crc uint32, baud uint32) {
	t.Helper()
	r, err := h.call(tInfo, nil)
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	w := words(r.payload)
	if r.typ != 0x81 || len(w) != 20 {
		t.Fatalf("INFO: type 0x%02x, %d words", r.typ, len(w))
	}
	rom := d.InfoWords()
	want := []uint32{0x424D5450, 6, hw.GenVersion()} // protocol version 6
	want = append(want, rom[1:13]...)
	l := uint32(0)
	if loaded {
		l = 1
	} else {
		crc = 0
	}
	want = append(want, l, crc, 0, 1, hw.DefaultSetsMax)
	if uart {
		want[17] = baud
		want[18] = 31 // board_top's UART_FRAMES (32 frames held in proto_rx's queue) - 1
	}
	for i := range want {
		if w[i] != want[i] {
			t.Errorf("INFO word %d = %#x, want %#x", i, w[i], want[i])
		}
	}
}

// upload sends the bank with LOAD_BEGIN, LOAD_DATA (chunks of up to 510
// words, some retransmitted) and LOAD_COMMIT, and returns its CRC.
func upload(t *testing.T, h *host, b *fixed.Bank, hwp fixed.HW, rng *rand.Rand) uint32 {
	t.Helper()
	var data []byte
	for _, w := range hw.BankWords(b, hwp) {
		data = binary.LittleEndian.AppendUint16(data, w)
	}
	n := uint32(len(data) / 2)
	if r, err := h.call(tBegin, u32s(n)); err != nil || r.typ != 0x82 || len(r.payload) != 0 { // version 5: empty
		t.Fatalf("LOAD_BEGIN: %v, type 0x%02x %x", err, r.typ, r.payload)
	}
	for off := uint32(0); off < n; {
		c := min(n-off, uint32(1+rng.IntN(510)))
		p := append(u32s(off), data[2*off:2*(off+c)]...)
		for rep := 0; rep < 1+rng.IntN(2); rep++ { // sometimes a retransmission
			r, err := h.call(tData, p)
			if rep > 0 {
				// protocol version 4 and 5: a resend of written words is
				// answered ERROR 6 with the next offset, past its end
				if err != nil || r.typ != 0xE0 || len(r.payload) != 8 || r.payload[0] != 6 || binary.LittleEndian.Uint32(r.payload[4:]) != off+c {
					t.Fatalf("LOAD_DATA %d+%d resent: %v, type 0x%02x % x, want ERROR 6 with next %d", off, c, err, r.typ, r.payload, off+c)
				}
				continue
			}
			if err != nil || r.typ != 0x83 || fmt.Sprint(words(r.payload)) != fmt.Sprint([]uint32{off + c}) { // version 5: next
				t.Fatalf("LOAD_DATA %d+%d: %v, type 0x%02x %v", off, c, err, r.typ, words(r.payload))
			}
		}
		off += c
	}
	crc := crc32.ChecksumIEEE(data)
	r, err := h.call(tCommit, u32s(n, crc))
	if err != nil || r.typ != 0x84 || len(r.payload) != 0 { // version 5: empty
		t.Fatalf("LOAD_COMMIT: %v, type 0x%02x %v", err, r.typ, words(r.payload))
	}
	return crc
}

// request is one INFER with its golden result words.
type request struct {
	stats   bool
	k       int
	seed    uint32
	vectors [][]bool
	want    []uint32
}

func (q request) payload() []byte {
	var p []byte
	mode := byte(0)
	if q.stats {
		mode = 1
	}
	p = append(p, mode, 0)
	p = binary.LittleEndian.AppendUint16(p, uint16(q.k))
	p = binary.LittleEndian.AppendUint32(p, q.seed)
	p = binary.LittleEndian.AppendUint16(p, uint16(len(q.vectors)))
	for _, x := range q.vectors {
		fb := make([]byte, (len(x)+7)/8)
		for i, v := range x {
			if v {
				fb[i/8] |= 1 << (i % 8)
			}
		}
		p = append(p, fb...)
	}
	return p
}

// makeRequest draws count random feature vectors and computes the result
// words with fixed.Core.Run.
func makeRequest(t *testing.T, core *fixed.Core, rng *rand.Rand, stats bool, k, count int) request {
	t.Helper()
	q := request{stats: stats, k: k, seed: rng.Uint32()}
	o := core.Bank().Features
	for v := 0; v < count; v++ {
		x := make([]bool, o)
		for i := range x {
			x[i] = rng.IntN(2) == 1
		}
		q.vectors = append(q.vectors, x)
		sums, st, err := core.Run(x, k, q.seed+uint32(v), nil) // vector v uses seed + v
		if err != nil {
			t.Fatal(err)
		}
		if !stats {
			for _, s := range sums {
				q.want = append(q.want, uint32(s))
			}
			continue
		}
		for _, v := range st.Votes {
			q.want = append(q.want, uint32(v))
		}
		for _, v := range st.Sum {
			q.want = append(q.want, uint32(v))
		}
		for _, v := range st.SumSq {
			q.want = append(q.want, uint32(v))
		}
	}
	return q
}

// inferCheck runs q and compares every word; it returns the mismatches.
func inferCheck(t *testing.T, h *host, q request) int {
	t.Helper()
	r, err := h.call(tInfer, q.payload())
	if err != nil {
		t.Fatalf("INFER: %v", err)
	}
	if r.typ != 0x90 {
		t.Fatalf("INFER: response type 0x%02x payload %x", r.typ, r.payload)
	}
	got := words(r.payload)
	if len(got) != len(q.want) {
		t.Fatalf("INFER: %d words, want %d", len(got), len(q.want))
	}
	if frags := (len(q.want) + 255) / 256; r.frags != frags {
		t.Errorf("INFER: %d fragments, want %d", r.frags, frags)
	}
	bad := 0
	for i := range got {
		if got[i] != q.want[i] {
			if bad < 5 {
				t.Errorf("INFER word %d = %#x, want %#x (stats %v K %d)", i, got[i], q.want[i], q.stats, q.k)
			}
			bad++
		}
	}
	return bad
}

func statusWords(t *testing.T, h *host) []uint32 {
	t.Helper()
	r, err := h.call(tStatus, nil)
	if err != nil || r.typ != 0xA0 || len(r.payload) != 52 {
		t.Fatalf("STATUS: %v, type 0x%02x, %d bytes", err, r.typ, len(r.payload))
	}
	return words(r.payload)
}

// testRequests are INFER requests of both modes: corner K values, many
// vectors, a response of several fragments (about a million core clocks in
// all, so that they stay quick on a loaded machine).
func testRequests(t *testing.T, core *fixed.Core, rng *rand.Rand, kmax int) []request {
	return []request{
		makeRequest(t, core, rng, false, 1, 1),
		makeRequest(t, core, rng, true, 1, 1),
		makeRequest(t, core, rng, false, 7, 30), // 630 words: 3 fragments
		makeRequest(t, core, rng, true, kmax, 4),
		makeRequest(t, core, rng, true, 1+rng.IntN(20), 100),
		makeRequest(t, core, rng, false, 1+rng.IntN(20), 1+rng.IntN(10)),
	}
}

// hostTimeout bounds one attempt of a request in the tests: generous, as
// the simulator slows down to a few hundred thousand clocks per second
// when the machine is busy (parallel tests, builds), and stretched by the
// machine's load (testenv.Scale).
func hostTimeout() time.Duration { return testenv.Scale(60 * time.Second) }

// TestUART is the end-to-end test on the pseudo-terminal: upload a random
// bank, INFER in both modes against fixed.Core, protocol errors, then
// 100,000 random bytes and a correct answer to the next request.
func TestUART(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	p := start(t, o)
	d := p.Build.Design
	h := &host{l: &ptyLink{f: openPty(t, p.UART)}, timeout: hostTimeout()}

	infoCheck(t, h, d, true, false, 0, DefaultReportedBaud)
	if r, err := h.call(tInfer, request{k: 1, vectors: [][]bool{make([]bool, 16)}}.payload()); err != nil ||
		r.typ != tError || r.payload[0] != 4 {
		t.Fatalf("INFER before a model: %v, type 0x%02x %x (want ERROR 4)", err, r.typ, r.payload)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	bank, err := fixed.RandomBank(irisShape, irisConfig.Bits, rng.Uint64)
	if err != nil {
		t.Fatal(err)
	}
	crc := upload(t, h, bank, d.Config.HW(), rng)
	infoCheck(t, h, d, true, true, crc, DefaultReportedBaud)

	core, err := fixed.NewCore(bank, d.Config.HW())
	if err != nil {
		t.Fatal(err)
	}
	bad, n := 0, 0
	for _, q := range testRequests(t, core, rng, d.Config.MaxK) {
		bad += inferCheck(t, h, q)
		n += len(q.want)
	}
	t.Logf("INFER: %d result words compared, %d mismatches", n, bad)
	if bad != 0 {
		t.Fatalf("%d mismatching result words", bad)
	}

	// protocol errors
	for _, c := range []struct {
		typ     byte
		payload []byte
		code    byte
		detail  uint32
	}{
		{0x55, nil, 1, 0},
		// protocol version 5: details 0 but for codes 6 and 9
		{tInfer, request{k: 0, vectors: [][]bool{make([]bool, 16)}}.payload(), 5, 0},
		{tInfer, request{k: 300, vectors: [][]bool{make([]bool, 16)}}.payload(), 5, 0},
		{tInfer, []byte{0, 0, 1, 0}, 3, 0},
		{tCommit, u32s(1), 3, 0},
	} {
		r, err := h.call(c.typ, c.payload)
		if err != nil || r.typ != tError || len(r.payload) != 8 || r.payload[0] != c.code || r.payload[1] != c.typ ||
			binary.LittleEndian.Uint32(r.payload[4:]) != c.detail {
			t.Errorf("command 0x%02x: %v, type 0x%02x payload %x, want ERROR %d detail %d", c.typ, err, r.typ,
				r.payload, c.code, c.detail)
		}
	}
	s0 := statusWords(t, h)

	// 100,000 random bytes, then the next request must be answered correctly
	junk := make([]byte, 100_000)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	if err := h.l.send(junk); err != nil {
		t.Fatal(err)
	}
	h.timeout, h.retries = testenv.Scale(10*time.Second), 20 // the garbage may swallow the first copies
	q := makeRequest(t, core, rng, false, 5, 4)
	t0 := time.Now()
	if bad := inferCheck(t, h, q); bad != 0 {
		t.Fatalf("INFER after the garbage: %d bad words", bad)
	}
	t.Logf("after 100,000 random bytes: answered on attempt %d, %v", h.tries, time.Since(t0).Round(time.Millisecond))
	h.timeout, h.retries = hostTimeout(), 0
	if bad := inferCheck(t, h, makeRequest(t, core, rng, true, 9, 3)); bad != 0 {
		t.Fatalf("second INFER after the garbage: %d bad words", bad)
	}
	s1 := statusWords(t, h)
	t.Logf("STATUS before %v, after %v", s0, s1)
	if s1[1]+s1[2] <= s0[1]+s0[2] {
		t.Errorf("the garbage caused no CRC or framing errors: %v -> %v", s0, s1)
	}
	if s1[10] != s0[10] {
		t.Errorf("ERROR responses went from %d to %d: garbage was answered", s0[10], s1[10])
	}
	// every byte on the line counted (counter 11), in at least 10 bit times each (12)
	if n := s1[11] - s0[11]; n < uint32(len(junk)) || s1[12]-s0[12] < 10*n {
		t.Errorf("UART bytes counted %d for at least %d sent, in %d bit times", n, len(junk), s1[12]-s0[12])
	}
}

// TestFaults runs an upload and INFER over a UART that flips and drops
// bytes in both directions and delays every response: the host's retries
// (same seq, same payload) must get correct results.
func TestFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	o.Seed = 3
	o.Faults = Faults{UARTRx: Fault{Flip: 2e-4, Drop: 2e-4}, UARTTx: Fault{Flip: 2e-4, Drop: 2e-4},
		ResponseDelay: 20 * time.Millisecond}
	p := start(t, o)
	d := p.Build.Design
	h := &host{l: &ptyLink{f: openPty(t, p.UART)}, timeout: testenv.Scale(3 * time.Second), retries: 30}
	rng := rand.New(rand.NewPCG(5, 6))
	bank, err := fixed.RandomBank(irisShape, irisConfig.Bits, rng.Uint64)
	if err != nil {
		t.Fatal(err)
	}
	upload(t, h, bank, d.Config.HW(), rng)
	core, err := fixed.NewCore(bank, d.Config.HW())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if bad := inferCheck(t, h, makeRequest(t, core, rng, i%2 == 1, 1+rng.IntN(30), 1+rng.IntN(8))); bad != 0 {
			t.Fatalf("INFER %d through faults: %d bad words", i, bad)
		}
	}
	p.Stop()
	raw := p.Stats().Raw
	if raw["uart_rx_flipped"] == "0" && raw["uart_rx_dropped"] == "0" && raw["uart_tx_flipped"] == "0" &&
		raw["uart_tx_dropped"] == "0" {
		t.Errorf("no fault was injected: %v", raw)
	}
}

// TestPreload starts a board whose banks hold a model from the start
// (hw.Config.InitBanks): INFO reports it loaded with its CRC and INFER
// works without an upload.
func TestPreload(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	sh := fixed.Shape{Binary: true, Classes: 2, TMs: 1, Clauses: 6, Features: 5, T: 4}
	rng := rand.New(rand.NewPCG(9, 9))
	bank, err := fixed.RandomBank(sh, 10, rng.Uint64)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Bank = bank
	o.ModelHash = "feedface00"
	o.Config = hw.Config{LFSRWidth: 24, ClauseLanes: 2, LiteralLanes: 3, MaxK: 100}
	o.Preload = true
	o.ClksPerBit = 16
	o.ReportedBaud = 3_000_000
	p := start(t, o)
	d := p.Build.Design
	h := &host{l: &ptyLink{f: openPty(t, p.UART)}, timeout: hostTimeout()}
	infoCheck(t, h, d, true, true, hw.BankCRC(bank, d.Config.HW()), 3_000_000)
	core, err := fixed.NewCore(bank, d.Config.HW())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if bad := inferCheck(t, h, makeRequest(t, core, rng, i%2 == 0, 1+rng.IntN(100), 1+rng.IntN(20))); bad != 0 {
			t.Fatalf("INFER on the preloaded model: %d bad words", bad)
		}
	}
}

// TestEthernet exchanges raw Ethernet frames with the board through a TAP
// device in a private network namespace (AF_PACKET socket), while the UART
// is used at the same time. It needs root.
func TestEthernet(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end simulation skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("Ethernet test skipped: it needs root to create a network namespace, a TAP device and an AF_PACKET socket")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("Ethernet test skipped: the ip command (iproute2) is not installed")
	}
	ns := fmt.Sprintf("ptmboard%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })

	o := DefaultOptions()
	o.Shape = irisShape
	o.Config = irisConfig
	o.UART = true
	o.TAP = "ptmtap0"
	o.NetNS = ns
	p := start(t, o)
	d := p.Build.Design
	el := openPacket(t, ns, p.TAP)
	eh := &host{l: el, timeout: hostTimeout() / 2, retries: 2}
	uh := &host{l: &ptyLink{f: openPty(t, p.UART)}, timeout: hostTimeout()}

	infoCheck(t, eh, d, false, false, 0, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	bank, err := fixed.RandomBank(irisShape, irisConfig.Bits, rng.Uint64)
	if err != nil {
		t.Fatal(err)
	}
	crc := upload(t, eh, bank, d.Config.HW(), rng)
	infoCheck(t, eh, d, false, true, crc, 0)
	infoCheck(t, uh, d, true, true, crc, DefaultReportedBaud)
	core, err := fixed.NewCore(bank, d.Config.HW())
	if err != nil {
		t.Fatal(err)
	}
	// both links at once: each response must come back on its own link
	reqs := testRequests(t, core, rng, d.Config.MaxK)
	var wg sync.WaitGroup
	var ubad int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, q := range reqs[:3] {
			ubad += inferCheckQuiet(uh, q)
		}
	}()
	ebad := 0
	for _, q := range reqs {
		ebad += inferCheck(t, eh, q)
	}
	wg.Wait()
	if ubad != 0 || ebad != 0 {
		t.Fatalf("mismatching words: UART %d, Ethernet %d", ubad, ebad)
	}

	// frames the board must ignore: other EtherType, other MAC, bad CRC
	s0 := statusWords(t, eh)
	good := encode(tInfo, 999, nil)
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 1
	el.sendRaw(t, el.board, 0x0801, good)
	el.sendRaw(t, net.HardwareAddr{0x02, 1, 2, 3, 4, 5}, 0x88B5, good)
	el.sendRaw(t, el.board, 0x88B5, badCRC)
	if f, err := el.recv(time.Now().Add(time.Second)); err == nil {
		t.Errorf("a response to an ignored frame: %+v", f)
	}
	s1 := statusWords(t, eh)
	t.Logf("STATUS before %v, after %v", s0, s1)
	if s1[1] != s0[1]+1 {
		t.Errorf("CRC errors %d -> %d, want +1", s0[1], s1[1])
	}
	if s1[7] < s0[7]+2 {
		t.Errorf("Ethernet frames dropped %d -> %d, want at least +2", s0[7], s1[7])
	}
}

// inferCheckQuiet is inferCheck for a goroutine (no t.Fatal): it returns
// the number of bad words, or -1 on a protocol failure.
func inferCheckQuiet(h *host, q request) int {
	r, err := h.call(tInfer, q.payload())
	if err != nil || r.typ != 0x90 {
		return -1
	}
	got := words(r.payload)
	if len(got) != len(q.want) {
		return -1
	}
	bad := 0
	for i := range got {
		if got[i] != q.want[i] {
			bad++
		}
	}
	return bad
}

// ethLink carries protocol frames in Ethernet II frames (EtherType 0x88B5)
// on an AF_PACKET socket bound to the TAP interface.
type ethLink struct {
	fd      int
	ifindex int
	mac     net.HardwareAddr // ours (the interface's)
	board   net.HardwareAddr
}

// openPacket creates the AF_PACKET socket inside the namespace: a locked
// OS thread enters it, opens and binds the socket, and is then discarded
// (never unlocked), so no other goroutine runs in the namespace.
func openPacket(t *testing.T, ns, ifname string) *ethLink {
	t.Helper()
	type res struct {
		l   *ethLink
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with the goroutine
		l, err := func() (*ethLink, error) {
			nsf, err := os.Open("/var/run/netns/" + ns)
			if err != nil {
				return nil, err
			}
			defer nsf.Close()
			if err := unix.Setns(int(nsf.Fd()), unix.CLONE_NEWNET); err != nil {
				return nil, fmt.Errorf("setns: %w", err)
			}
			ifc, err := net.InterfaceByName(ifname)
			if err != nil {
				return nil, err
			}
			proto := int(htons(0x88B5))
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, proto)
			if err != nil {
				return nil, fmt.Errorf("AF_PACKET socket: %w", err)
			}
			if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(0x88B5), Ifindex: ifc.Index}); err != nil {
				unix.Close(fd)
				return nil, fmt.Errorf("bind: %w", err)
			}
			return &ethLink{fd: fd, ifindex: ifc.Index, mac: ifc.HardwareAddr, board: DefaultMAC}, nil
		}()
		ch <- res{l, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("opening a packet socket in netns %s: %v", ns, r.err)
	}
	t.Cleanup(func() { unix.Close(r.l.fd) })
	return r.l
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (l *ethLink) frame(dst net.HardwareAddr, typ uint16, payload []byte) []byte {
	b := append([]byte{}, dst...)
	b = append(b, l.mac...)
	b = binary.BigEndian.AppendUint16(b, typ)
	return append(b, payload...)
}

func (l *ethLink) sendRaw(t *testing.T, dst net.HardwareAddr, typ uint16, payload []byte) {
	t.Helper()
	if err := unix.Sendto(l.fd, l.frame(dst, typ, payload), 0, &unix.SockaddrLinklayer{Ifindex: l.ifindex,
		Protocol: htons(typ), Halen: 6}); err != nil {
		t.Fatalf("sendto: %v", err)
	}
}

func (l *ethLink) send(b []byte) error {
	return unix.Sendto(l.fd, l.frame(l.board, 0x88B5, b), 0, &unix.SockaddrLinklayer{Ifindex: l.ifindex,
		Protocol: htons(0x88B5), Halen: 6})
}

func (l *ethLink) recv(deadline time.Time) (frame, error) {
	buf := make([]byte, 2048)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		if ms <= 0 {
			return frame{}, errTimeout
		}
		fds := []unix.PollFd{{Fd: int32(l.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return frame{}, err
		}
		if n == 0 {
			return frame{}, errTimeout
		}
		m, _, err := unix.Recvfrom(l.fd, buf, 0)
		if err != nil {
			return frame{}, err
		}
		b := buf[:m]
		// only the board's frames to us (our own outgoing frames are seen too)
		if m < 14+11 || net.HardwareAddr(b[6:12]).String() != l.board.String() ||
			net.HardwareAddr(b[0:6]).String() != l.mac.String() || binary.BigEndian.Uint16(b[12:]) != 0x88B5 {
			continue
		}
		p := b[14:]
		if p[0] != sof {
			continue
		}
		plen := int(p[5]) | int(p[6])<<8
		if len(p) < 11+plen || crc32.ChecksumIEEE(p[1:7+plen]) != binary.LittleEndian.Uint32(p[7+plen:]) {
			continue
		}
		return frame{typ: p[1], flags: p[2], seq: uint16(p[3]) | uint16(p[4])<<8,
			payload: append([]byte(nil), p[7:7+plen]...)}, nil
	}
}
