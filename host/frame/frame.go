package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Frame layout constants (docs/protocol.md section 1).
const (
	SOF         byte = 0xA5                  // start of frame
	HeaderLen        = 7                     // SOF, type, flags, seq (2), len (2)
	CRCLen           = 4                     // trailing CRC-32
	Overhead         = HeaderLen + CRCLen    // bytes of a frame besides its payload
	MaxPayload       = 1024                  // MAX_PAYLOAD
	MaxFrameLen      = Overhead + MaxPayload // longest frame
	// MaxFragments is the number of fragment indices the 7-bit index field
	// can name, so the longest response is MaxFragments*MaxPayload bytes.
	MaxFragments = 128
	// WordsPerFragment is the number of u32 result words in a full fragment.
	WordsPerFragment = MaxPayload / 4
	// MaxResponseWords is the most result words one INFER response can
	// carry (MaxFragments full fragments).
	MaxResponseWords = MaxFragments * WordsPerFragment
	// MaxResponseBytes is the most result bytes one INFER response can
	// carry (docs/protocol.md section 4).
	MaxResponseBytes = MaxFragments * MaxPayload
)

// Type is a frame's type byte: a command (host to board) or a response
// (the command's type | 0x80, or TypeError).
type Type uint8

// Command and response types.
const (
	TypeInfo       Type = 0x01
	TypeLoadBegin  Type = 0x02
	TypeLoadData   Type = 0x03
	TypeLoadCommit Type = 0x04
	TypeInfer      Type = 0x10
	// TypeInferWindow is INFER with a window of result items (protocol
	// version 6, docs/protocol.md section 4): the answer carries only
	// those items of the INFER answer.
	TypeInferWindow Type = 0x11
	TypeStatus      Type = 0x20
	TypeResetStatus Type = 0x21
	// The training board's commands (docs/protocol.md section 8).
	TypeTrainInfo Type = 0x30
	TypeTrainInit Type = 0x31
	TypeTrainSeed Type = 0x32
	TypeTrainRows Type = 0x33
	TypeTrainRead Type = 0x34
	TypeError     Type = 0xE0

	// ResponseBit is set in every response type.
	ResponseBit Type = 0x80
)

// Response returns the type of the (non-error) response to command t.
func (t Type) Response() Type { return t | ResponseBit }

// IsResponse reports whether t has the response bit set.
func (t Type) IsResponse() bool { return t&ResponseBit != 0 }

// Command returns the command a response type answers (t without the
// response bit). It is meaningless for TypeError.
func (t Type) Command() Type { return t &^ ResponseBit }

// IsCommand reports whether t is one of the protocol's commands.
func (t Type) IsCommand() bool {
	switch t {
	case TypeInfo, TypeLoadBegin, TypeLoadData, TypeLoadCommit, TypeInfer, TypeInferWindow, TypeStatus, TypeResetStatus,
		TypeTrainInfo, TypeTrainInit, TypeTrainSeed, TypeTrainRows, TypeTrainRead:
		return true
	}
	return false
}

// String names the type ("INFER", "INFER_RESP", "ERROR", or hex).
func (t Type) String() string {
	if t == TypeError {
		return "ERROR"
	}
	name := ""
	switch t.Command() {
	case TypeInfo:
		name = "INFO"
	case TypeLoadBegin:
		name = "LOAD_BEGIN"
	case TypeLoadData:
		name = "LOAD_DATA"
	case TypeLoadCommit:
		name = "LOAD_COMMIT"
	case TypeInfer:
		name = "INFER"
	case TypeInferWindow:
		name = "INFER_WINDOW"
	case TypeStatus:
		name = "STATUS"
	case TypeResetStatus:
		name = "RESET_STATUS"
	case TypeTrainInfo:
		name = "TRAIN_INFO"
	case TypeTrainInit:
		name = "TRAIN_INIT"
	case TypeTrainSeed:
		name = "TRAIN_SEED"
	case TypeTrainRows:
		name = "TRAIN_ROWS"
	case TypeTrainRead:
		name = "TRAIN_READ"
	default:
		return fmt.Sprintf("type 0x%02x", uint8(t))
	}
	if t.IsResponse() {
		return name + "_RESP"
	}
	return name
}

// Flags is a frame's flags byte: bit 0 MORE, bits 7..1 fragment index.
type Flags uint8

// FlagMore is set in every fragment of a response but the last.
const FlagMore Flags = 0x01

// FragmentFlags returns the flags of fragment index (0..127) of a
// response, with MORE set when more is true.
func FragmentFlags(index int, more bool) Flags {
	f := Flags(index&0x7f) << 1
	if more {
		f |= FlagMore
	}
	return f
}

// More reports whether another fragment follows.
func (f Flags) More() bool { return f&FlagMore != 0 }

// Index returns the fragment index (0..127).
func (f Flags) Index() int { return int(f >> 1) }

// Sentinel errors of decoding, matched with errors.Is.
var (
	ErrShort    = errors.New("frame: too short")
	ErrSOF      = errors.New("frame: missing SOF")
	ErrTooLong  = errors.New("frame: payload longer than MAX_PAYLOAD")
	ErrCRC      = errors.New("frame: CRC mismatch")
	ErrTooLarge = errors.New("frame: payload too large to encode")
)

// Frame is one protocol frame. After DecodeFromBytes, Payload aliases the
// decoded bytes.
type Frame struct {
	Type    Type
	Flags   Flags
	Seq     uint16
	Payload []byte
}

// Len is the encoded length of the frame, Overhead + len(Payload).
func (f *Frame) Len() int { return Overhead + len(f.Payload) }

// String describes the frame's header (not its payload).
func (f *Frame) String() string {
	s := fmt.Sprintf("%v seq %d len %d", f.Type, f.Seq, len(f.Payload))
	if f.Flags != 0 {
		s += fmt.Sprintf(" frag %d", f.Flags.Index())
		if f.Flags.More() {
			s += " MORE"
		}
	}
	return s
}

// PeekLen returns the length of the frame that starts at data[0], as far
// as its header tells (Overhead + len field), or an error when data is
// shorter than a header, does not start with SOF or announces a payload
// longer than MaxPayload.
func PeekLen(data []byte) (int, error) {
	if len(data) < HeaderLen {
		return 0, fmt.Errorf("%w: %d bytes, a header needs %d", ErrShort, len(data), HeaderLen)
	}
	if data[0] != SOF {
		return 0, fmt.Errorf("%w: byte 0 is 0x%02x", ErrSOF, data[0])
	}
	l := int(binary.LittleEndian.Uint16(data[5:]))
	if l > MaxPayload {
		return 0, fmt.Errorf("%w: len %d at byte 5 (seq %d)", ErrTooLong, l, binary.LittleEndian.Uint16(data[3:]))
	}
	return Overhead + l, nil
}

// DecodeFromBytes decodes the frame that starts at data[0] and checks its
// CRC. Bytes after the frame's CRC are ignored (an Ethernet payload is
// padded), so the frame is data[:f.Len()]. Payload aliases data. Nothing is
// allocated unless an error is returned.
func (f *Frame) DecodeFromBytes(data []byte) error {
	n, err := PeekLen(data)
	if err != nil {
		return err
	}
	if len(data) < n {
		return fmt.Errorf("%w: %d bytes, the frame (seq %d, len %d) needs %d", ErrShort, len(data),
			binary.LittleEndian.Uint16(data[3:]), n-Overhead, n)
	}
	want := binary.LittleEndian.Uint32(data[n-CRCLen:])
	if got := crc32.ChecksumIEEE(data[1 : n-CRCLen]); got != want {
		return fmt.Errorf("%w: frame claiming seq %d: computed 0x%08x, byte %d holds 0x%08x", ErrCRC,
			binary.LittleEndian.Uint16(data[3:]), got, n-CRCLen, want)
	}
	f.Type = Type(data[1])
	f.Flags = Flags(data[2])
	f.Seq = binary.LittleEndian.Uint16(data[3:])
	f.Payload = data[HeaderLen : n-CRCLen]
	return nil
}

// AppendTo appends the encoded frame to dst.
func (f *Frame) AppendTo(dst []byte) ([]byte, error) {
	return Append(dst, f.Type, f.Flags, f.Seq, f.Payload)
}

// Append appends a frame with the given header and payload to dst.
func Append(dst []byte, t Type, fl Flags, seq uint16, payload []byte) ([]byte, error) {
	if len(payload) > MaxPayload {
		return dst, fmt.Errorf("%w: %d bytes (seq %d), MAX_PAYLOAD is %d", ErrTooLarge, len(payload), seq, MaxPayload)
	}
	start := len(dst)
	dst = Begin(dst, t, fl, seq)
	dst = append(dst, payload...)
	return Finish(dst, start)
}

// Begin appends a frame header with a zero length to dst; append the
// payload to the result and call Finish(b, len(dst)) to fill in the
// length and append the CRC.
func Begin(dst []byte, t Type, fl Flags, seq uint16) []byte {
	return append(dst, SOF, byte(t), byte(fl), byte(seq), byte(seq>>8), 0, 0)
}

// Finish completes the frame that Begin started at b[start]: it writes the
// payload length (everything appended after the header) and appends the
// CRC.
func Finish(b []byte, start int) ([]byte, error) {
	if start < 0 || len(b) < start+HeaderLen || b[start] != SOF {
		return b, fmt.Errorf("frame: Finish at %d: no header there", start)
	}
	l := len(b) - start - HeaderLen
	if l > MaxPayload {
		return b, fmt.Errorf("%w: %d bytes (seq %d), MAX_PAYLOAD is %d", ErrTooLarge, l,
			binary.LittleEndian.Uint16(b[start+3:]), MaxPayload)
	}
	binary.LittleEndian.PutUint16(b[start+5:], uint16(l))
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start+1:])), nil
}

// Checksum returns the CRC the protocol uses (CRC-32 IEEE).
func Checksum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
