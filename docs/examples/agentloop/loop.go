package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// chat is one conversation with a model API.
type chat interface {
	// format is the tool format the API takes.
	format() sdk.ToolFormat
	// start begins the conversation with the tools (in format()) and the task.
	start(tools json.RawMessage, task string)
	// step sends the conversation so far and returns the model's tool calls
	// (none when it is done) and its text.
	step(ctx context.Context) (calls []sdk.ToolCall, text string, err error)
	// answer adds the observations that answer calls, one per call.
	answer(calls []sdk.ToolCall, obs []schemas.Observation)
}

// agentLoop runs the task: it offers the sandbox's tools to the model,
// runs the model's tool calls as one action batch per turn, and returns the
// model's final text. It logs each call to log.
func agentLoop(ctx context.Context, sb *sdk.Sandbox, c chat, task string, maxSteps int, log io.Writer) (string, error) {
	descs, err := sb.Tools(ctx)
	if err != nil {
		return "", err
	}
	tools, err := sdk.ExportTools(descs, c.format())
	if err != nil {
		return "", err
	}
	names, err := sdk.NewToolNames(descs)
	if err != nil {
		return "", err
	}
	c.start(tools, task)
	for range maxSteps {
		calls, text, err := c.step(ctx)
		if err != nil {
			return "", err
		}
		if len(calls) == 0 {
			return text, nil
		}
		actions, err := names.Actions(calls)
		if err != nil {
			return "", err
		}
		for _, a := range actions {
			fmt.Fprintf(log, "-> %s %s\n", a.Tool, a.Args)
		}
		obs, err := sb.SendActions(ctx, actions)
		if err != nil {
			return "", err
		}
		c.answer(calls, obs)
	}
	return "", fmt.Errorf("no answer after %d steps", maxSteps)
}

// observationJSON is what the model reads of an observation: the whole
// observation (stdout, stderr, terminal_still_running, return, error).
func observationJSON(o schemas.Observation) string {
	data, err := json.Marshal(o)
	if err != nil {
		return fmt.Sprintf(`{"error": %q}`, err.Error())
	}
	return string(data)
}
