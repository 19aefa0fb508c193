//go:build linux

package board

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs cmd in a process group of its own and makes the
// cancellation of its context kill the whole group: a Verilator build's
// make and compilers stop with it, instead of running on after ptm was
// told to stop.
func killGroupOnCancel(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// dieWithParent makes the kernel kill cmd when the process that started
// it dies, even by SIGKILL, which leaves no chance to stop it otherwise:
// a simulator must not serve its pseudo-terminal or TAP without the ptm
// process that owns it.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
