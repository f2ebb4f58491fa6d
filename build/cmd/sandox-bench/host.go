package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuTimes reads the host's total and idle CPU time (in clock ticks) from
// /proc/stat.
func cpuTimes() (total, idle uint64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	return total, idle, nil
}

// memUsed is the host's memory in use: MemTotal less MemAvailable, in
// bytes, and MemTotal.
func memUsed() (used, total int64, err error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var avail int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch k {
		case "MemTotal":
			total = kBytes(v)
		case "MemAvailable":
			avail = kBytes(v)
		}
	}
	return total - avail, total, sc.Err()
}

// memUsedMedian is memUsed read five times, 200 ms apart: the median of
// the readings, and MemTotal.
func memUsedMedian() (used, total int64, err error) {
	var reads []int64
	for i := range 5 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		u, t, err := memUsed()
		if err != nil {
			return 0, 0, err
		}
		reads, total = append(reads, u), t
	}
	slices.Sort(reads)
	return reads[len(reads)/2], total, nil
}

// cgroupMemory reads memory.usage_in_bytes (cgroup v1) or memory.current
// (v2) of the memory cgroup of process pid.
func cgroupMemory(pid int) (int64, bool) {
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(cg), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var file string
		switch {
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			file = filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.usage_in_bytes")
		case f[0] == "0" && f[1] == "":
			file = filepath.Join("/sys/fs/cgroup", f[2], "memory.current")
		default:
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// containerProcs maps a container id to the host pids of its processes, for
// the containers in ids, by reading every process's cgroup.
func containerProcs(ids []string) map[string][]int {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	out := map[string][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(d, "cgroup"))
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(cg, []byte("\n")) {
			i := bytes.LastIndex(line, []byte("/docker/"))
			if i < 0 {
				continue
			}
			id := string(line[i+len("/docker/"):])
			if want[id] {
				out[id] = append(out[id], pid)
			}
			break
		}
	}
	return out
}

// procRSS returns a process's resident set in bytes and its command name.
func procRSS(pid int) (int64, string) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, ""
	}
	var rss int64
	var name string
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Name":
			name = strings.TrimSpace(v)
		case "VmRSS":
			rss = kBytes(v)
		}
	}
	return rss, name
}

// procMem returns a process's proportional set (its share of pages shared
// with other processes, such as the executor binary's pages shared by
// every sandbox) and its anonymous memory, in bytes, from smaps_rollup.
func procMem(pid int) (pss, anon int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Pss":
			pss = kBytes(v)
		case "Anonymous":
			anon = kBytes(v)
		}
	}
	return pss, anon
}

// kBytes reads a /proc value written as "NNN kB" as bytes; 0 when it is not
// one.
func kBytes(v string) int64 {
	kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return kb << 10
}
