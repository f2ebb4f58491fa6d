package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// openAIChat talks to the Chat Completions API.
type openAIChat struct {
	http  *http.Client
	url   string
	key   string
	model string

	tools    json.RawMessage
	messages []any
}

func (c *openAIChat) format() sdk.ToolFormat { return sdk.FormatOpenAI }

func (c *openAIChat) start(tools json.RawMessage, task string) {
	c.tools = tools
	c.messages = []any{
		map[string]string{"role": "system", "content": "You work in a sandbox through its tools. Call them to do the task, then answer briefly."},
		map[string]string{"role": "user", "content": task},
	}
}

type openAIMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

func (c *openAIChat) step(ctx context.Context) ([]sdk.ToolCall, string, error) {
	body, err := json.Marshal(map[string]any{"model": c.model, "messages": c.messages, "tools": c.tools})
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	var out struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := doJSON(c.http, req, &out); err != nil {
		return nil, "", err
	}
	if len(out.Choices) == 0 {
		return nil, "", fmt.Errorf("openai: no choices")
	}
	raw := out.Choices[0].Message
	var msg openAIMessage
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, "", err
	}
	c.messages = append(c.messages, raw) // the assistant turn, as the API wrote it
	calls := make([]sdk.ToolCall, 0, len(msg.ToolCalls))
	for _, tc := range msg.ToolCalls {
		args, err := json.Marshal(tc.Function.Arguments) // a JSON string; sdk.ToolCall unwraps it
		if err != nil {
			return nil, "", err
		}
		calls = append(calls, sdk.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return calls, msg.Content, nil
}

func (c *openAIChat) answer(calls []sdk.ToolCall, obs []schemas.Observation) {
	for i, call := range calls {
		c.messages = append(c.messages, map[string]string{"role": "tool", "tool_call_id": call.ID, "content": observationJSON(obs[i])})
	}
}

// doJSON sends req and decodes a 2xx JSON answer into out.
func doJSON(hc *http.Client, req *http.Request, out any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s: %.500s", req.URL, resp.Status, data)
	}
	return json.Unmarshal(data, out)
}
