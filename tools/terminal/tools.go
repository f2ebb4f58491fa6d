package terminal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

const (
	// defaultInputWait is how long send_input, send_keys and interrupt wait
	// for the program's answer when the action does not say.
	defaultInputWait = 5 * time.Second
)

// sessionArg names the session an action runs in.
type sessionArg struct {
	Session string `json:"session,omitempty" jsonschema:"maxLength=64,pattern=^[A-Za-z0-9][A-Za-z0-9_.-]*$" jsonschema_description:"Name of the terminal session; default \"default\". Each name is a separate persistent shell, started on first use."`
}

// rawArg asks for the output with its escape sequences.
type rawArg struct {
	Raw bool `json:"raw,omitempty" jsonschema_description:"Return the terminal output as it is, with ANSI escape sequences and carriage returns; by default they are removed."`
}

type runArgs struct {
	Command        string   `json:"command" jsonschema:"minLength=1" jsonschema_description:"Bash command(s) to run; may span several lines and use heredocs."`
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"Soft timeout: after this many seconds the observation returns the output so far with terminal_still_running=true and the command goes on. Default 30."`
	sessionArg
	rawArg
}

type readOutputArgs struct {
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"Wait up to this many seconds for the running command to finish before returning; default 0 (return at once)."`
	Offset      *int64   `json:"offset,omitempty" jsonschema:"minimum=0" jsonschema_description:"Read from this offset of the session's output (as given in a truncation note) instead of the output not read yet."`
	sessionArg
	rawArg
}

type waitArgs struct {
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"Wait at most this many seconds; default 30."`
	sessionArg
	rawArg
}

type sendInputArgs struct {
	Text        string   `json:"text" jsonschema_description:"Text to type into the running program. It is sent as it is: end it with a newline or set enter to press Enter."`
	Enter       bool     `json:"enter,omitempty" jsonschema_description:"Press Enter after the text."`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"minimum=0,maximum=3600" jsonschema_description:"Wait up to this many seconds for the program's answer; returns earlier when it finishes or its output pauses. Default 5."`
	sessionArg
	rawArg
}

type sendKeysArgs struct {
	Keys        []string `json:"keys" jsonschema:"minItems=1" jsonschema_description:"Keys to press in order: Enter, Tab, Escape, Space, Backspace, Up, Down, Left, Right, Home, End, Delete, PageUp, PageDown, Ctrl-A to Ctrl-Z (Ctrl-C interrupts, Ctrl-D ends input, Ctrl-Z suspends), or a single character."`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"minimum=0,maximum=3600" jsonschema_description:"Wait up to this many seconds for the program's answer; returns earlier when it finishes or its output pauses. Default 5."`
	sessionArg
	rawArg
}

type interruptArgs struct {
	Force       bool     `json:"force,omitempty" jsonschema_description:"Kill the foreground program (SIGKILL to its process group) instead of sending Ctrl-C."`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"minimum=0,maximum=3600" jsonschema_description:"Wait up to this many seconds for the command to end; default 5."`
	sessionArg
	rawArg
}

type listSessionsArgs struct{}

type closeSessionArgs struct {
	Session string `json:"session" jsonschema:"maxLength=64,pattern=^[A-Za-z0-9][A-Za-z0-9_.-]*$" jsonschema_description:"Name of the session to close."`
}

type changeDirectoryArgs struct {
	Path string `json:"path" jsonschema:"minLength=1" jsonschema_description:"Directory to change to: absolute, relative to the session's current directory, ~ or ~/… for the home directory, or - for the previous one."`
	sessionArg
}

type getCwdArgs struct {
	sessionArg
}

// Tools returns the terminal_tools functions: run, read_output, wait,
// send_input, send_keys, interrupt, list_sessions, close_session,
// change_directory, get_cwd, the job tools (start_job, list_jobs, wait_job,
// job_output, signal_job, kill_job) and the uv and Python tools.
func (m *Manager) Tools() []tools.Tool {
	ts := []tools.Tool{
		tools.New(Family, "run", "Run a bash command in a persistent terminal session (state such as the working directory, variables, functions and activated venvs survives between actions). Returns the terminal output (stdout and stderr merged) and the exit code; a command still running after timeout_seconds goes on and the observation says terminal_still_running. One command runs per session at a time.", m.run),
		tools.New(Family, "read_output", "Return the output of a session not read yet (or from an offset given in a truncation note), optionally waiting for the running command to finish; reports the exit code once it has.", m.readOutput),
		tools.New(Family, "wait", "Wait for the command running in a session to finish and return its new output and exit code.", m.wait),
		tools.New(Family, "send_input", "Type text into the program running in a session, for example an answer to a prompt, and return what it prints next.", m.sendInput),
		tools.New(Family, "send_keys", "Press keys in the program running in a session (Enter, Ctrl-C, Ctrl-D, arrows, …) and return what it prints next.", m.sendKeys),
		tools.New(Family, "interrupt", "Stop the command running in a session with Ctrl-C (or kill it with force) and return its last output and exit code.", m.interrupt),
		tools.New(Family, "list_sessions", "List the terminal sessions with their working directory and the command each is running.", m.listSessions),
		tools.New(Family, "close_session", "Close a terminal session: its shell, the running command and its background jobs are killed.", m.closeSession),
		tools.New(Family, "change_directory", "Change the working directory of a session (cd); later commands run there.", m.changeDirectory),
		tools.New(Family, "get_cwd", "Return the working directory of a session.", m.getCwd),
	}
	ts = append(ts, m.jobTools()...)
	return append(ts, m.uvTools()...)
}

func (m *Manager) view(raw rawArg) viewOptions {
	return viewOptions{max: m.cfg.MaxOutput, raw: raw.Raw}
}

// seconds converts an optional number of seconds to a duration.
func seconds(s *float64, def time.Duration) time.Duration {
	if s == nil {
		return def
	}
	return time.Duration(*s * float64(time.Second))
}

// withNote adds a note of the manager's to an observation.
func withNote(res tools.Result, note string) tools.Result {
	if note != "" {
		res.Stderr = joinNotes(note, res.Stderr)
	}
	return res
}

// runIn runs script in the named session, starting the session if needed.
func (m *Manager) runIn(ctx context.Context, session, script string, timeout time.Duration, opt viewOptions) (tools.Result, error) {
	s, note, err := m.lookup(ctx, session, true)
	if err != nil {
		return tools.Result{}, err
	}
	res, err := s.run(ctx, script, timeout, opt)
	return withNote(res, note), err
}

func (m *Manager) run(ctx context.Context, a runArgs) (tools.Result, error) {
	return m.runIn(ctx, a.Session, a.Command, seconds(a.TimeoutSeconds, m.cfg.DefaultTimeout), m.view(a.rawArg))
}

func (m *Manager) readOutput(ctx context.Context, a readOutputArgs) (tools.Result, error) {
	s, _, err := m.lookup(ctx, a.Session, false)
	if err != nil {
		return tools.Result{}, err
	}
	return s.read(ctx, seconds(a.WaitSeconds, 0), a.Offset, m.view(a.rawArg)), nil
}

func (m *Manager) wait(ctx context.Context, a waitArgs) (tools.Result, error) {
	s, _, err := m.lookup(ctx, a.Session, false)
	if err != nil {
		return tools.Result{}, err
	}
	return s.read(ctx, seconds(a.TimeoutSeconds, m.cfg.DefaultTimeout), nil, m.view(a.rawArg)), nil
}

func (m *Manager) sendInput(ctx context.Context, a sendInputArgs) (tools.Result, error) {
	s, _, err := m.lookup(ctx, a.Session, false)
	if err != nil {
		return tools.Result{}, err
	}
	text := a.Text
	if a.Enter {
		text += "\r"
	}
	if text == "" {
		return tools.Result{}, fmt.Errorf("%w: text is empty and enter is not set", schemas.CodeInvalidArgs)
	}
	return s.input(ctx, []byte(text), seconds(a.WaitSeconds, defaultInputWait), m.view(a.rawArg))
}

func (m *Manager) sendKeys(ctx context.Context, a sendKeysArgs) (tools.Result, error) {
	keys, err := keyBytes(a.Keys)
	if err != nil {
		return tools.Result{}, err
	}
	s, _, err := m.lookup(ctx, a.Session, false)
	if err != nil {
		return tools.Result{}, err
	}
	return s.input(ctx, keys, seconds(a.WaitSeconds, defaultInputWait), m.view(a.rawArg))
}

func (m *Manager) interrupt(ctx context.Context, a interruptArgs) (tools.Result, error) {
	s, _, err := m.lookup(ctx, a.Session, false)
	if err != nil {
		return tools.Result{}, err
	}
	return s.interrupt(ctx, a.Force, seconds(a.WaitSeconds, defaultInputWait), m.view(a.rawArg))
}

func (m *Manager) listSessions(_ context.Context, _ listSessionsArgs) (tools.Result, error) {
	infos := m.list()
	var b strings.Builder
	for _, in := range infos {
		state := "idle"
		switch {
		case in.Exited:
			state = "exited"
		case in.Running != "":
			state = fmt.Sprintf("running %q for %.1fs", in.Running, in.Seconds)
		}
		fmt.Fprintf(&b, "%s\t%s\tcwd %s\tpid %d\n", in.Name, state, in.Dir, in.PID)
	}
	if len(infos) == 0 {
		b.WriteString("no sessions\n")
	}
	ret, err := json.Marshal(infos)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Stdout: b.String(), Return: ret}, nil
}

func (m *Manager) closeSession(ctx context.Context, a closeSessionArgs) (tools.Result, error) {
	s, _, err := m.lookup(ctx, a.Session, false)
	if err != nil {
		return tools.Result{}, err
	}
	if err := m.remove(s); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Stdout: fmt.Sprintf("closed session %q\n", a.Session)}, nil
}

func (m *Manager) changeDirectory(ctx context.Context, a changeDirectoryArgs) (tools.Result, error) {
	s, note, err := m.lookup(ctx, a.Session, true)
	if err != nil {
		return tools.Result{}, err
	}
	res, err := s.run(ctx, "cd "+cdTarget(a.Path)+" >/dev/null && pwd", m.cfg.DefaultTimeout, m.view(rawArg{}))
	if err != nil || res.ExitCode == nil {
		return withNote(res, note), err
	}
	if *res.ExitCode != 0 {
		return tools.Result{}, cdError(a.Path, s.workDir(), strings.TrimSpace(res.Stdout))
	}
	return withNote(res, note), nil
}

// cdTarget quotes path for cd, keeping ~ and - meaningful.
func cdTarget(path string) string {
	switch {
	case path == "-":
		return "-"
	case path == "~":
		return `-- "$HOME"`
	case strings.HasPrefix(path, "~/"):
		return `-- "$HOME"/` + shellQuote(path[2:])
	}
	return "-- " + shellQuote(path)
}

// cdError explains why cd to path failed, as one of the tools error
// classes.
func cdError(path, dir, msg string) error {
	if path == "-" {
		return fmt.Errorf("change directory: no previous directory (%s): %w", msg, tools.ErrNotFound)
	}
	abs := path
	if home, err := os.UserHomeDir(); err == nil && (path == "~" || strings.HasPrefix(path, "~/")) {
		abs = filepath.Join(home, strings.TrimPrefix(path[1:], "/"))
	} else if !filepath.IsAbs(path) {
		abs = filepath.Join(dir, path)
	}
	info, err := os.Stat(abs)
	switch {
	case os.IsNotExist(err):
		return fmt.Errorf("change directory: %q does not exist: %w", path, tools.ErrNotFound)
	case err == nil && !info.IsDir():
		return fmt.Errorf("change directory: %q is not a directory: %w", path, schemas.CodeInvalidArgs)
	case os.IsPermission(err) || strings.Contains(msg, "Permission denied"):
		return fmt.Errorf("change directory: %q: %w", path, schemas.CodeAccessDenied)
	}
	return fmt.Errorf("change directory to %q: %s", path, msg)
}

func (m *Manager) getCwd(ctx context.Context, a getCwdArgs) (tools.Result, error) {
	s, note, err := m.lookup(ctx, a.Session, true)
	if err != nil {
		return tools.Result{}, err
	}
	return withNote(tools.Result{Stdout: s.workDir() + "\n"}, note), nil
}
