package resources

import (
	"github.com/sandox/sandox/schemas"
)

// Host is the capacity of the machine sandboxes run on. A capacity of 0 is
// unknown: a percentage of it cannot be resolved, and no request is checked
// against it.
type Host struct {
	// CPUs is the number of online cores, numbered 0 to CPUs-1.
	CPUs int
	// MemoryBytes is the RAM of the host.
	MemoryBytes int64
	// DiskBytes is the size of the filesystem that holds sandbox data.
	DiskBytes int64
	// MemoryBandwidthBytes is the host's total memory bandwidth per second.
	MemoryBandwidthBytes int64
	// MemoryBandwidthEnforceable says whether the host has the kernel's
	// resctrl memory-bandwidth allocation (MBA) to enforce a bandwidth.
	MemoryBandwidthEnforceable bool
}

// Resolve turns req into absolute limits on host. An unset CPU, memory,
// disk or memory bandwidth is 0 in the result, which at this layer means no
// limit (the orchestrator may apply its own defaults); unset PIDs is
// DefaultPIDs. MemoryBandwidthEnforced is true when a bandwidth is set and
// the host enforces it.
//
// Resolve returns the first problem it finds, as a *schemas.Error:
// CodeBadRequest for a cpuset naming a core the host does not have or a
// percentage that comes out below a minimum; CodeResourceExhausted for an
// amount above the host's capacity, or CPU above the cores of the cpuset;
// CodeUnsupported for a memory bandwidth the host cannot enforce (no resctrl
// MBA, or a percentage of an unknown total) unless
// MemoryBandwidthBestEffort is set, and for a percentage of an unknown
// capacity.
func Resolve(req Request, host Host) (schemas.ResolvedResources, error) {
	nanoCPUs, err := resolveCPU(req, host)
	if err != nil {
		return schemas.ResolvedResources{}, err
	}
	memory, err := resolveBytes("memory", req.Memory, host.MemoryBytes, MinMemoryBytes)
	if err != nil {
		return schemas.ResolvedResources{}, err
	}
	disk, err := resolveBytes("disk", req.Disk, host.DiskBytes, 1)
	if err != nil {
		return schemas.ResolvedResources{}, err
	}
	bandwidth, enforced, err := resolveBandwidth(req, host)
	if err != nil {
		return schemas.ResolvedResources{}, err
	}
	pids := req.PIDs
	if pids == 0 {
		pids = DefaultPIDs
	}
	return schemas.ResolvedResources{
		NanoCPUs:                nanoCPUs,
		CPUSet:                  formatCPUSet(req.CPUSet),
		MemoryBytes:             memory,
		DiskBytes:               disk,
		MemoryBandwidthBytes:    bandwidth,
		MemoryBandwidthEnforced: enforced,
		PIDs:                    pids,
		OnOOM:                   req.OnOOM,
	}, nil
}

// resolveCPU checks the cpuset and returns the CPU limit in nanocores.
func resolveCPU(req Request, host Host) (int64, error) {
	n := len(req.CPUSet)
	if host.CPUs > 0 && n > 0 && req.CPUSet[n-1] >= host.CPUs {
		return 0, schemas.Errorf(schemas.CodeBadRequest,
			"compute.cpuset %q names cores the host does not have (it has cores 0-%d)", formatCPUSet(req.CPUSet), host.CPUs-1)
	}
	millis, err := resolveAmount("cpu", req.CPU, int64(host.CPUs)*1000, MinMilliCPU, cores)
	if err != nil || millis == 0 {
		return 0, err
	}
	if n > 0 && millis > int64(n)*1000 {
		return 0, schemas.Errorf(schemas.CodeResourceExhausted,
			"compute.cpu asks %s, but compute.cpuset %q holds only %s", cores(millis), formatCPUSet(req.CPUSet), cores(int64(n)*1000))
	}
	return millis * 1_000_000, nil
}

func resolveBytes(field string, a Amount, capacity, minimum int64) (int64, error) {
	return resolveAmount(field, a, capacity, minimum, FormatBytes)
}

// resolveAmount resolves a against capacity and checks that it lies
// between minimum and capacity. format writes base units for messages.
func resolveAmount(field string, a Amount, capacity, minimum int64, format func(int64) string) (int64, error) {
	if a.IsZero() {
		return 0, nil
	}
	if a.IsRelative() && capacity <= 0 {
		return 0, schemas.Errorf(schemas.CodeUnsupported,
			"compute.%s %s: the host's capacity is unknown, so a percentage of it cannot be resolved", field, a.format(format))
	}
	v := a.Resolve(capacity)
	switch {
	case v < minimum:
		return 0, schemas.Errorf(schemas.CodeBadRequest,
			"compute.%s %s is %s on this host, below the minimum of %s", field, a.format(format), format(v), format(minimum))
	case capacity > 0 && v > capacity:
		return 0, schemas.Errorf(schemas.CodeResourceExhausted,
			"compute.%s asks %s, the host has %s", field, format(v), format(capacity))
	}
	return v, nil
}

// resolveBandwidth returns the memory bandwidth limit and whether the host
// enforces it.
func resolveBandwidth(req Request, host Host) (int64, bool, error) {
	a := req.MemoryBandwidth
	if a.IsZero() {
		return 0, false, nil
	}
	var why string
	switch {
	case !host.MemoryBandwidthEnforceable:
		why = "this host has no resctrl memory-bandwidth allocation (MBA) to enforce it"
	case a.IsRelative() && host.MemoryBandwidthBytes <= 0:
		why = "the host's total memory bandwidth is unknown, so a percentage of it cannot be enforced (give an absolute amount such as 2GB/s)"
	}
	if why != "" && !req.MemoryBandwidthBestEffort {
		return 0, false, schemas.Errorf(schemas.CodeUnsupported,
			"compute.memory_bandwidth %s: %s; set memory_bandwidth_best_effort: true to start the sandbox without this limit",
			a.format(formatBandwidth), why)
	}
	v := a.Resolve(host.MemoryBandwidthBytes)
	if c := host.MemoryBandwidthBytes; c > 0 && v > c {
		return 0, false, schemas.Errorf(schemas.CodeResourceExhausted,
			"compute.memory_bandwidth asks %s, the host has %s", formatBandwidth(v), formatBandwidth(c))
	}
	return v, why == "", nil
}

// cores formats millicores for messages: "2 cores", "0.5 cores", "1 core".
func cores(millis int64) string {
	if millis == 1000 {
		return "1 core"
	}
	return formatCores(millis) + " cores"
}
