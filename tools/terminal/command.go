package terminal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/sandox/sandox/tools"
)

const (
	// pollInterval is how often a waiting call looks at the clock when no
	// output arrives.
	pollInterval = 100 * time.Millisecond
	// settleTime is how long output must pause, after input was sent and
	// output came, before send_input and send_keys return.
	settleTime = 300 * time.Millisecond
)

// ErrBusy is returned by run and the actions built on it when the session
// is still running an earlier command.
var ErrBusy = errors.New("session busy")

// errNotRunning is wrapped when input is sent to a session that runs
// nothing.
var errNotRunning = fmt.Errorf("no running command: %w", tools.ErrNotFound)

// run starts script in the session and waits for it at most timeout (a
// soft timeout: the command goes on after it). A busy session refuses with
// ErrBusy. Cancelling ctx ends the wait early, as the timeout does.
func (s *session) run(ctx context.Context, script string, timeout time.Duration, opt viewOptions) (tools.Result, error) {
	s.mu.Lock()
	if s.exited {
		s.mu.Unlock()
		return tools.Result{}, fmt.Errorf("session %q: the shell has exited", s.name)
	}
	if c := s.cur; c != nil && !c.done {
		s.mu.Unlock()
		return tools.Result{}, s.busyError(c)
	}
	s.seq++
	c := &command{seq: s.seq, text: script, started: time.Now(), start: s.out.end()}
	s.cur = c
	s.mu.Unlock()

	err := os.WriteFile(s.script, commandScript(s.nonce, c.seq, script), 0o600)
	if err == nil {
		err = s.write(commandLine(s.script, c.seq))
	}
	if err != nil {
		s.mu.Lock()
		c.done, c.status, c.end = true, -1, s.out.end()
		s.mu.Unlock()
		return tools.Result{}, fmt.Errorf("session %q: start command: %w", s.name, err)
	}
	s.waitFor(ctx, time.Now().Add(timeout), func() bool { return c.done })
	s.mu.Lock()
	defer s.mu.Unlock()
	to := s.out.end()
	if c.done {
		to = c.end
	}
	opt.more = !c.done
	v := s.out.summary(c.start, to, opt)
	s.readPos = max(s.readPos, v.next)
	return s.result(c, v), nil
}

func (s *session) busyError(c *command) error {
	return fmt.Errorf("session %q is still running %q (started %s ago): wait for it with terminal_tools.wait or terminal_tools.read_output, stop it with terminal_tools.interrupt, or pass another session name: %w",
		s.name, firstLine(c.text), time.Since(c.started).Round(time.Second), ErrBusy)
}

// read returns the output the agent has not seen yet, after waiting up to
// wait for the running command to finish. With offset set it returns the
// output from that offset on instead, without waiting.
func (s *session) read(ctx context.Context, wait time.Duration, offset *int64, opt viewOptions) tools.Result {
	if offset == nil && wait > 0 {
		s.waitFor(ctx, time.Now().Add(wait), func() bool { return s.cur == nil || s.cur.done })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	opt.more = s.cur != nil && !s.cur.done
	var v view
	if offset != nil {
		v = s.out.page(*offset, opt)
	} else {
		v = s.out.summary(s.readPos, s.out.end(), opt)
	}
	s.readPos = max(s.readPos, v.next)
	return s.result(s.cur, v)
}

// input writes p to the running program and returns its output once it
// finished, or its output paused for settleTime, or wait passed.
func (s *session) input(ctx context.Context, p []byte, wait time.Duration, opt viewOptions) (tools.Result, error) {
	s.mu.Lock()
	c, mark := s.cur, s.out.end()
	running := c != nil && !c.done
	s.mu.Unlock()
	if !running {
		return tools.Result{}, fmt.Errorf("session %q: %w: start one with terminal_tools.run", s.name, errNotRunning)
	}
	sent := time.Now()
	if err := s.write(p); err != nil {
		return tools.Result{}, err
	}
	s.waitFor(ctx, sent.Add(wait), func() bool {
		return c.done || s.out.end() > mark && time.Since(s.lastOut) >= settleTime
	})
	return s.read(ctx, 0, nil, opt), nil
}

// interrupt stops the running command: Ctrl-C, which the terminal turns
// into SIGINT for the foreground process group, or with force SIGKILL to
// that group. It waits up to wait for the command to finish.
func (s *session) interrupt(ctx context.Context, force bool, wait time.Duration, opt viewOptions) (tools.Result, error) {
	s.mu.Lock()
	c := s.cur
	running := c != nil && !c.done
	s.mu.Unlock()
	if !running {
		res := s.read(ctx, 0, nil, opt)
		res.Stderr = joinNotes(res.Stderr, fmt.Sprintf("nothing is running in session %q", s.name))
		return res, nil
	}
	if err := s.signal(force); err != nil {
		return tools.Result{}, err
	}
	s.waitFor(ctx, time.Now().Add(wait), func() bool { return c.done })
	res := s.read(ctx, 0, nil, opt)
	if res.StillRunning {
		res.Stderr = joinNotes(res.Stderr, "the command is still running: the program may ignore Ctrl-C; try terminal_tools.interrupt with force=true or terminal_tools.close_session")
	}
	return res, nil
}

func (s *session) signal(force bool) error {
	if !force {
		return s.write([]byte{0x03})
	}
	pgrp, err := foregroundGroup(s.ptmx)
	if err != nil {
		return fmt.Errorf("session %q: foreground process: %w", s.name, err)
	}
	if pgrp == s.pid {
		// the shell itself runs the command (a builtin loop): Ctrl-C stops
		// it, SIGKILL would end the session
		return s.write([]byte{0x03})
	}
	if err := syscall.Kill(-pgrp, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("session %q: kill process group %d: %w", s.name, pgrp, err)
	}
	return nil
}

// result turns a view of command c's output into an observation. s.mu is
// held.
func (s *session) result(c *command, v view) tools.Result {
	res := tools.Result{Stdout: s.unwrap(v.text, c)}
	notes := v.notes
	switch {
	case c == nil:
	case !c.done:
		res.StillRunning = true
		notes = append(notes, fmt.Sprintf("still running after %s in session %q: read more with terminal_tools.read_output, wait with terminal_tools.wait, answer a prompt with terminal_tools.send_input, stop it with terminal_tools.interrupt",
			time.Since(c.started).Round(100*time.Millisecond), s.name))
	default:
		status := c.status
		res.ExitCode = &status
		if c.shellExited {
			notes = append(notes, fmt.Sprintf("the shell of session %q exited (status %d); the next command starts a fresh shell, without the old working directory, variables or background jobs", s.name, c.status))
		} else if c.status == 148 {
			notes = append(notes, "exit status 148: the job was stopped (Ctrl-Z); resume it with the command fg, or end it with kill %1")
		}
	}
	res.Stderr = strings.Join(notes, "\n")
	return res
}

// unwrap removes what bash's error messages tell of the command file: its
// name ("bash: /tmp/…/cmd.bash: line 1: …") and, when the first line is
// quoted, the start marker's printf before the command. A person typing
// the command would see neither.
func (s *session) unwrap(text string, c *command) string {
	text = strings.ReplaceAll(text, s.script+": ", "")
	if c != nil {
		text = strings.ReplaceAll(text, commandPrefix(s.nonce, c.seq), "")
	}
	return text
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

func firstLine(s string) string {
	line, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if cut || len(line) > 80 {
		return truncateRunes(line, 80) + " …"
	}
	return line
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
