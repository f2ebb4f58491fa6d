package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

func TestObservationText(t *testing.T) {
	one := 1
	tests := []struct {
		name string
		obs  schemas.Observation
		want string
	}{
		{name: "nothing", obs: schemas.Observation{}, want: "(no output)"},
		{name: "stdout only", obs: schemas.Observation{Stdout: "hi\n"}, want: "hi\n"},
		{name: "stdout and stderr", obs: schemas.Observation{Stdout: "a", Stderr: "b"}, want: "a\nstderr:\nb"},
		{name: "still running", obs: schemas.Observation{Stdout: "x\n", TerminalStillRunning: true}, want: "x\n[terminal_still_running: the command is still running in the sandbox; read its output later]"},
		{name: "exit code", obs: schemas.Observation{ExitCode: &one}, want: "[exit code 1]"},
		{name: "return value", obs: schemas.Observation{Return: json.RawMessage(`{"a":1}`)}, want: `return: {"a":1}`},
		{name: "error", obs: schemas.Observation{Error: &schemas.Error{Code: schemas.CodeInvalidArgs, Message: "bad"}}, want: "error (invalid_args): bad"},
		{name: "limit", obs: schemas.Observation{LimitsHit: []schemas.LimitHit{{Resource: schemas.LimitMemory, Message: "killed"}}}, want: "[limit hit: memory: killed]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, observationText(tt.obs))
		})
	}
}

func TestObservationResultIsErrorFollowsTheObservation(t *testing.T) {
	assert.False(t, observationResult(schemas.Observation{Stdout: "ok"}).IsError)
	assert.True(t, observationResult(schemas.Observation{Error: &schemas.Error{Code: schemas.CodeToolError, Message: "x"}}).IsError)
}
