// Package pty opens Linux pseudo-terminal pairs for tests: the master is a
// pollable *os.File (deadlines work, Close unblocks a read), the slave is
// set to raw mode and kept open so the master never reads EIO while the
// serial library under test has not opened it yet.
package pty
