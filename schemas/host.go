package schemas

import "time"

// HostState is whether an orchestrator host's workers are heard from.
type HostState string

// The host states.
const (
	HostUp   HostState = "up"   // a worker of the host heartbeats
	HostLost HostState = "lost" // no heartbeat for the lost-after time; its sandboxes are lost
)

// Placement is how a group's sandboxes are spread over the hosts.
type Placement string

// The placement policies.
const (
	// PlacementSpread puts each sandbox on the host with the fewest of its
	// group's sandboxes, ties broken by the most free capacity.
	PlacementSpread Placement = "spread"
	// PlacementPack fills the host that already has the most of the
	// group's sandboxes while it has room.
	PlacementPack Placement = "pack"
)

// HostStatus is the record of one orchestrator host, a Docker engine and
// the workers that drive it, kept in HostsBucket under its name. Every
// worker of the host refreshes it every heartbeat; a worker of another
// host marks it lost when LastSeen is too old.
type HostStatus struct {
	// Name is the host's name, a subject token (Config.Host).
	Name string `json:"name"`
	// EngineID is the Docker engine's id; the host's ledger is keyed by it.
	EngineID string    `json:"engine_id"`
	State    HostState `json:"state"`
	// Capacity is what the engine's machine has: CPUs, memory, and the
	// disk pool's size when disk limits are on.
	CPUs        int   `json:"cpus"`
	MemoryBytes int64 `json:"memory_bytes"`
	DiskBytes   int64 `json:"disk_bytes,omitempty"`
	// Allocated sums the ledger's allocations on the host, and Sandboxes
	// counts them.
	Allocated ResolvedResources `json:"allocated"`
	Sandboxes int               `json:"sandboxes"`
	// Workers maps each worker of the host to its last heartbeat.
	Workers map[string]time.Time `json:"workers"`
	// LastSeen is the newest heartbeat of any of its workers.
	LastSeen time.Time `json:"last_seen"`
	// LostAt is when another worker marked it lost; zero while up.
	LostAt time.Time `json:"lost_at,omitzero"`
}
