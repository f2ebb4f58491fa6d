// Package terminal is the built-in tool module terminal_tools: persistent
// bash sessions on a real pseudo-terminal, for an agent to run commands in
// as a person would in a terminal window.
//
// A Manager owns the sessions, one shell per session name ("default" unless
// an action names another), each started on first use. State survives
// between actions: working directory, variables, functions, activated
// venvs, background jobs. A command that outlives its soft timeout keeps
// running; the observation says terminal_still_running, and read_output,
// wait, send_input, send_keys and interrupt deal with it.
//
// A terminal merges stdout and stderr, so an observation's Stdout holds the
// whole terminal output, cleaned of escape sequences, and Stderr holds only
// sandox's own notes: truncation, "still running", a restarted shell.
// markers.go explains how output is told apart from the shell itself.
//
// The uv tools (uv_init, uv_add, uv_remove, uv_sync, uv_run) and run_python
// run through the same sessions, so the working directory applies.
package terminal
