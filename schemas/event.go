package schemas

import "time"

// EventKind names what happened.
type EventKind string

// The event kinds.
const (
	EventStateChanged EventKind = "state_changed"
	EventOOMKilled    EventKind = "oom_killed"
	EventExited       EventKind = "exited"
)

// Event records a change in a sandbox's life, published on
// SandboxEventSubject and kept in EventStream.
type Event struct {
	Kind      EventKind      `json:"kind"`
	GroupID   string         `json:"group_id"`
	SandboxID string         `json:"sandbox_id"`
	CommandID string         `json:"command_id,omitempty"`
	Message   string         `json:"message,omitempty"`
	Sandbox   *SandboxStatus `json:"sandbox,omitempty"`
	Time      time.Time      `json:"time"`
}
