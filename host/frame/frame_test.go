package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ptmhw/ptm/golden/fixed"
)

func TestChecksumIsIEEE(t *testing.T) {
	if got := Checksum([]byte("123456789")); got != 0xCBF43926 {
		t.Fatalf("CRC32(123456789) = %08x, want cbf43926", got)
	}
	words := []uint16{0x1234, 0xffff, 0, 7}
	var b []byte
	for _, w := range words {
		b = binary.LittleEndian.AppendUint16(b, w)
	}
	if got, want := WordsCRC(words), crc32.ChecksumIEEE(b); got != want {
		t.Fatalf("WordsCRC = %08x, want %08x", got, want)
	}
	long := make([]uint16, 1000)
	for i := range long {
		long[i] = uint16(i * 7919)
	}
	b = b[:0]
	for _, w := range long {
		b = binary.LittleEndian.AppendUint16(b, w)
	}
	if got, want := WordsCRC(long), crc32.ChecksumIEEE(b); got != want {
		t.Fatalf("WordsCRC(1000 words) = %08x, want %08x", got, want)
	}
}

func TestEncodeLayout(t *testing.T) {
	b, err := Append(nil, TypeInfer, FragmentFlags(3, true), 0xBEEF, []byte{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xA5, 0x10, 3<<1 | 1, 0xEF, 0xBE, 3, 0, 1, 2, 3}
	want = binary.LittleEndian.AppendUint32(want, crc32.ChecksumIEEE(want[1:]))
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x\nwant    % x", b, want)
	}
	var f Frame
	if err := f.DecodeFromBytes(append(b, 0, 0, 0)); err != nil { // padding ignored
		t.Fatal(err)
	}
	if f.Type != TypeInfer || f.Seq != 0xBEEF || !f.Flags.More() || f.Flags.Index() != 3 || !bytes.Equal(f.Payload, []byte{1, 2, 3}) || f.Len() != len(b) {
		t.Fatalf("decoded %+v", f)
	}
	if _, err := Append(nil, TypeInfo, 0, 0, make([]byte, MaxPayload+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized payload: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, _ := Append(nil, TypeStatus, 0, 9, nil)
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	long := []byte{SOF, 1, 0, 0, 0, 0x01, 0x04} // len 1025
	for _, c := range []struct {
		in   []byte
		want error
	}{{nil, ErrShort}, {good[:5], ErrShort}, {good[:len(good)-1], ErrShort}, {append([]byte{0}, good...), ErrSOF},
		{bad, ErrCRC}, {long, ErrTooLong}} {
		var f Frame
		if err := f.DecodeFromBytes(c.in); !errors.Is(err, c.want) {
			t.Errorf("decode % x: %v, want %v", c.in, err, c.want)
		}
	}
}

func TestDecodeNoAlloc(t *testing.T) {
	b, _ := Append(nil, TypeInfer.Response(), 0, 1, make([]byte, 36))
	var f Frame
	if n := testing.AllocsPerRun(100, func() { _ = f.DecodeFromBytes(b) }); n != 0 {
		t.Fatalf("DecodeFromBytes allocates %v times", n)
	}
	dst := make([]byte, 0, MaxFrameLen)
	if n := testing.AllocsPerRun(100, func() { dst, _ = Append(dst[:0], TypeInfer, 0, 1, b) }); n != 0 {
		t.Fatalf("Append allocates %v times", n)
	}
	var p Parser
	if n := testing.AllocsPerRun(100, func() {
		p.Push(b)
		for {
			if _, ok := p.Next(); !ok {
				break
			}
		}
	}); n != 0 {
		t.Fatalf("Parser allocates %v times", n)
	}
}

func TestParserStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var stream []byte
	var want [][]byte
	for i := range 200 {
		pl := make([]byte, rng.IntN(300))
		for k := range pl {
			pl[k] = byte(rng.Uint32())
		}
		if i%3 == 0 { // garbage between frames, with SOFs in it
			g := make([]byte, rng.IntN(20))
			for k := range g {
				g[k] = byte(rng.Uint32())
				if k%5 == 0 {
					g[k] = SOF
				}
			}
			stream = append(stream, g...)
		}
		b, _ := Append(nil, TypeInfer.Response(), 0, uint16(i), pl)
		want = append(want, b)
		stream = append(stream, b...)
	}
	// Feed in random chunk sizes.
	var p Parser
	var got [][]byte
	for len(stream) > 0 {
		n := min(len(stream), 1+rng.IntN(2*MaxFrameLen))
		p.Feed(stream[:n], func(f Frame) {
			b, _ := f.AppendTo(nil)
			got = append(got, b)
		})
		stream = stream[n:]
	}
	// A garbage SOF may swallow a frame only if its CRC also matched, which
	// does not happen here: every frame must come out, in order.
	var seen int
	for _, g := range got {
		if seen < len(want) && bytes.Equal(g, want[seen]) {
			seen++
		}
	}
	if seen != len(want) {
		t.Fatalf("recovered %d of %d frames (%d frames out), stats %+v", seen, len(want), len(got), p.Stats())
	}
}

// A corrupted frame must cost only itself: the next frame, even if its
// bytes were taken into the corrupted frame's claimed length, is found by
// rescanning.
func TestParserRescanAfterCRCError(t *testing.T) {
	a, _ := Append(nil, TypeInfer, 0, 1, bytes.Repeat([]byte{7}, 40))
	b, _ := Append(nil, TypeInfer, 0, 2, bytes.Repeat([]byte{8}, 10))
	// Drop a byte inside a: its claimed length now reaches into b.
	aa := append(bytes.Clone(a[:20]), a[21:]...)
	// And a false SOF with a big length before both.
	stream := append([]byte{0x00, SOF, 0x10, 0, 0, 0, 0x20, 0x00}, aa...)
	stream = append(stream, b...)
	stream = append(stream, bytes.Repeat([]byte{0}, 0x20+Overhead)...) // completes the false frame
	var p Parser
	var drops []Drop
	p.OnDrop = func(d Drop) { drops = append(drops, d) }
	var seqs []uint16
	p.Feed(stream, func(f Frame) { seqs = append(seqs, f.Seq) })
	if len(seqs) != 1 || seqs[0] != 2 {
		t.Fatalf("frames %v, want [2]; drops %v", seqs, drops)
	}
	if st := p.Stats(); st.CRCErrors < 2 {
		t.Fatalf("stats %+v, want at least 2 CRC errors", st)
	}
	if drops[0].Offset != 1 {
		t.Fatalf("first drop at stream byte %d, want 1: %v", drops[0].Offset, drops[0])
	}
}

func TestParserTooLongAndExpire(t *testing.T) {
	var p Parser
	good, _ := Append(nil, TypeInfo, 0, 5, nil)
	// A header announcing 0xFFFF bytes: framing error, rescan finds good.
	in := append([]byte{SOF, 1, 0, 0, 0, 0xff, 0xff}, good...)
	var n int
	p.Feed(in, func(f Frame) { n++ })
	if n != 1 || p.Stats().FramingErrors != 1 {
		t.Fatalf("frames %d stats %+v", n, p.Stats())
	}
	// A partial frame with a plausible length, then the line goes idle:
	// Expire drops it and the rescan finds the frame hidden inside.
	in = append([]byte{SOF, 1, 0, 0, 0, 0x00, 0x02}, good...)
	p.Feed(in, func(f Frame) { n++ })
	if n != 1 {
		t.Fatalf("frame returned before expiry")
	}
	if p.Expire() != 1 {
		t.Fatal("Expire dropped nothing")
	}
	for {
		if _, ok := p.Next(); !ok {
			break
		}
		n++
	}
	if n != 2 || p.Stats().FramingErrors != 2 || p.Buffered() != 0 {
		t.Fatalf("frames %d stats %+v buffered %d", n, p.Stats(), p.Buffered())
	}
	// Expire never drops a complete frame.
	p.Push(good)
	if p.Expire() != 0 {
		t.Fatal("Expire dropped a complete frame")
	}
	if _, ok := p.Next(); !ok {
		t.Fatal("complete frame lost")
	}
}

func TestPayloadRoundTrips(t *testing.T) {
	info := Info{Magic: Magic, Version: ProtocolVersion, Generator: 0x000100, NT: 3, NC: 3, M: 20, O: 32, T: 10, B: 16, W: 32, LC: 4, LL: 8,
		D: 120, KMax: 1000, Hash32: 0xdeadbeef, Loaded: 1, ModelCRC: 0x12345678, BitRate: 115200, RxBuffer: 2, MMax: 8}
	var i2 Info
	if err := i2.DecodeFromBytes(info.AppendTo(nil)); err != nil || i2 != info {
		t.Fatalf("info round trip: %v %+v", err, i2)
	}
	if err := info.Check(); err != nil {
		t.Fatal(err)
	}
	if info.BankWords() != 32*120 || info.FeatureBytes() != 4 || info.ResultWords(ModeStats, 5) != 9 || info.ResultWords(ModeSamples, 5) != 15 {
		t.Fatalf("derived values wrong: %v", info.String())
	}
	// votes: NC items, u16 while K*lcm(1..3) = 6K <= 65535
	if info.ResultWords(ModeVotes, 5) != 3 || info.ItemBytes(ModeVotes, 10922) != 2 || info.ItemBytes(ModeVotes, 10923) != 4 ||
		info.ItemBytes(ModeStats, 5) != 4 || info.ItemBytes(ModeSamples, 5) != 4 {
		t.Fatalf("votes-mode sizes wrong: %d items, %d/%d bytes", info.ResultWords(ModeVotes, 5), info.ItemBytes(ModeVotes, 10922), info.ItemBytes(ModeVotes, 10923))
	}
	for _, c := range []struct{ nc, k, want int }{{1, 65535, 2}, {2, 32767, 2}, {2, 32768, 4}, {8, 78, 2}, {8, 79, 4}, {9, 26, 2}, {12, 2, 2}, {13, 1, 4}, {40, 1, 4}, {41, 1, 4}} {
		if got := ItemBytes(ModeVotes, c.nc, 10, c.k); got != c.want {
			t.Errorf("ItemBytes(votes, NC=%d, K=%d) = %d, want %d", c.nc, c.k, got, c.want)
		}
	}
	items := []uint32{0, 1, 0xfffe, 0xffff}
	if got, err := Items(nil, AppendItems(nil, items, 2), ModeVotes, 2); err != nil || !slices.Equal(got, items) {
		t.Fatalf("u16 items round trip: %v %v", got, err)
	}
	if _, err := Items(nil, []byte{1, 2, 3}, ModeVotes, 2); err == nil {
		t.Fatal("an odd number of bytes decoded as u16 items")
	}
	// sums: i8 while T <= 127, else i16; two's complement, sign-extended
	if info.ItemBytes(ModeSums, 5) != 1 || ItemBytes(ModeSums, 3, 127, 5) != 1 || ItemBytes(ModeSums, 3, 128, 5) != 2 ||
		info.ResultWords(ModeSums, 5) != 15 || info.ResultBytes(ModeSums, 5) != 15 || info.ResultBytes(ModeSamples, 5) != 60 {
		t.Fatalf("sums-mode sizes wrong: %d-byte items, %d bytes per query", info.ItemBytes(ModeSums, 5), info.ResultBytes(ModeSums, 5))
	}
	signed := []uint32{0, 1, 127, 0xffffff81, 0xffffffff} // 0, 1, 127, -127, -1
	for _, ib := range []int{1, 2} {
		if got, err := Items(nil, AppendItems(nil, signed, ib), ModeSums, ib); err != nil || !slices.Equal(got, signed) {
			t.Fatalf("i%d sums round trip: %v %v", 8*ib, got, err)
		}
	}
	if got, _ := Items(nil, []byte{0x81}, ModeVotes, 1); got[0] != 0x81 {
		t.Fatalf("1-byte items outside sums mode are unsigned: %#x", got[0])
	}
	st := fixed.Stats{Votes: []uint64{1, 2}, Sum: []int64{-3}, SumSq: []uint64{9}}
	if got := ResultWords(ModeSums, 10, []int32{-12, -10, 3, 10, 11}, st); !slices.Equal(got, []uint32{0xfffffff6, 0xfffffff6, 3, 10, 10}) {
		t.Fatalf("sums mode clips to [-T, T]: %#x", got)
	}
	// a query of 3 sets carries 3 vectors; sets 0 and 1 both mean one
	sq := InferRequest{Mode: ModeSums, Sets: 3, K: 7, Seed: 9, Count: 2, Features: make([]byte, 2*3*4)}
	var sq2 InferRequest
	if err := sq2.DecodeFromBytes(sq.AppendTo(nil)); err != nil || sq2.M() != 3 || sq2.CheckLen(4) != nil || sq2.CheckLen(3) == nil {
		t.Fatalf("sets round trip: %v %+v", err, sq2)
	}
	if (&InferRequest{Sets: 0}).M() != 1 || (&InferRequest{Sets: 1}).M() != 1 {
		t.Fatal("sets 0 or 1 is not one set")
	}
	if err := sq2.DecodeFromBytes(append([]byte{4}, sq.AppendTo(nil)[1:]...)); !errors.Is(err, ErrPayload) {
		t.Fatalf("mode 4 decoded: %v", err)
	}
	req := InferRequest{Mode: ModeStats, K: 100, Seed: 0xabcdef01, Count: 2, Features: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	var r2 InferRequest
	b := req.AppendTo(nil)
	if err := r2.DecodeFromBytes(b); err != nil || r2.CheckLen(4) != nil || !bytes.Equal(r2.AppendTo(nil), b) {
		t.Fatalf("infer round trip: %v %+v", err, r2)
	}
	if err := r2.CheckLen(3); !errors.Is(err, ErrPayload) {
		t.Fatalf("CheckLen(3): %v", err)
	}
	ld := AppendLoadData(nil, 77, []uint16{1, 0xfffe})
	var l LoadData
	if err := l.DecodeFromBytes(ld); err != nil || l.Offset != 77 || l.N() != 2 || l.Word(1) != 0xfffe {
		t.Fatalf("load data: %v %+v", err, l)
	}
	for _, n := range []int{0, 4, 5, 7, MaxPayload + 2} {
		if err := l.DecodeFromBytes(make([]byte, n)); err == nil {
			t.Errorf("LOAD_DATA of %d bytes accepted", n)
		}
	}
	be := BoardError{Code: CodeLoadGap, Cmd: TypeLoadData, Detail: 510}
	var be2 BoardError
	if err := be2.DecodeFromBytes(be.AppendTo(nil)); err != nil || be2 != be {
		t.Fatalf("error round trip: %v %+v", err, be2)
	}
	if s := be.Error(); s != "board refused LOAD_DATA: load gap or overlap (next offset 510)" {
		t.Fatalf("error text %q", s)
	}
	x := []bool{true, false, false, true, false, false, false, false, true, true}
	pk := PackFeatures(nil, x)
	if !bytes.Equal(pk, []byte{0x09, 0x03}) {
		t.Fatalf("packed % x", pk)
	}
	if got := UnpackFeatures(pk, len(x), nil); !equalBools(got, x) {
		t.Fatalf("unpacked %v", got)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func BenchmarkParser(b *testing.B) {
	var stream []byte
	for i := range 100 {
		f, _ := Append(nil, TypeInfer.Response(), 0, uint16(i), make([]byte, 36))
		stream = append(stream, f...)
	}
	b.SetBytes(int64(len(stream)))
	var p Parser
	n := 0
	for b.Loop() {
		p.Feed(stream, func(Frame) { n++ })
	}
	if n != 100*b.N {
		b.Fatalf("%d frames", n)
	}
}

func BenchmarkEncodeInfer(b *testing.B) {
	req := InferRequest{Mode: ModeStats, K: 100, Seed: 1, Count: 1, Features: []byte{1, 2, 3, 4}}
	dst := make([]byte, 0, MaxFrameLen)
	for b.Loop() {
		dst = Begin(dst[:0], TypeInfer, 0, 1)
		dst = req.AppendTo(dst)
		dst, _ = Finish(dst, 0)
	}
}

func TestStatsResult(t *testing.T) {
	w := []uint32{12, 0, 0, 4, 0xffffffff, 0xfffffffe, 8, 1, 4}
	var s StatsResult
	if err := s.DecodeWords(w, 3, 3); err != nil || s.Sum[1] != -1 || s.Sum[2] != -2 || s.Votes[0] != 12 || s.SumSq[2] != 4 {
		t.Fatalf("%v %+v", err, s)
	}
	if got := s.AppendWords(nil); len(got) != len(w) || got[4] != w[4] {
		t.Fatalf("re-encoded %v", got)
	}
	if err := s.DecodeWords(w[:8], 3, 3); err == nil {
		t.Fatal("short stats accepted")
	}
	if got := SampleSums(nil, []uint32{2, 0xffffffff}); got[1] != -1 {
		t.Fatalf("%v", got)
	}
}

// With NoRescan a dropped candidate's bytes are not rescanned (the
// version 4 board's receiver): a frame that begins inside a corrupt
// frame's claimed extent is lost, one after it is found; a header that
// claims too much ends at its 7th byte; an idle timeout discards every
// buffered byte.
func TestParserNoRescan(t *testing.T) {
	a, _ := Append(nil, TypeInfer, 0, 1, bytes.Repeat([]byte{7}, 40))
	b, _ := Append(nil, TypeInfer, 0, 2, bytes.Repeat([]byte{8}, 10))
	c, _ := Append(nil, TypeInfo, 0, 3, nil)
	// a loses a byte: its claimed extent (51 bytes) covers b's first 12.
	aa := append(bytes.Clone(a[:20]), a[21:]...)
	stream := append(append(append([]byte{}, aa...), b...), c...)
	for _, tc := range []struct {
		noRescan bool
		want     []uint16
	}{{false, []uint16{2, 3}}, {true, []uint16{3}}} {
		p := Parser{NoRescan: tc.noRescan}
		var seqs []uint16
		p.Feed(stream, func(f Frame) { seqs = append(seqs, f.Seq) })
		if fmt.Sprint(seqs) != fmt.Sprint(tc.want) {
			t.Errorf("NoRescan %v: frames %v, want %v (stats %+v)", tc.noRescan, seqs, tc.want, p.Stats())
		}
	}
	// Too long: hunting resumes after the header, so a frame hidden in the
	// header's bytes is not found but the next one is.
	p := Parser{NoRescan: true}
	var n int
	p.Feed(append([]byte{SOF, 1, 0, 0, 0, 0xff, 0xff}, c...), func(Frame) { n++ })
	if n != 1 || p.Stats().FramingErrors != 1 || p.Stats().Skipped != 0 {
		t.Fatalf("too long: %d frames, stats %+v", n, p.Stats())
	}
	// Idle: everything buffered goes, including a frame inside.
	p.Feed(append([]byte{SOF, 1, 0, 0, 0, 0x00, 0x02}, c...), func(Frame) { n++ })
	if p.Expire() != 1 {
		t.Fatal("Expire dropped nothing")
	}
	if _, ok := p.Next(); ok || p.Buffered() != 0 || n != 1 {
		t.Fatalf("after the idle drop: %d frames, %d bytes buffered", n, p.Buffered())
	}
}
