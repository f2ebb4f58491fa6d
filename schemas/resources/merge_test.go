package resources

import (
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/assert"
)

func TestMerge(t *testing.T) {
	defaults := schemas.ComputeResources{
		CPU: "2", CPUSet: "0-3", Memory: "4GiB", Disk: "10GiB",
		MemoryBandwidth: "2GB/s", PIDs: 256,
	}
	tests := []struct {
		name     string
		override *schemas.ComputeResources
		want     schemas.ComputeResources
	}{
		{"no override", nil, defaults},
		{"empty override", &schemas.ComputeResources{}, defaults},
		{"spaces do not override", &schemas.ComputeResources{CPU: " "}, defaults},
		{"cpu", &schemas.ComputeResources{CPU: "25%"}, with(defaults, func(c *schemas.ComputeResources) { c.CPU = "25%" })},
		{"cpuset", &schemas.ComputeResources{CPUSet: "4"}, with(defaults, func(c *schemas.ComputeResources) { c.CPUSet = "4" })},
		{"memory", &schemas.ComputeResources{Memory: "8GiB"}, with(defaults, func(c *schemas.ComputeResources) { c.Memory = "8GiB" })},
		{"disk", &schemas.ComputeResources{Disk: "1%"}, with(defaults, func(c *schemas.ComputeResources) { c.Disk = "1%" })},
		{"memory bandwidth", &schemas.ComputeResources{MemoryBandwidth: "10%"}, with(defaults, func(c *schemas.ComputeResources) { c.MemoryBandwidth = "10%" })},
		{"best effort", &schemas.ComputeResources{MemoryBandwidthBestEffort: true}, with(defaults, func(c *schemas.ComputeResources) { c.MemoryBandwidthBestEffort = true })},
		{"pids", &schemas.ComputeResources{PIDs: 64}, with(defaults, func(c *schemas.ComputeResources) { c.PIDs = 64 })},
		{"on_oom", &schemas.ComputeResources{OnOOM: schemas.OnOOMFail}, with(defaults, func(c *schemas.ComputeResources) { c.OnOOM = schemas.OnOOMFail })},
		{"several", &schemas.ComputeResources{CPU: "1", Memory: "1GiB"}, with(defaults, func(c *schemas.ComputeResources) { c.CPU, c.Memory = "1", "1GiB" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Merge(defaults, tt.override))
		})
	}
}

func TestMergeKeepsGroupBestEffort(t *testing.T) {
	defaults := schemas.ComputeResources{MemoryBandwidth: "2GB/s", MemoryBandwidthBestEffort: true}
	got := Merge(defaults, &schemas.ComputeResources{MemoryBandwidth: "4GB/s"})
	assert.True(t, got.MemoryBandwidthBestEffort, "%+v, want 4GB/s with the group's best effort", got)
	assert.Equal(t, "4GB/s", got.MemoryBandwidth, "%+v, want 4GB/s with the group's best effort", got)
}

func with(c schemas.ComputeResources, change func(*schemas.ComputeResources)) schemas.ComputeResources {
	change(&c)
	return c
}
