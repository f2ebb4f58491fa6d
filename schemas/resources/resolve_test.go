package resources

import (
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// host8 is a host with 8 cores, 16 GiB of RAM, 500 GiB of disk and
// enforceable memory bandwidth of 20 GB/s.
var host8 = Host{CPUs: 8, MemoryBytes: 16 << 30, DiskBytes: 500 << 30, MemoryBandwidthBytes: 20e9, MemoryBandwidthEnforceable: true}

func TestResolve(t *testing.T) {
	noMBA := host8
	noMBA.MemoryBandwidthEnforceable = false
	unknownBandwidth := host8
	unknownBandwidth.MemoryBandwidthBytes = 0
	tests := []struct {
		name string
		in   schemas.ComputeResources
		host Host
		want schemas.ResolvedResources
	}{
		{"nothing asked", schemas.ComputeResources{}, host8, schemas.ResolvedResources{PIDs: DefaultPIDs}},
		{"absolute", schemas.ComputeResources{CPU: "1.5", Memory: "2GiB", Disk: "10GB", PIDs: 64}, host8,
			schemas.ResolvedResources{NanoCPUs: 1.5e9, MemoryBytes: 2 << 30, DiskBytes: 10e9, PIDs: 64}},
		{"quarter of 8 cores", schemas.ComputeResources{CPU: "25%"}, host8,
			schemas.ResolvedResources{NanoCPUs: 2e9, PIDs: DefaultPIDs}},
		{"quarter of 16 GiB", schemas.ComputeResources{Memory: "25%"}, host8,
			schemas.ResolvedResources{MemoryBytes: 4 << 30, PIDs: DefaultPIDs}},
		{"tenth of the disk", schemas.ComputeResources{Disk: "10%"}, host8,
			schemas.ResolvedResources{DiskBytes: 50 << 30, PIDs: DefaultPIDs}},
		{"all cores", schemas.ComputeResources{CPU: "8"}, host8,
			schemas.ResolvedResources{NanoCPUs: 8e9, PIDs: DefaultPIDs}},
		{"cpuset", schemas.ComputeResources{CPU: "2", CPUSet: "1,0,3"}, host8,
			schemas.ResolvedResources{NanoCPUs: 2e9, CPUSet: "0-1,3", PIDs: DefaultPIDs}},
		{"cpuset alone", schemas.ComputeResources{CPUSet: "7"}, host8,
			schemas.ResolvedResources{CPUSet: "7", PIDs: DefaultPIDs}},
		{"cpuset on an unknown host", schemas.ComputeResources{CPUSet: "31"}, Host{},
			schemas.ResolvedResources{CPUSet: "31", PIDs: DefaultPIDs}},
		{"absolute on an unknown host", schemas.ComputeResources{CPU: "64", Memory: "1TiB"}, Host{},
			schemas.ResolvedResources{NanoCPUs: 64e9, MemoryBytes: 1 << 40, PIDs: DefaultPIDs}},
		{"bandwidth enforced", schemas.ComputeResources{MemoryBandwidth: "2GB/s"}, host8,
			schemas.ResolvedResources{MemoryBandwidthBytes: 2e9, MemoryBandwidthEnforced: true, PIDs: DefaultPIDs}},
		{"relative bandwidth", schemas.ComputeResources{MemoryBandwidth: "25%"}, host8,
			schemas.ResolvedResources{MemoryBandwidthBytes: 5e9, MemoryBandwidthEnforced: true, PIDs: DefaultPIDs}},
		{"bandwidth best effort without MBA", schemas.ComputeResources{MemoryBandwidth: "2GB/s", MemoryBandwidthBestEffort: true}, noMBA,
			schemas.ResolvedResources{MemoryBandwidthBytes: 2e9, PIDs: DefaultPIDs}},
		{"best effort on a host with MBA is enforced", schemas.ComputeResources{MemoryBandwidth: "2GB/s", MemoryBandwidthBestEffort: true}, host8,
			schemas.ResolvedResources{MemoryBandwidthBytes: 2e9, MemoryBandwidthEnforced: true, PIDs: DefaultPIDs}},
		{"relative bandwidth best effort of an unknown total", schemas.ComputeResources{MemoryBandwidth: "25%", MemoryBandwidthBestEffort: true}, unknownBandwidth,
			schemas.ResolvedResources{PIDs: DefaultPIDs}},
		{"absolute bandwidth of an unknown total", schemas.ComputeResources{MemoryBandwidth: "2GB/s"}, unknownBandwidth,
			schemas.ResolvedResources{MemoryBandwidthBytes: 2e9, MemoryBandwidthEnforced: true, PIDs: DefaultPIDs}},
		{"best effort without a bandwidth", schemas.ComputeResources{MemoryBandwidthBestEffort: true}, noMBA,
			schemas.ResolvedResources{PIDs: DefaultPIDs}},
		{"restart on OOM", schemas.ComputeResources{Memory: "128MiB", OnOOM: schemas.OnOOMRestart}, host8,
			schemas.ResolvedResources{MemoryBytes: 128 << 20, PIDs: DefaultPIDs, OnOOM: schemas.OnOOMRestart}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(t, tt.in, tt.host)
			require.NoError(t, err)
			if tt.want.OnOOM == "" {
				tt.want.OnOOM = schemas.OnOOMContinue
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	noMBA := host8
	noMBA.MemoryBandwidthEnforceable = false
	unknownBandwidth := host8
	unknownBandwidth.MemoryBandwidthBytes = 0
	tests := []struct {
		name string
		in   schemas.ComputeResources
		host Host
		code schemas.ErrorCode
		want string
	}{
		{"cpuset beyond the host", schemas.ComputeResources{CPUSet: "6-9"}, host8, schemas.CodeBadRequest,
			`compute.cpuset "6-9" names cores the host does not have (it has cores 0-7)`},
		{"cpu above the host", schemas.ComputeResources{CPU: "16"}, host8, schemas.CodeResourceExhausted,
			"compute.cpu asks 16 cores, the host has 8 cores"},
		{"cpu above the cpuset", schemas.ComputeResources{CPU: "3", CPUSet: "0-1"}, host8, schemas.CodeResourceExhausted,
			`compute.cpu asks 3 cores, but compute.cpuset "0-1" holds only 2 cores`},
		{"relative cpu above the cpuset", schemas.ComputeResources{CPU: "50%", CPUSet: "0"}, host8, schemas.CodeResourceExhausted,
			`compute.cpu asks 4 cores, but compute.cpuset "0" holds only 1 core`},
		{"relative cpu below the minimum", schemas.ComputeResources{CPU: "0.1%"}, host8, schemas.CodeBadRequest,
			"compute.cpu 0.1% is 0.008 cores on this host, below the minimum of 0.01 cores"},
		{"relative cpu of unknown cores", schemas.ComputeResources{CPU: "25%"}, Host{}, schemas.CodeUnsupported,
			"compute.cpu 25%: the host's capacity is unknown"},
		{"memory above the host", schemas.ComputeResources{Memory: "32GiB"}, host8, schemas.CodeResourceExhausted,
			"compute.memory asks 32.0 GiB, the host has 16.0 GiB"},
		{"relative memory below the minimum", schemas.ComputeResources{Memory: "0.01%"}, host8, schemas.CodeBadRequest,
			"compute.memory 0.01% is 1.6 MiB on this host, below the minimum of 6.0 MiB"},
		{"disk above the host", schemas.ComputeResources{Disk: "1TiB"}, host8, schemas.CodeResourceExhausted,
			"compute.disk asks 1.0 TiB, the host has 500.0 GiB"},
		{"relative disk of an unknown disk", schemas.ComputeResources{Disk: "10%"}, Host{CPUs: 8}, schemas.CodeUnsupported,
			"compute.disk 10%: the host's capacity is unknown"},
		{"bandwidth without MBA", schemas.ComputeResources{MemoryBandwidth: "2GB/s"}, noMBA, schemas.CodeUnsupported,
			"compute.memory_bandwidth 2.0 GB/s: this host has no resctrl memory-bandwidth allocation (MBA) to enforce it; set memory_bandwidth_best_effort: true to start the sandbox without this limit"},
		{"relative bandwidth of an unknown total", schemas.ComputeResources{MemoryBandwidth: "25%"}, unknownBandwidth, schemas.CodeUnsupported,
			"compute.memory_bandwidth 25%: the host's total memory bandwidth is unknown"},
		{"bandwidth above the host", schemas.ComputeResources{MemoryBandwidth: "30GB/s"}, host8, schemas.CodeResourceExhausted,
			"compute.memory_bandwidth asks 30.0 GB/s, the host has 20.0 GB/s"},
		{"best-effort bandwidth above the host", schemas.ComputeResources{MemoryBandwidth: "30GB/s", MemoryBandwidthBestEffort: true}, noMBA, schemas.CodeResourceExhausted,
			"compute.memory_bandwidth asks 30.0 GB/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(t, tt.in, tt.host)
			require.Error(t, err, "%+v, want %s error", got, tt.code)
			checkError(t, err, tt.code, tt.want)
		})
	}
}

// resolve parses and resolves c on host.
func resolve(t *testing.T, c schemas.ComputeResources, host Host) (schemas.ResolvedResources, error) {
	t.Helper()
	req, err := Parse(c)
	require.NoError(t, err, "parse %+v", c)
	return Resolve(req, host)
}
