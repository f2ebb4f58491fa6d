package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// Pauser pauses and resumes a sandbox: *sdk.Sandbox (sdk/pause.go,
// docs/pause.md).
type Pauser interface {
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
}

// Forker makes new sandboxes from one of a sandbox's checkpoints:
// *sdk.Sandbox (sdk/checkpoints.go, docs/checkpoints.md#fork).
type Forker interface {
	Fork(ctx context.Context, ref string, ids []string, opts sdk.SandboxOptions) ([]*sdk.Sandbox, error)
}

var (
	_ Pauser = (*sdk.Sandbox)(nil)
	_ Forker = (*sdk.Sandbox)(nil)
)

// The pause, resume and fork tools' names, one word after "sandox_" as
// the checkpoint tools'.
const (
	ToolPause  = "sandox_pause"
	ToolResume = "sandox_resume"
	ToolFork   = "sandox_fork"
)

// MaxForks is the most sandboxes one sandox_fork call makes.
const MaxForks = 16

type forkArgs struct {
	Checkpoint string   `json:"checkpoint" jsonschema:"the checkpoint (id or name) of this sandbox to fill the new sandboxes from"`
	Count      int      `json:"count,omitempty" jsonschema:"how many sandboxes to make (1 when 0); ignored when ids are given"`
	IDs        []string `json:"ids,omitempty" jsonschema:"the new sandboxes' ids (letters, digits, '-' or '_'); made up when empty"`
}

// ForkResult is sandox_fork's structured content: the new sandboxes'
// ids, in order, also those made before a failure.
type ForkResult struct {
	IDs []string `json:"ids"`
}

// addPauseTools offers sandox_pause and sandox_resume of sandbox id on
// srv. A refusal (a sandbox that is not running, no CPU free to resume)
// is a tool result with IsError.
func addPauseTools(srv *sdkmcp.Server, id string, p Pauser) {
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolPause, Description: "Pause the sandbox: its processes are frozen and its CPU freed; its files, running jobs and terminal sessions are kept. Every other tool call fails until sandox_resume."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
			if err := p.Pause(ctx); err != nil {
				return errorResult(err.Error()), nil, nil
			}
			return textResult("sandbox " + id + " is paused"), nil, nil
		})
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolResume, Description: "Resume the paused sandbox: its processes go on where they were paused."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
			if err := p.Resume(ctx); err != nil {
				return errorResult(err.Error()), nil, nil
			}
			return textResult("sandbox " + id + " runs again"), nil, nil
		})
}

// addForkTool offers sandox_fork of sandbox id on srv: it makes and
// starts new sandboxes in the group, each with the files of one of the
// sandbox's checkpoints, and answers their ids. They outlive the MCP
// session; ending them is the caller's business.
func addForkTool(srv *sdkmcp.Server, id string, f Forker) {
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: ToolFork, Description: fmt.Sprintf("Make new sandboxes (up to %d) from one of this sandbox's checkpoints, each started with the checkpoint's files; answers their ids.", MaxForks)},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in forkArgs) (*sdkmcp.CallToolResult, ForkResult, error) {
			ids, err := forkIDs(in)
			if err != nil {
				return errorResult(fmt.Sprintf("fork of sandbox %s: %v", id, err)), ForkResult{IDs: []string{}}, nil
			}
			made, err := f.Fork(ctx, in.Checkpoint, ids, sdk.SandboxOptions{})
			res := ForkResult{IDs: []string{}}
			for _, sb := range made {
				res.IDs = append(res.IDs, sb.ID())
			}
			if err != nil {
				return errorResult(fmt.Sprintf("%v (made: %s)", err, orNone(res.IDs))), res, nil
			}
			return textResult(fmt.Sprintf("forked from checkpoint %s: %s", in.Checkpoint, strings.Join(res.IDs, ", "))), res, nil
		})
}

// forkIDs checks a fork's arguments and returns the new sandboxes' ids:
// those given, or count made up ones.
func forkIDs(in forkArgs) ([]string, error) {
	if in.Checkpoint == "" {
		return nil, fmt.Errorf("%w: checkpoint: want the id or name of a checkpoint", sdk.ErrBadRequest)
	}
	if len(in.IDs) > 0 {
		if len(in.IDs) > MaxForks {
			return nil, fmt.Errorf("%w: %d ids: want at most %d", sdk.ErrBadRequest, len(in.IDs), MaxForks)
		}
		seen := map[string]bool{}
		for _, id := range in.IDs {
			if err := schemas.ValidateID("sandbox", id); err != nil {
				return nil, err
			}
			if seen[id] {
				return nil, fmt.Errorf("%w: sandbox id %s given twice", sdk.ErrBadRequest, id)
			}
			seen[id] = true
		}
		return in.IDs, nil
	}
	n := in.Count
	if n == 0 {
		n = 1
	}
	if n < 0 || n > MaxForks {
		return nil, fmt.Errorf("%w: count %d: want 1 to %d", sdk.ErrBadRequest, in.Count, MaxForks)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("fork ids: %w", err)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("fork-%s-%d", hex.EncodeToString(b[:]), i+1)
	}
	return ids, nil
}
