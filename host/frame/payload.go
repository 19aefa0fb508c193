package frame

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/hw"
)

// ErrPayload is wrapped by every payload decoding error.
var ErrPayload = errors.New("frame: bad payload")

func payloadLen(what string, p []byte, want int) error {
	if len(p) != want {
		return fmt.Errorf("%w: %s payload is %d bytes, want %d", ErrPayload, what, len(p), want)
	}
	return nil
}

// Protocol constants of the INFO words.
const (
	Magic           uint32 = 0x424D5450 // INFO word 0, "PTMB"
	ProtocolVersion uint32 = 7          // INFO word 1
	// MinProtocolVersion is the oldest protocol version this host
	// speaks: a version-5 board is version 6 without INFER_WINDOW
	// (Info.Windows), a version-6 board version 7 without the model kind
	// and image words (Info.Kind is tabular).
	MinProtocolVersion uint32 = 5
	// InfoWords is the number of words in a version-7 INFO response;
	// versions 5 and 6 send the first InfoWordsV6.
	InfoWords   = 26
	InfoWordsV6 = 20
)

// Model kinds of INFO word 20 (protocol version 7).
const (
	KindTabular uint32 = 0 // a tabular PTM (docs/fixed-point.md)
	KindConv    uint32 = 1 // a convolutional PTM (docs/fixed-point-conv.md)
)

// Info is the INFO response (docs/protocol.md section 3). For a
// convolutional board (Kind == KindConv) NT = NC (one class sum per
// class), M is C (all clauses), O is P*H*W (the bits of one booleanized
// image: an INFER feature vector), D the depth of the threshold bank; the
// image words give the shape.
type Info struct {
	Magic     uint32 // 0x424D5450
	Version   uint32 // protocol version
	Generator uint32 // generator version major<<16 | minor<<8 | patch
	NT        uint32 // TMs (a convolutional board: NC)
	NC        uint32 // classes
	M         uint32 // clauses per TM (a convolutional board: all clauses C)
	O         uint32 // Boolean features (a convolutional board: P*H*W image bits)
	T         uint32 // vote margin
	B         uint32 // probability bits
	W         uint32 // LFSR width
	LC        uint32 // clause lanes
	LL        uint32 // literal lanes
	D         uint32 // bank depth
	KMax      uint32 // largest K
	Hash32    uint32 // first 32 bits of the generated model's hash
	Loaded    uint32 // 1 when a committed model is valid
	ModelCRC  uint32 // CRC-32 of the loaded model words, 0 if none
	BitRate   uint32 // UART baud, 0 for Ethernet
	RxBuffer  uint32 // receive buffer depth: frames held while executing one
	MMax      uint32 // most sets an INFER query may carry
	// Version 7 (0 on a version-5 or -6 board).
	Kind   uint32 // KindTabular or KindConv
	ImgH   uint32 // image rows H (convolutional)
	ImgW   uint32 // image columns W (convolutional)
	Planes uint32 // bit-planes P (convolutional)
	WinY   uint32 // window rows WY (convolutional)
	WinX   uint32 // window columns WX (convolutional)
}

func (i *Info) fields() [InfoWords]*uint32 {
	return [InfoWords]*uint32{&i.Magic, &i.Version, &i.Generator, &i.NT, &i.NC, &i.M, &i.O, &i.T, &i.B, &i.W,
		&i.LC, &i.LL, &i.D, &i.KMax, &i.Hash32, &i.Loaded, &i.ModelCRC, &i.BitRate, &i.RxBuffer, &i.MMax,
		&i.Kind, &i.ImgH, &i.ImgW, &i.Planes, &i.WinY, &i.WinX}
}

// Words is the number of INFO words a board of protocol version v sends:
// InfoWords from version 7, InfoWordsV6 before.
func (i *Info) Words() int {
	if i.Version < 7 {
		return InfoWordsV6
	}
	return InfoWords
}

// DecodeFromBytes decodes an INFO response payload: InfoWordsV6 words
// when word 1 (the version) is below 7, else InfoWords words.
func (i *Info) DecodeFromBytes(p []byte) error {
	if len(p) < 8 {
		return fmt.Errorf("%w: INFO response payload is %d bytes, want %d (version 5 or 6) or %d (version 7)", ErrPayload, len(p), 4*InfoWordsV6, 4*InfoWords)
	}
	*i = Info{Version: binary.LittleEndian.Uint32(p[4:])}
	n := i.Words()
	if err := payloadLen(fmt.Sprintf("version-%d INFO response", i.Version), p, 4*n); err != nil {
		return err
	}
	fs := i.fields()
	for k, f := range fs[:n] {
		*f = binary.LittleEndian.Uint32(p[4*k:])
	}
	return nil
}

// AppendTo appends the INFO words of the version in i.Version (Words).
func (i *Info) AppendTo(dst []byte) []byte {
	fs := i.fields()
	for _, f := range fs[:i.Words()] {
		dst = binary.LittleEndian.AppendUint32(dst, *f)
	}
	return dst
}

// IsConv reports whether the board serves a convolutional model (INFO
// word 20, protocol version 7).
func (i *Info) IsConv() bool { return i.Version >= 7 && i.Kind == KindConv }

// ConvShape returns the convolutional board's image shape (meaningful
// when IsConv).
func (i *Info) ConvShape() conv.Shape {
	return conv.Shape{H: int(i.ImgH), W: int(i.ImgW), Planes: int(i.Planes), WY: int(i.WinY), WX: int(i.WinX)}
}

// Check verifies the magic and the protocol version and that the shape
// and lane numbers are usable (non-zero, small enough to compute with).
func (i *Info) Check() error {
	if i.Magic != Magic {
		return fmt.Errorf("frame: INFO magic 0x%08x, want 0x%08x (\"PTMB\"): not a PTM board", i.Magic, Magic)
	}
	if i.Version < MinProtocolVersion || i.Version > ProtocolVersion {
		return fmt.Errorf("frame: board speaks protocol version %d, this host speaks %d..%d", i.Version, MinProtocolVersion, ProtocolVersion)
	}
	for _, f := range []struct {
		name string
		v    uint32
		max  uint32
	}{{"NT", i.NT, 16}, {"NC", i.NC, 16}, {"m", i.M, 1 << 20}, {"o", i.O, 1 << 20}, {"T", i.T, 1 << 20},
		{"B", i.B, 16}, {"W", i.W, 64}, {"LC", i.LC, 1 << 20}, {"LL", i.LL, 1 << 20}, {"D", i.D, 1 << 24}, {"KMAX", i.KMax, 1 << 31},
		{"MMAX", i.MMax, 255}} {
		if f.v == 0 || f.v > f.max {
			return fmt.Errorf("frame: INFO %s = %d, want 1..%d", f.name, f.v, f.max)
		}
	}
	if i.Version >= 7 {
		switch i.Kind {
		case KindTabular:
			if i.ImgH|i.ImgW|i.Planes|i.WinY|i.WinX != 0 {
				return fmt.Errorf("frame: INFO of a tabular board (kind 0) has image words %d %d %d %d %d, want 0", i.ImgH, i.ImgW, i.Planes, i.WinY, i.WinX)
			}
		case KindConv:
			sh := i.ConvShape()
			if err := sh.Validate(); err != nil {
				return fmt.Errorf("frame: INFO image words: %w", err)
			}
			if want := uint64(sh.Planes) * uint64(sh.Pixels()); uint64(i.O) != want {
				return fmt.Errorf("frame: INFO of a convolutional board: o = %d, want P*H*W = %d", i.O, want)
			}
			if i.NT != i.NC {
				return fmt.Errorf("frame: INFO of a convolutional board: NT = %d, want NC = %d", i.NT, i.NC)
			}
		default:
			return fmt.Errorf("frame: INFO model kind %d, want 0 (tabular) or 1 (convolutional)", i.Kind)
		}
	}
	if uint64(i.LC)*uint64(i.LL)*uint64(i.D) > 1<<28 {
		return fmt.Errorf("frame: INFO bank of %d x %d lanes x %d words is implausibly large", i.LC, i.LL, i.D)
	}
	return nil
}

// Shape returns the model shape the board is built for.
func (i *Info) Shape() fixed.Shape {
	return fixed.Shape{Binary: i.NT == 1, Classes: int(i.NC), TMs: int(i.NT), Clauses: int(i.M), Features: int(i.O), T: int(i.T)}
}

// HW returns the board's hardware parameters.
func (i *Info) HW() fixed.HW {
	return fixed.HW{Bits: int(i.B), LFSRWidth: int(i.W), ClauseLanes: int(i.LC), LiteralLanes: int(i.LL)}
}

// Windows reports whether the board answers INFER_WINDOW (protocol
// version 6 or later).
func (i *Info) Windows() bool { return i.Version >= 6 }

// Lanes is L = LC*LL.
func (i *Info) Lanes() int { return int(i.LC) * int(i.LL) }

// BankWords is the number of words an upload must carry: L*D, and on a
// convolutional board the NC*C clause weights after them.
func (i *Info) BankWords() int {
	n := i.Lanes() * int(i.D)
	if i.IsConv() {
		n += int(i.NC) * int(i.M)
	}
	return n
}

// FeatureBytes is FB = ceil(o/8), the size of one packed feature vector.
func (i *Info) FeatureBytes() int { return (int(i.O) + 7) / 8 }

// ResultWords is the number of result items one query yields (whatever
// its number of sets): K*NT in samples and sums modes, NC + 2*NT in stats
// mode, NC in votes mode.
func (i *Info) ResultWords(m Mode, k int) int {
	switch m {
	case ModeStats:
		return int(i.NC) + 2*int(i.NT)
	case ModeVotes:
		return int(i.NC)
	}
	return k * int(i.NT)
}

// ItemBytes is the size of one result item on the wire (ItemBytes).
func (i *Info) ItemBytes(m Mode, k int) int { return ItemBytes(m, int(i.NC), int(i.T), k) }

// ResultBytes is the size of one query's result items on the wire.
func (i *Info) ResultBytes(m Mode, k int) int { return i.ResultWords(m, k) * i.ItemBytes(m, k) }

// ItemBytes is the size of one INFER result item for a board with nc
// classes and target t (docs/protocol.md section 4): in votes mode 2 when
// K*lcm(1..NC) <= 65535, else 4; in sums mode 1 when t <= 127, else 2;
// otherwise 4.
func ItemBytes(m Mode, nc, t, k int) int {
	if m == ModeSums {
		if t <= 127 {
			return 1
		}
		return 2
	}
	if m != ModeVotes || nc < 1 || nc > 40 || k < 0 { // lcm(1..40) still fits in 64 bits
		return 4
	}
	if u := fixed.VoteUnit(nc); u <= 0xffff && uint64(k)*u <= 0xffff {
		return 2
	}
	return 4
}

// String summarizes the board.
func (i *Info) String() string {
	s := fmt.Sprintf("PTM board v%d (generator %d.%d.%d): NT=%d NC=%d m=%d o=%d T=%d B=%d W=%d LC=%d LL=%d D=%d KMAX=%d hash32=%08x loaded=%d crc=%08x rate=%d rxbuf=%d mmax=%d",
		i.Version, i.Generator>>16, i.Generator>>8&0xff, i.Generator&0xff, i.NT, i.NC, i.M, i.O, i.T, i.B, i.W,
		i.LC, i.LL, i.D, i.KMax, i.Hash32, i.Loaded, i.ModelCRC, i.BitRate, i.RxBuffer, i.MMax)
	if i.IsConv() {
		s += fmt.Sprintf(" conv image=%dx%d planes=%d window=%dx%d", i.ImgH, i.ImgW, i.Planes, i.WinY, i.WinX)
	}
	return s
}

// LoadBegin is the LOAD_BEGIN command payload: the total number of words
// W (protocol version 5 answers it with an empty payload).
type LoadBegin struct {
	Words uint32
}

// DecodeFromBytes decodes a LOAD_BEGIN payload (4 bytes).
func (l *LoadBegin) DecodeFromBytes(p []byte) error {
	if err := payloadLen("LOAD_BEGIN", p, 4); err != nil {
		return err
	}
	l.Words = binary.LittleEndian.Uint32(p)
	return nil
}

// AppendTo appends the payload.
func (l *LoadBegin) AppendTo(dst []byte) []byte {
	return binary.LittleEndian.AppendUint32(dst, l.Words)
}

// MaxLoadWords is the most u16 words one LOAD_DATA frame carries.
const MaxLoadWords = (MaxPayload - 4) / 2

// LoadData is the LOAD_DATA command payload: an offset and n >= 1 u16
// words (Data holds them as 2n little-endian bytes, aliasing the decoded
// payload).
type LoadData struct {
	Offset uint32
	Data   []byte
}

// N is the number of words.
func (l *LoadData) N() int { return len(l.Data) / 2 }

// Word returns word k.
func (l *LoadData) Word(k int) uint16 { return binary.LittleEndian.Uint16(l.Data[2*k:]) }

// DecodeFromBytes decodes a LOAD_DATA payload: u32 offset then n >= 1
// words, 2n+4 <= MaxPayload.
func (l *LoadData) DecodeFromBytes(p []byte) error {
	if len(p) < 6 || len(p)%2 != 0 || len(p) > MaxPayload {
		return fmt.Errorf("%w: LOAD_DATA payload is %d bytes, want an even length 6..%d", ErrPayload, len(p), MaxPayload)
	}
	l.Offset = binary.LittleEndian.Uint32(p)
	l.Data = p[4:]
	return nil
}

// AppendTo appends the payload.
func (l *LoadData) AppendTo(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, l.Offset)
	return append(dst, l.Data...)
}

// AppendLoadData appends a LOAD_DATA payload for words at offset.
func AppendLoadData(dst []byte, offset uint32, words []uint16) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, offset)
	for _, w := range words {
		dst = binary.LittleEndian.AppendUint16(dst, w)
	}
	return dst
}

// LoadDataAck is the LOAD_DATA response payload (protocol version 5): the
// board's next offset after writing the chunk, offset + n (the host knows
// the chunk and checks it; version 4 echoed the offset and n).
type LoadDataAck struct {
	Next uint32
}

// DecodeFromBytes decodes the 4-byte payload.
func (a *LoadDataAck) DecodeFromBytes(p []byte) error {
	if err := payloadLen("LOAD_DATA response", p, 4); err != nil {
		return err
	}
	a.Next = binary.LittleEndian.Uint32(p)
	return nil
}

// AppendTo appends the payload.
func (a *LoadDataAck) AppendTo(dst []byte) []byte {
	return binary.LittleEndian.AppendUint32(dst, a.Next)
}

// LoadCommit is the LOAD_COMMIT command payload: W and the CRC-32 of the
// words (protocol version 5 answers it with an empty payload).
type LoadCommit struct {
	Words, CRC uint32
}

// DecodeFromBytes decodes the 8-byte payload.
func (c *LoadCommit) DecodeFromBytes(p []byte) error {
	if err := payloadLen("LOAD_COMMIT", p, 8); err != nil {
		return err
	}
	c.Words, c.CRC = binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:])
	return nil
}

// AppendTo appends the payload.
func (c *LoadCommit) AppendTo(dst []byte) []byte {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(dst, c.Words), c.CRC)
}

// BankWords is hw.BankWords: the bank in the upload order of
// docs/protocol.md section 2 (word w = addr*L + lane, u16 thresholds,
// padding slots 0). The board contract lives in package hw.
func BankWords(bank *fixed.Bank, h fixed.HW) []uint16 { return hw.BankWords(bank, h) }

// ConvBankWords returns the upload words of a convolutional bank on
// lanes h (docs/protocol.md section 2, "Model upload"): the L*D threshold
// words, word w = addr*L + lane deciding at beat addr = g*Bt + bt the TA
// of clause g*LC + ci and literal bt*LL + li (lane = ci*LL + li,
// docs/fixed-point-conv.md section 4; padding slots 0), then the NC*C
// clause weights, class k's weight of clause c at L*D + k*C + c, as
// two's-complement i16.
func ConvBankWords(bank *conv.Bank, h fixed.HW) []uint16 {
	lay := conv.LayoutOf(&bank.Head, h)
	L, nl := h.Lanes(), bank.Shape.Literals()
	w := make([]uint16, L*lay.Depth, L*lay.Depth+len(bank.Weights))
	for a := 0; a < lay.Depth; a++ {
		g, bt := a/lay.Beats, a%lay.Beats
		for lane := 0; lane < L; lane++ {
			c, i := g*h.ClauseLanes+lane/h.LiteralLanes, bt*h.LiteralLanes+lane%h.LiteralLanes
			if c < bank.Clauses && i < nl {
				w[a*L+lane] = uint16(bank.Thresh[c*nl+i])
			}
		}
	}
	for _, v := range bank.Weights {
		w = append(w, uint16(int16(v)))
	}
	return w
}

// ConvBankFrom is ConvBankWords inverted: the bank the words of an
// upload describe for head h on lanes hw, each threshold word's low
// hw.Bits bits (the bank is B bits wide; padding slots are ignored) and
// the weights sign-extended from 16 bits. words must hold
// L*D + NC*C words.
func ConvBankFrom(h conv.Head, hw fixed.HW, words []uint16) (*conv.Bank, error) {
	lay := conv.LayoutOf(&h, hw)
	L, nl := hw.Lanes(), h.Shape.Literals()
	nw := h.Classes * h.Clauses
	if len(words) != L*lay.Depth+nw {
		return nil, fmt.Errorf("frame: %d convolutional bank words, want L*D + NC*C = %d*%d + %d*%d", len(words), L, lay.Depth, h.Classes, h.Clauses)
	}
	mask := uint16(1)<<uint(hw.Bits) - 1
	b := &conv.Bank{Head: h, Bits: hw.Bits, Thresh: make([]uint32, h.TAs())}
	for a := 0; a < lay.Depth; a++ {
		g, bt := a/lay.Beats, a%lay.Beats
		for lane := 0; lane < L; lane++ {
			c, i := g*hw.ClauseLanes+lane/hw.LiteralLanes, bt*hw.LiteralLanes+lane%hw.LiteralLanes
			if c < h.Clauses && i < nl {
				b.Thresh[c*nl+i] = uint32(words[a*L+lane] & mask)
			}
		}
	}
	b.Weights = make([]int32, nw)
	for k, v := range words[L*lay.Depth:] {
		b.Weights[k] = int32(int16(v))
	}
	return b, nil
}

// WordsCRC is hw.WordsCRC: the CRC-32 of words as u16 little-endian bytes
// in order, the checksum LOAD_COMMIT carries.
func WordsCRC(words []uint16) uint32 { return hw.WordsCRC(words) }

// Mode selects what INFER returns.
type Mode uint8

// INFER modes.
const (
	ModeSamples Mode = 0 // K x NT raw class sums
	ModeStats   Mode = 1 // NC votes, NT sums, NT sums of squares
	// ModeVotes returns the NC votes of ModeStats alone, as u16 items
	// when they fit (ItemBytes): the compact answer for streaming.
	ModeVotes Mode = 2
	// ModeSums returns ModeSamples' class sums clipped to [-T, T], as i8
	// items (i16 when T > 127): everything the softmax and vote mappings
	// of each sample need, in a quarter of the bytes.
	ModeSums Mode = 3
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case ModeSamples:
		return "samples"
	case ModeStats:
		return "stats"
	case ModeVotes:
		return "votes"
	case ModeSums:
		return "sums"
	}
	return fmt.Sprintf("mode %d", uint8(m))
}

// InferHeaderLen is the length of an INFER payload before its features:
// u8 mode, u8 sets, u16 K, u32 seed, u16 count = 10 bytes. The payload
// length must be InferHeaderLen + count*M*FB (M = max(1, sets)).
const InferHeaderLen = 10

// InferRequest is the INFER command payload. Features holds Count queries
// of M = max(1, Sets) packed vectors of FB bytes each, query by query
// (aliasing the decoded payload); query i is run with seed Seed + i (mod
// 2^32), its sets as docs/protocol.md section 4 defines.
type InferRequest struct {
	Mode     Mode
	Sets     uint8 // vectors per query (0 and 1 both mean one)
	K        uint16
	Seed     uint32
	Count    uint16
	Features []byte
}

// M is the number of sets per query, max(1, Sets).
func (r *InferRequest) M() int { return max(1, int(r.Sets)) }

// DecodeFromBytes decodes an INFER payload: the 10-byte header and the
// feature bytes. It checks the mode; the sets limit and the feature length
// depend on the board and are checked by the board and CheckLen.
func (r *InferRequest) DecodeFromBytes(p []byte) error {
	if len(p) < InferHeaderLen {
		return fmt.Errorf("%w: INFER payload is %d bytes, the header alone is %d", ErrPayload, len(p), InferHeaderLen)
	}
	if p[0] > byte(ModeSums) {
		return fmt.Errorf("%w: INFER mode %d at payload byte 0, want 0 (samples), 1 (stats), 2 (votes) or 3 (sums)", ErrPayload, p[0])
	}
	r.Mode = Mode(p[0])
	r.Sets = p[1]
	r.K = binary.LittleEndian.Uint16(p[2:])
	r.Seed = binary.LittleEndian.Uint32(p[4:])
	r.Count = binary.LittleEndian.Uint16(p[8:])
	r.Features = p[InferHeaderLen:]
	return nil
}

// CheckLen checks that Features holds Count queries of M vectors of fb
// bytes.
func (r *InferRequest) CheckLen(fb int) error {
	if want := int(r.Count) * r.M() * fb; len(r.Features) != want {
		return fmt.Errorf("%w: INFER with count %d and %d sets carries %d feature bytes, want %d (%d per vector)", ErrPayload, r.Count, r.M(), len(r.Features), want, fb)
	}
	return nil
}

// Vector returns feature vector k of the payload (query k/M, set k%M),
// fb bytes.
func (r *InferRequest) Vector(k, fb int) []byte { return r.Features[k*fb : (k+1)*fb] }

// AppendTo appends the payload.
func (r *InferRequest) AppendTo(dst []byte) []byte {
	dst = append(dst, byte(r.Mode), r.Sets)
	dst = binary.LittleEndian.AppendUint16(dst, r.K)
	dst = binary.LittleEndian.AppendUint32(dst, r.Seed)
	dst = binary.LittleEndian.AppendUint16(dst, r.Count)
	return append(dst, r.Features...)
}

// WindowHeaderLen is the length of the window an INFER_WINDOW payload
// carries between the INFER header and the features: u16 first item,
// u16 item count.
const WindowHeaderLen = 4

// MaxWindowItem is the largest first item and item count a window can
// name (u16 fields): a host asks for windows only in answers of at most
// this many items.
const MaxWindowItem = 0xffff

// Window selects the result items [First, First+Count) of an INFER answer
// (docs/protocol.md section 4, "Windows"): the items of every query of
// the request, in the order INFER sends them, counted from 0.
type Window struct {
	First, Count uint16
}

// End is First+Count (as an int: it does not wrap).
func (w Window) End() int { return int(w.First) + int(w.Count) }

// AppendTo appends the window's 4 bytes.
func (w Window) AppendTo(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, w.First)
	return binary.LittleEndian.AppendUint16(dst, w.Count)
}

// AppendInferWindow appends the INFER_WINDOW payload of INFER payload
// infer (its 10-byte header and features) with window w: the header, the
// window, the features.
func AppendInferWindow(dst, infer []byte, w Window) []byte {
	h := min(len(infer), InferHeaderLen)
	dst = append(dst, infer[:h]...)
	dst = w.AppendTo(dst)
	return append(dst, infer[h:]...)
}

// DecodeFromBytes decodes the window of INFER_WINDOW payload p and
// returns the INFER payload p carries (its header and features, a new
// slice).
func (w *Window) DecodeFromBytes(p []byte) ([]byte, error) {
	if len(p) < InferHeaderLen+WindowHeaderLen {
		return nil, fmt.Errorf("%w: INFER_WINDOW payload is %d bytes, the INFER header and the window alone are %d", ErrPayload, len(p), InferHeaderLen+WindowHeaderLen)
	}
	w.First = binary.LittleEndian.Uint16(p[InferHeaderLen:])
	w.Count = binary.LittleEndian.Uint16(p[InferHeaderLen+2:])
	return append(append(make([]byte, 0, len(p)-WindowHeaderLen), p[:InferHeaderLen]...), p[InferHeaderLen+WindowHeaderLen:]...), nil
}

// Select returns the bytes of the items of w in an answer of items of
// ib bytes each: items [First, min(First+Count, n)) of the n items in
// answer, empty when First >= n (the answer an INFER_WINDOW gets).
func (w Window) Select(answer []byte, ib int) []byte {
	n := len(answer) / ib
	lo, hi := min(int(w.First), n), min(w.End(), n)
	return answer[lo*ib : hi*ib]
}

// PackFeatures appends x packed as the protocol wants it (feature i in
// byte i/8, bit i%8): ceil(len(x)/8) bytes.
func PackFeatures(dst []byte, x []bool) []byte {
	n := len(dst)
	for range (len(x) + 7) / 8 {
		dst = append(dst, 0)
	}
	for i, v := range x {
		if v {
			dst[n+i/8] |= 1 << uint(i%8)
		}
	}
	return dst
}

// UnpackFeatures returns the first o features of the packed vector b in
// dst (grown as needed). Bits beyond o are ignored.
func UnpackFeatures(b []byte, o int, dst []bool) []bool {
	if cap(dst) < o {
		dst = make([]bool, o)
	}
	dst = dst[:o]
	for i := range dst {
		dst[i] = i/8 < len(b) && b[i/8]>>uint(i%8)&1 != 0
	}
	return dst
}

// AppendWords appends u32 words little-endian.
func AppendWords(dst []byte, words []uint32) []byte {
	for _, w := range words {
		dst = binary.LittleEndian.AppendUint32(dst, w)
	}
	return dst
}

// Uint32s appends the little-endian u32 words of p to dst; p must be a
// whole number of words.
func Uint32s(dst []uint32, p []byte) ([]uint32, error) {
	if len(p)%4 != 0 {
		return dst, fmt.Errorf("%w: %d bytes is not a whole number of u32 words", ErrPayload, len(p))
	}
	for k := 0; k < len(p); k += 4 {
		dst = append(dst, binary.LittleEndian.Uint32(p[k:]))
	}
	return dst, nil
}

// AppendItems appends result items of ib bytes each (1, 2 or 4),
// little-endian; narrow items keep the low bits of each value.
func AppendItems(dst []byte, items []uint32, ib int) []byte {
	switch ib {
	case 1:
		for _, w := range items {
			dst = append(dst, byte(w))
		}
		return dst
	case 2:
		for _, w := range items {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(w))
		}
		return dst
	}
	return AppendWords(dst, items)
}

// Items appends the little-endian result items of ib bytes each (1, 2 or
// 4) in p to dst: sign-extended in sums mode (two's-complement class
// sums), zero-extended otherwise; p must be a whole number of items.
func Items(dst []uint32, p []byte, m Mode, ib int) ([]uint32, error) {
	switch ib {
	case 1, 2:
	default:
		return Uint32s(dst, p)
	}
	if len(p)%ib != 0 {
		return dst, fmt.Errorf("%w: %d bytes is not a whole number of %d-byte items", ErrPayload, len(p), ib)
	}
	signed := m == ModeSums
	for k := 0; k < len(p); k += ib {
		var v uint32
		switch {
		case ib == 1 && signed:
			v = uint32(int32(int8(p[k])))
		case ib == 1:
			v = uint32(p[k])
		case signed:
			v = uint32(int32(int16(binary.LittleEndian.Uint16(p[k:]))))
		default:
			v = uint32(binary.LittleEndian.Uint16(p[k:]))
		}
		dst = append(dst, v)
	}
	return dst, nil
}

// STATUS counter indices (docs/protocol.md section 5).
const (
	CounterExecuted     = iota // frames received and executed
	CounterCRCErrors           // CRC errors (frames dropped)
	CounterFraming             // framing errors
	CounterOverruns            // UART receive overruns
	CounterUnknown             // unknown commands
	CounterBadLength           // bad payload lengths
	CounterFCS                 // Ethernet FCS errors
	CounterEthDropped          // Ethernet frames dropped (address, type, size)
	CounterSent                // response frames sent
	CounterInferred            // feature vectors inferred
	CounterErrors              // errors answered (ERROR frames sent)
	CounterUARTBytes           // UART bytes received (every byte the receiver finished)
	CounterUARTBitTimes        // UART bit times elapsed
	StatusCounters             // number of counters
)

var counterNames = [StatusCounters]string{"executed", "crc_errors", "framing_errors", "uart_overruns", "unknown_commands",
	"bad_lengths", "eth_fcs_errors", "eth_dropped", "responses_sent", "vectors_inferred", "errors_answered",
	"uart_rx_bytes", "uart_bit_times"}

// CounterName returns a short snake_case name of STATUS counter k.
func CounterName(k int) string {
	if k < 0 || k >= StatusCounters {
		return fmt.Sprintf("counter%d", k)
	}
	return counterNames[k]
}

// Status is the STATUS response: 13 saturating u32 counters.
type Status struct {
	Counters [StatusCounters]uint32
}

// DecodeFromBytes decodes the 52-byte payload.
func (s *Status) DecodeFromBytes(p []byte) error {
	if err := payloadLen("STATUS response", p, 4*StatusCounters); err != nil {
		return err
	}
	for k := range s.Counters {
		s.Counters[k] = binary.LittleEndian.Uint32(p[4*k:])
	}
	return nil
}

// AppendTo appends the payload.
func (s *Status) AppendTo(dst []byte) []byte { return AppendWords(dst, s.Counters[:]) }

// Map returns the counters by name.
func (s Status) Map() map[string]uint32 {
	m := make(map[string]uint32, StatusCounters)
	for k, v := range s.Counters {
		m[CounterName(k)] = v
	}
	return m
}

// ErrorCode is the code of an ERROR frame (docs/protocol.md section 6).
type ErrorCode uint8

// Error codes.
const (
	CodeUnknownCommand ErrorCode = 1  // detail 0
	CodeBadLength      ErrorCode = 3  // detail: 0 (inference board, version 4) or the expected length (training board)
	CodeNoModel        ErrorCode = 4  // detail 0
	CodeBadK           ErrorCode = 5  // detail 0 (KMAX is INFO word 13)
	CodeLoadGap        ErrorCode = 6  // detail: next expected offset
	CodeCommitMismatch ErrorCode = 7  // detail: 0 (protocol version 5; version 4 gave the board's CRC)
	CodeBusy           ErrorCode = 8  // detail 0
	CodeNoLoad         ErrorCode = 9  // LOAD_DATA with no load in progress; detail: next
	CodeNotInit        ErrorCode = 10 // TRAIN_ROWS before TRAIN_INIT; detail 0
	CodeBadLabel       ErrorCode = 11 // TRAIN_ROWS label >= classes; detail: the row in the frame
	CodeRange          ErrorCode = 12 // TRAIN_SEED/TRAIN_READ past the end; detail: the size
)

// String describes the code.
func (c ErrorCode) String() string {
	switch c {
	case CodeUnknownCommand:
		return "unknown command"
	case CodeBadLength:
		return "bad payload length or size"
	case CodeNoModel:
		return "no valid model loaded"
	case CodeBadK:
		return "K out of range"
	case CodeLoadGap:
		return "load gap or overlap"
	case CodeCommitMismatch:
		return "load commit mismatch"
	case CodeBusy:
		return "busy"
	case CodeNoLoad:
		return "no load in progress"
	case CodeNotInit:
		return "trainer not initialised (TRAIN_INIT)"
	case CodeBadLabel:
		return "label out of range"
	case CodeRange:
		return "past the end"
	}
	return fmt.Sprintf("error code %d", uint8(c))
}

// BoardError is the ERROR payload; it is also the error the host reports
// when a board refuses a command.
type BoardError struct {
	Code   ErrorCode
	Cmd    Type // the command that failed
	Detail uint32
}

// DecodeFromBytes decodes the 8-byte payload (u8 code, u8 command, u16 0,
// u32 detail).
func (e *BoardError) DecodeFromBytes(p []byte) error {
	if err := payloadLen("ERROR", p, 8); err != nil {
		return err
	}
	if r := binary.LittleEndian.Uint16(p[2:]); r != 0 {
		return fmt.Errorf("%w: ERROR reserved payload bytes 2..3 are 0x%04x, want 0", ErrPayload, r)
	}
	e.Code, e.Cmd, e.Detail = ErrorCode(p[0]), Type(p[1]), binary.LittleEndian.Uint32(p[4:])
	return nil
}

// AppendTo appends the payload.
func (e *BoardError) AppendTo(dst []byte) []byte {
	dst = append(dst, byte(e.Code), byte(e.Cmd), 0, 0)
	return binary.LittleEndian.AppendUint32(dst, e.Detail)
}

// Error describes the refusal, e.g. "board refused LOAD_DATA: load gap or
// overlap (next offset 510)"; a detail of 0 where it carries no
// information (the version-5 inference board's codes 1, 3, 4, 5, 7, 8) is
// left out: "board refused INFER: K out of range".
func (e *BoardError) Error() string {
	d := "detail"
	if e.Detail == 0 && (e.Code == CodeUnknownCommand || e.Code == CodeBadLength || e.Code == CodeNoModel || e.Code == CodeBadK || e.Code == CodeCommitMismatch || e.Code == CodeBusy) {
		return fmt.Sprintf("board refused %v: %v", e.Cmd, e.Code)
	}
	switch e.Code {
	case CodeBadLength:
		d = "expected"
	case CodeBadK:
		d = "KMAX"
	case CodeLoadGap, CodeNoLoad:
		d = "next offset"
	case CodeBadLabel:
		d = "row"
	case CodeRange:
		d = "size"
	case CodeCommitMismatch:
		d = "board CRC"
		return fmt.Sprintf("board refused %v: %v (%s 0x%08x)", e.Cmd, e.Code, d, e.Detail)
	}
	return fmt.Sprintf("board refused %v: %v (%s %d)", e.Cmd, e.Code, d, e.Detail)
}

// StatsResult is one feature vector's result in stats mode: NC vote words
// (units of 1/lcm(1..NC)), NT sums of clipped class sums (signed), NT sums
// of squares.
type StatsResult struct {
	Votes []uint32
	Sum   []int32
	SumSq []uint32
}

// DecodeWords splits the NC + 2*NT words of one vector.
func (s *StatsResult) DecodeWords(w []uint32, nc, nt int) error {
	if nc < 1 || nt < 1 || len(w) != nc+2*nt {
		return fmt.Errorf("%w: %d stats words, want NC + 2*NT = %d + 2*%d", ErrPayload, len(w), nc, nt)
	}
	s.Votes = append(s.Votes[:0], w[:nc]...)
	s.Sum = s.Sum[:0]
	for _, v := range w[nc : nc+nt] {
		s.Sum = append(s.Sum, int32(v))
	}
	s.SumSq = append(s.SumSq[:0], w[nc+nt:]...)
	return nil
}

// AppendWords appends the result's words in protocol order.
func (s *StatsResult) AppendWords(dst []uint32) []uint32 {
	dst = append(dst, s.Votes...)
	for _, v := range s.Sum {
		dst = append(dst, uint32(v))
	}
	return append(dst, s.SumSq...)
}

// SampleSums converts samples-mode result words (K x NT raw class sums,
// sample-major, two's complement) to signed values, appended to dst.
func SampleSums(dst []int32, w []uint32) []int32 {
	for _, v := range w {
		dst = append(dst, int32(v))
	}
	return dst
}

// ResultWords returns the INFER result items a board must send for one
// query, given the golden core's per-sample sums and statistics over all
// its sets (fixed.Core.RunSets) and the model's target t
// (docs/protocol.md section 4): K*NT raw class sums in samples mode; the
// same clipped to [-t, t] in sums mode; NC votes, NT sums and NT sums of
// squares in stats mode; NC votes in votes mode (sent as ItemBytes each).
func ResultWords(mode Mode, t int, sums []int32, st fixed.Stats) []uint32 {
	var w []uint32
	switch mode {
	case ModeSamples:
		for _, v := range sums {
			w = append(w, uint32(v))
		}
		return w
	case ModeSums:
		for _, v := range sums {
			w = append(w, uint32(min(max(v, int32(-t)), int32(t))))
		}
		return w
	}
	for _, v := range st.Votes {
		w = append(w, uint32(v))
	}
	if mode == ModeVotes {
		return w
	}
	for _, v := range st.Sum {
		w = append(w, uint32(int32(v)))
	}
	for _, v := range st.SumSq {
		w = append(w, uint32(v))
	}
	return w
}
