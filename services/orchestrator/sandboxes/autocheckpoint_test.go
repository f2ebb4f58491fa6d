package sandboxes

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

// TestChangedWorkspace checks that only a batch result on the subject of
// the sandbox it names, saying the workspace changed, asks for an
// automatic checkpoint: a sandbox cannot make another one's.
func TestChangedWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name, subject, body string
		want                string
	}{
		{"changed", schemas.ObservationSubject("sb-1", "b1"), `{"sandbox_id":"sb-1","workspace_changed":true}`, "sb-1"},
		{"unchanged", schemas.ObservationSubject("sb-1", "b1"), `{"sandbox_id":"sb-1","workspace_changed":false}`, ""},
		{"another sandbox named in the body", schemas.ObservationSubject("sb-1", "b1"), `{"sandbox_id":"sb-2","workspace_changed":true}`, ""},
		{"no sandbox in the body", schemas.ObservationSubject("sb-1", "b1"), `{"workspace_changed":true}`, ""},
		{"not json", schemas.ObservationSubject("sb-1", "b1"), `{`, ""},
		{"no batch in the subject", schemas.ObservationSubjectPrefix + "sb-1", `{"sandbox_id":"sb-1","workspace_changed":true}`, ""},
		{"another subject", "sandox.evt.batch.sb-1", `{"sandbox_id":"sb-1","workspace_changed":true}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := changedWorkspace(tc.subject, []byte(tc.body))
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, id)
		})
	}
}
