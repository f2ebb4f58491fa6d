package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sandox/sandox/tools"
)

// tool wraps one function the host described as a tools.Tool.
func (h *Host) tool(info toolInfo) tools.Tool {
	module, function := info.Module, info.Function
	return tools.Tool{
		Module:      module,
		Name:        function,
		Description: info.Description,
		Parameters:  info.Parameters,
		Source:      "python",
		Call: func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
			return h.call(ctx, module, function, args)
		},
	}
}

// call runs module.function(**args) in the host, in the directory WorkDir
// returns. It blocks until the function returns, the host dies, or ctx is
// done, and waits its turn behind calls already running.
//
// On error the Result still carries what the function wrote to stdout and
// stderr before it failed; for an exception, Stderr ends with the traceback.
// The errors are:
//   - an error wrapping schemas.CodeInvalidArgs when args is not a JSON object,
//     is past the limits of objectArgs (invalid UTF-8, nesting deeper than
//     MaxArgsDepth, a number longer than MaxNumberDigits) or does not bind
//     to the function's signature; the host never sees such args;
//   - a *schemas.Error with CodeToolError, "ExceptionType: message", when
//     the function raised, or saying the host died (os._exit, a crash); the
//     next call starts a new host;
//   - an error wrapping ctx.Err() (context.DeadlineExceeded on a timeout)
//     when ctx was done first: the host is killed, since it may be stuck in
//     the function, and the next call starts a new one;
//   - ErrClosed after Close.
func (h *Host) call(ctx context.Context, module, function string, raw json.RawMessage) (tools.Result, error) {
	name := module + "." + function
	args, err := objectArgs(raw)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", name, err)
	}
	h.callMu.Lock()
	defer h.callMu.Unlock()
	if err := ctx.Err(); err != nil {
		return tools.Result{}, fmt.Errorf("%s: not run: %w", name, err)
	}
	p, err := h.running(ctx)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := p.capture.reset(); err != nil {
		h.discard(p)
		return tools.Result{}, fmt.Errorf("%s: reset output capture: %w", name, err)
	}
	resp, err := p.call(ctx, request{Module: module, Function: function, Args: args, Cwd: h.workDir()})
	if err != nil {
		p.stop(0) // kill it first, so that it stops writing
		var res tools.Result
		res.Stdout, res.Stderr = p.capture.read()
		h.discard(p)
		return res, h.lostError(name, err)
	}
	var res tools.Result
	res.Stdout, res.Stderr = p.capture.read()
	if resp.OK {
		res.Return = resp.Return
		return res, nil
	}
	return res, callFailure(name, resp.Error, &res)
}

// lostError explains a call whose host was killed or died.
func (h *Host) lostError(name string, err error) error {
	var exited *errExited
	switch {
	case h.isClosed():
		return fmt.Errorf("%s: %w", name, ErrClosed)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: no result in time; the python tool host was killed and restarts on the next call: %w", name, err)
	case errors.As(err, &exited):
		return hostDied(name, exited.state)
	default:
		return hostBroken(name, fmt.Errorf("%w; it restarts on the next call", err))
	}
}
