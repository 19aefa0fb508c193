package transport

import (
	"net"
	"time"
)

// EtherType is the Ethernet II type of protocol frames (IEEE local
// experimental).
const EtherType = 0x88B5

// DefaultBoardMAC is the board's default MAC address, 02:50:54:4D:00:01
// (locally administered).
var DefaultBoardMAC = net.HardwareAddr{0x02, 0x50, 0x54, 0x4D, 0x00, 0x01}

// EthernetOpts configures OpenEthernet.
type EthernetOpts struct {
	// Interface is the network interface the board is attached to.
	Interface string
	// BoardMAC is the board's address (default DefaultBoardMAC). Frames
	// are sent to it and only frames from it are received.
	BoardMAC net.HardwareAddr
	// PollTimeout bounds each wait for a packet so the reader notices
	// Close (default 50 ms).
	PollTimeout time.Duration
	// QueueFrames is the number of received frames buffered for Recv
	// (default 256).
	QueueFrames int
	// LinkRate is the link's bit rate in bits/s, reported in Stats when
	// non-zero (the transport does not measure it).
	LinkRate int
}
