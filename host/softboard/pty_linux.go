//go:build linux

package softboard

import (
	"context"
	"fmt"
	"io"

	"github.com/ptmhw/ptm/host/internal/pty"
)

// ServePTY serves the board on a new pseudo-terminal (its slave in raw
// mode, a serial port for any host: `ptm stream --uart PATH`) until ctx
// is done, optionally through faults. ready is called with the slave's
// path once the board listens. It returns nil when ctx ended it.
func (b *Board) ServePTY(ctx context.Context, opts StreamOpts, faults *Faults, ready func(path string)) error {
	p, err := pty.Open()
	if err != nil {
		return fmt.Errorf("softboard: %w", err)
	}
	defer p.Close()
	var link io.ReadWriteCloser = p.Master
	if faults != nil {
		link = faults.Wrap(p.Master)
	}
	if ready != nil {
		ready(p.SlavePath)
	}
	return b.Serve(ctx, link, opts)
}
