package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ptmhw/ptm/host/frame"
)

// TrainInfo is the TRAIN_INFO answer of a training board (docs/protocol.md
// section 8): its trainer's shape and parameters and its progress.
type TrainInfo struct {
	Magic, Version  uint32
	NT, NC, M, O, T int
	N, B, LL        int
	Up, Down        uint32
	Binary, Paper   bool
	Initialised     bool
	SPVDepth        int // SPV words per literal lane
	IncDepth        int // include masses per literal lane
	Trained         uint32
	Frames, Errors  uint32
	CRCErrors       uint32
	FramingErrors   uint32
	Baud            uint32
	TrainCycles     uint32 // board clocks the trainer was busy since TRAIN_INIT
}

// TrainInfoWords is the number of u32 words of a TRAIN_INFO answer.
const TrainInfoWords = 22

// TrainMagic is TRAIN_INFO word 0 ("PTRN").
const TrainMagic = 0x4E525450

// TrainRead selectors (TRAIN_READ's what byte).
const (
	ReadSPV       = 0 // SPV words
	ReadInclude   = 1 // include masses
	ReadThreshold = 2 // inference thresholds min(I, 2^B - 1)
)

// MaxReadWords is the most words one TRAIN_READ returns (128 fragments).
const MaxReadWords = 65536

// ErrTrainBoard is wrapped when a training board's answer is malformed.
var ErrTrainBoard = errors.New("driver: bad training board answer")

func (d *Driver) execSized(ctx context.Context, typ frame.Type, payload []byte, respBytes int) ([]byte, error) {
	c, err := d.exec(ctx, &call{typ: typ, payload: payload, label: typ.String(), loadOffset: -1, respBytes: respBytes, index: -1})
	if err != nil {
		return nil, err
	}
	if c.respType != typ.Response() {
		return nil, fmt.Errorf("%w: %v answered with %v", ErrTrainBoard, typ, c.respType)
	}
	return c.resp, nil
}

// TrainInfo reads TRAIN_INFO and checks the magic and version.
func (d *Driver) TrainInfo(ctx context.Context) (*TrainInfo, error) {
	p, err := d.execSized(ctx, frame.TypeTrainInfo, nil, 4*TrainInfoWords+frame.Overhead)
	if err != nil {
		return nil, err
	}
	if len(p) != 4*TrainInfoWords {
		return nil, fmt.Errorf("%w: TRAIN_INFO has %d bytes, want %d", ErrTrainBoard, len(p), 4*TrainInfoWords)
	}
	w := make([]uint32, TrainInfoWords)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(p[4*i:])
	}
	in := &TrainInfo{Magic: w[0], Version: w[1], NT: int(w[2]), NC: int(w[3]), M: int(w[4]), O: int(w[5]), T: int(w[6]),
		N: int(w[7]), B: int(w[8]), LL: int(w[9]), Up: w[10], Down: w[11],
		Binary: w[12]&1 != 0, Paper: w[12]&2 != 0, Initialised: w[12]&4 != 0,
		SPVDepth: int(w[13]), IncDepth: int(w[14]), Trained: w[15], Frames: w[16], Errors: w[17],
		CRCErrors: w[18], FramingErrors: w[19], Baud: w[20], TrainCycles: w[21]}
	if in.Magic != TrainMagic || in.Version != 1 {
		return nil, fmt.Errorf("%w: TRAIN_INFO magic 0x%08x version %d, want 0x%08x version 1", ErrTrainBoard, in.Magic, in.Version, uint32(TrainMagic))
	}
	return in, nil
}

// TrainInit sets every SPV and include mass of the board's trainer to its
// initial state and its count of examples trained to 0.
func (d *Driver) TrainInit(ctx context.Context) error {
	p, err := d.execSized(ctx, frame.TypeTrainInit, nil, 4+frame.Overhead)
	if err == nil && len(p) != 4 {
		err = fmt.Errorf("%w: TRAIN_INIT answered with %d bytes, want 4", ErrTrainBoard, len(p))
	}
	return err
}

// TrainSeed loads lanes first.. with the states seeds (lane 0 is the
// control lane, 1 + c clause lane c), as many frames as needed.
func (d *Driver) TrainSeed(ctx context.Context, first int, seeds []uint64) error {
	const per = (frame.MaxPayload - 4) / 8
	for k := 0; k < len(seeds); k += per {
		n := min(per, len(seeds)-k)
		p := binary.LittleEndian.AppendUint32(nil, uint32(first+k))
		for _, s := range seeds[k : k+n] {
			p = binary.LittleEndian.AppendUint64(p, s)
		}
		r, err := d.execSized(ctx, frame.TypeTrainSeed, p, 8+frame.Overhead)
		if err != nil {
			return err
		}
		if len(r) != 8 || binary.LittleEndian.Uint32(r) != uint32(first+k) || binary.LittleEndian.Uint32(r[4:]) != uint32(n) {
			return fmt.Errorf("%w: TRAIN_SEED of lanes %d..%d answered % x", ErrTrainBoard, first+k, first+k+n-1, r)
		}
	}
	return nil
}

// RowBytes is the size of one TRAIN_ROWS row of o features: the label
// and ceil(o/8) feature bytes (feature i in byte i/8, bit i%8).
func RowBytes(o int) int { return 1 + (o+7)/8 }

// MaxRows is the most rows of o features one TRAIN_ROWS frame carries.
func MaxRows(o int) int { return min((frame.MaxPayload-6)/RowBytes(o), 65535) }

// TrainRows trains the board on rows first.. (x, y) in order, as many
// frames as needed; first counts the examples since TRAIN_INIT (the
// board refuses a gap and acknowledges a retransmission without training
// again). It returns the board's count of examples trained.
func (d *Driver) TrainRows(ctx context.Context, first uint32, x [][]bool, y []int) (uint32, error) {
	if len(x) != len(y) {
		return 0, fmt.Errorf("driver: TRAIN_ROWS: %d rows but %d labels", len(x), len(y))
	}
	trained := first
	for k := 0; k < len(x); {
		if len(x[k]) == 0 {
			return trained, fmt.Errorf("driver: TRAIN_ROWS: row %d has no features", k)
		}
		o := len(x[k])
		n := min(MaxRows(o), len(x)-k)
		p := binary.LittleEndian.AppendUint32(nil, first+uint32(k))
		p = binary.LittleEndian.AppendUint16(p, uint16(n))
		for r := k; r < k+n; r++ {
			if len(x[r]) != o {
				return trained, fmt.Errorf("driver: TRAIN_ROWS: row %d has %d features, row %d %d", r, len(x[r]), k, o)
			}
			if y[r] < 0 || y[r] > 255 {
				return trained, fmt.Errorf("driver: TRAIN_ROWS: row %d label %d outside 0..255", r, y[r])
			}
			p = append(p, byte(y[r]))
			fb := make([]byte, (o+7)/8)
			for i, v := range x[r] {
				if v {
					fb[i/8] |= 1 << (i % 8)
				}
			}
			p = append(p, fb...)
		}
		r, err := d.execSized(ctx, frame.TypeTrainRows, p, 4+frame.Overhead)
		if err != nil {
			return trained, err
		}
		if len(r) != 4 {
			return trained, fmt.Errorf("%w: TRAIN_ROWS answered with %d bytes, want 4", ErrTrainBoard, len(r))
		}
		trained = binary.LittleEndian.Uint32(r)
		if trained != first+uint32(k+n) {
			return trained, fmt.Errorf("%w: TRAIN_ROWS of rows %d..%d: the board has trained %d", ErrTrainBoard, first+uint32(k), first+uint32(k+n-1), trained)
		}
		k += n
	}
	return trained, nil
}

// TrainRead reads count words from offset of literal lane lane of the
// board's SPV RAM (what = ReadSPV), include RAM (ReadInclude) or
// thresholds (ReadThreshold), in TRAIN_READs of at most MaxReadWords.
func (d *Driver) TrainRead(ctx context.Context, what, lane, offset, count int) ([]uint16, error) {
	out := make([]uint16, 0, count)
	for k := 0; k < count; k += MaxReadWords {
		n := min(MaxReadWords, count-k)
		p := []byte{byte(what), byte(lane), 0, 0}
		p = binary.LittleEndian.AppendUint32(p, uint32(offset+k))
		p = binary.LittleEndian.AppendUint32(p, uint32(n))
		r, err := d.execSized(ctx, frame.TypeTrainRead, p, 2*n+frame.Overhead*(1+2*n/frame.MaxPayload))
		if err != nil {
			return nil, err
		}
		if len(r) != 2*n {
			return nil, fmt.Errorf("%w: TRAIN_READ of %d words answered with %d bytes", ErrTrainBoard, n, len(r))
		}
		for i := 0; i < n; i++ {
			out = append(out, binary.LittleEndian.Uint16(r[2*i:]))
		}
	}
	return out, nil
}
