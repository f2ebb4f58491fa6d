package mcp

import (
	"context"
	"fmt"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandox/sandox/schemas"
)

// Checkpointer saves and restores a sandbox's workspace: *sdk.Sandbox
// (sdk/checkpoints.go, docs/checkpoints.md).
type Checkpointer interface {
	Checkpoint(ctx context.Context, name string) (schemas.Checkpoint, error)
	Checkpoints(ctx context.Context) ([]schemas.Checkpoint, error)
	DiffCheckpoints(ctx context.Context, from, to string) (schemas.CheckpointDiff, error)
	Rollback(ctx context.Context, ref string) (schemas.Checkpoint, error)
}

// The checkpoint tools' names: one word after "sandox_", so that they can
// clash with no tool of a family ("family__function").
const (
	ToolCheckpoint      = "sandox_checkpoint"
	ToolListCheckpoints = "sandox_list_checkpoints"
	ToolDiffCheckpoints = "sandox_diff_checkpoints"
	ToolRollback        = "sandox_rollback"
)

type checkpointArgs struct {
	Name string `json:"name,omitempty" jsonschema:"an optional name for the checkpoint: letters, digits, '-' or '_'"`
}

type diffArgs struct {
	From string `json:"from" jsonschema:"the checkpoint (id or name) to compare from"`
	To   string `json:"to,omitempty" jsonschema:"the checkpoint (id or name) to compare to; empty compares with the workspace now"`
}

type rollbackArgs struct {
	Checkpoint string `json:"checkpoint" jsonschema:"the checkpoint (id or name) to put the workspace back to"`
}

type checkpointList struct {
	Checkpoints []schemas.Checkpoint `json:"checkpoints"`
}

// addCheckpointTools offers the checkpoint tools of sandbox id on srv.
// A refused call (an unknown checkpoint, a full disk) is a tool result with
// IsError, as MCP asks for errors that happen while running a tool.
func addCheckpointTools(srv *sdkmcp.Server, id string, c Checkpointer) {
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolCheckpoint, Description: "Save the sandbox's workspace as a checkpoint, outside the sandbox, to roll back to later."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in checkpointArgs) (*sdkmcp.CallToolResult, schemas.Checkpoint, error) {
			ck, err := c.Checkpoint(ctx, in.Name)
			if err != nil {
				return errorResult(fmt.Sprintf("checkpoint of sandbox %s: %v", id, err)), ck, nil
			}
			return textResult(describeCheckpoint(ck)), ck, nil
		})
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolListCheckpoints, Description: "List the sandbox's checkpoints, oldest first, each with the paths changed in the workspace since it."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, checkpointList, error) {
			list, err := c.Checkpoints(ctx)
			if err != nil {
				return errorResult(fmt.Sprintf("checkpoints of sandbox %s: %v", id, err)), checkpointList{}, nil
			}
			var b strings.Builder
			for _, ck := range list {
				fmt.Fprintf(&b, "%s; changed since: %s\n", describeCheckpoint(ck), orNone(ck.ChangedSince))
			}
			if len(list) == 0 {
				b.WriteString("(no checkpoints)")
			}
			return textResult(b.String()), checkpointList{Checkpoints: list}, nil
		})
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolDiffCheckpoints, Description: "List the paths added, changed and removed between two checkpoints, or between one and the workspace now."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in diffArgs) (*sdkmcp.CallToolResult, schemas.CheckpointDiff, error) {
			d, err := c.DiffCheckpoints(ctx, in.From, in.To)
			if err != nil {
				return errorResult(fmt.Sprintf("diff in sandbox %s: %v", id, err)), d, nil
			}
			return textResult(fmt.Sprintf("added: %s\nchanged: %s\nremoved: %s", orNone(d.Added), orNone(d.Changed), orNone(d.Removed))), d, nil
		})
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolRollback, Description: "Put the sandbox's workspace back exactly as a checkpoint saved it. A rollback that fails leaves the workspace as it was."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in rollbackArgs) (*sdkmcp.CallToolResult, schemas.Checkpoint, error) {
			ck, err := c.Rollback(ctx, in.Checkpoint)
			if err != nil {
				return errorResult(fmt.Sprintf("rollback of sandbox %s: %v", id, err)), ck, nil
			}
			return textResult("rolled back to " + describeCheckpoint(ck)), ck, nil
		})
}

func describeCheckpoint(c schemas.Checkpoint) string {
	name := ""
	if c.Name != "" {
		name = " (" + c.Name + ")"
	}
	return fmt.Sprintf("checkpoint %s%s: %d entries, %d bytes, %d new, %.0f ms", c.ID, name, c.Files, c.Bytes, c.NewBytes, c.DurationMS)
}

func orNone(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}

func textResult(text string) *sdkmcp.CallToolResult {
	return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: text}}}
}
