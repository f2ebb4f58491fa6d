package mcp

import (
	"context"
	"fmt"
	"log/slog"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// Sandbox is what the server needs of a sandbox: its tools and a way to run
// a batch. *sdk.Sandbox has both.
type Sandbox interface {
	ID() string
	Tools(ctx context.Context) ([]schemas.ToolDescription, error)
	SendActions(ctx context.Context, actions schemas.Actions, opts ...sdk.SendOption) ([]schemas.Observation, error)
}

var (
	_ Sandbox      = (*sdk.Sandbox)(nil)
	_ Checkpointer = (*sdk.Sandbox)(nil)
)

// Options configures a server.
type Options struct {
	// Name and Version identify the server to its clients; "sandox" and
	// "dev" when empty.
	Name, Version string
	// Logger receives the server's logs (never written to stdout, which a
	// stdio transport owns); discarded when nil.
	Logger *slog.Logger
	// DottedNames offers the tools under their sandox names
	// ("filesystem_tools.read_file"), which the MCP specification allows but
	// several clients refuse because they pass the names on to a model API
	// that wants ^[a-zA-Z0-9_-]{1,64}$. By default the tools are offered
	// under sdk.ModelToolName ("filesystem_tools__read_file").
	DottedNames bool
	// ProtocolVersions, when set, narrows the MCP protocol versions the
	// server speaks (see SessionProtocolVersions); all of the SDK's when
	// empty.
	ProtocolVersions []string
	// Checkpoints also offers the checkpoint tools (checkpoints.go) and
	// sandox_fork (pausefork.go); the sandbox must then be a Checkpointer
	// and a Forker too (*sdk.Sandbox is).
	Checkpoints bool
	// Pause also offers sandox_pause and sandox_resume (pausefork.go); the
	// sandbox must then be a Pauser too (*sdk.Sandbox is).
	Pause bool
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// NewServer lists the sandbox's tools and returns an MCP server that offers
// each of them, with its description and argument schema, under its model
// name ("filesystem_tools__read_file", see sdk.ModelToolName) or, with
// o.DottedNames, its sandox name. A tools/call runs
// as a one-action batch in the sandbox. NewServer blocks for one request to
// the sandbox; it fails when the sandbox does not answer (sdk.ErrSandboxGone)
// or describes a tool whose arguments are not an object schema
// (sdk.ErrBadRequest). With o.Checkpoints it also offers the checkpoint
// tools (sandox_checkpoint, sandox_list_checkpoints,
// sandox_diff_checkpoints, sandox_rollback, sandox_fork), with o.Pause
// sandox_pause and sandox_resume. The server is safe for concurrent use by several
// sessions; their calls run one batch after another in the sandbox.
func NewServer(ctx context.Context, sb Sandbox, o Options) (*sdkmcp.Server, error) {
	descs, err := sb.Tools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tools of sandbox %s: %w", sb.ID(), err)
	}
	if _, err := sdk.NewToolNames(descs); err != nil {
		return nil, err
	}
	name, version := o.Name, o.Version
	if name == "" {
		name = "sandox"
	}
	if version == "" {
		version = "dev"
	}
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: name, Title: "sandox sandbox " + sb.ID(), Version: version}, &sdkmcp.ServerOptions{
		Instructions: fmt.Sprintf("Each tool runs in the sandbox %s, one call at a time, in its workspace. "+
			"The result is the call's observation: its stdout, its stderr, whether a terminal command is still running, "+
			"and the value a Python tool returned; the structured content holds the whole observation.", sb.ID()),
		Logger:                    o.logger(),
		Capabilities:              &sdkmcp.ServerCapabilities{Tools: &sdkmcp.ToolCapabilities{}},
		SupportedProtocolVersions: o.ProtocolVersions,
	})
	for _, d := range descs {
		params, err := sdk.ObjectSchema(d.Parameters)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %s: %w", sdk.ErrBadRequest, d.Name, err)
		}
		offered := sdk.ModelToolName(d.Name)
		if o.DottedNames {
			offered = d.Name
		}
		srv.AddTool(&sdkmcp.Tool{Name: offered, Description: d.Description, InputSchema: params}, callTool(sb, d.Name, o.logger()))
	}
	if o.Checkpoints {
		c, ok := sb.(Checkpointer)
		if !ok {
			return nil, fmt.Errorf("%w: sandbox %s (%T) cannot checkpoint", sdk.ErrUnsupported, sb.ID(), sb)
		}
		f, ok := sb.(Forker)
		if !ok {
			return nil, fmt.Errorf("%w: sandbox %s (%T) cannot fork", sdk.ErrUnsupported, sb.ID(), sb)
		}
		addCheckpointTools(srv, sb.ID(), c)
		addForkTool(srv, sb.ID(), f)
	}
	if o.Pause {
		p, ok := sb.(Pauser)
		if !ok {
			return nil, fmt.Errorf("%w: sandbox %s (%T) cannot pause", sdk.ErrUnsupported, sb.ID(), sb)
		}
		addPauseTools(srv, sb.ID(), p)
	}
	return srv, nil
}

// callTool returns the handler that runs one tool as a one-action batch.
func callTool(sb Sandbox, tool string, log *slog.Logger) sdkmcp.ToolHandler {
	return func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 {
			args = []byte("{}")
		}
		action := schemas.Action{Tool: tool, Description: "MCP tools/call", Args: args}
		obs, err := sb.SendActions(ctx, schemas.Actions{action})
		if err != nil {
			// The batch as a whole failed (refused, sandbox gone, deadline):
			// the model reads it as a failed call, as MCP asks for errors
			// that happen while running a tool.
			log.Warn("tool call failed", "sandbox", sb.ID(), "tool", tool, "err", err)
			return errorResult(fmt.Sprintf("sandox could not run %s: %v", tool, err)), nil
		}
		if len(obs) != 1 {
			return errorResult(fmt.Sprintf("sandox answered %s with %d observations, want 1", tool, len(obs))), nil
		}
		return observationResult(obs[0]), nil
	}
}
