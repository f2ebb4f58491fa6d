package schemas

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
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
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"terminal_tools.run", "filesystem_tools.write_file", "my_tools.greet", "read_fileUse"}
	if len(got) != len(want) {
		t.Fatalf("got %d actions, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Tool != w {
			t.Errorf("action %d: got %q, want %q", i, got[i].Tool, w)
		}
	}
	if got[1].Description != "first" || string(got[1].Args) != `{"path": "a", "content": "x"}` {
		t.Errorf("got %+v, want description and args kept", got[1])
	}
}

func TestParseActionsListForm(t *testing.T) {
	payload := `[{"tool":"terminal_tools.run","args":{"command":"echo 1"}},{"tool":"terminal_tools.run","description":"again","args":{"command":"echo 2"}}]`
	got, err := ParseActions([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Description != "again" {
		t.Fatalf("got %+v, want two calls of the same tool", got)
	}
	// The list form round-trips.
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseActions(data)
	if err != nil || len(again) != 2 || again[0].Tool != "terminal_tools.run" {
		t.Fatalf("round trip: got %+v, %v", again, err)
	}
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
			if err == nil {
				t.Fatalf("got nil error, want one containing %q", tt.wantText)
			}
			if !errors.Is(err, ErrMalformedActions) {
				t.Errorf("got %v, want it to wrap ErrMalformedActions", err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("got %q, want it to contain %q", err, tt.wantText)
			}
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
		if got := ToolName(tt.in); got != tt.want {
			t.Errorf("ToolName(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidateID(t *testing.T) {
	for _, ok := range []string{"a", "sb-1", "Group_2", strings.Repeat("x", 63)} {
		if err := ValidateID("sandbox", ok); err != nil {
			t.Errorf("ValidateID(%q): got %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a.b", "a b", "a*", strings.Repeat("x", 64)} {
		if err := ValidateID("sandbox", bad); err == nil {
			t.Errorf("ValidateID(%q): got nil, want an error", bad)
		}
	}
}
