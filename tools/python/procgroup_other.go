//go:build !unix

package python

import (
	"os"
	"os/exec"
)

// ownProcessGroup does nothing where there are no process groups.
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the host only: child processes of tool functions
// are not tracked on this platform.
func killProcessGroup(p *os.Process) { p.Kill() }
