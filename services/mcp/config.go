package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// GroupFile is the group config `sandox mcp --group-config FILE` reads: the
// group to start, and the options of the sandbox each MCP session gets. It
// is JSON; relative tool paths are relative to the file's directory.
//
//	{
//	  "group": "agents",
//	  "tools": ["my_tools.py"],
//	  "compute_resources": {"cpu": "1", "memory": "512MiB"},
//	  "sandbox": {"tools": ["more_tools.py"], "compute_resources": {"memory": "1GiB"}}
//	}
type GroupFile struct {
	// Group is the group's id; "mcp-" and 8 random hex digits when empty.
	Group string `json:"group,omitempty"`
	// Tools are the group's default tool files.
	Tools []string `json:"tools,omitempty"`
	// ComputeResources are the group's default resources.
	ComputeResources schemas.ComputeResources `json:"compute_resources,omitzero"`
	// DatabaseAccess is the group's default database access.
	DatabaseAccess schemas.DatabaseAccess `json:"database_access,omitempty"`
	// PopulationConfig is the YAML file that populates the shared databases.
	PopulationConfig string `json:"initial_database_population_config,omitempty"`
	// Sandbox holds the options of each session's sandbox.
	Sandbox struct {
		Tools             []string                  `json:"tools,omitempty"`
		ComputeResources  *schemas.ComputeResources `json:"compute_resources,omitempty"`
		AttachedDatabases *schemas.DatabaseAccess   `json:"attached_databases,omitempty"`
	} `json:"sandbox,omitzero"`
}

// ParseGroupFile reads a GroupFile from r, resolving its relative paths
// against dir, and returns the group config and the sandbox options. It
// refuses unknown fields; errors wrap sdk.ErrBadRequest.
func ParseGroupFile(r io.Reader, dir string) (sdk.GroupConfig, sdk.SandboxOptions, error) {
	var f GroupFile
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return sdk.GroupConfig{}, sdk.SandboxOptions{}, fmt.Errorf("%w: group config: %w", sdk.ErrBadRequest, err)
	}
	if f.Group == "" {
		f.Group = randomID("mcp-")
	}
	path := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	paths := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = path(p)
		}
		return out
	}
	cfg := sdk.GroupConfig{
		ID:               f.Group,
		DatabaseAccess:   f.DatabaseAccess,
		ComputeResources: f.ComputeResources,
		Tools:            paths(f.Tools),
		PopulationConfig: path(f.PopulationConfig),
	}
	opts := sdk.SandboxOptions{
		Tools:             paths(f.Sandbox.Tools),
		ComputeResources:  f.Sandbox.ComputeResources,
		AttachedDatabases: f.Sandbox.AttachedDatabases,
	}
	return cfg, opts, nil
}
