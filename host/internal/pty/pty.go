//go:build linux

package pty

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pair is an open pseudo-terminal.
type Pair struct {
	// Master is the master side (where a software board runs).
	Master *os.File
	// SlavePath is the slave device (/dev/pts/N), for a serial-port
	// library to open.
	SlavePath string
	// hold keeps the slave open so that the master does not read EIO
	// while no one else has the slave open.
	hold *os.File
}

// Open creates a pseudo-terminal pair with the slave in raw mode (no echo,
// no CR/LF translation, 8-bit clean).
func Open() (*Pair, error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("pty: opening /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pty: unlocking the slave: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pty: slave number: %w", err)
	}
	p := &Pair{Master: os.NewFile(uintptr(fd), "/dev/ptmx"), SlavePath: "/dev/pts/" + strconv.Itoa(n)}
	hold, err := os.OpenFile(p.SlavePath, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		p.Master.Close()
		return nil, fmt.Errorf("pty: opening %s: %w", p.SlavePath, err)
	}
	p.hold = hold
	if err := MakeRaw(int(hold.Fd())); err != nil {
		p.Close()
		return nil, fmt.Errorf("pty: %s: %w", p.SlavePath, err)
	}
	return p, nil
}

// MakeRaw puts the terminal fd in raw mode (cfmakeraw).
func MakeRaw(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("getting termios: %w", err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return fmt.Errorf("setting raw mode: %w", err)
	}
	return nil
}

// Close closes both sides.
func (p *Pair) Close() error {
	var err error
	if p.hold != nil {
		err = p.hold.Close()
	}
	if e := p.Master.Close(); err == nil {
		err = e
	}
	return err
}
