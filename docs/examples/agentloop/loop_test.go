package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/sdk"
)

// scriptedModel stands in for a model API, which a test cannot reach: it
// answers each request with the next canned response and keeps the
// requests, so the test can check what the loop sent.
type scriptedModel struct {
	t         *testing.T
	responses []string

	mu       sync.Mutex
	requests []map[string]any
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	require.NoError(m.t, err)
	var req map[string]any
	require.NoError(m.t, json.Unmarshal(body, &req))
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	if n >= len(m.responses) {
		http.Error(w, "no more responses", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, m.responses[n])
}

// shape compiles the JSON Schema of an API's tools list that the SDK's
// tests keep in sdk/testdata.
func shape(t *testing.T, file string) *validator.Schema {
	t.Helper()
	c := validator.NewCompiler()
	s, err := c.Compile(filepath.Join("..", "..", "..", "sdk", "testdata", file))
	require.NoError(t, err)
	return s
}

const loopTools = `
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
`

func TestAgentLoopWiresToolCallsToTheSandbox(t *testing.T) {
	tests := []struct {
		name      string
		chat      func(url string) chat
		responses []string
		// lastResults finds the tool results in the last request.
		lastResults func(req map[string]any) []string
		shape       string // the API's tools shape in sdk/testdata
	}{
		{
			name: "openai", shape: "openai_tools.schema.json",
			chat: func(url string) chat { return &openAIChat{http: http.DefaultClient, url: url, key: "test", model: "m"} },
			responses: []string{
				`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
					{"id":"call_1","type":"function","function":{"name":"filesystem_tools__write_file","arguments":"{\"path\":\"out.txt\",\"content\":\"from the model\"}"}},
					{"id":"call_2","type":"function","function":{"name":"user_tools__add","arguments":"{\"a\":2,\"b\":3}"}}]}}]}`,
				`{"choices":[{"message":{"role":"assistant","content":"done: 5"}}]}`,
			},
			lastResults: func(req map[string]any) []string {
				var out []string
				for _, m := range req["messages"].([]any) {
					if msg := m.(map[string]any); msg["role"] == "tool" {
						out = append(out, msg["tool_call_id"].(string)+" "+msg["content"].(string))
					}
				}
				return out
			},
		},
		{
			name: "anthropic", shape: "anthropic_tools.schema.json",
			chat: func(url string) chat {
				return &anthropicChat{http: http.DefaultClient, url: url, key: "test", model: "m"}
			},
			responses: []string{
				`{"content":[{"type":"text","text":"Let me."},
					{"type":"tool_use","id":"toolu_1","name":"filesystem_tools__write_file","input":{"path":"out.txt","content":"from the model"}},
					{"type":"tool_use","id":"toolu_2","name":"user_tools__add","input":{"a":2,"b":3}}],"stop_reason":"tool_use"}`,
				`{"content":[{"type":"text","text":"done: 5"}],"stop_reason":"end_turn"}`,
			},
			lastResults: func(req map[string]any) []string {
				msgs := req["messages"].([]any)
				last := msgs[len(msgs)-1].(map[string]any)
				var out []string
				for _, b := range last["content"].([]any) {
					block := b.(map[string]any)
					out = append(out, block["tool_use_id"].(string)+" "+block["content"].(string))
				}
				return out
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := executortest.Start(t, "sb-loop-"+tt.name, map[string]string{"user_tools.py": loopTools})
			g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "g-loop"}, sdk.WithConn(box.Conn))
			require.NoError(t, err)
			model := &scriptedModel{t: t, responses: tt.responses}
			hs := httptest.NewServer(model)
			t.Cleanup(hs.Close)

			answer, err := agentLoop(t.Context(), g.Attach(box.ID), tt.chat(hs.URL), "write and add", 5, io.Discard)
			require.NoError(t, err)
			assert.Equal(t, "done: 5", answer)

			data, err := os.ReadFile(filepath.Join(box.Workspace, "out.txt"))
			require.NoError(t, err, "the model's write_file call did not reach the sandbox")
			assert.Equal(t, "from the model", string(data))

			require.Len(t, model.requests, 2)
			assert.NotEmpty(t, model.requests[0]["tools"], "the first request offers no tools")
			assert.NoError(t, shape(t, tt.shape).Validate(model.requests[0]["tools"]), "the tools sent do not match the API's shape")
			results := tt.lastResults(model.requests[1])
			require.Len(t, results, 2)
			assert.Contains(t, results[1], `"return":5`)
		})
	}
}
