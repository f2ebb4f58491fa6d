package sdk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// MaxModelToolName is the longest tool name the OpenAI and Anthropic APIs
// accept; both want names matching ^[a-zA-Z0-9_-]{1,64}$.
const MaxModelToolName = 64

// modelSep stands for the dot between module and function in a model-facing
// name: "filesystem_tools.read_file" is offered as
// "filesystem_tools__read_file".
const modelSep = "__"

// ModelToolName returns the name under which the sandox tool name (for
// example "filesystem_tools.read_file") is offered to a model API that
// allows only letters, digits, "_" and "-" and at most 64 characters
// (OpenAI, Anthropic). The dot becomes "__"; any other character outside
// that set becomes "_"; a name still longer than 64 characters keeps its
// first 55 characters and ends with "_" and 8 hex digits of its SHA-256, so
// that two long names stay apart. Use ToolNames to map a model's name back.
func ModelToolName(tool string) string {
	var b strings.Builder
	for _, r := range tool {
		switch {
		case r == '.':
			b.WriteString(modelSep)
		case r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		return "_"
	}
	if len(name) <= MaxModelToolName {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	return name[:MaxModelToolName-9] + "_" + hex.EncodeToString(sum[:4])
}

// ToolNames maps the names a model uses for a sandbox's tools back to the
// sandox tool names, so that a model's tool calls can be sent as actions.
// The zero value maps by rule only (see Resolve). It is safe for concurrent
// reads once built.
type ToolNames struct {
	byModel map[string]string
}

// NewToolNames returns the mapping for the given tools. It fails with
// ErrBadRequest when two tools would be offered to a model under the same
// name.
func NewToolNames(tools []schemas.ToolDescription) (*ToolNames, error) {
	n := &ToolNames{byModel: make(map[string]string, len(tools))}
	for _, t := range tools {
		m := ModelToolName(t.Name)
		if prev, ok := n.byModel[m]; ok && prev != t.Name {
			return nil, fmt.Errorf("%w: tools %q and %q share the model name %q", ErrBadRequest, prev, t.Name, m)
		}
		n.byModel[m] = t.Name
	}
	return n, nil
}

// Resolve returns the sandox tool name for a name as a model wrote it: the
// tool offered under that model name, else the name itself when it is
// already a sandox name (it has a dot, as MCP and the jsonschema format keep
// them), else the name with its first "__" turned back into a dot. What it
// returns for an unknown name is for the sandbox to refuse, with an
// observation the model can read.
func (n *ToolNames) Resolve(modelName string) string {
	if n != nil {
		if full, ok := n.byModel[modelName]; ok {
			return full
		}
	}
	if strings.Contains(modelName, ".") {
		return modelName
	}
	if mod, fn, ok := strings.Cut(modelName, modelSep); ok && mod != "" && fn != "" {
		return mod + "." + fn
	}
	return modelName
}
