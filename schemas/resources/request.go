package resources

import (
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// Request is a validated [schemas.ComputeResources]. A zero Amount asks for
// no limit.
type Request struct {
	CPU             Amount // millicores
	Memory          Amount // bytes
	Disk            Amount // bytes
	MemoryBandwidth Amount // bytes per second
	// CPUSet holds the cores the sandbox may run on, sorted and without
	// duplicates; nil means any core.
	CPUSet                    []int
	MemoryBandwidthBestEffort bool
	PIDs                      int64 // 0: DefaultPIDs
	OnOOM                     schemas.OOMPolicy
}

// Parse checks c and parses its amounts. An empty (or all-space) field is
// unset. It reports every wrong field, not only the first, in one
// *schemas.Error with CodeBadRequest whose message names each field, its
// value and what is wrong with it, joined by "; ":
//
//	compute.memory "12XB": unknown unit "XB" (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB or a percentage)
func Parse(c schemas.ComputeResources) (Request, error) {
	var (
		req      Request
		problems []string
	)
	amount := func(name, raw string, parse func(string) (Amount, error), dst *Amount) {
		if strings.TrimSpace(raw) == "" {
			return
		}
		a, err := parse(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("compute.%s %q: %v", name, raw, err))
			return
		}
		*dst = a
	}
	amount("cpu", c.CPU, parseCPU, &req.CPU)
	if strings.TrimSpace(c.CPUSet) != "" {
		cores, err := parseCPUSet(c.CPUSet)
		if err != nil {
			problems = append(problems, fmt.Sprintf("compute.cpuset %q: %v (want core numbers and ranges, as in 0-1,3)", c.CPUSet, err))
		}
		req.CPUSet = cores
	}
	amount("memory", c.Memory, parseMemory, &req.Memory)
	amount("disk", c.Disk, parseBytes, &req.Disk)
	amount("memory_bandwidth", c.MemoryBandwidth, parseBandwidth, &req.MemoryBandwidth)
	req.MemoryBandwidthBestEffort = c.MemoryBandwidthBestEffort
	switch {
	case c.PIDs < 0:
		problems = append(problems, fmt.Sprintf("compute.pids %d: must not be negative (0 means the default, %d)", c.PIDs, DefaultPIDs))
	case c.PIDs > MaxPIDs:
		problems = append(problems, fmt.Sprintf("compute.pids %d: above the kernel's maximum of %d", c.PIDs, MaxPIDs))
	}
	req.PIDs = c.PIDs
	switch c.OnOOM {
	case "":
		req.OnOOM = schemas.OnOOMContinue
	case schemas.OnOOMContinue, schemas.OnOOMRestart, schemas.OnOOMFail:
		req.OnOOM = c.OnOOM
	default:
		problems = append(problems, fmt.Sprintf("compute.on_oom %q: want %q, %q or %q", c.OnOOM, schemas.OnOOMContinue, schemas.OnOOMRestart, schemas.OnOOMFail))
	}
	if len(problems) > 0 {
		return Request{}, schemas.Errorf(schemas.CodeBadRequest, "%s", strings.Join(problems, "; "))
	}
	return req, nil
}
