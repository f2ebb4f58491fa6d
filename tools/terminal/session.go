package terminal

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

const (
	// startTimeout bounds how long a new shell may take to become ready.
	startTimeout = 30 * time.Second
	// drainTimeout bounds how long output is drained after the shell exits
	// before the terminal is closed under the reader.
	drainTimeout = 2 * time.Second
	// writeTimeout bounds a write to a program that does not read its input.
	writeTimeout = 5 * time.Second
	// bufferLimit is how much output a session keeps for read_output.
	bufferLimit = 8 << 20
	// terminal size: wide, so that tools do not wrap lines.
	termRows, termCols = 50, 200
)

// session is one persistent bash on a PTY. Its methods are safe for
// concurrent use; one command runs at a time.
//
// Two goroutines belong to a session: copyOutput copies the terminal's output
// into the buffer, watch waits for the shell to exit and then finishes the
// session. close stops both and waits for them.
type session struct {
	name   string
	nonce  string
	dir    string // temporary directory for the rc and command files
	script string // the command file, in dir
	cmd    *exec.Cmd
	pid    int
	ptmx   *os.File

	writeMu sync.Mutex // serialises writes to ptmx; never held with mu

	mu      sync.Mutex
	out     outputBuffer
	parser  *markerParser
	seq     uint64
	cur     *command // the last command started, running or not
	readPos int64    // offset up to which the agent has seen output
	lastOut time.Time
	ready   bool
	exited  bool
	status  int           // the shell's exit status once exited
	changed chan struct{} // closed and replaced whenever state changes
	lastDir string

	readerDone chan struct{}
	done       chan struct{} // closed when watch has finished the session
	wg         sync.WaitGroup
	closeOnce  sync.Once
	closeErr   error
}

// command is one run of a command in a session.
type command struct {
	seq     uint64
	text    string
	started time.Time
	start   int64 // offset where its output begins
	end     int64 // offset where its output ends, once done
	done    bool
	status  int
	// shellExited is set when the shell itself ended with the command.
	shellExited bool
}

// startSession starts the shell of a new session. It does not wait for the
// shell to be ready; waitReady does.
func startSession(cfg Config, name string) (*session, error) {
	dir, err := os.MkdirTemp("", "sandox-terminal-")
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", name, err)
	}
	nonce := rand.Text()[:12]
	rc := filepath.Join(dir, "rc.bash")
	if err := os.WriteFile(rc, rcScript(nonce), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("session %q: %w", name, err)
	}
	cmd := exec.Command(cfg.Shell, "--noprofile", "--rcfile", rc, "--noediting", "-i")
	cmd.Dir = cfg.Dir
	cmd.Env = sessionEnv(cfg)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: termRows, Cols: termCols})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("session %q: start %s: %w", name, cfg.Shell, err)
	}
	ptmx, err := pollable(f)
	if err != nil {
		killSession(cmd.Process.Pid)
		_ = cmd.Wait()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("session %q: %w", name, err)
	}
	s := &session{
		name:       name,
		nonce:      nonce,
		dir:        dir,
		script:     filepath.Join(dir, "cmd.bash"),
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		ptmx:       ptmx,
		out:        outputBuffer{limit: bufferLimit},
		parser:     newMarkerParser(nonce),
		changed:    make(chan struct{}),
		lastDir:    cfg.Dir,
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
	}
	s.wg.Add(2)
	go s.copyOutput()
	go s.watch()
	return s, nil
}

// copyOutput copies the terminal's output into the buffer until the terminal
// closes.
func (s *session) copyOutput() {
	defer s.wg.Done()
	defer close(s.readerDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.consume(s.parser.feed(buf[:n]))
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// consume applies output and markers to the session state. s.mu is held.
func (s *session) consume(pieces []piece) {
	for _, p := range pieces {
		if p.mark == nil {
			s.out.write(p.text)
			s.lastOut = time.Now()
			continue
		}
		c := s.cur
		switch m := p.mark; {
		case m.kind == markReady:
			s.ready = true
		case c == nil || c.seq != m.seq || c.done:
			// a stale marker: nothing to do
		case m.kind == markStart:
			c.start = s.out.end()
		case m.kind == markEnd:
			c.done, c.status, c.end = true, m.status, s.out.end()
		}
	}
	s.notify()
}

// notify wakes everyone waiting for a change. s.mu is held.
func (s *session) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// watch waits for the shell to exit, kills what is left of its jobs, lets
// the reader drain the terminal and finishes the running command with the
// shell's exit status.
func (s *session) watch() {
	defer s.wg.Done()
	defer close(s.done)
	_ = s.cmd.Wait()
	status := s.cmd.ProcessState.ExitCode()
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		status = 128 + int(ws.Signal()) // as bash reports a killed command
	}
	killSession(s.pid)
	select {
	case <-s.readerDone:
	case <-time.After(drainTimeout):
		// a process outside the session still holds the terminal
		_ = s.ptmx.Close()
		<-s.readerDone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited, s.status = true, status
	if c := s.cur; c != nil && !c.done {
		c.done, c.status, c.end, c.shellExited = true, status, s.out.end(), true
	}
	s.notify()
}

// close kills the shell and every process of its terminal, and waits for
// the session's goroutines. It is safe to call more than once and from
// several goroutines; every call returns once the session is closed.
func (s *session) close() error {
	s.closeOnce.Do(func() {
		killSession(s.pid)
		<-s.done
		s.wg.Wait()
		var err error
		if cerr := s.ptmx.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) {
			err = fmt.Errorf("session %q: %w", s.name, cerr)
		}
		s.closeErr = errors.Join(err, os.RemoveAll(s.dir))
	})
	return s.closeErr
}

// waitReady blocks until the shell has run its startup file. An error
// means the shell did not start (the session is of no use) unless it is
// ctx's error.
func (s *session) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	s.waitFor(ctx, deadline, func() bool { return s.ready || s.exited })
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ready:
		return nil
	case s.exited:
		out, _ := plainText(s.out.bytes(s.out.start(), s.out.end()), false)
		return fmt.Errorf("session %q: the shell exited at start with status %d: %s", s.name, s.status, out)
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		return fmt.Errorf("session %q: the shell was not ready after %s", s.name, startTimeout)
	}
}

// waitFor blocks until cond (called with s.mu held) is true, the deadline
// passes or ctx ends.
func (s *session) waitFor(ctx context.Context, deadline time.Time, cond func() bool) {
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		left := time.Until(deadline)
		if ok || left <= 0 {
			return
		}
		// wake at least every pollInterval: some conditions depend on time
		t := time.NewTimer(min(left, pollInterval))
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		t.Stop()
	}
}

// write sends p to the terminal, as typed.
func (s *session) write(p []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.ptmx.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return fmt.Errorf("session %q: %w", s.name, err)
	}
	if _, err := s.ptmx.Write(p); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("session %q: the program does not read its input (%d bytes not sent within %s)", s.name, len(p), writeTimeout)
		}
		return fmt.Errorf("session %q: write to terminal: %w", s.name, err)
	}
	return nil
}

// workDir returns the shell's working directory, or the last one known when
// the shell is gone.
func (s *session) workDir() string {
	dir, err := processDir(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && !s.exited {
		s.lastDir = dir
	}
	return s.lastDir
}

// alive reports whether the shell is still running.
func (s *session) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.exited
}
