package resources

import (
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	got, err := Parse(schemas.ComputeResources{
		CPU:                       "1500m",
		CPUSet:                    "2-3,0",
		Memory:                    "25%",
		Disk:                      "10GiB",
		MemoryBandwidth:           "2GB/s",
		MemoryBandwidthBestEffort: true,
		PIDs:                      100,
	})
	require.NoError(t, err)
	want := Request{
		CPU:                       Amount{Value: 1500},
		CPUSet:                    []int{0, 2, 3},
		Memory:                    Amount{Percent: 25},
		Disk:                      Amount{Value: 10 << 30},
		MemoryBandwidth:           Amount{Value: 2e9},
		MemoryBandwidthBestEffort: true,
		PIDs:                      100,
		OnOOM:                     schemas.OnOOMContinue, // the default
	}
	assert.Equal(t, want, got)
}

func TestParseUnset(t *testing.T) {
	got, err := Parse(schemas.ComputeResources{CPU: "  ", Memory: ""})
	require.NoError(t, err)
	assert.Equal(t, Request{OnOOM: schemas.OnOOMContinue}, got, "want an empty request with the default OOM policy")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   schemas.ComputeResources
		want string
	}{
		{"memory unit", schemas.ComputeResources{Memory: "12XB"},
			`compute.memory "12XB": unknown unit "XB" (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB or a percentage)`},
		{"cpu", schemas.ComputeResources{CPU: "abc"}, `compute.cpu "abc": not a number`},
		{"cpuset", schemas.ComputeResources{CPUSet: "3-1"},
			`compute.cpuset "3-1": range "3-1" runs backwards (want core numbers and ranges, as in 0-1,3)`},
		{"disk", schemas.ComputeResources{Disk: "0"}, `compute.disk "0": must be above zero`},
		{"memory bandwidth", schemas.ComputeResources{MemoryBandwidth: "2GB"}, `compute.memory_bandwidth "2GB": a bandwidth is per second`},
		{"negative pids", schemas.ComputeResources{PIDs: -1}, "compute.pids -1: must not be negative (0 means the default, 512)"},
		{"too many pids", schemas.ComputeResources{PIDs: MaxPIDs + 1}, "compute.pids 4194305: above the kernel's maximum of 4194304"},
		{"unknown OOM policy", schemas.ComputeResources{OnOOM: "reboot"}, `compute.on_oom "reboot": want "continue", "restart" or "fail"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			checkError(t, err, schemas.CodeBadRequest, tt.want)
		})
	}
}

func TestParseReportsEveryField(t *testing.T) {
	_, err := Parse(schemas.ComputeResources{CPU: "-1", CPUSet: "x", Memory: "1KiB", Disk: "2g", MemoryBandwidth: "fast", PIDs: -5})
	msg := checkError(t, err, schemas.CodeBadRequest, "")
	for _, field := range []string{"compute.cpu ", "compute.cpuset ", "compute.memory ", "compute.disk ", "compute.memory_bandwidth ", "compute.pids "} {
		assert.Contains(t, msg, field, "want a problem with")
	}
	assert.Equal(t, 6, strings.Count(msg, "; ")+1, "problems in %q, want 6", msg)
}

// checkError checks that err is a *schemas.Error with code whose message
// contains want, and returns the message.
func checkError(t *testing.T, err error, code schemas.ErrorCode, want string) string {
	t.Helper()
	var e *schemas.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, code, e.Code, "error %q", e.Message)
	require.Contains(t, e.Message, want)
	return e.Message
}
