package terminal

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// killSession sends SIGKILL to every process of the Unix session sid: the
// shell (a session leader, so sid is its pid), its foreground command and
// every background job, each of which has a process group of its own. It
// scans /proc a few times to catch processes forked meanwhile. Processes
// that left the session with setsid survive, as they would a closed
// terminal.
func killSession(sid int) {
	_ = syscall.Kill(-sid, syscall.SIGKILL) // the shell's own group, without /proc
	for range 5 {
		pids := sessionProcs(sid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sessionProcs lists the live (not zombie) processes whose session id is
// sid, from /proc/PID/stat.
func sessionProcs(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 4 || string(f[0]) == "Z" {
			continue
		}
		if s, err := strconv.Atoi(string(f[3])); err == nil && s == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// foregroundGroup returns the process group in the foreground of the
// terminal whose master is f.
func foregroundGroup(f *os.File) (int, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pgrp int32
	var errno syscall.Errno
	err = sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	})
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return int(pgrp), nil
}

// processDir returns the working directory of process pid.
func processDir(pid int) (string, error) {
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
}

// pollable returns a non-blocking copy of the PTY master f, so that reads
// and writes go through the runtime poller: Close then ends a pending Read
// and writes can have a deadline. (pty.Start leaves the master in blocking
// mode.) It closes f.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return nil, errno
	}
	fd := int(r)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
