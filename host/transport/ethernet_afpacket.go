//go:build linux && cgo

package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/afpacket"
	"github.com/google/gopacket/layers"
	"golang.org/x/net/bpf"

	"github.com/ptmhw/ptm/host/frame"
)

// Ethernet is a Transport over raw Ethernet II frames (AF_PACKET through
// gopacket/afpacket). It needs root or CAP_NET_RAW.
type Ethernet struct {
	tp    *afpacket.TPacket
	name  string
	ours  net.HardwareAddr
	board net.HardwareAddr
	rate  int

	txMu sync.Mutex
	sbuf gopacket.SerializeBuffer

	frames chan *[]byte
	free   chan *[]byte
	last   *[]byte

	done      chan struct{}
	closing   chan struct{}
	closeOnce sync.Once
	readErr   error

	framesSent, bytesSent, framesRecv, bytesRecv atomic.Uint64
	crcErrs, framingErrs, filtered               atomic.Uint64
	txBusy                                       atomic.Int64
	dropHook                                     atomic.Pointer[func(frame.Drop)]
}

// SetDropHook implements DropNotifier.
func (e *Ethernet) SetDropHook(fn func(frame.Drop)) { e.dropHook.Store(&fn) }

// etherTypeFilter is the classic BPF program "ether proto 0x88b5".
var etherTypeFilter = []bpf.RawInstruction{
	{Op: 0x28, K: 12},                      // ldh [12]
	{Op: 0x15, Jt: 0, Jf: 1, K: EtherType}, // jeq #0x88b5
	{Op: 0x06, K: 0xffff},                  // ret #65535
	{Op: 0x06, K: 0},                       // ret #0
}

// OpenEthernet opens an AF_PACKET socket on opts.Interface and returns an
// Ethernet transport. Our MAC address is the interface's.
func OpenEthernet(opts EthernetOpts) (*Ethernet, error) {
	if opts.BoardMAC == nil {
		opts.BoardMAC = DefaultBoardMAC
	}
	if len(opts.BoardMAC) != 6 {
		return nil, fmt.Errorf("transport: board MAC %v is not a 6-byte Ethernet address", opts.BoardMAC)
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 50 * time.Millisecond
	}
	if opts.QueueFrames <= 0 {
		opts.QueueFrames = 256
	}
	ifi, err := net.InterfaceByName(opts.Interface)
	if err != nil {
		return nil, fmt.Errorf("transport: ethernet: %w", err)
	}
	if len(ifi.HardwareAddr) != 6 {
		return nil, fmt.Errorf("transport: ethernet: interface %s has no Ethernet address (%v)", opts.Interface, ifi.HardwareAddr)
	}
	// TPACKET_V2: V3 delivers in blocks retired by a timer, adding up to
	// the block timeout to every response.
	tp, err := afpacket.NewTPacket(afpacket.OptInterface(opts.Interface), afpacket.OptTPacketVersion(afpacket.TPacketVersion2),
		afpacket.OptFrameSize(2048), afpacket.OptBlockSize(1<<16), afpacket.OptNumBlocks(16),
		afpacket.OptPollTimeout(opts.PollTimeout))
	if err != nil {
		return nil, fmt.Errorf("transport: ethernet %s: opening AF_PACKET socket (needs root or CAP_NET_RAW): %w", opts.Interface, err)
	}
	if err := tp.SetBPF(etherTypeFilter); err != nil {
		tp.Close()
		return nil, fmt.Errorf("transport: ethernet %s: attaching the EtherType filter: %w", opts.Interface, err)
	}
	e := &Ethernet{
		tp: tp, ours: ifi.HardwareAddr, board: opts.BoardMAC, rate: opts.LinkRate,
		name:    fmt.Sprintf("ethernet %s %v -> %v", opts.Interface, ifi.HardwareAddr, opts.BoardMAC),
		sbuf:    gopacket.NewSerializeBuffer(),
		frames:  make(chan *[]byte, opts.QueueFrames),
		free:    make(chan *[]byte, opts.QueueFrames+2),
		done:    make(chan struct{}),
		closing: make(chan struct{}),
	}
	go e.readLoop()
	return e, nil
}

// Name implements Transport.
func (e *Ethernet) Name() string { return e.name }

// LocalMAC returns our address (the interface's).
func (e *Ethernet) LocalMAC() net.HardwareAddr { return e.ours }

// Stats implements Transport. Byte counts are protocol frame bytes
// (without Ethernet headers and padding).
func (e *Ethernet) Stats() Stats {
	return Stats{
		FramesSent: e.framesSent.Load(), BytesSent: e.bytesSent.Load(),
		FramesRecv: e.framesRecv.Load(), BytesRecv: e.bytesRecv.Load(),
		CRCErrors: e.crcErrs.Load(), FramingErrors: e.framingErrs.Load(), Filtered: e.filtered.Load(),
		LineRate: e.rate, BitsPerByte: 8, TxBusy: time.Duration(e.txBusy.Load()),
	}
}

// Send implements Transport: one protocol frame per Ethernet frame.
func (e *Ethernet) Send(b []byte) error {
	select {
	case <-e.closing:
		return ErrClosed
	default:
	}
	e.txMu.Lock()
	defer e.txMu.Unlock()
	start := time.Now()
	eth := layers.Ethernet{SrcMAC: e.ours, DstMAC: e.board, EthernetType: layers.EthernetType(EtherType)}
	if err := gopacket.SerializeLayers(e.sbuf, gopacket.SerializeOptions{}, &eth, gopacket.Payload(b)); err != nil {
		return fmt.Errorf("transport: %s: building a frame of %d bytes: %w", e.name, len(b), err)
	}
	if err := e.tp.WritePacketData(e.sbuf.Bytes()); err != nil {
		return fmt.Errorf("transport: %s: sending %d-byte frame: %w", e.name, len(b), err)
	}
	e.txBusy.Add(int64(time.Since(start)))
	e.framesSent.Add(1)
	e.bytesSent.Add(uint64(len(b)))
	return nil
}

// Recv implements Transport.
func (e *Ethernet) Recv(ctx context.Context) ([]byte, error) {
	if e.last != nil {
		select {
		case e.free <- e.last:
		default:
		}
		e.last = nil
	}
	select {
	case b := <-e.frames:
		e.last = b
		return *b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.done:
		select {
		case b := <-e.frames:
			e.last = b
			return *b, nil
		default:
		}
		return nil, e.readErr
	}
}

// Close implements Transport.
func (e *Ethernet) Close() error {
	e.closeOnce.Do(func() {
		close(e.closing)
		<-e.done // the reader exits within the poll timeout
		e.tp.Close()
	})
	return nil
}

func (e *Ethernet) readLoop() {
	defer close(e.done)
	var eth layers.Ethernet
	var f frame.Frame
	bcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	for {
		select {
		case <-e.closing:
			e.readErr = ErrClosed
			return
		default:
		}
		data, _, err := e.tp.ZeroCopyReadPacketData()
		if errors.Is(err, afpacket.ErrTimeout) {
			continue
		}
		if err != nil {
			e.readErr = fmt.Errorf("transport: %s: reading: %w", e.name, err)
			return
		}
		if eth.DecodeFromBytes(data, gopacket.NilDecodeFeedback) != nil || eth.EthernetType != EtherType {
			e.filtered.Add(1)
			continue
		}
		if bytes.Equal(eth.SrcMAC, e.ours) {
			continue // our own transmission, seen by the packet socket
		}
		if !bytes.Equal(eth.SrcMAC, e.board) || !(bytes.Equal(eth.DstMAC, e.ours) || bytes.Equal(eth.DstMAC, bcast)) {
			e.filtered.Add(1)
			continue
		}
		if err := f.DecodeFromBytes(eth.Payload); err != nil {
			d := frame.Drop{Reason: frame.ReasonTooLong, Have: len(eth.Payload), Bytes: eth.Payload}
			if errors.Is(err, frame.ErrCRC) {
				e.crcErrs.Add(1)
				d.Reason = frame.ReasonCRC
			} else {
				e.framingErrs.Add(1)
			}
			if h := e.dropHook.Load(); h != nil && len(eth.Payload) >= frame.HeaderLen {
				d.Type, d.Seq, d.Len = frame.Type(eth.Payload[1]), uint16(eth.Payload[3])|uint16(eth.Payload[4])<<8, int(eth.Payload[5])|int(eth.Payload[6])<<8
				(*h)(d)
			}
			continue
		}
		var b *[]byte
		select {
		case b = <-e.free:
		default:
			nb := make([]byte, 0, frame.MaxFrameLen)
			b = &nb
		}
		*b = append((*b)[:0], eth.Payload[:f.Len()]...)
		e.bytesRecv.Add(uint64(f.Len()))
		select {
		case e.frames <- b:
			e.framesRecv.Add(1)
		case <-e.closing:
			e.readErr = ErrClosed
			return
		}
	}
}
