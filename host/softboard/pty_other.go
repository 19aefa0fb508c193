//go:build !linux

package softboard

import (
	"context"
	"errors"
)

// ServePTY is Linux-only (pseudo-terminals through /dev/ptmx).
func (b *Board) ServePTY(ctx context.Context, opts StreamOpts, faults *Faults, ready func(path string)) error {
	return errors.New("softboard: pseudo-terminals are supported on Linux only")
}
