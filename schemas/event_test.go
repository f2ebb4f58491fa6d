package schemas

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEventKindLosesBatches(t *testing.T) {
	tests := []struct {
		name string
		kind EventKind
		want bool
	}{
		{name: "created", kind: EventCreated, want: false},
		{name: "started", kind: EventStarted, want: false},
		{name: "start failed", kind: EventStartFailed, want: true},
		{name: "oom killed", kind: EventOOMKilled, want: false},
		{name: "restarted", kind: EventRestarted, want: true},
		{name: "exited", kind: EventExited, want: true},
		{name: "expired", kind: EventExpired, want: true},
		{name: "ended", kind: EventEnded, want: true},
		{name: "paused keeps the batch for after the resume", kind: EventPaused, want: false},
		{name: "resumed", kind: EventResumed, want: false},
		{name: "unknown", kind: EventKind("state_changed"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.kind.LosesBatches(), "kind %q", tt.kind)
		})
	}
	assert.Len(t, EventKinds, 10, "a new kind needs a row above")
}

func TestRequestSubjects(t *testing.T) {
	assert.Equal(t, "sandox.req.status.sandbox.sb-1", SandboxStatusSubject("sb-1"))
	assert.Equal(t, "sandox.req.status.group.g", GroupStatusSubject("g"))
	assert.Equal(t, "sandox.req.stats.sandbox.sb-1", SandboxStatsSubject("sb-1"))
}
