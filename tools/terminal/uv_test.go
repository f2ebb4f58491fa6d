package terminal

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUV creates a project with uv_init, adds a package from a local wheel
// directory with uv_add (offline), runs a script importing it with uv_run,
// then removes it again.
func TestUV(t *testing.T) {
	if _, err := exec.LookPath("uv"); err != nil {
		t.Skip("uv is not on PATH (install it with: pip install uv); skipping the uv tools tests")
	}
	wheels := t.TempDir()
	writeWheel(t, wheels, "sandoxdemo", "0.1.0", map[string]string{
		"sandoxdemo/__init__.py": "def hello():\n    return \"hello from sandoxdemo\"\n",
	})
	work := t.TempDir()
	m := newTestManager(t, Config{
		Dir:          work,
		PackageIndex: wheels,
		Env:          []string{"UV_CACHE_DIR=" + t.TempDir(), "UV_NO_CONFIG=1"},
	})
	proj := filepath.Join(work, "proj")

	steps := []struct {
		name  string
		tool  string
		args  map[string]any
		want  string // in stdout
		check func(t *testing.T)
	}{
		{"uv_init", "uv_init", map[string]any{"path": "proj", "bare": true}, "", func(t *testing.T) {
			require.FileExists(t, filepath.Join(proj, "pyproject.toml"))
		}},
		{"uv_add from the wheel directory", "uv_add", map[string]any{"packages": []string{"sandoxdemo"}, "path": "proj"}, "sandoxdemo", func(t *testing.T) {
			require.True(t, fileContains(t, filepath.Join(proj, "pyproject.toml"), "sandoxdemo"), "want a sandoxdemo dependency in pyproject.toml")
			writeFile(t, filepath.Join(proj, "main.py"), "import sys, sandoxdemo\nprint(sandoxdemo.hello(), *sys.argv[1:])\n")
		}},
		{"uv_sync", "uv_sync", map[string]any{"path": "proj"}, "", nil},
		{"uv_run a script importing it", "uv_run", map[string]any{"command": "main.py", "args": []string{"with args"}, "path": "proj"}, "hello from sandoxdemo with args\n", nil},
		{"uv_run in the project directory", "uv_run", map[string]any{"command": "python", "args": []string{"-c", "import sandoxdemo; print(sandoxdemo.__name__)"}, "path": proj}, "sandoxdemo\n", nil},
		{"uv_remove", "uv_remove", map[string]any{"packages": []string{"sandoxdemo"}, "path": "proj"}, "", func(t *testing.T) {
			require.False(t, fileContains(t, filepath.Join(proj, "pyproject.toml"), "sandoxdemo"), "sandoxdemo still in pyproject.toml")
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.args["timeout_seconds"] = waitLong.Seconds()
			res := mustCall(t, m, st.tool, st.args)
			requireExit(t, res, 0)
			require.Contains(t, res.Stdout, st.want)
			if st.check != nil {
				st.check(t)
			}
		})
	}
	require.Equal(t, work+"\n", run(t, m, "", "pwd"), "working directory after the uv tools, want it unchanged")
}

func TestRunPython(t *testing.T) {
	m := newTestManager(t, Config{})
	writeFile(t, filepath.Join(m.Dir(), "args.py"), "import sys\nprint('args:', sys.argv[1:])\nprint('to stderr', file=sys.stderr)\nsys.exit(3)\n")
	res := mustCall(t, m, "run_python", map[string]any{"script_path": "args.py", "args": []string{"a b", "$HOME"}})
	require.NotNil(t, res.ExitCode, "exit code")
	require.Equal(t, 3, *res.ExitCode, "exit code")
	require.Equal(t, "args: ['a b', '$HOME']\nto stderr\n", res.Stdout)
}

// writeWheel writes a pure-Python wheel of files into dir, with the
// METADATA, WHEEL and RECORD files a wheel needs.
func writeWheel(t *testing.T, dir, name, version string, files map[string]string) {
	t.Helper()
	info := fmt.Sprintf("%s-%s.dist-info", name, version)
	files[info+"/METADATA"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version)
	files[info+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: sandox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	var record strings.Builder
	for path, body := range files {
		sum := sha256.Sum256([]byte(body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", path, base64.RawURLEncoding.EncodeToString(sum[:]), len(body))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	files[info+"/RECORD"] = record.String()

	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", name, version)))
	require.NoError(t, err)
	z := zip.NewWriter(f)
	for path, body := range files {
		w, err := z.Create(path)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, z.Close())
	require.NoError(t, f.Close())
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

func fileContains(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Contains(string(b), s)
}
