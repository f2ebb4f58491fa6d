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

// MaxPoolSize bounds the size of a group's warm pool.
const MaxPoolSize = 64

// PoolSpec is a group's warm pool: Size sandboxes of the group's image,
// compute and egress, kept started by each worker for the group's
// creates. The pool empties after IdleShrinkSeconds without a create of
// the group (0: the worker's default idle time) and fills again at the
// next one.
type PoolSpec struct {
	Size              int     `json:"size" jsonschema:"minimum=0,maximum=64"`
	IdleShrinkSeconds float64 `json:"idle_shrink_seconds,omitempty" jsonschema:"minimum=0"`
}

// PoolWorkerSubject is where a worker that keeps pooled sandboxes answers
// while it lives: another worker that finds pooled sandboxes of a worker
// nobody answers for removes them. Worker names are made subject-safe.
func PoolWorkerSubject(worker string) string {
	safe := []byte(worker)
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			safe[i] = '_'
		}
	}
	return "sandox.pool.worker." + string(safe)
}
