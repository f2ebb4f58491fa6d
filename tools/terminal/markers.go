package terminal

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// How output is told apart from the shell's own chatter.
//
// The shell runs interactively on the PTY with echo off (stty -echo), line
// editing off (--noediting) and empty prompts, so nothing but program output
// reaches the terminal. A command is never typed: its text goes to a file,
// and the line typed into the shell only sources that file:
//
//	__sandox_rc=$? __sandox_seq=7; . '/tmp/sandox-terminal-…/cmd.bash'
//
// The file first prints a start marker, then restores $? (so `echo $?` sees
// the previous command's status) and holds the command as written. Error
// messages name the file; the observation leaves its name out. Sourcing
// keeps every effect on the shell (cd, variables, functions, venvs),
// multi-line commands and heredocs need no care, and a syntax error or an
// unclosed quote ends the sourcing with status 2 instead of leaving the
// shell waiting for more input. The end marker with the exit status is
// printed by PROMPT_COMMAND, which bash runs before every prompt: after the
// command finished, failed, was interrupted by Ctrl-C or stopped by
// Ctrl-Z. Background jobs do not delay it, as nothing waits for the
// terminal to close. PROMPT_COMMAND and the two helper functions are
// read-only, so that a command cannot switch the end marker off.
//
// A marker is a line of its own: the ASCII record separator (0x1e),
// "sandox:", the session's random nonce (so program output cannot forge
// one), the command's sequence number and the event:
//
//	\x1esandox:NONCE:7:start
//	\x1esandox:NONCE:7:end:STATUS
//	\x1esandox:NONCE:0:ready
//
// The reader cuts markers out of the stream; what is left is the output.

const (
	markerLead = 0x1e
	// maxMarkerLen bounds how long a partial marker is held back while the
	// reader waits for the rest of its line.
	maxMarkerLen = 96
)

type markerKind int

const (
	markReady markerKind = iota + 1
	markStart
	markEnd
)

// marker is one event the shell reported.
type marker struct {
	kind   markerKind
	seq    uint64
	status int
}

// piece is a run of output text or a marker, in stream order.
type piece struct {
	text []byte
	mark *marker
}

// markerParser splits the PTY stream into output and markers. Markers may
// arrive split across reads; the parser holds back a possible partial
// marker until its line is complete.
type markerParser struct {
	prefix  []byte // "\x1esandox:NONCE:"
	pending []byte
}

func newMarkerParser(nonce string) *markerParser {
	return &markerParser{prefix: []byte("\x1esandox:" + nonce + ":")}
}

// feed consumes data and returns the output and markers it completes.
func (p *markerParser) feed(data []byte) []piece {
	buf := append(append([]byte(nil), p.pending...), data...)
	p.pending = nil
	var out []piece
	text := 0 // start of the output run not yet emitted
	emit := func(end int) {
		if end > text {
			out = append(out, piece{text: buf[text:end]})
		}
	}
	for i := 0; i < len(buf); {
		j := bytes.IndexByte(buf[i:], markerLead)
		if j < 0 {
			break
		}
		j += i
		rest := buf[j:]
		n := min(len(rest), len(p.prefix))
		if !bytes.Equal(rest[:n], p.prefix[:n]) {
			i = j + 1
			continue
		}
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			if len(rest) < maxMarkerLen {
				emit(j)
				p.pending = rest
				return out
			}
			i = j + 1
			continue
		}
		m, ok := parseMarker(bytes.TrimSuffix(rest[len(p.prefix):nl], []byte("\r")))
		if !ok || n < len(p.prefix) {
			i = j + 1
			continue
		}
		emit(j)
		out = append(out, piece{mark: &m})
		i = j + nl + 1
		text = i
	}
	emit(len(buf))
	return out
}

// parseMarker parses "SEQ:ready", "SEQ:start" or "SEQ:end:STATUS".
func parseMarker(b []byte) (marker, bool) {
	fields := strings.Split(string(b), ":")
	if len(fields) < 2 {
		return marker{}, false
	}
	seq, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return marker{}, false
	}
	switch {
	case fields[1] == "ready" && len(fields) == 2:
		return marker{kind: markReady, seq: seq}, true
	case fields[1] == "start" && len(fields) == 2:
		return marker{kind: markStart, seq: seq}, true
	case fields[1] == "end" && len(fields) == 3:
		status, err := strconv.Atoi(fields[2])
		if err != nil {
			return marker{}, false
		}
		return marker{kind: markEnd, seq: seq, status: status}, true
	}
	return marker{}, false
}

// rcScript is the shell's startup file: it silences the terminal, installs
// the end marker in PROMPT_COMMAND and announces that the shell is ready.
func rcScript(nonce string) []byte {
	return fmt.Appendf(nil, `stty -echo 2>/dev/null
PS1=''
PS2=''
unset HISTFILE
__sandox_restore() { return "${__sandox_rc:-0}"; }
__sandox_prompt() {
	local __sandox_status=$?
	if [ -n "${__sandox_seq-}" ]; then
		printf '\036sandox:%s:%%s:end:%%d\n' "$__sandox_seq" "$__sandox_status"
		unset __sandox_seq
	fi
	return "$__sandox_status"
}
readonly -f __sandox_restore __sandox_prompt
readonly PROMPT_COMMAND=__sandox_prompt
printf '\036sandox:%s:0:ready\n'
`, nonce, nonce)
}

// commandScript is the file a command runs from: start marker, $? of the
// previous command restored, then the command as written. All three share
// the first line, so that bash's line numbers in error messages are the
// command's own.
func commandScript(nonce string, seq uint64, command string) []byte {
	return []byte(commandPrefix(nonce, seq) + command + "\n")
}

// commandPrefix is what commandScript puts before the command. Bash quotes
// it when the first line has a syntax error; the observation leaves it out.
func commandPrefix(nonce string, seq uint64) string {
	return fmt.Sprintf("printf '\\036sandox:%s:%d:start\\n'; __sandox_restore; ", nonce, seq)
}

// commandLine is what is typed into the shell to run the command file.
func commandLine(path string, seq uint64) []byte {
	return fmt.Appendf(nil, "__sandox_rc=$? __sandox_seq=%d; . %s\n", seq, shellQuote(path))
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
