package mcp

import (
	"fmt"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandox/sandox/schemas"
)

// observationResult turns an observation into a tool result: one text block
// for the model (stdout, then stderr, the still-running flag, the exit code,
// the return value and the error, each only when present), the whole
// observation as structured content, and IsError when the observation
// carries an error.
func observationResult(o schemas.Observation) *sdkmcp.CallToolResult {
	return &sdkmcp.CallToolResult{
		Content:           []sdkmcp.Content{&sdkmcp.TextContent{Text: observationText(o)}},
		StructuredContent: o,
		IsError:           o.Error != nil,
	}
}

func observationText(o schemas.Observation) string {
	var b strings.Builder
	section := func(label, text string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		if label != "" {
			b.WriteString(label)
		}
		b.WriteString(text)
	}
	if o.Stdout != "" {
		section("", o.Stdout)
	}
	if o.Stderr != "" {
		section("stderr:\n", o.Stderr)
	}
	if o.TerminalStillRunning {
		section("", "[terminal_still_running: the command is still running in the sandbox; read its output later]")
	}
	if o.ExitCode != nil && *o.ExitCode != 0 {
		section("", fmt.Sprintf("[exit code %d]", *o.ExitCode))
	}
	if len(o.Return) > 0 {
		section("return: ", string(o.Return))
	}
	if o.Error != nil {
		section("", fmt.Sprintf("error (%s): %s", string(o.Error.Code), o.Error.Message))
	}
	for _, l := range o.LimitsHit {
		section("", fmt.Sprintf("[limit hit: %s: %s]", l.Resource, l.Message))
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return b.String()
}

func errorResult(msg string) *sdkmcp.CallToolResult {
	return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: msg}}, IsError: true}
}
