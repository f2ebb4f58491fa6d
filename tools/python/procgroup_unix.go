//go:build unix

package python

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup makes the host lead a process group of its own, so that
// killProcessGroup also ends the processes tool functions started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to the host's process group.
func killProcessGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		p.Kill() // the group is gone; make sure the host is too
	}
}
