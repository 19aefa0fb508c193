//go:build linux

package softboard

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ptmhw/ptm/host/frame"
	"github.com/ptmhw/ptm/host/transport"
)

// RawEthernet is a raw AF_PACKET socket bound to one interface, seeing
// every frame the interface receives (not the ones it sends). It needs
// root or CAP_NET_RAW. It is the software board's Ethernet MAC and uses
// golang.org/x/sys/unix directly, independently of the host's gopacket
// transport.
type RawEthernet struct {
	fd      int
	ifindex int
	mu      sync.Mutex
	closed  bool
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenRawEthernet opens a raw socket on iface.
func OpenRawEthernet(iface string) (*RawEthernet, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("softboard: ethernet: %w", err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("softboard: ethernet %s: raw socket (needs root or CAP_NET_RAW): %w", iface, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("softboard: ethernet %s: bind: %w", iface, err)
	}
	tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("softboard: ethernet %s: receive timeout: %w", iface, err)
	}
	return &RawEthernet{fd: fd, ifindex: ifi.Index}, nil
}

// errTimeout is returned by ReadPacket when no frame arrived in time.
var errTimeout = errors.New("softboard: ethernet read timeout")

// ReadPacket reads one received Ethernet frame (header and payload, no
// FCS) into buf.
func (r *RawEthernet) ReadPacket(buf []byte) (int, error) {
	for {
		n, from, err := unix.Recvfrom(r.fd, buf, 0)
		if err == unix.EAGAIN || err == unix.EINTR {
			return 0, errTimeout
		}
		if err != nil {
			return 0, err
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		return n, nil
	}
}

// WritePacket sends one Ethernet frame.
func (r *RawEthernet) WritePacket(b []byte) error {
	_, err := unix.Write(r.fd, b)
	return err
}

// Close closes the socket.
func (r *RawEthernet) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	return unix.Close(r.fd)
}

type ethFrame struct {
	src  [6]byte
	data []byte
}

// ServeEthernet runs the board on a raw Ethernet interface until ctx is
// done, answering protocol frames (EtherType 0x88B5) sent to mac (or
// broadcast) at the requester's MAC. Frames for another address or of
// another type are counted as Ethernet drops (STATUS counter 7), bad
// frames as CRC or framing errors. It closes conn when it returns.
func (b *Board) ServeEthernet(ctx context.Context, conn *RawEthernet, mac net.HardwareAddr) error {
	if len(mac) != 6 {
		return fmt.Errorf("softboard: board MAC %v is not a 6-byte address", mac)
	}
	defer conn.Close()
	queue := make(chan ethFrame, b.cfg.QueueFrames)
	var txMu sync.Mutex
	var pkt []byte
	send := func(dst [6]byte, frames []byte) error {
		txMu.Lock()
		defer txMu.Unlock()
		for len(frames) > 0 {
			n, err := frame.PeekLen(frames)
			if err != nil {
				return err
			}
			pkt = append(pkt[:0], dst[:]...)
			pkt = append(pkt, mac...)
			pkt = binary.BigEndian.AppendUint16(pkt, transport.EtherType)
			pkt = append(pkt, frames[:n]...)
			for len(pkt) < 60 {
				pkt = append(pkt, 0)
			}
			if err := conn.WritePacket(pkt); err != nil {
				return err
			}
			frames = frames[n:]
		}
		return nil
	}
	rxErr := make(chan error, 1)
	go func() {
		defer close(queue)
		buf := make([]byte, 2048)
		bcast := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		var busy []byte
		for ctx.Err() == nil {
			n, err := conn.ReadPacket(buf)
			if err == errTimeout {
				continue
			}
			if err != nil {
				rxErr <- fmt.Errorf("softboard: ethernet read: %w", err)
				return
			}
			p := buf[:n]
			if n < 14 || binary.BigEndian.Uint16(p[12:]) != transport.EtherType || !(bytes.Equal(p[:6], mac) || bytes.Equal(p[:6], bcast)) {
				b.Count(frame.CounterEthDropped, 1)
				continue
			}
			var f frame.Frame
			if err := f.DecodeFromBytes(p[14:]); err != nil {
				if errors.Is(err, frame.ErrCRC) {
					b.Count(frame.CounterCRCErrors, 1)
				} else {
					b.Count(frame.CounterFraming, 1)
				}
				continue
			}
			var ef ethFrame
			copy(ef.src[:], p[6:12])
			ef.data = append([]byte(nil), p[14:14+f.Len()]...)
			select {
			case queue <- ef:
			default:
				busy = b.BusyFrame(busy[:0], f)
				_ = send(ef.src, busy)
			}
		}
		rxErr <- nil
	}()
	var out []byte
	for ef := range queue {
		var f frame.Frame
		if f.DecodeFromBytes(ef.data) != nil {
			continue
		}
		out = b.Execute(out[:0], f)
		if err := send(ef.src, out); err != nil && ctx.Err() == nil {
			return fmt.Errorf("softboard: ethernet write: %w", err)
		}
	}
	return <-rxErr
}
