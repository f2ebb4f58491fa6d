package terminal

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/sandox/sandox/tools"
)

// uvTimeout is the least soft timeout of the uv tools: resolving and
// installing packages takes longer than most commands.
const uvTimeout = 2 * time.Minute

// indexEnv is the environment that points uv and pip at
// Config.PackageIndex. A URL is the package index of both (pip trusts the
// host of a plain http one, which it would otherwise ignore: the index was
// chosen by whoever set the sandbox's egress). Anything else is a
// directory of wheels (or a file:// URL of one) that both use as
// --find-links and no index, uv offline, so that a sandbox without network
// installs from it.
func indexEnv(index string) []string {
	switch {
	case index == "":
		return nil
	case strings.HasPrefix(index, "http://") || strings.HasPrefix(index, "https://"):
		env := []string{"UV_DEFAULT_INDEX=" + index, "PIP_INDEX_URL=" + index}
		if u, err := url.Parse(index); err == nil && u.Scheme == "http" {
			env = append(env, "PIP_TRUSTED_HOST="+u.Host)
		}
		return env
	default:
		dir := strings.TrimPrefix(index, "file://")
		return []string{"UV_FIND_LINKS=" + dir, "UV_OFFLINE=1", "PIP_FIND_LINKS=" + dir, "PIP_NO_INDEX=1"}
	}
}

// uvCommand is the prefix of every uv call: uv uses the sandbox's python3
// unless the session chose another, and never downloads one.
const uvCommand = `UV_PYTHON="${UV_PYTHON:-python3}" UV_PYTHON_DOWNLOADS=never uv`

type uvTimeoutArg struct {
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"Soft timeout in seconds (default 120): the observation then returns with terminal_still_running=true and the command goes on."`
}

type uvProjectArg struct {
	Path string `json:"path,omitempty" jsonschema_description:"Project directory; default the session's working directory."`
}

type uvInitArgs struct {
	Path string `json:"path" jsonschema:"minLength=1" jsonschema_description:"Directory of the new project; created if missing. Relative paths start at the session's working directory."`
	Name string `json:"name,omitempty" jsonschema_description:"Project name; default the directory's name."`
	Bare bool   `json:"bare,omitempty" jsonschema_description:"Create only pyproject.toml (no main.py)."`
	sessionArg
	uvTimeoutArg
}

type uvPackagesArgs struct {
	Packages []string `json:"packages" jsonschema:"minItems=1" jsonschema_description:"Package requirements such as requests or numpy>=2."`
	Dev      bool     `json:"dev,omitempty" jsonschema_description:"Use the development dependency group."`
	uvProjectArg
	sessionArg
	uvTimeoutArg
}

type uvSyncArgs struct {
	uvProjectArg
	sessionArg
	uvTimeoutArg
}

type uvRunArgs struct {
	Command string   `json:"command" jsonschema:"minLength=1" jsonschema_description:"Python script (main.py) or command of the project's environment (pytest) to run."`
	Args    []string `json:"args,omitempty" jsonschema_description:"Arguments passed to the script or command."`
	uvProjectArg
	sessionArg
	uvTimeoutArg
}

type runPythonArgs struct {
	ScriptPath     string   `json:"script_path" jsonschema:"minLength=1" jsonschema_description:"Python script to run with python3; relative paths start at the session's working directory."`
	Args           []string `json:"args,omitempty" jsonschema_description:"Arguments passed to the script."`
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"Soft timeout in seconds (default 30): the observation then returns with terminal_still_running=true and the script goes on."`
	sessionArg
	rawArg
}

func (m *Manager) uvTools() []tools.Tool {
	return []tools.Tool{
		tools.New(Family, "uv_init", "Create a Python project managed by uv (uv init) in a directory.", m.uvInit),
		tools.New(Family, "uv_add", "Add packages to a uv project's dependencies and install them (uv add).", m.uvAdd),
		tools.New(Family, "uv_remove", "Remove packages from a uv project's dependencies (uv remove).", m.uvRemove),
		tools.New(Family, "uv_sync", "Install a uv project's dependencies into its .venv (uv sync).", m.uvSync),
		tools.New(Family, "uv_run", "Run a Python script or a command in a uv project's environment (uv run).", m.uvRun),
		tools.New(Family, "run_python", "Run a Python script with python3 in a terminal session and return its output and exit code.", m.runPython),
	}
}

// uvRunIn runs a uv command line built from words, each quoted.
func (m *Manager) uvRunIn(ctx context.Context, session string, timeout *float64, words ...string) (tools.Result, error) {
	line := uvCommand
	for _, w := range words {
		line += " " + shellQuote(w)
	}
	return m.runIn(ctx, session, line, seconds(timeout, max(m.cfg.DefaultTimeout, uvTimeout)), m.view(rawArg{}))
}

func projectFlag(p uvProjectArg) []string {
	if p.Path == "" {
		return nil
	}
	return []string{"--directory", p.Path}
}

// uvInit makes a flat application project: pyproject.toml, main.py,
// README.md and .python-version, so that `uv_run main.py` runs at once.
// uv 0.13 would otherwise make a packaged project in the src/ layout,
// whose build backend (uv_build) it must download first.
func (m *Manager) uvInit(ctx context.Context, a uvInitArgs) (tools.Result, error) {
	words := []string{"init", "--no-workspace", "--app", "--no-package"}
	if a.Bare {
		words = append(words, "--bare")
	}
	if a.Name != "" {
		words = append(words, "--name", a.Name)
	}
	words = append(words, "--", a.Path)
	return m.uvRunIn(ctx, a.Session, a.TimeoutSeconds, words...)
}

func (m *Manager) uvPackages(ctx context.Context, verb string, a uvPackagesArgs) (tools.Result, error) {
	words := append([]string{verb}, projectFlag(a.uvProjectArg)...)
	if a.Dev {
		words = append(words, "--dev")
	}
	words = append(words, "--")
	words = append(words, a.Packages...)
	return m.uvRunIn(ctx, a.Session, a.TimeoutSeconds, words...)
}

func (m *Manager) uvAdd(ctx context.Context, a uvPackagesArgs) (tools.Result, error) {
	return m.uvPackages(ctx, "add", a)
}

func (m *Manager) uvRemove(ctx context.Context, a uvPackagesArgs) (tools.Result, error) {
	return m.uvPackages(ctx, "remove", a)
}

func (m *Manager) uvSync(ctx context.Context, a uvSyncArgs) (tools.Result, error) {
	words := append([]string{"sync"}, projectFlag(a.uvProjectArg)...)
	return m.uvRunIn(ctx, a.Session, a.TimeoutSeconds, words...)
}

func (m *Manager) uvRun(ctx context.Context, a uvRunArgs) (tools.Result, error) {
	words := append([]string{"run"}, projectFlag(a.uvProjectArg)...)
	words = append(words, "--", a.Command)
	words = append(words, a.Args...)
	return m.uvRunIn(ctx, a.Session, a.TimeoutSeconds, words...)
}

func (m *Manager) runPython(ctx context.Context, a runPythonArgs) (tools.Result, error) {
	line := "python3 " + shellQuote(a.ScriptPath)
	if strings.HasPrefix(a.ScriptPath, "-") {
		line = "python3 ./" + shellQuote(a.ScriptPath)
	}
	for _, w := range a.Args {
		line += " " + shellQuote(w)
	}
	return m.runIn(ctx, a.Session, line, seconds(a.TimeoutSeconds, m.cfg.DefaultTimeout), m.view(a.rawArg))
}
