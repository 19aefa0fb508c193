package conformance_test

import (
	"encoding/binary"

	"github.com/ptmhw/ptm/host/frame"
)

func appendCRC(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, frame.Checksum(b[1:]))
}
