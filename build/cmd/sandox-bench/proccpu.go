package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procTicks is a process's command name and the CPU time (user + system,
// in clock ticks) it has used.
type procTicks struct {
	name  string
	ticks uint64
}

// procCPU reads procTicks of every process on the host, by pid.
func procCPU() map[string]procTicks {
	out := map[string]procTicks{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces, so cut at the
		// last ')'. utime and stime are the 14th and 15th fields.
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseUint(f[11], 10, 64)
		stime, _ := strconv.ParseUint(f[12], 10, 64)
		out[filepath.Base(d)] = procTicks{s[open+1 : end], utime + stime}
	}
	return out
}

// cpuSplit says which commands took the CPU time between two procCPU
// readings, summed by command name (kernel workers as one), as percent of
// all cores' time (total ticks of /proc/stat), the largest first, those
// under 1 % left out. A process that ended between the readings is not
// counted; one that started counts in full.
func cpuSplit(before, after map[string]procTicks, totalTicks uint64) string {
	if totalTicks == 0 {
		return ""
	}
	byName := map[string]uint64{}
	for pid, p := range after {
		name := p.name
		if strings.HasPrefix(name, "kworker/") {
			name = "kworker"
		}
		byName[name] += p.ticks - min(p.ticks, before[pid].ticks)
	}
	type share struct {
		name string
		pct  float64
	}
	var shares []share
	for name, d := range byName {
		if float64(d)/float64(totalTicks) >= 0.01 {
			shares = append(shares, share{name, 100 * float64(d) / float64(totalTicks)})
		}
	}
	slices.SortFunc(shares, func(a, b share) int { return cmp.Compare(b.pct, a.pct) })
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("%s %.0f%%", s.name, s.pct)
	}
	return strings.Join(parts, ", ")
}
