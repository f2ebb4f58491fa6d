package resources

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLedgerAdmit(t *testing.T) {
	host := Host{CPUs: 8, MemoryBytes: 16 << 30, DiskBytes: 100 << 30, MemoryBandwidthBytes: 20e9, MemoryBandwidthEnforceable: true}
	// taken leaves 2 cores, 4 GiB, 20 GiB of disk and 5 GB/s free without overcommit.
	taken := map[string]schemas.ResolvedResources{
		"a": {NanoCPUs: 4e9, MemoryBytes: 8 << 30, DiskBytes: 50 << 30, MemoryBandwidthBytes: 10e9, MemoryBandwidthEnforced: true},
		"b": {NanoCPUs: 2e9, MemoryBytes: 4 << 30, DiskBytes: 30 << 30, MemoryBandwidthBytes: 5e9, MemoryBandwidthEnforced: true},
	}
	tests := []struct {
		name       string
		id         string
		r          schemas.ResolvedResources
		overcommit float64
		want       string // "" when admitted
	}{
		{"fits exactly", "c", schemas.ResolvedResources{NanoCPUs: 2e9, MemoryBytes: 4 << 30, DiskBytes: 20 << 30, MemoryBandwidthBytes: 5e9, MemoryBandwidthEnforced: true}, 1, ""},
		{"unlimited fits", "c", schemas.ResolvedResources{PIDs: 512}, 1, ""},
		{"too much cpu", "c", schemas.ResolvedResources{NanoCPUs: 3e9}, 1,
			`sandbox "c" does not fit: cpu: asked 3 cores, 2 cores free of 8 cores (overcommit 1.0)`},
		{"too much memory", "c", schemas.ResolvedResources{MemoryBytes: 16 << 30}, 0,
			"memory: asked 16.0 GiB, 4.0 GiB free of 16.0 GiB (overcommit 1.0)"},
		{"too much disk", "c", schemas.ResolvedResources{DiskBytes: 21 << 30}, 2,
			"disk: asked 21.0 GiB, 20.0 GiB free of 100.0 GiB"},
		{"too much enforced bandwidth", "c", schemas.ResolvedResources{MemoryBandwidthBytes: 6e9, MemoryBandwidthEnforced: true}, 2,
			"memory bandwidth: asked 6.0 GB/s, 5.0 GB/s free of 20.0 GB/s"},
		{"unenforced bandwidth does not count", "c", schemas.ResolvedResources{MemoryBandwidthBytes: 60e9}, 1, ""},
		{"cpu with overcommit", "c", schemas.ResolvedResources{NanoCPUs: 6e9}, 1.5, ""},
		{"memory with overcommit", "c", schemas.ResolvedResources{MemoryBytes: 12 << 30}, 1.5, ""},
		{"cpu beyond overcommit", "c", schemas.ResolvedResources{NanoCPUs: 6.5e9}, 1.5,
			"cpu: asked 6.5 cores, 6 cores free of 12 cores (overcommit 1.5)"},
		{"overcommit does not stretch disk", "c", schemas.ResolvedResources{DiskBytes: 30 << 30}, 4,
			"disk: asked 30.0 GiB, 20.0 GiB free of 100.0 GiB"},
		{"NaN overcommit is none", "c", schemas.ResolvedResources{NanoCPUs: 3e9}, math.NaN(),
			"(overcommit 1.0)"},
		{"every resource named", "c", schemas.ResolvedResources{NanoCPUs: 3e9, MemoryBytes: 5 << 30}, 1,
			"cpu: asked 3 cores, 2 cores free of 8 cores (overcommit 1.0); memory: asked 5.0 GiB, 4.0 GiB free of 16.0 GiB (overcommit 1.0)"},
		{"readmitting replaces", "a", schemas.ResolvedResources{NanoCPUs: 6e9, MemoryBytes: 12 << 30}, 1, ""},
		{"readmitting still checks", "a", schemas.ResolvedResources{NanoCPUs: 7e9}, 1, "cpu: asked 7 cores, 6 cores free of 8 cores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Ledger{Allocations: map[string]schemas.ResolvedResources{}}
			for id, r := range taken {
				l.Allocations[id] = r
			}
			err := l.Admit(tt.id, tt.r, host, tt.overcommit)
			if tt.want != "" {
				checkError(t, err, schemas.CodeResourceExhausted, tt.want)
				assert.Equal(t, taken[tt.id], l.Allocations[tt.id], "refused sandbox's allocation")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.r, l.Allocations[tt.id], "allocation")
		})
	}
}

func TestLedgerUnknownHost(t *testing.T) {
	var l Ledger // nil map
	require.NoError(t, l.Admit("a", schemas.ResolvedResources{NanoCPUs: 64e9, MemoryBytes: 1 << 40}, Host{}, 1), "want admitted on a host of unknown capacity")
	assert.Len(t, l.Allocations, 1, "allocations, want 1")
}

func TestLedgerRelease(t *testing.T) {
	host := Host{CPUs: 4, MemoryBytes: 8 << 30}
	var l Ledger
	l.Release("nobody") // on a nil map
	full := schemas.ResolvedResources{NanoCPUs: 4e9, MemoryBytes: 8 << 30}
	require.NoError(t, l.Admit("a", full, host, 1))
	require.Error(t, l.Admit("b", full, host, 1), "b admitted on a full host, want it refused")
	l.Release("a")
	require.NoError(t, l.Admit("b", full, host, 1), "after releasing a: want b admitted")
	assert.NotContains(t, l.Allocations, "a", "want a released")
}

func TestLedgerUsed(t *testing.T) {
	l := Ledger{Allocations: map[string]schemas.ResolvedResources{
		"a": {NanoCPUs: 1e9, CPUSet: "0", MemoryBytes: 1 << 30, DiskBytes: 10, MemoryBandwidthBytes: 1e9, MemoryBandwidthEnforced: true, PIDs: 512},
		"b": {NanoCPUs: 5e8, MemoryBytes: 1 << 29, DiskBytes: 5, MemoryBandwidthBytes: 7e9, PIDs: 100},
		"":  {NanoCPUs: 1},
	}}
	want := schemas.ResolvedResources{NanoCPUs: 1.5e9 + 1, MemoryBytes: 3 << 29, DiskBytes: 15, MemoryBandwidthBytes: 1e9, PIDs: 612}
	assert.Equal(t, want, l.Used())
	assert.Equal(t, (schemas.ResolvedResources{}), (Ledger{}).Used(), "empty ledger")
	saturated := Ledger{Allocations: map[string]schemas.ResolvedResources{"a": {MemoryBytes: math.MaxInt64}, "b": {MemoryBytes: 1}}}
	assert.Equal(t, int64(math.MaxInt64), saturated.Used().MemoryBytes, "want the sum to saturate at %d", int64(math.MaxInt64))
}

func TestLedgerJSON(t *testing.T) {
	l := Ledger{Allocations: map[string]schemas.ResolvedResources{
		"a": {NanoCPUs: 2e9, CPUSet: "0-1", MemoryBytes: 4 << 30, DiskBytes: 10 << 30, MemoryBandwidthBytes: 2e9, MemoryBandwidthEnforced: true, PIDs: 512},
		"b": {PIDs: 512},
	}}
	data, err := json.Marshal(l)
	require.NoError(t, err)
	var got Ledger
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, l, got, "(JSON %s)", data)
	// An empty ledger from an empty entry accepts sandboxes.
	var empty Ledger
	require.NoError(t, json.Unmarshal([]byte(`{}`), &empty))
	require.NoError(t, empty.Admit("a", schemas.ResolvedResources{PIDs: 1}, Host{}, 1))
}
