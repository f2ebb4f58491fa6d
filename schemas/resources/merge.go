package resources

import (
	"strings"

	"github.com/sandox/sandox/schemas"
)

// Merge returns the resources of a sandbox whose group has defaults and
// which asks for override (nil: nothing of its own). Each field set in
// override wins over the same field of defaults; the others keep the
// default. A string (OnOOM too) is set when it holds more than spaces, PIDs when it is
// not 0, MemoryBandwidthBestEffort when it is true: a sandbox can ask for
// best effort but cannot turn off a best effort its group asks for.
func Merge(defaults schemas.ComputeResources, override *schemas.ComputeResources) schemas.ComputeResources {
	if override == nil {
		return defaults
	}
	m := defaults
	set := func(dst *string, v string) {
		if strings.TrimSpace(v) != "" {
			*dst = v
		}
	}
	set(&m.CPU, override.CPU)
	set(&m.CPUSet, override.CPUSet)
	set(&m.Memory, override.Memory)
	set(&m.Disk, override.Disk)
	set(&m.MemoryBandwidth, override.MemoryBandwidth)
	m.MemoryBandwidthBestEffort = m.MemoryBandwidthBestEffort || override.MemoryBandwidthBestEffort
	if override.OnOOM != "" {
		m.OnOOM = override.OnOOM
	}
	if override.PIDs != 0 {
		m.PIDs = override.PIDs
	}
	return m
}
