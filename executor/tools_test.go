package executor

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/tools"
)

func TestToolsServesOnlyTheChosenFamilies(t *testing.T) {
	tests := []struct {
		name     string
		families []string
		want     []string
		absent   string // a tool that must be unknown
	}{
		{"default", nil, []string{"filesystem_tools", "terminal_tools"}, ""},
		{"filesystem only", []string{"filesystem_tools"}, []string{"filesystem_tools"}, "terminal_tools.run"},
		{"terminal only", []string{"terminal_tools"}, []string{"terminal_tools"}, "filesystem_tools.read_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			reg, closeTools, err := Tools(t.Context(), tools.Env{
				Executor: schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: ws, ToolsDir: filepath.Join(ws, "no-tools"), Families: tt.families},
				Log:      slog.New(slog.DiscardHandler),
			})
			require.NoError(t, err)
			t.Cleanup(closeTools)
			assert.Equal(t, tt.want, reg.Modules())
			if tt.absent != "" {
				_, err := reg.Resolve(tt.absent)
				var e *schemas.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, schemas.CodeUnknownTool, e.Code)
			}
		})
	}
}

func TestToolsRefusesAnUnknownFamily(t *testing.T) {
	_, _, err := Tools(t.Context(), tools.Env{Executor: schemas.ExecutorEnv{Workspace: t.TempDir(), Families: []string{"nope_tools"}}})
	assert.ErrorContains(t, err, `unknown tool family "nope_tools"`)
}

// The families share the working directory: the filesystem tools follow the
// terminal's cd, and the user's Python tools run there too.
func TestToolsShareTheWorkingDirectory(t *testing.T) {
	ws := t.TempDir()
	toolsDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(toolsDir, "my_tools.py"), []byte("import os\n\ndef cwd() -> str:\n    return os.getcwd()\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "sub", "note.txt"), []byte("hello"), 0o644))
	reg, closeTools, err := Tools(t.Context(), tools.Env{
		Executor: schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: ws, ToolsDir: toolsDir},
		Log:      slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(closeTools)
	assert.Equal(t, []string{"filesystem_tools", "my_tools", "terminal_tools"}, reg.Modules())

	call := func(name, args string) tools.Result {
		t.Helper()
		tl, err := reg.Resolve(name)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		res, err := tl.Call(ctx, json.RawMessage(args))
		require.NoError(t, err, "%s: stdout %q stderr %q", name, res.Stdout, res.Stderr)
		return res
	}
	call("terminal_tools.run", `{"command":"cd sub"}`)
	assert.Contains(t, call("filesystem_tools.read_file", `{"path":"note.txt"}`).Stdout, "hello")
	assert.JSONEq(t, `"`+filepath.Join(ws, "sub")+`"`, string(call("my_tools.cwd", `{}`).Return))
}

func TestPingAnswersTheServedModules(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	nc := startServer(t, testRegistry(&ran, &mu))
	m, err := nc.Request(schemas.PingSubject("sb-1"), nil, 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, jsonschema.Validate("executor_ready", m.Data))
	var ready schemas.ExecutorReady
	require.NoError(t, json.Unmarshal(m.Data, &ready))
	assert.Equal(t, []string{"demo_tools", "other_tools"}, ready.Modules)
}

// The Python tool host starts on the first call of a user tool, not with
// the executor: importing the tool file leaves a mark only then.
func TestToolsStartPythonOnFirstUse(t *testing.T) {
	toolsDir, mark := t.TempDir(), filepath.Join(t.TempDir(), "imported")
	src := "open(" + strconv.Quote(mark) + ", 'w').close()\n\ndef hi() -> str:\n    return 'hi'\n"
	require.NoError(t, os.WriteFile(filepath.Join(toolsDir, "lazy_tools.py"), []byte(src), 0o644))
	reg, closeTools, err := Tools(t.Context(), tools.Env{
		Executor: schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: t.TempDir(), ToolsDir: toolsDir},
		Log:      slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(closeTools)
	assert.Equal(t, []string{"filesystem_tools", "lazy_tools", "terminal_tools"}, reg.Modules())
	_, err = reg.Resolve("terminal_tools.run")
	require.NoError(t, err)
	assert.NoFileExists(t, mark, "no Python before a user tool is needed")

	tl, err := reg.Resolve("lazy_tools.hi")
	require.NoError(t, err)
	assert.FileExists(t, mark)
	res, err := tl.Call(t.Context(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `"hi"`, string(res.Return))
}
