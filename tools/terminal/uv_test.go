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
		Dir:     work,
		UVIndex: wheels,
		Env:     []string{"UV_CACHE_DIR=" + t.TempDir(), "UV_NO_CONFIG=1"},
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
			if _, err := os.Stat(filepath.Join(proj, "pyproject.toml")); err != nil {
				t.Fatalf("got %v, want a pyproject.toml", err)
			}
		}},
		{"uv_add from the wheel directory", "uv_add", map[string]any{"packages": []string{"sandoxdemo"}, "path": "proj"}, "sandoxdemo", func(t *testing.T) {
			if !fileContains(t, filepath.Join(proj, "pyproject.toml"), "sandoxdemo") {
				t.Fatalf("got no sandoxdemo dependency in pyproject.toml")
			}
			writeFile(t, filepath.Join(proj, "main.py"), "import sys, sandoxdemo\nprint(sandoxdemo.hello(), *sys.argv[1:])\n")
		}},
		{"uv_sync", "uv_sync", map[string]any{"path": "proj"}, "", nil},
		{"uv_run a script importing it", "uv_run", map[string]any{"command": "main.py", "args": []string{"with args"}, "path": "proj"}, "hello from sandoxdemo with args\n", nil},
		{"uv_run in the project directory", "uv_run", map[string]any{"command": "python", "args": []string{"-c", "import sandoxdemo; print(sandoxdemo.__name__)"}, "path": proj}, "sandoxdemo\n", nil},
		{"uv_remove", "uv_remove", map[string]any{"packages": []string{"sandoxdemo"}, "path": "proj"}, "", func(t *testing.T) {
			if fileContains(t, filepath.Join(proj, "pyproject.toml"), "sandoxdemo") {
				t.Fatalf("got sandoxdemo still in pyproject.toml")
			}
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.args["timeout_seconds"] = waitLong.Seconds()
			res := mustCall(t, m, st.tool, st.args)
			if res.StillRunning || res.ExitCode == nil || *res.ExitCode != 0 {
				t.Fatalf("got still running %v, exit %s, output %q; want exit 0", res.StillRunning, exitCode(res), res.Stdout)
			}
			if !strings.Contains(res.Stdout, st.want) {
				t.Fatalf("got %q, want it to contain %q", res.Stdout, st.want)
			}
			if st.check != nil {
				st.check(t)
			}
		})
	}
	if got := run(t, m, "", "pwd"); got != work+"\n" {
		t.Fatalf("got working directory %q after the uv tools, want %q unchanged", got, work)
	}
}

func TestRunPython(t *testing.T) {
	m := newTestManager(t, Config{})
	writeFile(t, filepath.Join(m.Dir(), "args.py"), "import sys\nprint('args:', sys.argv[1:])\nprint('to stderr', file=sys.stderr)\nsys.exit(3)\n")
	res := mustCall(t, m, "run_python", map[string]any{"script_path": "args.py", "args": []string{"a b", "$HOME"}})
	if res.ExitCode == nil || *res.ExitCode != 3 {
		t.Fatalf("got exit %s, want 3", exitCode(res))
	}
	if want := "args: ['a b', '$HOME']\nto stderr\n"; res.Stdout != want {
		t.Fatalf("got %q, want %q", res.Stdout, want)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for path, body := range files {
		w, err := z.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileContains(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), s)
}
