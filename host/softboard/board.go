package softboard

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptmhw/ptm/golden/conv"
	"github.com/ptmhw/ptm/golden/fixed"
	"github.com/ptmhw/ptm/host/frame"
)

// DefaultGenerator is the generator version the board reports in INFO
// word 2 unless configured: hw 0.2.0.
const DefaultGenerator uint32 = 0<<16 | 2<<8 | 0

// Config describes the board: the core it emulates and the link.
type Config struct {
	// Shape and HW are the design the board is "generated" for.
	Shape fixed.Shape
	HW    fixed.HW
	// KMax is the largest K (default 1000). It must keep the statistics
	// in 32 bits like the generator requires: KMax*lcm(1..NC) < 2^32,
	// KMax*T^2 < 2^32, KMax*T < 2^31.
	KMax int
	// MMax is the most sets an INFER query may carry (INFO word 19,
	// default 8, at most 255).
	MMax int
	// Generator is INFO word 2 (default DefaultGenerator).
	Generator uint32
	// Hash32 is INFO word 14 (the generated model's hash prefix).
	Hash32 uint32
	// BitRate is INFO word 17: the UART baud, 0 for Ethernet. On a byte
	// stream it also sets the default idle timeout and the pacing rate.
	BitRate int
	// Bank, if set, is loaded at power-up (like a design generated with
	// initial bank contents): INFO reports loaded = 1.
	Bank *fixed.Bank
	// QueueFrames is the number of received frames the board buffers
	// while it executes another (default 1), reported in INFO word 18. A
	// frame arriving when the buffer is full is answered with ERROR code 8
	// (busy).
	QueueFrames int
	// Version is the protocol version the board speaks, INFO word 1:
	// 0 for frame.ProtocolVersion (7), 6 (INFO without the model kind
	// and image words, like the RTL board with a tabular core) or 5 (also without
	// INFER_WINDOW, which it answers as an unknown command).
	Version uint32
	// Conv, if set, makes the board a convolutional one (protocol
	// version 7, docs/protocol.md section 4 "Image queries"): it is
	// "generated" for this head's shape, classes, clauses and T (its
	// weights are the upload's, or ConvBank's); Shape and Bank are then
	// unused. An INFER feature vector is one booleanized image of
	// P*H*W bits.
	Conv *conv.Head
	// ConvBank, if set (with Conv or alone: Conv defaults to its head),
	// is loaded at power-up.
	ConvBank *conv.Bank
}

// Board is a software PTM board: the protocol engine of docs/protocol.md
// on top of the bit-exact golden core (fixed.Core). Execute is the engine;
// Serve and ServeEthernet attach it to links. A Board is safe for
// concurrent use; commands execute one at a time.
type Board struct {
	cfg  Config
	info frame.Info // static words
	lay  fixed.Layout
	mask uint16

	execTime atomic.Int64 // SetExecTime

	mu       sync.Mutex
	counters [frame.StatusCounters]uint32
	// The UART bit-time counter (STATUS 12) runs at BitRate from lineT0
	// while Serve runs a byte stream; lineBase is its value at the last
	// RESET_STATUS.
	lineT0   time.Time
	lineBase uint64
	words    []uint16
	next     uint32
	loading  bool
	running  uint32 // CRC of the words written since LOAD_BEGIN
	loaded   bool
	modelCRC uint32
	core     *fixed.Core
	ccore    *conv.Core      // a convolutional board's core
	pts      []*conv.Patches // a convolutional board's patches, one per set
	xs       [][]bool
	sums     []int32
	out      []uint32
	pay      []byte
}

// New builds a board.
func New(cfg Config) (*Board, error) {
	if cfg.Generator == 0 {
		cfg.Generator = DefaultGenerator
	}
	if cfg.MMax == 0 {
		cfg.MMax = 8
	}
	if cfg.MMax < 1 || cfg.MMax > 255 {
		return nil, fmt.Errorf("softboard: MMAX %d, want 1..255", cfg.MMax)
	}
	if cfg.QueueFrames <= 0 {
		cfg.QueueFrames = 1
	}
	if cfg.Version == 0 {
		cfg.Version = frame.ProtocolVersion
	}
	if cfg.Version < frame.MinProtocolVersion || cfg.Version > frame.ProtocolVersion {
		return nil, fmt.Errorf("softboard: protocol version %d, want %d..%d", cfg.Version, frame.MinProtocolVersion, frame.ProtocolVersion)
	}
	if cfg.Conv == nil && cfg.ConvBank != nil {
		cfg.Conv = &cfg.ConvBank.Head
	}
	if cfg.Conv != nil {
		return newConv(cfg)
	}
	sh, h := cfg.Shape, cfg.HW
	if err := sh.Validate(); err != nil {
		return nil, fmt.Errorf("softboard: %w", err)
	}
	if err := h.Check(sh); err != nil {
		return nil, fmt.Errorf("softboard: %w", err)
	}
	if cfg.KMax == 0 {
		cfg.KMax = 1000
	}
	if err := checkKMax(cfg.KMax, sh.Classes, sh.T); err != nil {
		return nil, err
	}
	lay := h.LayoutOf(sh)
	b := &Board{cfg: cfg, lay: lay, mask: uint16(1<<uint(h.Bits) - 1), words: make([]uint16, h.Lanes()*lay.Depth)}
	b.info = frame.Info{
		Magic: frame.Magic, Version: cfg.Version, Generator: cfg.Generator,
		NT: uint32(sh.TMs), NC: uint32(sh.Classes), M: uint32(sh.Clauses), O: uint32(sh.Features), T: uint32(sh.T),
		B: uint32(h.Bits), W: uint32(h.LFSRWidth), LC: uint32(h.ClauseLanes), LL: uint32(h.LiteralLanes),
		D: uint32(lay.Depth), KMax: uint32(cfg.KMax), Hash32: cfg.Hash32, BitRate: uint32(cfg.BitRate),
		RxBuffer: uint32(cfg.QueueFrames), MMax: uint32(cfg.MMax),
	}
	if cfg.Bank != nil {
		if cfg.Bank.Shape != sh || cfg.Bank.Bits != h.Bits {
			return nil, fmt.Errorf("softboard: initial bank has shape %+v and %d bits, the board %+v and %d bits", cfg.Bank.Shape, cfg.Bank.Bits, sh, h.Bits)
		}
		if err := b.preload(BankWords(cfg.Bank, h)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// checkKMax checks that K up to kmax keeps the statistics in 32 bits as
// the generator requires.
func checkKMax(kmax, nc, t int) error {
	k := uint64(kmax)
	if kmax < 1 || kmax > math.MaxUint16 || k*fixed.VoteUnit(nc) >= 1<<32 || k*uint64(t)*uint64(t) >= 1<<32 || k*uint64(t) >= 1<<31 {
		return fmt.Errorf("softboard: KMAX %d: want 1..65535 with KMAX*lcm(1..NC), KMAX*T^2 < 2^32 and KMAX*T < 2^31 (NC=%d, T=%d)", kmax, nc, t)
	}
	return nil
}

// DefaultConvKMax is the largest K up to 1000 that keeps the statistics of
// a model with nc classes and margin t in 32 bits (checkKMax), or 0 if
// none does.
func DefaultConvKMax(nc, t int) int {
	for k := 1000; k >= 1; k-- {
		if checkKMax(k, nc, t) == nil {
			return k
		}
	}
	return 0
}

// preload writes words as a committed upload (a design generated with
// initial bank contents).
func (b *Board) preload(w []uint16) error {
	copy(b.words, w)
	b.next = uint32(len(w))
	if err := b.commit(); err != nil {
		return err
	}
	b.modelCRC = frame.WordsCRC(w)
	b.running = b.modelCRC
	return nil
}

// newConv builds a convolutional board (Config.Conv).
func newConv(cfg Config) (*Board, error) {
	if cfg.Version < 7 {
		return nil, fmt.Errorf("softboard: a convolutional board speaks protocol version 7 or later, not %d", cfg.Version)
	}
	hd, h := *cfg.Conv, cfg.HW
	if hd.Weights == nil { // the board holds weights only once uploaded
		if hd.Structure == conv.PerClass && hd.Classes > 0 && hd.Clauses%hd.Classes == 0 {
			hd.Weights = conv.PerClassWeights(hd.Classes, hd.Clauses/hd.Classes)
		} else {
			hd.Weights = make([]int32, hd.Classes*hd.Clauses)
		}
	}
	if err := hd.Validate(); err != nil {
		return nil, fmt.Errorf("softboard: %w", err)
	}
	if err := conv.CheckHW(&hd, h); err != nil {
		return nil, fmt.Errorf("softboard: %w", err)
	}
	if cfg.KMax == 0 {
		cfg.KMax = DefaultConvKMax(hd.Classes, hd.T)
	}
	if err := checkKMax(cfg.KMax, hd.Classes, hd.T); err != nil {
		return nil, err
	}
	cfg.Conv = &hd
	sh := hd.Shape
	lay := conv.LayoutOf(&hd, h)
	b := &Board{cfg: cfg, mask: uint16(1<<uint(h.Bits) - 1), words: make([]uint16, h.Lanes()*lay.Depth+hd.Classes*hd.Clauses)}
	b.info = frame.Info{
		Magic: frame.Magic, Version: cfg.Version, Generator: cfg.Generator,
		NT: uint32(hd.Classes), NC: uint32(hd.Classes), M: uint32(hd.Clauses), O: uint32(sh.Planes * sh.Pixels()), T: uint32(hd.T),
		B: uint32(h.Bits), W: uint32(h.LFSRWidth), LC: uint32(h.ClauseLanes), LL: uint32(h.LiteralLanes),
		D: uint32(lay.Depth), KMax: uint32(cfg.KMax), Hash32: cfg.Hash32, BitRate: uint32(cfg.BitRate),
		RxBuffer: uint32(cfg.QueueFrames), MMax: uint32(cfg.MMax),
		Kind: frame.KindConv, ImgH: uint32(sh.H), ImgW: uint32(sh.W), Planes: uint32(sh.Planes), WinY: uint32(sh.WY), WinX: uint32(sh.WX),
	}
	if bk := cfg.ConvBank; bk != nil {
		if bk.Shape != sh || bk.Classes != hd.Classes || bk.Clauses != hd.Clauses || bk.T != hd.T || bk.Bits != h.Bits {
			return nil, fmt.Errorf("softboard: initial convolutional bank (shape %+v, %d classes, %d clauses, T %d, %d bits) does not fit the board (%+v, %d, %d, %d, %d bits)",
				bk.Shape, bk.Classes, bk.Clauses, bk.T, bk.Bits, sh, hd.Classes, hd.Clauses, hd.T, h.Bits)
		}
		if err := b.preload(frame.ConvBankWords(bk, h)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ConfigFor returns a Config for a board generated for bank on hw.
func ConfigFor(bank *fixed.Bank, hw fixed.HW, kmax int) Config {
	return Config{Shape: bank.Shape, HW: hw, KMax: kmax}
}

// BankWords is frame.BankWords (kept here for convenience).
func BankWords(bank *fixed.Bank, hw fixed.HW) []uint16 { return frame.BankWords(bank, hw) }

// bankFrom rebuilds the per-TA thresholds from uploaded words, keeping the
// low B bits of each (the bank is B bits wide); padding slots are ignored
// like the core ignores them.
func bankFrom(sh fixed.Shape, h fixed.HW, lay fixed.Layout, words []uint16, mask uint16) *fixed.Bank {
	bk := &fixed.Bank{Shape: sh, Bits: h.Bits, Thresh: make([]uint32, sh.TAs())}
	L, nl := h.Lanes(), sh.Literals()
	for a := 0; a < lay.Depth; a++ {
		g, bt := a/lay.Beats, a%lay.Beats
		for lane := 0; lane < L; lane++ {
			ci, li := lane/h.LiteralLanes, lane%h.LiteralLanes
			c, i := g*h.ClauseLanes+ci, bt*h.LiteralLanes+li
			if c < sh.TotalClauses() && i < nl {
				bk.Thresh[c*nl+i] = uint32(words[a*L+lane] & mask)
			}
		}
	}
	return bk
}

// commit builds the core from the written words.
func (b *Board) commit() error {
	if b.cfg.Conv != nil {
		bk, err := frame.ConvBankFrom(*b.cfg.Conv, b.cfg.HW, b.words)
		if err != nil {
			return fmt.Errorf("softboard: %w", err)
		}
		core, err := conv.NewCore(bk, b.cfg.HW)
		if err != nil {
			return fmt.Errorf("softboard: building the convolutional core: %w", err)
		}
		b.ccore, b.loaded, b.loading = core, true, false
		return nil
	}
	core, err := fixed.NewCore(bankFrom(b.cfg.Shape, b.cfg.HW, b.lay, b.words, b.mask), b.cfg.HW)
	if err != nil {
		return fmt.Errorf("softboard: building the core: %w", err)
	}
	b.core, b.loaded, b.loading = core, true, false
	return nil
}

// Info returns the board's current INFO words.
func (b *Board) Info() frame.Info {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.infoLocked()
}

func (b *Board) infoLocked() frame.Info {
	in := b.info
	if b.loaded {
		in.Loaded, in.ModelCRC = 1, b.modelCRC
	}
	return in
}

// Status returns the counters.
func (b *Board) Status() frame.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status()
}

// lineTicks is the number of UART bit times since Serve started on a
// byte stream at a known bit rate (0 otherwise).
func (b *Board) lineTicks() uint64 {
	if b.lineT0.IsZero() || b.cfg.BitRate <= 0 {
		return 0
	}
	return uint64(time.Since(b.lineT0).Seconds() * float64(b.cfg.BitRate))
}

// status returns the counters with the bit-time counter brought up to date.
func (b *Board) status() frame.Status {
	st := frame.Status{Counters: b.counters}
	st.Counters[frame.CounterUARTBitTimes] = uint32(b.lineTicks() - b.lineBase) // modulo 2^32
	return st
}

// startLine starts the UART bit-time counter (Serve on a byte stream).
func (b *Board) startLine() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lineT0.IsZero() {
		b.lineT0 = time.Now()
	}
}

// Words returns a copy of the bank words as uploaded (W = L*D).
func (b *Board) Words() []uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]uint16(nil), b.words...)
}

// count increments a counter (modulo 2^32, protocol version 4 and 5). Counters
// 4 and 5 (unknown commands, bad lengths) are not kept by a version-4
// board and stay 0.
func (b *Board) count(k int, n uint32) {
	if k == frame.CounterUnknown || k == frame.CounterBadLength {
		return
	}
	b.counters[k] += n
}

// Count adds n to STATUS counter k (links report their drops with it).
func (b *Board) Count(k int, n uint32) {
	b.mu.Lock()
	b.count(k, n)
	b.mu.Unlock()
}

// appendError appends an ERROR frame and counts it.
func (b *Board) appendError(dst []byte, seq uint16, cmd frame.Type, code frame.ErrorCode, detail uint32) []byte {
	e := frame.BoardError{Code: code, Cmd: cmd, Detail: detail}
	start := len(dst)
	dst = frame.Begin(dst, frame.TypeError, 0, seq)
	dst = e.AppendTo(dst)
	dst, _ = frame.Finish(dst, start)
	b.count(frame.CounterErrors, 1)
	b.count(frame.CounterSent, 1)
	return dst
}

// appendResp appends a one-frame response.
func (b *Board) appendResp(dst []byte, f frame.Frame, payload func([]byte) []byte) []byte {
	start := len(dst)
	dst = frame.Begin(dst, f.Type.Response(), 0, f.Seq)
	if payload != nil {
		dst = payload(dst)
	}
	dst, _ = frame.Finish(dst, start)
	b.count(frame.CounterSent, 1)
	return dst
}

// BusyFrame appends the ERROR (busy) answer to a frame that arrived while
// the board's buffer was full, and counts it.
func (b *Board) BusyFrame(dst []byte, f frame.Frame) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.appendError(dst, f.Seq, f.Type, frame.CodeBusy, 0)
}

// Execute runs one received, CRC-checked frame and appends the response
// frame(s) to dst. Every command gets exactly one response (INFER: one or
// more fragments) or one ERROR frame.
func (b *Board) Execute(dst []byte, f frame.Frame) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.count(frame.CounterExecuted, 1)
	p := f.Payload
	switch f.Type {
	case frame.TypeInfo:
		if len(p) != 0 {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		in := b.infoLocked()
		return b.appendResp(dst, f, in.AppendTo)

	case frame.TypeLoadBegin:
		// Version 4: W is not checked (the host checks it against INFO).
		if len(p) != 4 {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		b.loading, b.loaded, b.core, b.ccore = true, false, nil, nil
		b.next, b.running, b.modelCRC = 0, 0, 0
		return b.appendResp(dst, f, nil) // version 5: an empty answer

	case frame.TypeLoadData:
		// Version 4: an odd last byte is ignored; a retransmission is
		// answered with the next offset like a gap.
		if len(p) < 6 {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		off := binary.LittleEndian.Uint32(p)
		n := (len(p) - 4) / 2
		switch {
		case !b.loading:
			return b.appendError(dst, f.Seq, f.Type, frame.CodeNoLoad, b.next)
		case off != b.next:
			return b.appendError(dst, f.Seq, f.Type, frame.CodeLoadGap, b.next)
		}
		// Words past the bank are neither written nor in the CRC.
		fit := min(n, len(b.words)-int(off))
		for k := range fit {
			b.words[int(off)+k] = binary.LittleEndian.Uint16(p[4+2*k:])
		}
		b.running = crc32.Update(b.running, crc32.IEEETable, p[4:4+2*fit])
		b.next += uint32(fit)
		if fit < n {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		ack := frame.LoadDataAck{Next: b.next} // version 5: offset + n
		return b.appendResp(dst, f, ack.AppendTo)

	case frame.TypeLoadCommit:
		// Version 4: W is not checked; next must be L*D and the CRC the
		// board's (a repeated commit of the valid model passes again).
		if len(p) != 8 {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		w := uint32(len(b.words))
		lc := frame.LoadCommit{CRC: binary.LittleEndian.Uint32(p[4:])}
		switch {
		case b.next != w:
			return b.appendError(dst, f.Seq, f.Type, frame.CodeLoadGap, b.next)
		case lc.CRC != b.running:
			return b.appendError(dst, f.Seq, f.Type, frame.CodeCommitMismatch, 0) // version 5: detail 0
		case !b.loaded:
			if err := b.commit(); err != nil {
				return b.appendError(dst, f.Seq, f.Type, frame.CodeCommitMismatch, 0) // version 5: detail 0
			}
			b.modelCRC = b.running
		}
		b.loading = false
		return b.appendResp(dst, f, nil) // version 5: an empty answer

	case frame.TypeInfer:
		return b.infer(dst, f, f.Payload, nil)

	case frame.TypeInferWindow:
		if b.cfg.Version < 6 {
			break // version 5: an unknown command
		}
		var w frame.Window
		p, err := w.DecodeFromBytes(f.Payload)
		if err != nil {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		return b.infer(dst, f, p, &w)

	case frame.TypeStatus:
		if len(p) != 0 {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		st := b.status()
		return b.appendResp(dst, f, st.AppendTo)

	case frame.TypeResetStatus:
		if len(p) != 0 {
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		b.counters = [frame.StatusCounters]uint32{}
		b.lineBase = b.lineTicks()
		return b.appendResp(dst, f, func(d []byte) []byte { return d })
	}
	b.count(frame.CounterUnknown, 1)
	return b.appendError(dst, f.Seq, f.Type, frame.CodeUnknownCommand, 0)
}

// infer executes an INFER command with the checks of protocol version
// 4: the count field is not read, the board runs one query per whole M*FB
// payload bytes (ignoring the rest) and does not limit the result size
// (fragment indices wrap after 127); the host checks the rest. p is the
// INFER payload; w, if set, is the window of an INFER_WINDOW (f's
// type): only the items it selects are sent, an empty answer when it
// selects none (version 6).
func (b *Board) infer(dst []byte, f frame.Frame, p []byte, w *frame.Window) []byte {
	fb := b.info.FeatureBytes()
	if len(p) < frame.InferHeaderLen {
		return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
	}
	r := frame.InferRequest{Mode: frame.Mode(p[0]), Sets: p[1], K: binary.LittleEndian.Uint16(p[2:]), Seed: binary.LittleEndian.Uint32(p[4:])}
	if p[0] > byte(frame.ModeSums) || r.M() > b.cfg.MMax {
		return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
	}
	if r.K == 0 || int(r.K) > b.cfg.KMax {
		return b.appendError(dst, f.Seq, f.Type, frame.CodeBadK, 0)
	}
	if !b.loaded {
		return b.appendError(dst, f.Seq, f.Type, frame.CodeNoModel, 0)
	}
	M := r.M()
	count := (len(p) - frame.InferHeaderLen) / (M * fb)
	if count == 0 {
		return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
	}
	r.Count = uint16(count)
	r.Features = p[frame.InferHeaderLen : frame.InferHeaderLen+count*M*fb]
	ib := b.info.ItemBytes(r.Mode, int(r.K))
	o, t := int(b.info.O), int(b.info.T)
	out := b.out[:0]
	if len(b.xs) < M {
		b.xs = make([][]bool, M)
	}
	for v := range int(r.Count) {
		xs := b.xs[:M]
		for m := range xs {
			xs[m] = frame.UnpackFeatures(r.Vector(v*M+m, fb), o, xs[m])
		}
		var st fixed.Stats
		var err error
		if b.ccore != nil {
			b.sums, st, err = b.runConv(xs, int(r.K), r.Seed+uint32(v))
		} else {
			b.sums, st, err = b.core.RunSets(xs, int(r.K), r.Seed+uint32(v), b.sums)
		}
		if err != nil { // cannot happen: features and K were checked
			return b.appendError(dst, f.Seq, f.Type, frame.CodeBadLength, 0)
		}
		out = append(out, frame.ResultWords(r.Mode, t, b.sums, st)...)
		b.count(frame.CounterInferred, uint32(min(M, int(r.K))))
	}
	b.out = out
	b.pay = frame.AppendItems(b.pay[:0], out, ib)
	pay := b.pay
	if w != nil {
		pay = w.Select(pay, ib)
	}
	for i := 0; ; i++ {
		n := min(len(pay), frame.MaxPayload)
		more := n < len(pay)
		start := len(dst)
		dst = frame.Begin(dst, f.Type.Response(), frame.FragmentFlags(i, more), f.Seq)
		dst = append(dst, pay[:n]...)
		dst, _ = frame.Finish(dst, start)
		b.count(frame.CounterSent, 1)
		pay = pay[n:]
		if !more {
			return dst
		}
	}
}

// runConv runs one image query on the convolutional core: xs[m] is the
// booleanized image of set m (P*H*W bits, plane-major), its patches formed
// as docs/fixed-point-conv.md section 2 defines.
func (b *Board) runConv(xs [][]bool, K int, seed uint32) ([]int32, fixed.Stats, error) {
	sh := b.cfg.Conv.Shape
	for len(b.pts) < len(xs) {
		b.pts = append(b.pts, conv.NewPatches(sh))
	}
	pts := b.pts[:len(xs)]
	for m, x := range xs {
		if err := pts[m].Fill(x); err != nil {
			return nil, fixed.Stats{}, err
		}
	}
	return b.ccore.RunSets(pts, K, seed, b.sums)
}
