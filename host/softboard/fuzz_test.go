package softboard_test

import (
	"testing"

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
