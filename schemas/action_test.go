package schemas

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseActionsKeepsOrder(t *testing.T) {
	// Keys deliberately out of alphabetical order: a map would reorder them.
	payload := `{
		"terminal_tools.run": {"description": "third", "args": {"command": "ls"}},
		"filesystem_tools.write_file": {"description": "first", "args": {"path": "a", "content": "x"}},
		"my_tools.greet": {"args": {"name": "ada"}},
		"read_fileUse": {"description": "bare name with the seed's suffix", "args": {"path": "a"}}
	}`
	got, err := ParseActions([]byte(payload))
	require.NoError(t, err)
	want := []string{"terminal_tools.run", "filesystem_tools.write_file", "my_tools.greet", "read_fileUse"}
	require.Len(t, got, len(want), "actions")
	for i, w := range want {
		assert.Equal(t, w, got[i].Tool, "action %d", i)
	}
	assert.Equal(t, "first", got[1].Description, "description kept")
	assert.Equal(t, `{"path": "a", "content": "x"}`, string(got[1].Args), "args kept")
}

func TestParseActionsListForm(t *testing.T) {
	payload := `[{"tool":"terminal_tools.run","args":{"command":"echo 1"}},{"tool":"terminal_tools.run","description":"again","args":{"command":"echo 2"}}]`
	got, err := ParseActions([]byte(payload))
	require.NoError(t, err)
	require.Len(t, got, 2, "want two calls of the same tool")
	require.Equal(t, "again", got[1].Description)
	// The list form round-trips.
	data, err := json.Marshal(got)
	require.NoError(t, err)
	again, err := ParseActions(data)
	require.NoError(t, err, "round trip")
	require.Len(t, again, 2, "round trip")
	require.Equal(t, "terminal_tools.run", again[0].Tool, "round trip")
}

func TestParseActionsErrors(t *testing.T) {
	tests := []struct {
		name, payload, wantText string
	}{
		{"empty", ``, "empty payload"},
		{"syntax", `{"a.b": {"args": {}}`, "invalid JSON"},
		{"scalar", `42`, "want a JSON object"},
		{"no actions", `{}`, "no actions"},
		{"value not object", `{"a.b": "x"}`, `action "a.b": value must be an object`},
		{"unknown key in body", `{"a.b": {"argz": {}}}`, `unknown field "argz"`},
		{"args not object", `{"a.b": {"args": [1,2]}}`, `"args" must be an object`},
		{"empty tool in list", `[{"tool":"","args":{}}]`, "empty tool name"},
		{"list item not object", `[1]`, "action 0: must be an object"},
		{"trailing data", `{"a.b":{}} {}`, "invalid JSON at byte 12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseActions([]byte(tt.payload))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMalformedActions)
			assert.ErrorContains(t, err, tt.wantText)
		})
	}
}

func TestToolName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"filesystem_tools.read_file", "filesystem_tools.read_file"},
		{"read_fileUse", "read_file"},
		{"my_tools.greetUse", "my_tools.greet"},
		{" my_tools.greet ", " my_tools.greet "}, // not mended: CheckToolRef refuses it
		{"Use", "Use"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ToolName(tt.in), "ToolName(%q)", tt.in)
	}
}

func TestValidateID(t *testing.T) {
	for _, ok := range []string{"a", "sb-1", "Group_2", strings.Repeat("x", 63)} {
		assert.NoError(t, ValidateID("sandbox", ok), "ValidateID(%q)", ok)
	}
	for _, bad := range []string{"", "-a", "a.b", "a b", "a*", strings.Repeat("x", 64)} {
		assert.Error(t, ValidateID("sandbox", bad), "ValidateID(%q)", bad)
	}
}
