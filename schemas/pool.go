package schemas

import "strings"

// PoolIDPrefix begins the id of every pooled sandbox; no sandbox a client
// creates may have one that does.
const PoolIDPrefix = "pool-"

// IsPoolID reports whether id names a pooled sandbox.
func IsPoolID(id string) bool { return strings.HasPrefix(id, PoolIDPrefix) }

// ClaimSubject is where the orchestrator tells a pooled sandbox's executor
// which sandbox it becomes (a PoolClaim). Only the control plane may
// publish there.
func ClaimSubject(poolID string) string { return "sandbox." + poolID + ".claim" }

// PoolClaim turns a pooled sandbox into the sandbox SandboxID of group
// GroupID, serving Families. Before it is sent the orchestrator has put
// the claimed sandbox's credentials where the executor reads its own: the
// executor reconnects with them, serves the sandbox's subjects and
// announces on ReadySubject(SandboxID).
type PoolClaim struct {
	SandboxID string   `json:"sandbox_id"`
	GroupID   string   `json:"group_id"`
	Families  []string `json:"families,omitempty"`
}

// ClaimFile is the name of the file, beside a pooled executor's
// credentials, where the orchestrator writes the PoolClaim before it sends
// it: an executor that starts again (a restart) and finds it serves the
// claimed sandbox at once.
const ClaimFile = "claim.json"
