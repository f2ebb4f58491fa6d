package schemas

import "time"

// SandboxState is where a sandbox is in its life.
type SandboxState string

// The sandbox states.
const (
	StateCreated SandboxState = "created" // image built, container created, not started
	StateRunning SandboxState = "running" // the executor answers
	StateFailed  SandboxState = "failed"  // it stopped by itself (Reason says why)
	StateEnding  SandboxState = "ending"  // being removed on request
	StateEnded   SandboxState = "ended"   // ended on request, container removed
	// StateLost: its container is gone (Reason "container_missing") or its
	// host stopped answering (Reason "host_lost"); ending it forgets it.
	StateLost SandboxState = "lost"
	// StatePaused: its processes are frozen and its CPU is released;
	// resume_sandbox thaws it (docs/pause.md).
	StatePaused SandboxState = "paused"
)

// Why a sandbox was lost, the Reason of its StateLost and of the exited
// event that announced it.
const (
	LostHost             = "host_lost"
	LostContainerMissing = "container_missing"
)

// ResolvedResources are the absolute limits a sandbox was given.
type ResolvedResources struct {
	NanoCPUs    int64  `json:"nano_cpus,omitempty"`
	CPUSet      string `json:"cpuset,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	DiskBytes   int64  `json:"disk_bytes,omitempty"`
	// MemoryBandwidthBytes is per second; MemoryBandwidthEnforced says
	// whether the host enforces it.
	MemoryBandwidthBytes    int64 `json:"memory_bandwidth_bytes,omitempty"`
	MemoryBandwidthEnforced bool  `json:"memory_bandwidth_enforced"`
	PIDs                    int64 `json:"pids,omitempty"`
	// OnOOM is the resolved OOM policy.
	OnOOM OOMPolicy `json:"on_oom,omitempty"`
}

// SandboxStatus is the recorded state of a sandbox, kept in SandboxBucket.
type SandboxStatus struct {
	ID        string       `json:"id"`
	GroupID   string       `json:"group_id"`
	State     SandboxState `json:"state"`
	Reason    string       `json:"reason,omitempty"`
	Image     string       `json:"image"`
	Container string       `json:"container,omitempty"`
	// CreatedBy is the id of the command that created the sandbox: a
	// redelivery of that command (its worker died) finishes the create
	// instead of answering already_exists.
	CreatedBy string `json:"created_by,omitempty"`
	// Checkpoints is its group's checkpoint policy, copied at its creation.
	Checkpoints *CheckpointPolicy `json:"checkpoints,omitempty"`
	// Host is the orchestrator host (one Docker engine) the sandbox was
	// placed on; only that host's workers act on it. "" on records made
	// before placement existed, which belong to the single host.
	Host string `json:"host,omitempty"`
	// Families are the built-in tool families the sandbox was given.
	Families []string `json:"families,omitempty"`
	// Tools are the tool modules of the sandbox, sorted: at creation the
	// families and the user's tool files; once it runs, what its executor
	// reported it serves (schemas.ExecutorReady).
	Tools     []string          `json:"tools"`
	Resources ResolvedResources `json:"resources"`
	Databases DatabaseAccess    `json:"databases,omitempty"`
	// Egress is the sandbox's resolved egress policy.
	Egress *Egress `json:"egress,omitempty"`
	// ImageReused is true when an image of the same tool set already existed.
	ImageReused bool `json:"image_reused"`
	// DiskDevice is the loop device holding the sandbox's /workspace when
	// it has a disk limit.
	DiskDevice string `json:"disk_device,omitempty"`
	// OOMKills counts the processes the kernel killed for memory, and
	// Restarts the times the orchestrator restarted the sandbox.
	OOMKills  int64     `json:"oom_kills,omitempty"`
	Restarts  int       `json:"restarts,omitempty"`
	LastOOMAt time.Time `json:"last_oom_at,omitzero"`
	// LastExitAt is the engine's time of the last unrequested stop of its
	// container that a worker claimed (compare-and-set), so that one
	// worker handles each.
	LastExitAt time.Time `json:"last_exit_at,omitzero"`
	// CreatedAt and StartedAt (its last start) are the orchestrator's clock.
	CreatedAt time.Time `json:"created_at,omitzero"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// PausedAt is when it was last paused, ResumedAt when it was last
	// resumed (the idle timeout counts from then at the earliest).
	PausedAt  time.Time `json:"paused_at,omitzero"`
	ResumedAt time.Time `json:"resumed_at,omitzero"`
	// ExpiresAt is when its TTL ends it; zero without a TTL.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// IdleTimeoutSeconds is its spec's idle timeout.
	IdleTimeoutSeconds float64 `json:"idle_timeout_seconds,omitempty"`
	// Expired says why its lifetime ended ("ttl", "idle_timeout",
	// "group_ttl"); set once, by the worker that ends it.
	Expired string `json:"expired,omitempty"`
	// FromPool is true when the sandbox was claimed from the warm pool;
	// PoolID is then the pool id its container, workspace volume and
	// egress proxy were made under (docs/pools.md).
	FromPool bool   `json:"from_pool,omitempty"`
	PoolID   string `json:"pool_id,omitempty"`
	// Pooled is true on the record of a pooled sandbox that waits to be
	// claimed: its executor serves only its claim subject.
	Pooled bool `json:"pooled,omitempty"`
	// PoolGroup is, on a pooled sandbox's record, the group whose pool
	// holds it ("" for the system's default pool): it is never given to
	// another group.
	PoolGroup string `json:"pool_group,omitempty"`
	// PoolWorker is, on a pooled sandbox's record, the worker that keeps
	// it; a worker that starts removes the unclaimed pooled sandboxes of
	// workers that no longer answer.
	PoolWorker string `json:"pool_worker,omitempty"`
	// ClaimedBy is, on a pooled sandbox's record, the sandbox that claimed
	// it: the record stays, as the link from the container's labels (which
	// name the pool id) to the sandbox, until that sandbox ends.
	ClaimedBy string    `json:"claimed_by,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// GroupState is where a group is in its life.
type GroupState string

// The group states.
const (
	GroupCreated GroupState = "created"
	GroupRunning GroupState = "running"
	GroupEnded   GroupState = "ended"
)

// GroupStatus is the recorded state of a group, kept in GroupBucket with its
// spec so that any orchestrator worker can act on it.
type GroupStatus struct {
	ID        string     `json:"id"`
	State     GroupState `json:"state"`
	Spec      GroupSpec  `json:"spec"`
	Sandboxes []string   `json:"sandboxes"`
	// Databases are where the group's databases listen, for the data
	// service; empty when the spec names none.
	Databases []DatabaseEndpoint `json:"databases,omitempty"`
	// DatabaseHost is the host whose engine runs the group's databases
	// (the host of the worker that started the group).
	DatabaseHost string `json:"database_host,omitempty"`
	// Hosts counts the group's sandboxes on each orchestrator host. It is
	// filled in status replies, from the sandboxes' records, not stored.
	Hosts map[string]int `json:"hosts,omitempty"`
	// Placing holds, by sandbox id, the hosts chosen for the group's
	// sandboxes whose creates are under way: placement counts them with
	// Sandboxes, and writes its choice here in the same compare-and-set, so
	// that creates sent together spread (or pack) as creates sent one by
	// one do, whichever workers place them.
	Placing   map[string]Placed `json:"placing,omitempty"`
	CreatedAt time.Time         `json:"created_at,omitzero"`
	// ExpiresAt is when its TTL ends it; zero without a TTL.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Expired is set once, by the worker that ends the group for its TTL.
	Expired   string    `json:"expired,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Placed is a placement of a sandbox whose create is under way.
type Placed struct {
	Host string    `json:"host"`
	At   time.Time `json:"at"`
}

// SandboxUsage is a live reading of a sandbox's use against its limits.
type SandboxUsage struct {
	SandboxID   string            `json:"sandbox_id"`
	CPUPercent  float64           `json:"cpu_percent"`
	MemoryBytes int64             `json:"memory_bytes"`
	DiskBytes   int64             `json:"disk_bytes"`
	PIDs        int64             `json:"pids"`
	Limits      ResolvedResources `json:"limits"`
	ReadAt      time.Time         `json:"read_at"`
}
