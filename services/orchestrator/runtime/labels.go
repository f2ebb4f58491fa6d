package runtime

// Labels on everything the orchestrator creates.
const (
	LabelManaged = "dev.sandox.managed"
	LabelGroup   = "dev.sandox.group"
	LabelSandbox = "dev.sandox.sandbox"
	// LabelSystem names the sandox system (Config.System) that made a
	// container or volume, so that cleanup removes its own only.
	LabelSystem = "dev.sandox.system"
	// LabelContextHash holds the hash of an image's build context (the
	// same label as docker.HashLabel).
	LabelContextHash = "dev.sandox.context-hash"
)

// LabelEgressShard marks a bridge of open egress with its shard number.
const LabelEgressShard = "dev.sandox.egress-shard"

// LabelDatabase marks a group's database container with its database.
const LabelDatabase = "dev.sandox.database"

// The labels of a pooled sandbox's container and volume, beside the
// sandbox label (its pool id): the worker that keeps it and, for a
// group's pool, the group.
const (
	LabelPoolWorker = "dev.sandox.pool-worker"
	LabelPoolGroup  = "dev.sandox.pool-group"
)
