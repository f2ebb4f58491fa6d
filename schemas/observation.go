package schemas

import "encoding/json"

// Observation is what one action produced.
type Observation struct {
	// Tool is the resolved "module.function" that ran (or the reference as
	// written, when it could not be resolved).
	Tool string `json:"tool"`
	// Stdout and Stderr are what the call wrote or returned as text.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// TerminalStillRunning is true when a terminal command outlived its soft
	// timeout and goes on running in the sandbox.
	TerminalStillRunning bool `json:"terminal_still_running"`
	// ExitCode is the exit status of a finished terminal command.
	ExitCode *int `json:"exit_code,omitempty"`
	// Return is the JSON value a Python tool function returned, if any.
	Return json.RawMessage `json:"return,omitempty"`
	// Error says why the call failed; nil on success.
	Error *Error `json:"error,omitempty"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// LimitsHit lists the limits the sandbox ran into while the call ran
	// (or since the previous observation): a process killed for memory, a
	// fork refused, a full disk, a restart.
	LimitsHit []LimitHit `json:"limits_hit,omitempty"`
}

// The resources a LimitHit names.
const (
	LimitMemory = "memory" // the kernel killed a process: out of memory
	LimitPIDs   = "pids"   // a fork or thread was refused: too many processes
	LimitDisk   = "disk"   // the sandbox's disk is full
)

// LimitHit says that a sandbox ran into one of its limits.
type LimitHit struct {
	// Resource is LimitMemory, LimitPIDs or LimitDisk.
	Resource string `json:"resource" jsonschema:"enum=memory,enum=pids,enum=disk"`
	// Count is how many times it happened (processes killed, forks refused).
	Count int64 `json:"count"`
	// Message says what happened and what the limit is.
	Message string `json:"message"`
}

// BatchResult is the reply to an action batch: one observation per action,
// in the order the actions were written. Error is set, and Observations
// empty, when the batch as a whole was refused (for example malformed JSON).
type BatchResult struct {
	BatchID      string        `json:"batch_id,omitempty"`
	SandboxID    string        `json:"sandbox_id"`
	Observations []Observation `json:"observations"`
	Error        *Error        `json:"error,omitempty"`
	// WorkspaceChanged says that the batch changed the workspace; only an
	// executor that watches it (ExecutorEnv.WatchWorkspace) sets it.
	WorkspaceChanged bool `json:"workspace_changed,omitempty"`
}
