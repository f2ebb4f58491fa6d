package terminal

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sandox/sandox/schemas"
)

// killJobTree sends SIGKILL to every process of job id, whose bash is pid
// and leads process group pid: the group, and every process that left it
// (setsid, a shell's own job control) but still carries the job's mark in
// its environment (jobEnvVar) or descends from one that does. It scans
// /proc a few times to catch processes forked meanwhile. A process that
// both cleared its environment and was orphaned escapes; the sandbox has
// no cgroup of its own to put a job in.
func killJobTree(pid int, id string) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for range 5 {
		pids := jobProcs(pid, id)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// signalJob sends sig to the job's process group and to the processes of
// the job outside it (jobProcs).
func signalJob(pid int, id string, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	for _, p := range jobProcs(pid, id) {
		if pgid, _ := syscall.Getpgid(p); pgid != pid {
			_ = syscall.Kill(p, sig)
		}
	}
	if err != nil && err != syscall.ESRCH {
		return fmt.Errorf("signal job %s: %w", id, err)
	}
	return nil
}

// jobProcs lists the live (not zombie) processes of job id: those in
// process group pgid, those whose environment holds the job's mark, and
// their descendants.
func jobProcs(pgid int, id string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	mark := []byte(jobEnvVar + "=" + id + "\x00")
	self := os.Getpid()
	in := map[int]bool{}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		ppid, pgrp, ok := procStat(pid)
		if !ok {
			continue
		}
		parent[pid] = ppid
		if pgrp == pgid {
			in[pid] = true
			continue
		}
		if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(append([]byte{0}, env...), append([]byte{0}, mark...)) {
			in[pid] = true
		}
	}
	// Descendants of the job's processes belong to it too.
	for changed := true; changed; {
		changed = false
		for pid, ppid := range parent {
			if !in[pid] && in[ppid] {
				in[pid], changed = true, true
			}
		}
	}
	pids := make([]int, 0, len(in))
	for pid := range in {
		pids = append(pids, pid)
	}
	return pids
}

// procStat reads the parent and process group of a live process from
// /proc/PID/stat; ok is false for a zombie or a process gone.
func procStat(pid int) (ppid, pgrp int, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp session …; comm may hold spaces and ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || string(f[0]) == "Z" {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	return ppid, pgrp, err1 == nil && err2 == nil
}

// jobSignals are the signals signal_job sends, by name.
var jobSignals = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
	"TERM": syscall.SIGTERM, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT,
}

// parseSignal reads a signal name, with or without "SIG", in any case;
// another name is schemas.CodeInvalidArgs.
func parseSignal(name string) (syscall.Signal, error) {
	n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG")
	if s, ok := jobSignals[n]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("%w: signal %q: want one of HUP, INT, QUIT, KILL, USR1, USR2, TERM, STOP, CONT", schemas.CodeInvalidArgs, name)
}

// signalName names sig as "SIGKILL".
func signalName(sig syscall.Signal) string {
	for n, s := range jobSignals {
		if s == sig {
			return "SIG" + n
		}
	}
	return "signal " + strconv.Itoa(int(sig))
}
