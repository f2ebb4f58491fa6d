package schemas

import "time"

// CommandKind names a lifecycle command.
type CommandKind string

// The lifecycle commands, each published on CommandSubject(kind).
const (
	CreateGroup   CommandKind = "create_group"
	StartGroup    CommandKind = "start_group"
	EndGroup      CommandKind = "end_group"
	CreateSandbox CommandKind = "create_sandbox"
	StartSandbox  CommandKind = "start_sandbox"
	EndSandbox    CommandKind = "end_sandbox"
	SandboxStats  CommandKind = "sandbox_stats"
	PauseSandbox  CommandKind = "pause_sandbox"  // docs/pause.md
	ResumeSandbox CommandKind = "resume_sandbox" // docs/pause.md
)

// CommandKinds lists every kind, in lifecycle order.
var CommandKinds = []CommandKind{CreateGroup, StartGroup, EndGroup, CreateSandbox, StartSandbox, EndSandbox, SandboxStats,
	PauseSandbox, ResumeSandbox, TakeCheckpoint, ListCheckpoints, DiffCheckpoints, RollbackSandbox}

// Command asks the orchestrator to change the lifecycle of a group or a
// sandbox. Group is set for create_group, Sandbox for create_sandbox.
type Command struct {
	ID        string       `json:"id"`
	Kind      CommandKind  `json:"kind"`
	GroupID   string       `json:"group_id"`
	SandboxID string       `json:"sandbox_id,omitempty"`
	Group     *GroupSpec   `json:"group,omitempty"`
	Sandbox   *SandboxSpec `json:"sandbox,omitempty"`
	IssuedAt  time.Time    `json:"issued_at"`
	// Checkpoint is set for the checkpoint commands (checkpoint.go).
	Checkpoint *CheckpointRequest `json:"checkpoint,omitempty"`
}

// CommandResult is the orchestrator's answer to a command, published on
// ResultSubject(command id). Error is nil on success.
type CommandResult struct {
	CommandID string          `json:"command_id"`
	Kind      CommandKind     `json:"kind"`
	Error     *Error          `json:"error,omitempty"`
	Group     *GroupStatus    `json:"group,omitempty"`
	Sandboxes []SandboxStatus `json:"sandboxes,omitempty"`
	Stats     *SandboxUsage   `json:"stats,omitempty"`
	// Checkpoints answers the checkpoint commands; Diff answers
	// diff_checkpoints.
	Checkpoints []Checkpoint    `json:"checkpoints,omitempty"`
	Diff        *CheckpointDiff `json:"diff,omitempty"`
	// Worker names the orchestrator worker that handled the command.
	Worker     string  `json:"worker"`
	DurationMS float64 `json:"duration_ms"`
}
