package filesystem

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandox/sandox/tools"
	"github.com/stretchr/testify/require"
)

// fixture is the tool set working in a fresh temporary directory.
type fixture struct {
	dir   string
	tools map[string]tools.Tool
}

// newFixture builds the tools on a temporary directory holding files (see
// writeTree) and a read limit of limit bytes (0: the default).
func newFixture(t *testing.T, files map[string]string, limit int64) *fixture {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	return &fixture{dir: dir, tools: toolMap(Config{Dir: func() string { return dir }, MaxReadBytes: limit})}
}

// toolMap builds the tools on cfg, by name.
func toolMap(cfg Config) map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, tl := range Tools(cfg) {
		m[tl.Name] = tl
	}
	return m
}

// call runs the named tool with args marshalled to JSON.
func (fx *fixture) call(t *testing.T, name string, args any) (tools.Result, error) {
	t.Helper()
	tl, ok := fx.tools[name]
	require.True(t, ok, "no tool %q", name)
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return tl.Call(t.Context(), raw)
}

// mustCall runs the named tool and fails the test on an error.
func (fx *fixture) mustCall(t *testing.T, name string, args any) tools.Result {
	t.Helper()
	res, err := fx.call(t, name, args)
	require.NoError(t, err, name)
	return res
}

// path returns the absolute path of rel in the fixture.
func (fx *fixture) path(rel string) string { return filepath.Join(fx.dir, rel) }

// writeTree creates files below dir: a key ending in "/" is a directory, a
// value starting with "->" a symbolic link to the rest, anything else a
// file with that content.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if target, ok := strings.CutPrefix(content, "->"); ok {
			require.NoError(t, os.Symlink(target, p))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// readBack returns the content of the file at p.
func readBack(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err, "want %s readable", p)
	return string(data)
}

// checkErr checks that err matches class with errors.Is and that its
// message holds every string in want.
func checkErr(t *testing.T, err, class error, want ...string) {
	t.Helper()
	require.Error(t, err, "want %v", class)
	if class != nil {
		require.ErrorIs(t, err, class)
	}
	for _, w := range want {
		require.ErrorContains(t, err, w)
	}
}

// checkOut checks that out holds every string in want.
func checkOut(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		require.Contains(t, out, w, "output")
	}
}

// checkMode checks the permission bits of the file at p.
func checkMode(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	info, err := os.Lstat(p)
	require.NoError(t, err)
	require.Equal(t, want, info.Mode().Perm(), "mode of %s", p)
}

// checkMissing checks that nothing is at p.
func checkMissing(t *testing.T, p string) {
	t.Helper()
	_, err := os.Lstat(p)
	require.ErrorIs(t, err, os.ErrNotExist, "want %s gone", p)
}

// args is the JSON object of a tool call.
type args = map[string]any
