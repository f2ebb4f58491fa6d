package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/require"
)

type echoArgs struct {
	Text  string `json:"text" jsonschema:"description=what to echo"`
	Times int    `json:"times,omitempty" jsonschema:"minimum=1"`
}

func echoTool(module string) Tool {
	return New(module, "echo", "Echo text.", func(_ context.Context, a echoArgs) (Result, error) {
		n := max(a.Times, 1)
		return Result{Stdout: strings.Repeat(a.Text, n)}, nil
	})
}

func TestNewValidatesArgs(t *testing.T) {
	tool := echoTool("m")
	tests := []struct {
		name, args, wantOut, wantErr string
	}{
		{"ok", `{"text":"a","times":2}`, "aa", ""},
		{"optional omitted", `{"text":"b"}`, "b", ""},
		{"missing required", `{}`, "", "missing property 'text'"},
		{"null args", `null`, "", "missing property 'text'"},
		{"wrong type", `{"text":5}`, "", `argument 'text': 5 has type "integer", want "string"`},
		{"unknown argument", `{"text":"a","colour":"red"}`, "", "args: unknown argument 'colour'"},
		{"unknown arguments", `{"text":"a","colour":"red","size":1}`, "", "args: unknown arguments 'colour', 'size'"},
		{"below minimum", `{"text":"a","times":0}`, "", "argument 'times': 0 is less than 1, the minimum"},
		{"not an integer", `{"text":"a","times":1.5}`, "", `argument 'times': 1.5 has type "number", want "integer"`},
		{"not an object", `[1]`, "", `args: [1] has type "array", want "object"`},
		{"not json", `{"text":`, "", "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(t.Context(), json.RawMessage(tt.args))
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tt.wantOut, res.Stdout, "stdout")
				return
			}
			require.ErrorIs(t, err, schemas.CodeInvalidArgs)
			require.ErrorContains(t, err, tt.wantErr)
			require.Equal(t, schemas.CodeInvalidArgs, ErrorCode(err), "error code")
		})
	}
}

func TestParametersSchema(t *testing.T) {
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(echoTool("m").Schema(), &s))
	require.Equal(t, "object", s.Type)
	require.Equal(t, []string{"text"}, s.Required)
	require.Contains(t, string(s.Properties["text"]), "what to echo", "want the description from the struct tag")
}

func TestRegistryResolve(t *testing.T) {
	r := NewRegistry(echoTool("alpha"), echoTool("beta"),
		New("alpha", "only_here", "", func(context.Context, echoArgs) (Result, error) { return Result{}, nil }))
	tests := []struct {
		name, ref, want string
		code            schemas.ErrorCode
	}{
		{"full name", "alpha.echo", "alpha.echo", ""},
		{"full name with Use", "beta.echoUse", "beta.echo", ""},
		{"unique bare name", "only_here", "alpha.only_here", ""},
		{"unique bare name with Use", "only_hereUse", "alpha.only_here", ""},
		{"ambiguous bare name", "echo", "", schemas.CodeAmbiguousTool},
		{"unknown module", "gamma.echo", "", schemas.CodeUnknownTool},
		{"unknown function", "alpha.nope", "", schemas.CodeUnknownTool},
		{"unknown bare name", "nope", "", schemas.CodeUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(tt.ref)
			if tt.code != "" {
				require.Equal(t, tt.code, ErrorCode(err), "error code of %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.FullName())
		})
	}
}

func TestRegistryAddReplaces(t *testing.T) {
	r := NewRegistry(echoTool("alpha"))
	replacement := echoTool("alpha")
	replacement.Source = "python"
	r.Add(replacement)
	got, err := r.Resolve("alpha.echo")
	require.NoError(t, err)
	require.Equal(t, "python", got.Source, "want the replacement")
	require.Len(t, r.Describe(), 1)
}

// TestValidationNamesNestedArguments checks that an error inside an object
// or an array names the argument by its path.
func TestValidationNamesNestedArguments(t *testing.T) {
	type item struct {
		Name string `json:"name" jsonschema:"minLength=1"`
	}
	tool := New("m", "nested", "d", func(ctx context.Context, a struct {
		Items []item `json:"items"`
		Owner item   `json:"owner"`
	}) (Result, error) {
		return Result{}, nil
	})
	tests := []struct{ args, want string }{
		{`{"items":[{"name":""}],"owner":{"name":"a"}}`, `argument 'items[].name': "" contains 0 Unicode code points, fewer than 1`},
		{`{"items":[],"owner":{"name":5}}`, `argument 'owner.name': 5 has type "integer", want "string"`},
	}
	for _, tt := range tests {
		_, err := tool.Call(t.Context(), json.RawMessage(tt.args))
		require.ErrorContains(t, err, tt.want, "args %s", tt.args)
	}
}
