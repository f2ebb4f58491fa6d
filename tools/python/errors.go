package python

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// ImportError reports a tool file that could not be imported: a syntax
// error, an exception at import time, or a name that is not a valid module
// name or is taken by another module. Start returns one per broken file.
type ImportError struct {
	// File is the tool file's name within Config.Dir, like "my_tools.py".
	File string
	// Message is the exception, "SyntaxError: invalid syntax (…)".
	Message string
	// Traceback is Python's traceback, without the host's own frames.
	Traceback string
}

// Error names the file and carries the traceback.
func (e *ImportError) Error() string {
	msg := "tool file " + e.File + ": " + e.Message
	if tb := strings.TrimSpace(e.Traceback); tb != "" {
		msg += "\n" + tb
	}
	return msg
}

func importErrors(list []importError) error {
	errs := make([]error, len(list))
	for i, e := range list {
		errs[i] = &ImportError{File: e.File, Message: e.Message, Traceback: e.Traceback}
	}
	return errors.Join(errs...)
}

// callFailure turns the host's error reply into the call's error. An
// exception's traceback goes to the end of res.Stderr.
func callFailure(name string, e *callError, res *tools.Result) error {
	if e == nil {
		return hostBroken(name, errors.New("a failed call without an error"))
	}
	switch e.Kind {
	case kindException:
		if e.Traceback != "" {
			if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
				res.Stderr += "\n"
			}
			res.Stderr += e.Traceback
		}
		return schemas.Errorf(schemas.CodeToolError, "%s", e.Message)
	case kindInvalidArgs:
		return fmt.Errorf("%s: %w: %s", name, schemas.CodeInvalidArgs, e.Message)
	case kindUnknownTool:
		return schemas.Errorf(schemas.CodeUnknownTool, "%s: %s", name, e.Message)
	case kindCwd:
		return fmt.Errorf("%s: working directory: %s: %w", name, e.Message, cwdError(e.Type))
	default:
		return hostBroken(name, errors.New(e.Message))
	}
}

func cwdError(pythonType string) error {
	switch pythonType {
	case "PermissionError":
		return schemas.CodeAccessDenied
	default:
		return tools.ErrNotFound
	}
}

func hostDied(name, state string) error {
	return schemas.Errorf(schemas.CodeToolError,
		"%s: the python tool host died (%s); it restarts on the next call", name, state)
}

func hostBroken(name string, err error) error {
	return schemas.Errorf(schemas.CodeInternal, "%s: python tool host: %w", name, err)
}
