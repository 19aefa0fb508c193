package transport

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Open opens a transport from a link specification, for command-line
// tools:
//
//	uart:/dev/ttyUSB1@115200   a serial port at a baud rate (default 115200)
//	/dev/ttyUSB1@3000000       the same (a path starting with /)
//	eth:enp3s0                 raw Ethernet on an interface, board at DefaultBoardMAC
//	eth:enp3s0/02:50:54:4d:00:07  the same with another board MAC
func Open(spec string) (Transport, error) {
	kind, rest, ok := strings.Cut(spec, ":")
	if strings.HasPrefix(spec, "/") {
		kind, rest, ok = "uart", spec, true
	}
	if !ok || rest == "" {
		return nil, fmt.Errorf("transport: link %q: want uart:<device>[@baud] or eth:<interface>[/<board MAC>]", spec)
	}
	switch kind {
	case "uart", "serial":
		path, b, hasBaud := strings.Cut(rest, "@")
		baud := 115200
		if hasBaud {
			v, err := strconv.Atoi(b)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("transport: link %q: baud %q is not a positive integer", spec, b)
			}
			baud = v
		}
		return OpenUART(path, UARTOpts{Baud: baud})
	case "eth", "ethernet":
		iface, m, hasMAC := strings.Cut(rest, "/")
		opts := EthernetOpts{Interface: iface}
		if hasMAC {
			mac, err := net.ParseMAC(m)
			if err != nil {
				return nil, fmt.Errorf("transport: link %q: board MAC: %w", spec, err)
			}
			opts.BoardMAC = mac
		}
		return OpenEthernet(opts)
	}
	return nil, fmt.Errorf("transport: link %q: unknown kind %q (want uart or eth)", spec, kind)
}
