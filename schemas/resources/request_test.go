package resources

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
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
	if err != nil {
		t.Fatal(err)
	}
	want := Request{
		CPU:                       Amount{Value: 1500},
		CPUSet:                    []int{0, 2, 3},
		Memory:                    Amount{Percent: 25},
		Disk:                      Amount{Value: 10 << 30},
		MemoryBandwidth:           Amount{Value: 2e9},
		MemoryBandwidthBestEffort: true,
		PIDs:                      100,
	}
	if got.CPU != want.CPU || !slices.Equal(got.CPUSet, want.CPUSet) || got.Memory != want.Memory ||
		got.Disk != want.Disk || got.MemoryBandwidth != want.MemoryBandwidth ||
		got.MemoryBandwidthBestEffort != want.MemoryBandwidthBestEffort || got.PIDs != want.PIDs {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParseUnset(t *testing.T) {
	got, err := Parse(schemas.ComputeResources{CPU: "  ", Memory: ""})
	if err != nil {
		t.Fatal(err)
	}
	if !got.CPU.IsZero() || !got.Memory.IsZero() || got.CPUSet != nil || got.PIDs != 0 {
		t.Errorf("got %+v, want an empty request", got)
	}
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
		if !strings.Contains(msg, field) {
			t.Errorf("got %q, want a problem with %s", msg, field)
		}
	}
	if n := strings.Count(msg, "; ") + 1; n != 6 {
		t.Errorf("got %d problems in %q, want 6", n, msg)
	}
}

// checkError checks that err is a *schemas.Error with code whose message
// contains want, and returns the message.
func checkError(t *testing.T, err error, code schemas.ErrorCode, want string) string {
	t.Helper()
	var e *schemas.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a *schemas.Error with code %s", err, code)
	}
	if e.Code != code || !strings.Contains(e.Message, want) {
		t.Fatalf("got %s: %q, want %s containing %q", e.Code, e.Message, code, want)
	}
	return e.Message
}
