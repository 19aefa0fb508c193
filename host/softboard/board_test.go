package softboard_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
	"github.com/ptmhw/ptm/host/transport"
)

func newBoard(t *testing.T, cfg softboard.Config) *softboard.Board {
	t.Helper()
	if cfg.Shape == (fixed.Shape{}) {
		cfg.Shape = testmodel.Multiclass
	}
	if cfg.HW == (fixed.HW{}) {
		cfg.HW = testmodel.HW
	}
	b, err := softboard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exec runs one command through Execute and decodes the single response
// frame (or the fragments of an INFER, concatenated).
func exec(t *testing.T, b *softboard.Board, typ frame.Type, seq uint16, payload []byte) (frame.Type, []byte) {
	t.Helper()
	out := b.Execute(nil, frame.Frame{Type: typ, Seq: seq, Payload: payload})
	var p frame.Parser
	var rt frame.Type
	var resp []byte
	n, idx := 0, 0
	p.Feed(out, func(f frame.Frame) {
		if f.Seq != seq {
			t.Fatalf("response seq %d, want %d", f.Seq, seq)
		}
		if f.Flags.Index() != idx {
			t.Fatalf("fragment index %d, want %d", f.Flags.Index(), idx)
		}
		idx++
		n++
		rt = f.Type
		resp = append(resp, f.Payload...)
	})
	if p.Buffered() != 0 || n == 0 {
		t.Fatalf("Execute produced %d frames and %d stray bytes", n, p.Buffered())
	}
	return rt, resp
}

func wantError(t *testing.T, b *softboard.Board, typ frame.Type, payload []byte, code frame.ErrorCode, detail uint32) {
	t.Helper()
	rt, p := exec(t, b, typ, 9, payload)
	var e frame.BoardError
	if rt != frame.TypeError || e.DecodeFromBytes(p) != nil || e.Code != code || e.Cmd != typ || e.Detail != detail {
		t.Fatalf("%v % x: got %v % x, want ERROR code %d detail %d", typ, payload, rt, p, code, detail)
	}
}

func u32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func TestProtocolConformance(t *testing.T) {
	b := newBoard(t, softboard.Config{KMax: 100, BitRate: 115200, Hash32: 0xabcd1234})
	bank := testmodel.Bank(testmodel.Multiclass, testmodel.HW.Bits, 1)
	words := softboard.BankWords(bank, testmodel.HW)
	W := uint32(len(words))

	rt, p := exec(t, b, frame.TypeInfo, 1, nil)
	var in frame.Info
	if rt != frame.TypeInfo.Response() || in.DecodeFromBytes(p) != nil || in.Check() != nil {
		t.Fatalf("INFO: %v % x", rt, p)
	}
	if in.BankWords() != len(words) || in.Loaded != 0 || in.KMax != 100 || in.BitRate != 115200 || in.Hash32 != 0xabcd1234 || in.Generator != softboard.DefaultGenerator {
		t.Fatalf("INFO words %v", in.String())
	}
	wantError(t, b, frame.TypeInfo, []byte{0}, frame.CodeBadLength, 0)
	fb := in.FeatureBytes()
	infer := func(mode frame.Mode, k, count int) []byte {
		return (&frame.InferRequest{Mode: mode, K: uint16(k), Seed: 5, Count: uint16(count), Features: make([]byte, count*fb)}).AppendTo(nil)
	}
	wantError(t, b, frame.TypeInfer, infer(frame.ModeStats, 1, 1), frame.CodeNoModel, 0)

	// Upload (protocol version 5): begin (W not checked, an empty
	// answer), in-order chunks acknowledged with next, resends and gaps
	// answered with ERROR 6 and next, words past the bank refused, then
	// commit (an empty answer).
	wantError(t, b, frame.TypeLoadBegin, []byte{1, 2}, frame.CodeBadLength, 0)
	if rt, p := exec(t, b, frame.TypeLoadBegin, 2, u32(W+1)); rt != frame.TypeLoadBegin.Response() || len(p) != 0 {
		t.Fatalf("LOAD_BEGIN(W+1): %v % x, want an empty answer", rt, p)
	}
	chunk := func(off, n int) []byte { return frame.AppendLoadData(nil, uint32(off), words[off:off+n]) }
	ack := func(off, n int) {
		t.Helper()
		rt, p := exec(t, b, frame.TypeLoadData, 3, chunk(off, n))
		if rt != frame.TypeLoadData.Response() || len(p) != 4 || binary.LittleEndian.Uint32(p) != uint32(off+n) {
			t.Fatalf("LOAD_DATA(%d, %d): %v % x", off, n, rt, p)
		}
	}
	ack(0, 100)
	ack(100, 100)
	wantError(t, b, frame.TypeLoadData, chunk(0, 100), frame.CodeLoadGap, 200)  // a resend of written words
	wantError(t, b, frame.TypeLoadData, chunk(150, 50), frame.CodeLoadGap, 200) // inside the written part
	wantError(t, b, frame.TypeLoadData, chunk(300, 10), frame.CodeLoadGap, 200) // gap
	wantError(t, b, frame.TypeLoadData, chunk(190, 20), frame.CodeLoadGap, 200) // partial overlap
	wantError(t, b, frame.TypeLoadData, []byte{0, 0, 0, 0, 1}, frame.CodeBadLength, 0)
	wantError(t, b, frame.TypeLoadCommit, u32(W, frame.WordsCRC(words)), frame.CodeLoadGap, 200)         // a short load
	wantError(t, b, frame.TypeLoadCommit, u32(200, frame.WordsCRC(words[:200])), frame.CodeLoadGap, 200) // W = next < L*D
	for off := 200; off < len(words)-1; off += 300 {
		ack(off, min(300, len(words)-1-off))
	}
	// the last word and one past the bank: the last is written, the
	// chunk refused
	wantError(t, b, frame.TypeLoadData, frame.AppendLoadData(nil, W-1, []uint16{words[W-1], 7}), frame.CodeBadLength, 0)
	wantError(t, b, frame.TypeLoadData, frame.AppendLoadData(nil, W, []uint16{1}), frame.CodeBadLength, 0) // past the end
	wantError(t, b, frame.TypeLoadCommit, u32(W, 0), frame.CodeCommitMismatch, 0)
	wantError(t, b, frame.TypeLoadCommit, u32(W), frame.CodeBadLength, 0)
	wantError(t, b, frame.TypeInfer, infer(frame.ModeStats, 1, 1), frame.CodeNoModel, 0)
	commit := u32(W, frame.WordsCRC(words))
	for range 2 { // a repeated commit is acknowledged again
		if rt, p := exec(t, b, frame.TypeLoadCommit, 4, commit); rt != frame.TypeLoadCommit.Response() || len(p) != 0 {
			t.Fatalf("LOAD_COMMIT: %v % x", rt, p)
		}
	}
	if in = b.Info(); in.Loaded != 1 || in.ModelCRC != frame.WordsCRC(words) || in.RxBuffer != 1 {
		t.Fatalf("after commit: %v", in.String())
	}
	// No load in progress: every LOAD_DATA is ERROR 9 with next.
	wantError(t, b, frame.TypeLoadData, chunk(0, 100), frame.CodeNoLoad, W)
	wantError(t, b, frame.TypeLoadData, frame.AppendLoadData(nil, W, []uint16{1}), frame.CodeNoLoad, W)

	// INFER refusals: only what protects the board (the host checks
	// lengths, counts and result sizes).
	wantError(t, b, frame.TypeInfer, infer(frame.ModeStats, 0, 1), frame.CodeBadK, 0)
	wantError(t, b, frame.TypeInfer, infer(frame.ModeStats, 101, 1), frame.CodeBadK, 0)
	wantError(t, b, frame.TypeInfer, infer(frame.ModeStats, 1, 0), frame.CodeBadLength, 0)
	wantError(t, b, frame.TypeInfer, infer(frame.ModeStats, 1, 1)[:frame.InferHeaderLen+fb-1], frame.CodeBadLength, 0)
	wantError(t, b, frame.TypeInfer, []byte{1, 0, 1}, frame.CodeBadLength, 0)
	bad := infer(frame.ModeStats, 1, 1)
	bad[0] = 4 // modes are 0..3
	wantError(t, b, frame.TypeInfer, bad, frame.CodeBadLength, 0)
	nine := infer(frame.ModeStats, 1, 9) // one query of 9 sets: more than MMAX = 8
	nine[1], nine[8] = 9, 1
	wantError(t, b, frame.TypeInfer, nine, frame.CodeBadLength, 0)
	wantError(t, b, frame.Type(0x7f), nil, frame.CodeUnknownCommand, 0)
	wantError(t, b, frame.TypeInfer.Response(), nil, frame.CodeUnknownCommand, 0)
	// The count field is not read: one query per whole vector, the rest
	// ignored (here count 0, two vectors and a stray byte).
	{
		two := append(infer(frame.ModeStats, 3, 2), 0xff)
		two[8], two[9] = 0, 0
		rt, p := exec(t, b, frame.TypeInfer, 8, two)
		if rt != frame.TypeInfer.Response() || len(p) != 2*4*(testmodel.Multiclass.Classes+2*testmodel.Multiclass.TMs) {
			t.Fatalf("INFER of 2 vectors with count 0: %v, %d bytes", rt, len(p))
		}
	}

	// INFER results equal the golden core, in fragments of 256 words.
	core, err := fixed.NewCore(bank, testmodel.HW)
	if err != nil {
		t.Fatal(err)
	}
	x := testmodel.Features(3, testmodel.Multiclass.Features, 9)
	feat := []byte{}
	for _, v := range x {
		feat = frame.PackFeatures(feat, v)
	}
	rt, p = exec(t, b, frame.TypeInfer, 5, (&frame.InferRequest{Mode: frame.ModeSamples, K: 100, Seed: 77, Count: 3, Features: feat}).AppendTo(nil))
	words32, err := frame.Uint32s(nil, p)
	if rt != frame.TypeInfer.Response() || err != nil || len(words32) != 900 {
		t.Fatalf("INFER samples: %v, %d words, %v", rt, len(words32), err)
	}
	for v := range 3 {
		sums, _, _ := core.Run(x[v], 100, 77+uint32(v), nil) // vector v uses seed + v
		for k, s := range sums {
			if words32[v*300+k] != uint32(s) {
				t.Fatalf("vector %d word %d: %d, golden %d", v, k, int32(words32[v*300+k]), s)
			}
		}
	}
	st := b.Status()
	if st.Counters[frame.CounterInferred] != 5 || st.Counters[frame.CounterUnknown] != 0 || st.Counters[frame.CounterBadLength] != 0 || st.Counters[frame.CounterErrors] == 0 {
		t.Fatalf("counters %v", st.Map())
	}
	if rt, p := exec(t, b, frame.TypeResetStatus, 6, nil); rt != frame.TypeResetStatus.Response() || len(p) != 0 {
		t.Fatalf("RESET_STATUS: %v % x", rt, p)
	}
	rt, p = exec(t, b, frame.TypeStatus, 7, nil)
	var s frame.Status
	if rt != frame.TypeStatus.Response() || s.DecodeFromBytes(p) != nil || s.Counters[frame.CounterExecuted] != 1 || s.Counters[frame.CounterSent] != 1 {
		t.Fatalf("STATUS after reset: %v %v", rt, s.Map())
	}
}

// Garbage on the line must never wedge the board: after 100,000 random
// bytes a valid request is answered.
func TestRandomBytesThenRequest(t *testing.T) {
	b := newBoard(t, softboard.Config{})
	host, end := transport.BytePipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx, end, softboard.StreamOpts{}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	rng := rand.New(rand.NewPCG(42, 42))
	junk := make([]byte, 100_000)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
		if i%97 == 0 {
			junk[i] = frame.SOF // plenty of false starts
		}
	}
	for off := 0; off < len(junk); off += 4096 {
		host.Write(junk[off:min(off+4096, len(junk))])
	}
	req, _ := frame.Append(nil, frame.TypeInfo, 0, 4242, nil)
	host.Write(req)
	var p frame.Parser
	buf := make([]byte, 4096)
	deadline := time.Now().Add(10 * time.Second)
	host.SetReadDeadline(deadline)
	for {
		n, err := host.Read(buf)
		if err != nil {
			t.Fatalf("no answer: %v (board counters %v)", err, b.Status().Map())
		}
		var got *frame.Frame
		p.Feed(buf[:n], func(f frame.Frame) {
			if f.Seq == 4242 && f.Type == frame.TypeInfo.Response() {
				got = &f
			}
		})
		if got != nil {
			break
		}
	}
	st := b.Status()
	t.Logf("board counters after 100k random bytes: %v", st.Map())
	if st.Counters[frame.CounterCRCErrors]+st.Counters[frame.CounterFraming] == 0 {
		t.Fatal("no CRC or framing errors counted")
	}
}

// A board with a one-frame buffer answers frames that arrive while it is
// busy with ERROR 8, and still answers every frame exactly once.
func TestBusy(t *testing.T) {
	b := newBoard(t, softboard.Config{Bank: testmodel.Bank(testmodel.Multiclass, testmodel.HW.Bits, 2), KMax: 1000})
	host, end := transport.BytePipe()
	ctx, cancel := context.WithCancel(context.Background())
	go b.Serve(ctx, end, softboard.StreamOpts{})
	defer cancel()
	var burst []byte
	for seq := range 20 {
		burst, _ = frame.Append(burst, frame.TypeInfer, 0, uint16(seq), (&frame.InferRequest{Mode: frame.ModeStats, K: 1000, Count: 1, Features: make([]byte, 2)}).AppendTo(nil))
	}
	host.Write(burst)
	answered := map[uint16]frame.Type{}
	var p frame.Parser
	buf := make([]byte, 4096)
	host.SetReadDeadline(time.Now().Add(20 * time.Second))
	for len(answered) < 20 {
		n, err := host.Read(buf)
		if err != nil {
			t.Fatalf("after %d answers: %v", len(answered), err)
		}
		p.Feed(buf[:n], func(f frame.Frame) {
			if _, dup := answered[f.Seq]; dup {
				t.Errorf("seq %d answered twice", f.Seq)
			}
			answered[f.Seq] = f.Type
			if f.Type == frame.TypeError {
				var e frame.BoardError
				if e.DecodeFromBytes(f.Payload) != nil || e.Code != frame.CodeBusy {
					t.Errorf("seq %d: unexpected error % x", f.Seq, f.Payload)
				}
			}
		})
	}
	busy := 0
	for _, ty := range answered {
		if ty == frame.TypeError {
			busy++
		}
	}
	if busy == 0 {
		t.Fatal("no busy answers to a burst of 20 long requests")
	}
	t.Logf("%d of 20 answered busy", busy)
}
