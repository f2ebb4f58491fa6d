package schemas

// ToolFile is a user tool file: Python source that the orchestrator copies,
// under Name, into the sandbox image's tools directory. The file name without
// ".py" is the tool module name ("my_tools.py" defines "my_tools.*"). It
// cannot be named like a built-in tool family ("web_tools.py"): those are
// selected by name in Families.
type ToolFile struct {
	Name    string `json:"name"`
	Content []byte `json:"content"`
}

// ComputeResources is the virtual hardware of a sandbox. Each amount is
// absolute or relative ("25%" of the machine the sandbox runs on); an empty
// field means "no limit of its own" (the group default, then the host's).
type ComputeResources struct {
	// CPU is cores: "2", "0.5", "1500m" (millicores) or "25%".
	CPU string `json:"cpu,omitempty"`
	// CPUSet pins the sandbox to cores, in the kernel's list syntax ("0-1,3").
	CPUSet string `json:"cpuset,omitempty"`
	// Memory is RAM: "512MiB", "2GB", "1073741824" (bytes) or "25%".
	Memory string `json:"memory,omitempty"`
	// Disk bounds everything the sandbox can write: "10GiB" or "10%".
	Disk string `json:"disk,omitempty"`
	// MemoryBandwidth is "2GB/s" or "25%". It needs the kernel's resctrl
	// memory-bandwidth allocation on the host.
	MemoryBandwidth string `json:"memory_bandwidth,omitempty"`
	// MemoryBandwidthBestEffort lets a sandbox start on a host that cannot
	// enforce MemoryBandwidth; its status then says the limit is not enforced.
	MemoryBandwidthBestEffort bool `json:"memory_bandwidth_best_effort,omitempty"`
	// PIDs bounds the number of processes and threads (0: the default).
	PIDs int64 `json:"pids,omitempty"`
	// OnOOM is what happens when the kernel kills a process of the sandbox
	// for exceeding Memory: OnOOMContinue (the default), OnOOMRestart or
	// OnOOMFail.
	OnOOM OOMPolicy `json:"on_oom,omitempty" jsonschema:"enum=continue,enum=restart,enum=fail"`
}

// OOMPolicy is what the orchestrator does when a sandbox runs out of memory.
type OOMPolicy string

// The OOM policies.
const (
	// OnOOMContinue leaves the sandbox running: the killed process is
	// reported in the next observation, the status and the events. If the
	// sandbox's executor itself was killed, the sandbox is restarted.
	OnOOMContinue OOMPolicy = "continue"
	// OnOOMRestart restarts the sandbox: every process starts afresh,
	// /workspace is kept.
	OnOOMRestart OOMPolicy = "restart"
	// OnOOMFail stops the sandbox and marks it failed.
	OnOOMFail OOMPolicy = "fail"
)

// DatabaseGrant gives a sandbox read and/or write access to one namespace of
// one shared database.
type DatabaseGrant struct {
	// Database is "qdrant" or "neo4j".
	Database string `json:"database" jsonschema:"enum=qdrant,enum=neo4j"`
	// Namespace is a Qdrant collection or a namespace of the group's Neo4j
	// (docs/databases.md).
	Namespace string `json:"namespace"`
	Read      bool   `json:"read"`
	Write     bool   `json:"write"`
}

// DatabaseAccess is the set of grants of a sandbox.
type DatabaseAccess []DatabaseGrant

// SandboxSpec describes one sandbox. Fields left empty take the group's
// defaults.
type SandboxSpec struct {
	ID string `json:"id"`
	// Tools are added to the group's default tool files; a file with the
	// same name replaces the group's.
	Tools []ToolFile `json:"tools,omitempty"`
	// Families are built-in tool families ("web_tools"), added to the
	// group's. A sandbox gets exactly the families its group and it name;
	// filesystem_tools and terminal_tools when neither names one.
	Families []string `json:"families,omitempty"`
	// Compute, when set, overrides the group's default resources field by
	// field: a field set here wins, an empty one keeps the group's.
	Compute *ComputeResources `json:"compute,omitempty"`
	// Databases, when set, replaces the group's default database access.
	Databases *DatabaseAccess `json:"databases,omitempty"`
	// Egress, when set, replaces the group's egress policy.
	Egress *Egress `json:"egress,omitempty"`
	// TTLSeconds, when above 0, ends the sandbox that long after its
	// creation, with an expired event (reason "ttl").
	TTLSeconds float64 `json:"ttl_seconds,omitempty" jsonschema:"minimum=0"`
	// IdleTimeoutSeconds, when above 0, ends a running sandbox that has
	// received no action batch for that long (counted from its start), with
	// an expired event (reason "idle_timeout").
	IdleTimeoutSeconds float64 `json:"idle_timeout_seconds,omitempty" jsonschema:"minimum=0"`
	// FromCheckpoint, when set, fills the new sandbox's workspace with
	// that checkpoint's files before it starts (a fork).
	FromCheckpoint *CheckpointRef `json:"from_checkpoint,omitempty"`
}

// GroupSpec describes a group of sandboxes and the defaults of its members.
type GroupSpec struct {
	ID    string     `json:"id"`
	Tools []ToolFile `json:"tools,omitempty"`
	// Families are the built-in tool families ("filesystem_tools",
	// "web_tools", …) every sandbox of the group gets; see
	// SandboxSpec.Families.
	Families       []string         `json:"families,omitempty"`
	Compute        ComputeResources `json:"compute"`
	DatabaseAccess DatabaseAccess   `json:"database_access,omitempty"`
	// PopulationConfig is the YAML text that says how to populate the
	// shared databases when the group starts (docs/databases.md).
	PopulationConfig string `json:"population_config,omitempty"`
	// KeepDatabaseData keeps the databases' volumes when the group ends,
	// so a group of the same id starts with the same data; by default
	// they are deleted with the group.
	KeepDatabaseData bool `json:"keep_database_data,omitempty"`
	// Checkpoints, when set, is the group's checkpoint policy: automatic
	// checkpoints after every batch that changed a workspace
	// (docs/checkpoints.md).
	Checkpoints *CheckpointPolicy `json:"checkpoints,omitempty"`
	// Sandboxes are created and started with the group.
	Sandboxes []SandboxSpec `json:"sandboxes,omitempty"`
	// Overcommit, when above 1, lets the sandboxes of this group be granted
	// up to that multiple of the host's CPU and memory.
	Overcommit float64 `json:"overcommit,omitempty"`
	// Egress is the default egress policy of its sandboxes; unset is none.
	Egress *Egress `json:"egress,omitempty"`
	// TTLSeconds, when above 0, ends the group and all its sandboxes that
	// long after its creation, with an expired event (reason "group_ttl")
	// for each sandbox.
	TTLSeconds float64 `json:"ttl_seconds,omitempty" jsonschema:"minimum=0"`
	// Pool, when its size is above 0, keeps that many sandboxes of the
	// group's image (its tool files and families), compute and egress
	// started on each worker, ready for the group's creates to claim
	// (docs/pools.md).
	Pool *PoolSpec `json:"pool,omitempty"`
	// Placement says how the group's sandboxes are spread over the
	// orchestrator's hosts: spread (the default) or pack.
	Placement Placement `json:"placement,omitempty"`
}
