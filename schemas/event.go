package schemas

import "time"

// EventKind names what happened to a sandbox. A client acts on the kind,
// never on the text of Message.
type EventKind string

// The event kinds, in the order a sandbox's life produces them.
const (
	// EventCreated: the sandbox's image and container exist; it is not
	// started (state created).
	EventCreated EventKind = "created"
	// EventStarted: the sandbox's executor answers (state running), after
	// start_sandbox or after a restart.
	EventStarted EventKind = "started"
	// EventStartFailed: the sandbox did not come up (state failed); Reason
	// says why.
	EventStartFailed EventKind = "start_failed"
	// EventOOMKilled: the kernel killed one of the sandbox's processes for
	// memory. The sandbox may still run; its OOM policy decides.
	EventOOMKilled EventKind = "oom_killed"
	// EventRestarted: the orchestrator restarts the sandbox's container;
	// Reason says why. It is published just before the restart, so before
	// any new executor serves: a batch sent before this event and not
	// answered by then is lost. EventStarted follows when the new executor
	// answers, EventExited when the restart fails.
	EventRestarted EventKind = "restarted"
	// EventExited: a running sandbox stopped by itself, or could not be
	// restarted, and is marked failed; Reason says why.
	EventExited EventKind = "exited"
	// EventExpired: the sandbox's lifetime is over and the orchestrator
	// ends it; Reason is "ttl", "idle_timeout" or "group_ttl". EventEnded
	// follows once it is removed.
	EventExpired EventKind = "expired"
	// EventEnded: the sandbox was ended on request and removed.
	EventEnded EventKind = "ended"
	// EventPaused: the sandbox's processes are frozen (state paused). A
	// batch it had taken is answered after it resumes; it takes no new
	// ones until then.
	EventPaused EventKind = "paused"
	// EventResumed: a paused sandbox's processes run again and its
	// executor takes batches (state running).
	EventResumed EventKind = "resumed"
)

// EventKinds lists every event kind.
var EventKinds = []EventKind{EventCreated, EventStarted, EventStartFailed, EventOOMKilled, EventRestarted, EventExited, EventExpired, EventEnded,
	EventPaused, EventResumed}

// LosesBatches reports whether an event of this kind means that an action
// batch sent to the sandbox before the event, and not answered by the time
// the event arrives, will never be answered: the executor that took it is
// gone.
func (k EventKind) LosesBatches() bool {
	switch k {
	case EventRestarted, EventExited, EventExpired, EventEnded, EventStartFailed:
		return true
	}
	return false
}

// Event records a change in a sandbox's life, published on
// SandboxEventSubject and kept in EventStream. Sandbox is the sandbox's
// status after the change.
type Event struct {
	Kind      EventKind `json:"kind"`
	GroupID   string    `json:"group_id"`
	SandboxID string    `json:"sandbox_id"`
	CommandID string    `json:"command_id,omitempty"`
	// Reason says why, for start_failed, oom_killed, restarted, exited and
	// expired.
	Reason string `json:"reason,omitempty"`
	// Message is a sentence for people; clients must not parse it.
	Message string         `json:"message,omitempty"`
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
	// Time is the orchestrator's clock when it published the event, for
	// people and audits; clients must not compare it with their own clock.
	Time time.Time `json:"time"`
}
