package resources

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCores bounds core numbers: the largest NR_CPUS of a Linux build.
const maxCores = 8192

// parseCPUSet parses a list of cores in the kernel's list syntax: numbers
// and inclusive ranges joined by commas ("0-1,3"), spaces allowed around
// each element. It returns the cores sorted and without duplicates.
func parseCPUSet(s string) ([]int, error) {
	var set [maxCores]bool
	for elem := range strings.SplitSeq(s, ",") {
		elem = strings.TrimSpace(elem)
		if elem == "" {
			return nil, fmt.Errorf("empty element")
		}
		lo, hi, isRange := strings.Cut(elem, "-")
		first, err := parseCore(lo)
		if err != nil {
			return nil, err
		}
		last := first
		if isRange {
			if last, err = parseCore(hi); err != nil {
				return nil, err
			}
			if last < first {
				return nil, fmt.Errorf("range %q runs backwards", elem)
			}
		}
		for c := first; c <= last; c++ {
			set[c] = true
		}
	}
	var cores []int
	for c, in := range set {
		if in {
			cores = append(cores, c)
		}
	}
	return cores, nil
}

func parseCore(s string) (int, error) {
	s = strings.TrimSpace(s)
	if !isDigits(s) {
		return 0, fmt.Errorf("%q is not a core number", s)
	}
	c, err := strconv.Atoi(s)
	if err != nil || c >= maxCores {
		return 0, fmt.Errorf("core %s is above %d", s, maxCores-1)
	}
	return c, nil
}

// formatCPUSet writes sorted cores in the kernel's list syntax, ranges
// collapsed: [0 1 3] is "0-1,3".
func formatCPUSet(cores []int) string {
	var b strings.Builder
	for i := 0; i < len(cores); {
		j := i
		for j+1 < len(cores) && cores[j+1] == cores[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cores[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cores[j]))
		}
		i = j + 1
	}
	return b.String()
}
