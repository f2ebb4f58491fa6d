package filesystem

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandox/sandox/tools"
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
	if !ok {
		t.Fatalf("got no tool %q, want one", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Call(t.Context(), raw)
}

// mustCall runs the named tool and fails the test on an error.
func (fx *fixture) mustCall(t *testing.T, name string, args any) tools.Result {
	t.Helper()
	res, err := fx.call(t, name, args)
	if err != nil {
		t.Fatalf("%s: got error %v, want none", name, err)
	}
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
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readBack returns the content of the file at p.
func readBack(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("got %v, want %s readable", err, p)
	}
	return string(data)
}

// checkErr checks that err matches class with errors.Is and that its
// message holds every string in want.
func checkErr(t *testing.T, err, class error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", class)
	}
	if class != nil && !errors.Is(err, class) {
		t.Fatalf("got %q, want an error matching %v", err, class)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("got %q, want it to contain %q", err, w)
		}
	}
}

// checkOut checks that out holds every string in want.
func checkOut(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("got output %q, want it to contain %q", out, w)
		}
	}
}

// checkMode checks the permission bits of the file at p.
func checkMode(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Fatalf("got mode %04o for %s, want %04o", got, p, want)
	}
}

// checkMissing checks that nothing is at p.
func checkMissing(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v for %s, want it gone", err, p)
	}
}

// args is the JSON object of a tool call.
type args = map[string]any
