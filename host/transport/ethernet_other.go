//go:build !(linux && cgo)

package transport

import (
	"context"
	"errors"
	"net"
)

// Ethernet is a Transport over raw Ethernet frames; it needs Linux and cgo
// (gopacket/afpacket), so this build only has a stub.
type Ethernet struct{}

// OpenEthernet reports that raw Ethernet is not available in this build.
func OpenEthernet(opts EthernetOpts) (*Ethernet, error) {
	return nil, errors.New("transport: ethernet needs Linux and cgo (gopacket/afpacket); rebuild with CGO_ENABLED=1")
}

// Name implements Transport.
func (e *Ethernet) Name() string { return "ethernet (unavailable)" }

// LocalMAC returns nil.
func (e *Ethernet) LocalMAC() net.HardwareAddr { return nil }

// Stats implements Transport.
func (e *Ethernet) Stats() Stats { return Stats{} }

// Send implements Transport.
func (e *Ethernet) Send([]byte) error { return ErrClosed }

// Recv implements Transport.
func (e *Ethernet) Recv(context.Context) ([]byte, error) { return nil, ErrClosed }

// Close implements Transport.
func (e *Ethernet) Close() error { return nil }
