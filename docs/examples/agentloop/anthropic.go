package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// anthropicChat talks to the Messages API.
type anthropicChat struct {
	http  *http.Client
	url   string
	key   string
	model string

	tools    json.RawMessage
	messages []any
}

func (c *anthropicChat) format() sdk.ToolFormat { return sdk.FormatAnthropic }

func (c *anthropicChat) start(tools json.RawMessage, task string) {
	c.tools = tools
	c.messages = []any{map[string]string{"role": "user", "content": task}}
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (c *anthropicChat) step(ctx context.Context) ([]sdk.ToolCall, string, error) {
	body, err := json.Marshal(map[string]any{
		"model":      c.model,
		"max_tokens": 4096,
		"system":     "You work in a sandbox through its tools. Call them to do the task, then answer briefly.",
		"tools":      c.tools,
		"messages":   c.messages,
	})
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", c.key)
	req.Header.Set("anthropic-version", "2023-06-01")
	var out struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := doJSON(c.http, req, &out); err != nil {
		return nil, "", err
	}
	c.messages = append(c.messages, map[string]any{"role": "assistant", "content": out.Content})
	var calls []sdk.ToolCall
	var text strings.Builder
	for _, raw := range out.Content {
		var b anthropicBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, "", err
		}
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, sdk.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
		}
	}
	return calls, text.String(), nil
}

func (c *anthropicChat) answer(calls []sdk.ToolCall, obs []schemas.Observation) {
	results := make([]map[string]any, len(calls))
	for i, call := range calls {
		results[i] = map[string]any{
			"type":        "tool_result",
			"tool_use_id": call.ID,
			"content":     observationJSON(obs[i]),
			"is_error":    obs[i].Error != nil,
		}
	}
	c.messages = append(c.messages, map[string]any{"role": "user", "content": results})
}
