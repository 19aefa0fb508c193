package softboard_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/internal/testmodel"
	"github.com/ptmhw/ptm/host/softboard"
)

// FuzzExecute feeds arbitrary commands to the engine: it must never panic
// and must answer every frame with exactly one response (one ERROR frame,
// or a complete fragment sequence) carrying the frame's seq.
//
//	go test ./host/softboard -run '^$' -fuzz '^FuzzExecute$' -fuzztime 5m
func FuzzExecute(f *testing.F) {
	bank := testmodel.Bank(testmodel.Multiclass, testmodel.HW.Bits, 3)
	words := softboard.BankWords(bank, testmodel.HW)
	f.Add(uint8(frame.TypeInfo), uint16(1), []byte{})
	f.Add(uint8(frame.TypeLoadBegin), uint16(2), []byte{0x20, 3, 0, 0})
	f.Add(uint8(frame.TypeLoadData), uint16(3), frame.AppendLoadData(nil, 0, words[:10]))
	f.Add(uint8(frame.TypeLoadCommit), uint16(4), (&frame.LoadCommit{Words: uint32(len(words)), CRC: frame.WordsCRC(words)}).AppendTo(nil))
	f.Add(uint8(frame.TypeInfer), uint16(5), (&frame.InferRequest{Mode: frame.ModeSamples, K: 300, Count: 2, Features: make([]byte, 4)}).AppendTo(nil))
	f.Add(uint8(frame.TypeInfer), uint16(6), (&frame.InferRequest{Mode: frame.ModeStats, K: 3, Count: 1, Features: []byte{0xff, 0xff}}).AppendTo(nil))
	f.Add(uint8(frame.TypeStatus), uint16(7), []byte{})
	f.Add(uint8(frame.TypeResetStatus), uint16(8), []byte{1})
	f.Add(uint8(0x99), uint16(9), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, typ uint8, seq uint16, payload []byte) {
		if len(payload) > frame.MaxPayload {
			return
		}
		b, err := softboard.New(softboard.Config{Shape: testmodel.Multiclass, HW: testmodel.HW, Bank: bank, KMax: 300})
		if err != nil {
			t.Fatal(err)
		}
		// Half the runs start from an empty board.
		if seq%2 == 0 {
			b, _ = softboard.New(softboard.Config{Shape: testmodel.Multiclass, HW: testmodel.HW, KMax: 300})
		}
		out := b.Execute(nil, frame.Frame{Type: frame.Type(typ), Seq: seq, Payload: payload})
		var p frame.Parser
		n, last := 0, false
		p.Feed(out, func(fr frame.Frame) {
			if last {
				t.Fatalf("frame after the last fragment")
			}
			if fr.Seq != seq {
				t.Fatalf("response seq %d, want %d", fr.Seq, seq)
			}
			if fr.Flags.Index() != n%frame.MaxFragments {
				t.Fatalf("fragment %d has index %d", n, fr.Flags.Index())
			}
			if fr.Type != frame.TypeError && fr.Type != frame.Type(typ).Response() {
				t.Fatalf("response type %v to %v", fr.Type, frame.Type(typ))
			}
			last = !fr.Flags.More()
			n++
		})
		if n == 0 || !last || p.Buffered() != 0 {
			t.Fatalf("%d frames, last %v, %d stray bytes", n, last, p.Buffered())
		}
	})
}

// FuzzExecuteConv is FuzzExecute on a convolutional board (protocol
// version 7): image INFER, INFER_WINDOW and the upload of thresholds and
// weights with arbitrary payloads.
//
//	go test ./host/softboard -run '^$' -fuzz '^FuzzExecuteConv$' -fuzztime 5m
func FuzzExecuteConv(f *testing.F) {
	bank := randomConvBank(f, rand.New(rand.NewPCG(9, 9)))
	hw := fixed.HW{Bits: 4, LFSRWidth: 32, ClauseLanes: 2, LiteralLanes: 7}
	words := frame.ConvBankWords(bank, hw)
	fb := (2*7*6 + 7) / 8
	img := (&frame.InferRequest{Mode: frame.ModeSums, Sets: 2, K: 5, Count: 1, Features: make([]byte, 2*fb)}).AppendTo(nil)
	f.Add(uint8(frame.TypeInfo), uint16(1), []byte{})
	f.Add(uint8(frame.TypeLoadBegin), uint16(2), []byte{byte(len(words)), byte(len(words) >> 8), 0, 0})
	f.Add(uint8(frame.TypeLoadData), uint16(3), frame.AppendLoadData(nil, 0, words[:10]))
	f.Add(uint8(frame.TypeLoadCommit), uint16(4), (&frame.LoadCommit{Words: uint32(len(words)), CRC: frame.WordsCRC(words)}).AppendTo(nil))
	f.Add(uint8(frame.TypeInfer), uint16(5), img)
	f.Add(uint8(frame.TypeInferWindow), uint16(6), frame.AppendInferWindow(nil, img, frame.Window{First: 3, Count: 9}))
	f.Add(uint8(frame.TypeInfer), uint16(7), (&frame.InferRequest{Mode: frame.ModeSamples, K: 40, Count: 3, Features: make([]byte, 3*fb)}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, typ uint8, seq uint16, payload []byte) {
		if len(payload) > frame.MaxPayload {
			return
		}
		cfg := softboard.Config{ConvBank: bank, HW: hw, KMax: 64}
		if seq%2 == 0 { // half the runs start from an empty board
			head := bank.Head
			cfg = softboard.Config{Conv: &head, HW: hw, KMax: 64}
		}
		b, err := softboard.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := b.Execute(nil, frame.Frame{Type: frame.Type(typ), Seq: seq, Payload: payload})
		var p frame.Parser
		n, last := 0, false
		p.Feed(out, func(fr frame.Frame) {
			if last || fr.Seq != seq || fr.Flags.Index() != n%frame.MaxFragments || (fr.Type != frame.TypeError && fr.Type != frame.Type(typ).Response()) {
				t.Fatalf("fragment %d: %v (after the last: %v), want seq %d", n, &fr, last, seq)
			}
			last = !fr.Flags.More()
			n++
		})
		if n == 0 || !last || p.Buffered() != 0 {
			t.Fatalf("%d frames, last %v, %d stray bytes", n, last, p.Buffered())
		}
	})
}
