package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sandox/sandox/schemas"
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
		{"wrong type", `{"text":5}`, "", "argument 'text'"},
		{"unknown argument", `{"text":"a","colour":"red"}`, "", "colour"},
		{"below minimum", `{"text":"a","times":0}`, "", "argument 'times'"},
		{"not json", `{"text":`, "", "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Call(t.Context(), json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if res.Stdout != tt.wantOut {
					t.Fatalf("got stdout %q, want %q", res.Stdout, tt.wantOut)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidArgs) {
				t.Fatalf("got %v, want an ErrInvalidArgs error", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %q, want it to contain %q", err, tt.wantErr)
			}
			if ErrorCode(err) != schemas.CodeInvalidArgs {
				t.Fatalf("got code %s, want invalid_args", ErrorCode(err))
			}
		})
	}
}

func TestParametersSchema(t *testing.T) {
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echoTool("m").Parameters, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || len(s.Required) != 1 || s.Required[0] != "text" {
		t.Fatalf("got %+v, want an object schema requiring only text", s)
	}
	if !strings.Contains(string(s.Properties["text"]), "what to echo") {
		t.Fatalf("got %s, want the description from the struct tag", s.Properties["text"])
	}
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
				if ErrorCode(err) != tt.code {
					t.Fatalf("got %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil || got.FullName() != tt.want {
				t.Fatalf("got %q, %v; want %q", got.FullName(), err, tt.want)
			}
		})
	}
}

func TestRegistryAddReplaces(t *testing.T) {
	r := NewRegistry(echoTool("alpha"))
	replacement := echoTool("alpha")
	replacement.Source = "python"
	r.Add(replacement)
	got, err := r.Resolve("alpha.echo")
	if err != nil || got.Source != "python" {
		t.Fatalf("got %+v, %v; want the replacement", got, err)
	}
	if n := len(r.Describe()); n != 1 {
		t.Fatalf("got %d tools, want 1", n)
	}
}
