package python

import "encoding/json"

// The host speaks JSON lines over a pipe pair passed as extra file
// descriptors; see toolhost.py. Two more descriptors are the files that
// receive a call's stdout and stderr.
const (
	protocolVersion = 1
	// Index in exec.Cmd.ExtraFiles; the child sees index+3.
	fdRequests  = 0 // fd 3: the host reads requests
	fdResponses = 1 // fd 4: the host writes the hello and the replies
	fdStdout    = 2 // fd 5: a call's stdout
	fdStderr    = 3 // fd 6: a call's stderr
)

// hello is the host's first message: what it found in the tool directory.
type hello struct {
	Op       string        `json:"op"` // "hello"
	Protocol int           `json:"protocol"`
	Python   string        `json:"python"`
	Tools    []toolInfo    `json:"tools"`
	Errors   []importError `json:"errors"`
}

// toolInfo describes one public function of a tool file.
type toolInfo struct {
	Module      string          `json:"module"`
	Function    string          `json:"function"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// importError is a tool file that did not import.
type importError struct {
	Module    string `json:"module"`
	File      string `json:"file"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

// request asks the host to run module.function(**args) in directory cwd
// (the host's own directory when empty).
type request struct {
	ID       uint64          `json:"id"`
	Op       string          `json:"op"` // "call"
	Module   string          `json:"module"`
	Function string          `json:"function"`
	Args     json.RawMessage `json:"args"`
	Cwd      string          `json:"cwd,omitempty"`
}

// response is the host's reply to the request with the same id.
type response struct {
	ID     uint64          `json:"id"`
	OK     bool            `json:"ok"`
	Return json.RawMessage `json:"return,omitempty"` // absent when the function returned None
	Error  *callError      `json:"error,omitempty"`
}

// callError says why a call did not return.
type callError struct {
	// Kind is one of the errorKind constants.
	Kind string `json:"kind"`
	// Type is the Python exception's class name.
	Type      string `json:"type,omitempty"`
	Message   string `json:"message"`
	Traceback string `json:"traceback,omitempty"`
}

// The kinds of callError.
const (
	kindException   = "exception"    // the function raised
	kindInvalidArgs = "invalid_args" // the args do not bind to the signature
	kindUnknownTool = "unknown_tool" // no such function (the file stopped importing)
	kindCwd         = "cwd"          // the working directory cannot be entered
	kindProtocol    = "protocol"     // a request the host does not understand
	kindInternal    = "internal"     // a bug in the host
)
