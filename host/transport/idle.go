package transport

import "time"

// IdleProbe is how long the confirming read of an IdleClock waits for a
// byte (see IdleClock).
const IdleProbe = time.Millisecond

// IdleClock decides when a partly received frame on a byte stream has
// been idle long enough to be dropped (the receiver's idle rule: a frame
// whose bytes stop coming was cut, and its bytes after SOF are rescanned).
//
// The reader that keeps it sets each read's deadline from Deadline and
// passes each read's outcome to Expired. On a reader with deadlines (a
// pipe, a pseudo-terminal, a socket) a read whose deadline has passed
// returns at once without looking at the bytes waiting in the kernel: a
// reader that was itself kept from running past the deadline (a loaded
// machine) would take its own stall for line idle and drop a frame whose
// next bytes are already there. So the first expiry is only a suspicion:
// one more read with a fresh, short deadline (IdleProbe) must come back
// empty before the frame is dropped.
type IdleClock struct {
	// Timeout is the idle time that drops a partial frame; <= 0 never
	// drops one.
	Timeout time.Duration
	// Deadlines: the reader's reads honour deadlines (Deadline is used);
	// false for readers with a timeout of their own (tarm/serial), whose
	// reads return waiting bytes even after a stall.
	Deadlines bool

	last    time.Time
	probing bool
}

// Start sets the time of the last byte (the reader's start).
func (c *IdleClock) Start(now time.Time) { c.last, c.probing = now, false }

// Deadline is the deadline for the next read: none while no partial frame
// is buffered, else the end of the idle time, or a short one while the
// expiry is being confirmed.
func (c *IdleClock) Deadline(buffered bool) time.Time {
	switch {
	case c.Timeout <= 0 || !buffered:
		return time.Time{}
	case c.probing:
		return time.Now().Add(IdleProbe)
	}
	return c.last.Add(c.Timeout)
}

// Expired takes a read's outcome (n bytes, returned at now; buffered: a
// partial frame is waiting after the bytes were parsed) and reports
// whether the partial frame is to be dropped now.
func (c *IdleClock) Expired(n int, now time.Time, buffered bool) bool {
	if n > 0 {
		c.last, c.probing = now, false
	}
	if c.Timeout <= 0 || !buffered || now.Sub(c.last) < c.Timeout {
		c.probing = false
		return false
	}
	if c.Deadlines && !c.probing {
		c.probing = true
		return false
	}
	c.probing = false
	return true
}
