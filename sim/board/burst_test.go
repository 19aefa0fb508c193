package board

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
)

// burstOutcome is what came back for one seq of a burst.
type burstOutcome struct {
	frags int  // result fragments (type 0x90)
	busy  bool // ERROR 8
	other byte // another response type, 0 if none
}

func (o burstOutcome) String() string {
	switch {
	case o.busy:
		return "BUSY"
	case o.other != 0:
		return "other"
	case o.frags > 0:
		return "ok"
	}
	return "none"
}

// TestBusyBurst sends a back-to-back burst of maximum-size INFER frames
// (1024-byte payloads, distinct seqs) on the UART, far more than the
// board's receive buffer holds, and records what comes back for each seq
// (docs/protocol.md section 7).
func TestBusyBurst(t *testing.T) {
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
	rng := rand.New(rand.NewPCG(11, 12))
	bank, err := fixed.RandomBank(irisShape, irisConfig.Bits, rng.Uint64)
	if err != nil {
		t.Fatal(err)
	}
	upload(t, h, bank, d.Config.HW(), rng)
	core, err := fixed.NewCore(bank, d.Config.HW())
	if err != nil {
		t.Fatal(err)
	}
	q := makeRequest(t, core, rng, true, 1, (1024-10)/2) // FB = 2: a 1024-byte payload
	pl := q.payload()
	pl[0] = 2 // mode 2 (votes): 3 u16 per vector, 3 fragments
	if len(pl) != 1024 {
		t.Fatalf("payload %d bytes", len(pl))
	}
	if _, err := h.call(tReset, nil); err != nil {
		t.Fatal(err)
	}

	const n = 12
	base := h.seq + 1
	var burst []byte
	for i := 0; i < n; i++ {
		burst = append(burst, encode(tInfer, base+uint16(i), pl)...)
	}
	h.seq += n
	if err := h.l.send(burst); err != nil {
		t.Fatal(err)
	}
	got := make(map[uint16]*burstOutcome)
	for i := 0; i < n; i++ {
		got[base+uint16(i)] = &burstOutcome{}
	}
	// collect until the line has been quiet for a while
	quiet := hostTimeout() / 4
	for {
		f, err := h.l.recv(time.Now().Add(quiet))
		if err != nil {
			break
		}
		r := got[f.seq]
		if r == nil {
			t.Errorf("response type 0x%02x for unknown seq %d", f.typ, f.seq)
			continue
		}
		switch {
		case f.typ == 0x90:
			r.frags++
		case f.typ == tError && len(f.payload) == 8 && f.payload[0] == 8:
			r.busy = true
		default:
			r.other = f.typ
			t.Errorf("seq %d: type 0x%02x payload %x", f.seq, f.typ, f.payload)
		}
	}
	s := statusWords(t, h)
	var pattern []string
	for i := 0; i < n; i++ {
		pattern = append(pattern, got[base+uint16(i)].String())
	}
	t.Logf("burst of %d maximum-size INFER frames: %v", n, pattern)
	t.Logf("STATUS: executed %d, CRC errors %d, framing errors %d, overruns %d, responses %d, errors %d, uart bytes %d",
		s[0], s[1], s[2], s[3], s[8], s[10], s[11])

	// docs/protocol.md section 7: the board holds at most INFO word 18 + 1
	// frames (31 + 1), BUSY refusals included. The first one fits in the
	// receive buffer and is executed; a later one is executed when its
	// payload fits at the end of its header, else answered BUSY; none
	// vanishes, since fewer than 32 are held. No frame is mangled: no CRC
	// or framing error, and every frame is answered once, in seq order,
	// results complete.
	if s[1] != 0 || s[2] != 0 {
		t.Errorf("%d CRC and %d framing errors: frames of the burst were mangled", s[1], s[2])
	}
	if pattern[0] != "ok" || !slices.Contains(pattern, "BUSY") {
		t.Errorf("pattern %v, want the first frame executed and some answered BUSY", pattern)
	}
	answered := 0
	for i := 0; i < n; i++ {
		r := got[base+uint16(i)]
		if r.frags != 0 && r.frags != 3 {
			t.Errorf("seq +%d: %d result fragments, want 3", i, r.frags)
		}
		if r.frags != 0 || r.busy {
			answered++
		}
	}
	// which later frames fit depends on how much of the executing frame's
	// payload the engine has read (measured: ok BUSY ok BUSY BUSY BUSY BUSY
	// ok BUSY BUSY BUSY ok; with the 4-frame receiver before, ok ok BUSY
	// BUSY BUSY none none none none BUSY BUSY ok)
	t.Logf("%d of %d frames answered", answered, n)
	if answered != n {
		t.Errorf("%d of %d frames answered: fewer than 32 are held, none may vanish", answered, n)
	}
	// the host's rule: resend what got BUSY or nothing, at most 4 in
	// flight (here one at a time): every request then gets its result
	for i := 0; i < n; i++ {
		if r := got[base+uint16(i)]; r.frags == 3 {
			continue
		}
		r, err := h.call(tInfer, pl)
		if err != nil || r.typ != 0x90 || r.frags != 3 {
			t.Fatalf("resending seq +%d: %v, type 0x%02x, %d fragments", i, err, r.typ, r.frags)
		}
	}
}
