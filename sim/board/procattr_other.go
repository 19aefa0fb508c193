//go:build !linux

package board

import "os/exec"

// killGroupOnCancel is the default cancellation elsewhere (the process
// itself is killed).
func killGroupOnCancel(cmd *exec.Cmd) {}

// dieWithParent does nothing elsewhere: the simulator also exits when its
// standard input closes (--watch-stdin).
func dieWithParent(cmd *exec.Cmd) {}
