package builtin

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/catalog"
)

// TestOpensMatchCatalog checks that every family of the catalog has an
// Open here and every Open a catalog entry: all of them in the full build,
// all but web_tools with the tag nowebtools.
func TestOpensMatchCatalog(t *testing.T) {
	var want catalog.List
	for _, f := range catalog.Families() {
		if f.Name != catalog.Web || webBuilt {
			want = append(want, f)
		}
	}
	var names []string
	for name := range opens() {
		names = append(names, name)
	}
	assert.ElementsMatch(t, want.Names(), names)
	assert.Equal(t, want, Families(), "in the catalog's order")
}

func TestFamiliesOpen(t *testing.T) {
	fams, err := Select(Families().Names())
	require.NoError(t, err)
	for _, f := range fams {
		t.Run(f.Name, func(t *testing.T) {
			require.NotNil(t, f.Open)
			// Opening the family gives tools of that family only, and it
			// closes cleanly.
			ws := t.TempDir()
			env := tools.Env{
				Executor: schemas.ExecutorEnv{SandboxID: "sb-1", Workspace: ws},
				Dir:      tools.NewWorkDir(ws),
				Log:      slog.New(slog.DiscardHandler),
			}
			opened, err := f.Open(context.Background(), env)
			require.NoError(t, err)
			require.NotEmpty(t, opened.Tools)
			for _, tl := range opened.Tools {
				assert.Equal(t, f.Name, tl.Module, "tool %s", tl.FullName())
				// Its arguments' schema compiles (on first call): an
				// unknown argument is refused before the tool runs.
				_, err := tl.Call(context.Background(), json.RawMessage(`{"sandox_no_such_argument": 1}`))
				assert.ErrorIs(t, err, schemas.CodeInvalidArgs, "tool %s", tl.FullName())
			}
			if opened.Close != nil {
				assert.NoError(t, opened.Close())
			}
		})
	}
}

func TestSelect(t *testing.T) {
	fams, err := Select([]string{"database_tools.py", "terminal_tools"})
	require.NoError(t, err)
	require.Len(t, fams, 2)
	assert.Equal(t, catalog.Terminal, fams[0].Name, "in the catalog's order")
	assert.Equal(t, catalog.Database, fams[1].Name)
	assert.True(t, fams[1].NeedsIdentity, "the catalog's data comes along")

	_, err = Select([]string{catalog.Web})
	assert.Equal(t, !webBuilt, err != nil, "web_tools is built in unless the tag nowebtools is set: %v", err)

	_, err = Select([]string{"nope"})
	require.ErrorIs(t, err, schemas.CodeBadRequest)
	assert.ErrorContains(t, err, `unknown tool family "nope"`)
}
