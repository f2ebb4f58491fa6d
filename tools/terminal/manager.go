package terminal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/catalog"
)

// Family is the name of the family the terminal tools belong to
// (catalog.Terminal).
const Family = catalog.Terminal

// DefaultSession is the session an action uses when it names none.
const DefaultSession = "default"

// Config configures a Manager. The zero value of a field means its default.
type Config struct {
	// Shell is the bash binary sessions run; default "/bin/bash". It must
	// understand bash's --rcfile, --noediting and PROMPT_COMMAND.
	Shell string
	// Dir is the initial working directory of new sessions; default the
	// process's working directory.
	Dir string
	// Env is extra environment, KEY=VALUE, on top of os.Environ() and the
	// terminal defaults (TERM=dumb, PAGER=cat, …); it wins over both.
	Env []string
	// DefaultTimeout is the soft timeout of run when the action gives none;
	// default 30s.
	DefaultTimeout time.Duration
	// MaxOutput is how many bytes of output one observation shows before
	// truncating; default 64 KiB.
	MaxOutput int
	// PackageIndex, when set, is where the uv tools, and uv and pip run by
	// hand in a session, find packages: a directory of wheels (they then
	// run offline with it as --find-links) or the URL of a package index.
	PackageIndex string
	// Jobs is where the background jobs (start_job) publish.
	Jobs JobConfig
}

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{
		Shell:          "/bin/bash",
		DefaultTimeout: 30 * time.Second,
		MaxOutput:      64 << 10,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Shell == "" {
		c.Shell = d.Shell
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = d.DefaultTimeout
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = d.MaxOutput
	}
	if c.Dir == "" {
		c.Dir, _ = os.Getwd()
	}
	return c
}

// terminalEnv is the environment sessions get on top of os.Environ(): no
// pagers, no colours or cursor tricks where a tool asks TERM, no prompts
// from apt, no venv name in the (empty) prompt, no Python downloads by uv.
var terminalEnv = []string{
	"TERM=dumb",
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"SYSTEMD_PAGER=cat",
	"DEBIAN_FRONTEND=noninteractive",
	"VIRTUAL_ENV_DISABLE_PROMPT=1",
	"PYTHONUNBUFFERED=1",
	"UV_PYTHON_DOWNLOADS=never",
}

func sessionEnv(cfg Config) []string {
	env := append(os.Environ(), terminalEnv...)
	env = append(env, indexEnv(cfg.PackageIndex)...)
	return append(env, cfg.Env...)
}

// Manager owns the terminal sessions of a sandbox, one persistent shell per
// session name, created on first use. It is safe for concurrent use.
//
// Lock order: Manager.mu before session.mu; neither is held while waiting
// for a command.
type Manager struct {
	cfg Config

	mu       sync.Mutex
	sessions map[string]*session
	lastDir  string // of the default session, once it is gone
	closed   bool

	jobs *jobSet
}

// NewManager returns a manager with no sessions yet.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	return &Manager{cfg: cfg, sessions: make(map[string]*session), lastDir: cfg.Dir, jobs: newJobSet(cfg, cfg.Jobs)}
}

var errClosed = errors.New("terminal manager closed")

// lookup returns the live session name, starting it when create is set.
// A session whose shell has exited is replaced; note then says so. Without
// create, a missing session is an error wrapping tools.ErrNotFound.
func (m *Manager) lookup(ctx context.Context, name string, create bool) (s *session, note string, err error) {
	if name == "" {
		name = DefaultSession
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, "", errClosed
	}
	s = m.sessions[name]
	var stale *session
	if s != nil && !s.alive() && create {
		stale, s = s, nil
		delete(m.sessions, name)
		note = fmt.Sprintf("the shell of session %q had exited; this is a fresh one", name)
	}
	if s == nil && create {
		s, err = startSession(m.cfg, name)
		if err == nil {
			m.sessions[name] = s
		}
	}
	names := m.namesLocked()
	m.mu.Unlock()
	if stale != nil {
		m.rememberDir(stale)
		_ = stale.close()
	}
	if err != nil {
		return nil, "", err
	}
	if s == nil {
		return nil, "", fmt.Errorf("session %q (sessions: %s): %w", name, strings.Join(names, ", "), tools.ErrNotFound)
	}
	if err := s.waitReady(ctx); err != nil {
		if ctx.Err() == nil {
			m.remove(s)
		}
		return nil, "", err
	}
	return s, note, nil
}

// remove closes s and forgets it.
func (m *Manager) remove(s *session) error {
	m.mu.Lock()
	if m.sessions[s.name] == s {
		delete(m.sessions, s.name)
	}
	m.mu.Unlock()
	m.rememberDir(s)
	return s.close()
}

func (m *Manager) rememberDir(s *session) {
	if s.name != DefaultSession {
		return
	}
	dir := s.workDir()
	m.mu.Lock()
	m.lastDir = dir
	m.mu.Unlock()
}

func (m *Manager) namesLocked() []string {
	names := make([]string, 0, len(m.sessions))
	for n := range m.sessions {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		names = append(names, "none")
	}
	return names
}

// Dir returns the working directory of the default session: the shell's
// current directory when it runs, else the last one known (at first
// Config.Dir). Filesystem tools resolve relative paths against it. It does
// not block on a running command.
func (m *Manager) Dir() string {
	m.mu.Lock()
	s, dir := m.sessions[DefaultSession], m.lastDir
	m.mu.Unlock()
	if s == nil {
		return dir
	}
	return s.workDir()
}

// Close kills every session, with its background jobs, and every job
// (start_job) with its process tree, and waits for their goroutines. Tool calls after Close fail. It is safe to call
// more than once.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	sessions := m.sessions
	m.sessions = map[string]*session{}
	m.mu.Unlock()
	errs := []error{m.jobs.close()}
	for _, s := range sessions {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// sessionInfo describes a session for list_sessions.
type sessionInfo struct {
	Name    string  `json:"name"`
	Dir     string  `json:"cwd"`
	PID     int     `json:"pid"`
	Running string  `json:"running,omitempty"`
	Seconds float64 `json:"running_seconds,omitempty"`
	Exited  bool    `json:"exited,omitempty"`
}

func (m *Manager) list() []sessionInfo {
	m.mu.Lock()
	sessions := make([]*session, 0, len(m.sessions))
	for _, s := range m.sessions {
		sessions = append(sessions, s)
	}
	m.mu.Unlock()
	infos := make([]sessionInfo, 0, len(sessions))
	for _, s := range sessions {
		info := sessionInfo{Name: s.name, Dir: s.workDir(), PID: s.pid}
		s.mu.Lock()
		info.Exited = s.exited
		if c := s.cur; c != nil && !c.done {
			info.Running = firstLine(c.text)
			info.Seconds = time.Since(c.started).Round(100 * time.Millisecond).Seconds()
		}
		s.mu.Unlock()
		infos = append(infos, info)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos
}
