package frame

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// Run longer by hand, e.g.:
//
//	go test ./host/frame -run '^$' -fuzz '^FuzzParser$' -fuzztime 10m
//	go test ./host/frame -run '^$' -fuzz '^FuzzDecode$' -fuzztime 10m
//	go test ./host/frame -run '^$' -fuzz '^FuzzPayloads$' -fuzztime 5m
//
// Without -fuzz, go test runs the seed corpus below (and testdata/fuzz).

func seedFrames() [][]byte {
	var out [][]byte
	add := func(t Type, fl Flags, seq uint16, p []byte) {
		b, _ := Append(nil, t, fl, seq, p)
		out = append(out, b)
	}
	add(TypeInfo, 0, 0, nil)
	info := Info{Magic: Magic, Version: 1, NT: 1, NC: 2, M: 4, O: 2, T: 2, B: 8, W: 16, LC: 1, LL: 1, D: 16, KMax: 10}
	add(TypeInfo.Response(), 0, 1, info.AppendTo(nil))
	ci := convInfo() // version 7, convolutional: 26 words
	add(TypeInfo.Response(), 0, 5, ci.AppendTo(nil))
	add(TypeInfer, 0, 6, (&InferRequest{Mode: ModeSums, Sets: 2, K: 16, Seed: 1, Count: 1, Features: make([]byte, 2*98)}).AppendTo(nil))
	add(TypeLoadData, 0, 2, AppendLoadData(nil, 0, []uint16{1, 2, 3}))
	add(TypeInfer, 0, 0xffff, (&InferRequest{Mode: ModeStats, K: 3, Seed: 9, Count: 1, Features: []byte{3}}).AppendTo(nil))
	add(TypeInfer.Response(), FragmentFlags(1, true), 3, make([]byte, MaxPayload))
	add(TypeError, 0, 4, (&BoardError{Code: CodeBusy, Cmd: TypeInfer}).AppendTo(nil))
	return out
}

func checkFrame(t *testing.T, f Frame, where string) {
	t.Helper()
	if len(f.Payload) > MaxPayload {
		t.Fatalf("%s: accepted a %d-byte payload", where, len(f.Payload))
	}
	b, err := f.AppendTo(nil)
	if err != nil {
		t.Fatalf("%s: re-encode: %v", where, err)
	}
	var g Frame
	if err := g.DecodeFromBytes(b); err != nil {
		t.Fatalf("%s: re-encoded frame does not decode: %v", where, err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, b := range seedFrames() {
		f.Add(b)
		f.Add(b[:len(b)-1])
		c := bytes.Clone(b)
		c[len(c)/2] ^= 0x10
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fr Frame
		if err := fr.DecodeFromBytes(data); err != nil {
			return
		}
		n := fr.Len()
		if n > len(data) {
			t.Fatalf("frame length %d beyond input %d", n, len(data))
		}
		if crc32.ChecksumIEEE(data[1:n-4]) != binary.LittleEndian.Uint32(data[n-4:]) {
			t.Fatalf("accepted a frame with a bad CRC: % x", data[:n])
		}
		b, err := fr.AppendTo(nil)
		if err != nil || !bytes.Equal(b, data[:n]) {
			t.Fatalf("re-encoding gives % x (%v), want % x", b, err, data[:n])
		}
	})
}

// refParse is a slow, obviously correct parser with the same rules:
// hunt SOF, len > MaxPayload or bad CRC drops and rescans from SOF+1.
func refParse(data []byte) (frames [][]byte, crcErr, framing int) {
	pos := 0
	for {
		i := bytes.IndexByte(data[pos:], SOF)
		if i < 0 {
			return
		}
		s := pos + i
		if len(data)-s < HeaderLen {
			return
		}
		l := int(binary.LittleEndian.Uint16(data[s+5:]))
		if l > MaxPayload {
			framing++
			pos = s + 1
			continue
		}
		if len(data)-s < Overhead+l {
			return
		}
		e := s + Overhead + l
		if crc32.ChecksumIEEE(data[s+1:e-4]) != binary.LittleEndian.Uint32(data[e-4:]) {
			crcErr++
			pos = s + 1
			continue
		}
		frames = append(frames, data[s:e])
		pos = e
	}
}

func FuzzParser(f *testing.F) {
	all := seedFrames()
	var joined []byte
	for _, b := range all {
		f.Add(b, uint8(3))
		joined = append(joined, 0x00, SOF)
		joined = append(joined, b...)
	}
	f.Add(joined, uint8(1))
	f.Add(joined, uint8(255))
	c := bytes.Clone(joined)
	c[40] ^= 0xff
	f.Add(c, uint8(17))
	f.Add(bytes.Repeat([]byte{SOF}, 3000), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var p Parser
		var got [][]byte
		step := int(chunk)%64 + 1
		for off := 0; off < len(data); {
			n := min(step+off%7, len(data)-off)
			p.Feed(data[off:off+n], func(fr Frame) {
				checkFrame(t, fr, "parser")
				b, _ := fr.AppendTo(nil)
				got = append(got, b)
			})
			off += n
		}
		want, crcErr, framing := refParse(data)
		if len(got) != len(want) {
			t.Fatalf("parser found %d frames, reference %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d: % x, reference % x", i, got[i], want[i])
			}
		}
		st := p.Stats()
		if int(st.CRCErrors) != crcErr || int(st.FramingErrors) != framing || int(st.Frames) != len(want) || st.Bytes != uint64(len(data)) {
			t.Fatalf("stats %+v, reference crc %d framing %d frames %d", st, crcErr, framing, len(want))
		}
		// Flushing an idle stream never panics and leaves nothing behind.
		for p.Expire() > 0 {
			for {
				fr, ok := p.Next()
				if !ok {
					break
				}
				checkFrame(t, fr, "after Expire")
			}
		}
		if p.Buffered() != 0 {
			t.Fatalf("%d bytes left after flushing", p.Buffered())
		}
	})
}

func FuzzPayloads(f *testing.F) {
	for _, b := range seedFrames() {
		var fr Frame
		_ = fr.DecodeFromBytes(b)
		f.Add(uint8(fr.Type), fr.Payload)
	}
	f.Fuzz(func(t *testing.T, typ uint8, p []byte) {
		var out []byte
		var err error
		switch Type(typ) {
		case TypeInfo.Response():
			var v Info
			if err = v.DecodeFromBytes(p); err == nil {
				_ = v.Check()
				out = v.AppendTo(nil)
			}
		case TypeLoadBegin:
			var v LoadBegin
			if err = v.DecodeFromBytes(p); err == nil {
				out = v.AppendTo(nil)
			}
		case TypeLoadData:
			var v LoadData
			if err = v.DecodeFromBytes(p); err == nil {
				out = v.AppendTo(nil)
			}
		case TypeLoadData.Response():
			var v LoadDataAck
			if err = v.DecodeFromBytes(p); err == nil {
				out = v.AppendTo(nil)
			}
		case TypeLoadCommit:
			var v LoadCommit
			if err = v.DecodeFromBytes(p); err == nil {
				out = v.AppendTo(nil)
			}
		case TypeInfer:
			var v InferRequest
			if err = v.DecodeFromBytes(p); err == nil {
				_ = v.CheckLen(int(typ%8) + 1)
				out = v.AppendTo(nil)
			}
		case TypeStatus.Response():
			var v Status
			if err = v.DecodeFromBytes(p); err == nil {
				out = v.AppendTo(nil)
			}
		case TypeError:
			var v BoardError
			if err = v.DecodeFromBytes(p); err == nil {
				_ = v.Error()
				out = v.AppendTo(nil)
			}
		default:
			var w []uint32
			if w, err = Uint32s(nil, p); err == nil {
				out = AppendWords(nil, w)
			}
		}
		if err == nil && !bytes.Equal(out, p) {
			t.Fatalf("%v payload % x re-encodes as % x", Type(typ), p, out)
		}
	})
}
