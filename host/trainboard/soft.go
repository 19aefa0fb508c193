package trainboard

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/ptmhw/ptm/golden/fixedtrain"
	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// Soft is a software training board: the TRAIN commands of
// docs/protocol.md section 8 executed on golden/fixedtrain, behind the
// transport.Transport interface (no link, no faults). It answers exactly
// as rtl/trainboard does, errors included, so host code can be tested
// without Verilator; sim/board checks the RTL against the same answers.
type Soft struct {
	cfg               fixedtrain.Config
	classes, features int
	binary            bool
	ll                int

	mu       sync.Mutex
	tr       *fixedtrain.Trainer
	inited   bool
	trained  uint32
	frames   uint32
	errors   uint32
	out      chan []byte
	closed   chan struct{}
	once     sync.Once
	sentStat transport.Stats
}

// NewSoft returns a software training board for this configuration and
// shape with ll literal lanes (1..4, the RAM layout of TRAIN_READ).
func NewSoft(cfg fixedtrain.Config, classes, features int, binary bool, ll int) (*Soft, error) {
	tr, err := fixedtrain.New(cfg, classes, features, binary)
	if err != nil {
		return nil, err
	}
	if ll < 1 || ll > 4 {
		return nil, fmt.Errorf("trainboard: %d literal lanes, want 1..4", ll)
	}
	cfg.Bits = tr.Bits()
	return &Soft{cfg: cfg, classes: classes, features: features, binary: binary, ll: ll, tr: tr,
		out: make(chan []byte, 1024), closed: make(chan struct{})}, nil
}

func (s *Soft) nt() int {
	if s.binary {
		return 1
	}
	return s.classes
}

func (s *Soft) groups() int { return (2*s.features + s.ll - 1) / s.ll }

func (s *Soft) incDepth() int { return s.nt() * s.cfg.Clauses * s.groups() }

// Send executes one command frame and queues its response frames.
func (s *Soft) Send(b []byte) error {
	select {
	case <-s.closed:
		return transport.ErrClosed
	default:
	}
	var f frame.Frame
	if err := f.DecodeFromBytes(b); err != nil {
		return nil // a bad frame is dropped, as the board does
	}
	s.mu.Lock()
	typ, payload := s.execute(f.Type, f.Payload)
	s.mu.Unlock()
	for i := 0; ; i++ {
		n := min(len(payload), frame.MaxPayload)
		more := n < len(payload)
		fr, err := frame.Append(nil, typ, frame.FragmentFlags(i, more), f.Seq, payload[:n])
		if err != nil {
			return err
		}
		s.out <- fr
		payload = payload[n:]
		if !more {
			return nil
		}
	}
}

// Recv returns the next response frame.
func (s *Soft) Recv(ctx context.Context) ([]byte, error) {
	select {
	case b := <-s.out:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closed:
		return nil, transport.ErrClosed
	}
}

// Close ends the board.
func (s *Soft) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// Name describes the board.
func (s *Soft) Name() string { return "software training board" }

// Stats returns zero counters (there is no link).
func (s *Soft) Stats() transport.Stats { return s.sentStat }

func u32(p []byte, words ...uint32) []byte {
	for _, w := range words {
		p = binary.LittleEndian.AppendUint32(p, w)
	}
	return p
}

func (s *Soft) fail(cmd frame.Type, code frame.ErrorCode, detail uint32) (frame.Type, []byte) {
	s.errors++
	e := frame.BoardError{Code: code, Cmd: cmd, Detail: detail}
	return frame.TypeError, e.AppendTo(nil)
}

// execute runs one command (docs/protocol.md section 8, checks in the
// documented order).
func (s *Soft) execute(cmd frame.Type, p []byte) (frame.Type, []byte) {
	s.frames++
	rb := 1 + (s.features+7)/8
	lanes := s.nt()*s.cfg.Clauses + 1
	switch cmd {
	case frame.TypeTrainInfo:
		if len(p) != 0 {
			return s.fail(cmd, frame.CodeBadLength, 0)
		}
		mv := fixedtrain.MovesOf(s.cfg.S)
		flags := uint32(0)
		if s.binary {
			flags |= 1
		}
		if s.cfg.Feedback == "paper" {
			flags |= 2
		}
		if s.inited {
			flags |= 4
		}
		inc := s.incDepth()
		return cmd.Response(), u32(nil, 0x4E525450, 1, uint32(s.nt()), uint32(s.classes), uint32(s.cfg.Clauses), uint32(s.features),
			uint32(s.cfg.T), uint32(s.cfg.N), uint32(s.cfg.Bits), uint32(s.ll), mv.Up, mv.Down, flags,
			uint32(inc*2*s.cfg.N), uint32(inc), s.trained, s.frames, s.errors, 0, 0, 0, 0)
	case frame.TypeTrainInit:
		if len(p) != 0 {
			return s.fail(cmd, frame.CodeBadLength, 0)
		}
		tr, err := fixedtrain.New(s.cfg, s.classes, s.features, s.binary)
		if err != nil {
			panic(err) // the configuration was checked by NewSoft
		}
		for l := 0; l < lanes; l++ { // TRAIN_INIT leaves the lanes alone
			v, _ := s.tr.Lane(l)
			_ = tr.SetLane(l, v)
		}
		s.tr, s.inited, s.trained = tr, true, 0
		return cmd.Response(), u32(nil, 0)
	case frame.TypeTrainSeed:
		if len(p) < 12 || (len(p)-4)%8 != 0 {
			return s.fail(cmd, frame.CodeBadLength, 12)
		}
		first, n := binary.LittleEndian.Uint32(p), uint32((len(p)-4)/8)
		if uint64(first)+uint64(n) > uint64(lanes) {
			return s.fail(cmd, frame.CodeRange, uint32(lanes))
		}
		for k := uint32(0); k < n; k++ {
			_ = s.tr.SetLane(int(first+k), binary.LittleEndian.Uint64(p[4+8*k:]))
		}
		return cmd.Response(), u32(nil, first, n)
	case frame.TypeTrainRows:
		if len(p) < 6 {
			return s.fail(cmd, frame.CodeBadLength, uint32(6+rb))
		}
		first, count := binary.LittleEndian.Uint32(p), int(binary.LittleEndian.Uint16(p[4:]))
		if count == 0 || len(p) != 6+count*rb {
			return s.fail(cmd, frame.CodeBadLength, uint32(6+max(count, 1)*rb))
		}
		if !s.inited {
			return s.fail(cmd, frame.CodeNotInit, 0)
		}
		for r := 0; r < count; r++ {
			if int(p[6+r*rb]) >= s.classes {
				return s.fail(cmd, frame.CodeBadLabel, uint32(r))
			}
		}
		switch {
		case first == s.trained:
			x := make([]bool, s.features)
			for r := 0; r < count; r++ {
				row := p[6+r*rb:]
				for i := range x {
					x[i] = row[1+i/8]>>(i%8)&1 != 0
				}
				if err := s.tr.Update(x, int(row[0])); err != nil {
					panic(err) // the label was checked above
				}
				s.trained++
			}
		case uint64(first)+uint64(count) <= uint64(s.trained):
		default:
			return s.fail(cmd, frame.CodeLoadGap, s.trained)
		}
		return cmd.Response(), u32(nil, s.trained)
	case frame.TypeTrainRead:
		if len(p) != 12 {
			return s.fail(cmd, frame.CodeBadLength, 12)
		}
		what, lane := p[0], int(p[1])
		if what > 2 || lane >= s.ll || p[2] != 0 || p[3] != 0 {
			return s.fail(cmd, frame.CodeBadLength, 0)
		}
		off, n := binary.LittleEndian.Uint32(p[4:]), binary.LittleEndian.Uint32(p[8:])
		if n == 0 || n > 65536 {
			return s.fail(cmd, frame.CodeBadLength, 65536)
		}
		depth := uint32(s.incDepth())
		if what == 0 {
			depth *= uint32(2 * s.cfg.N)
		}
		if uint64(off)+uint64(n) > uint64(depth) {
			return s.fail(cmd, frame.CodeRange, depth)
		}
		out := make([]byte, 0, 2*n)
		for a := off; a < off+n; a++ {
			out = binary.LittleEndian.AppendUint16(out, s.word(what, lane, int(a)))
		}
		return cmd.Response(), out
	}
	return s.fail(cmd, frame.CodeUnknownCommand, 0)
}

// word returns word a of lane lane's SPV (what 0), include (1) or
// threshold (2) RAM; padding TAs (literal >= 2o) read as the initial state.
func (s *Soft) word(what byte, lane, a int) uint16 {
	g, n2 := s.groups(), 2*s.cfg.N
	ta := a
	if what == 0 {
		ta = a / n2
	}
	c, i := ta/g, (ta%g)*s.ll+lane
	half := uint16(1) << uint(s.cfg.Bits-1)
	if i >= 2*s.features { // a padding slot: never trained
		if what != 0 {
			return half
		}
		if st := a % n2; st == s.cfg.N-1 || st == s.cfg.N {
			return half
		}
		return 0
	}
	idx := s.tr.TAIndex(c/s.cfg.Clauses, c%s.cfg.Clauses, i)
	switch what {
	case 0:
		return s.tr.SPV(idx)[a%n2]
	case 1:
		return uint16(s.tr.IncludeMass(idx))
	}
	return uint16(min(s.tr.IncludeMass(idx), 1<<uint(s.cfg.Bits)-1))
}
