package executor

import (
	"context"
	"errors"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// Resolver finds the tool an action names.
type Resolver interface {
	Resolve(ref string) (tools.Tool, error)
}

// LimitChecker reports the limits the sandbox ran into since it was last
// asked (see limits.Watcher).
type LimitChecker interface {
	Check() []schemas.LimitHit
}

// RunBatch runs actions in order and returns one observation per action.
// A failing action yields an observation that says why and the batch goes
// on, unless stopOnError is set: then the remaining actions are answered
// with CodeSkipped. actionTimeout bounds each action (0: no bound beyond ctx).
// RunBatch blocks until every action has run.
//
// When lc is not nil, RunBatch asks it for limit hits after each action and
// puts them in that action's observation, so that the action that ran out
// of memory says so. Hits found before the first action (a background
// process killed between batches, a notice from the orchestrator) go into
// the first observation.
func RunBatch(ctx context.Context, r Resolver, lc LimitChecker, actions schemas.Actions, stopOnError bool, actionTimeout time.Duration) []schemas.Observation {
	out := make([]schemas.Observation, 0, len(actions))
	failed := ""
	for _, a := range actions {
		var obs schemas.Observation
		if failed != "" {
			obs = schemas.Observation{
				Tool:  a.Tool,
				Error: schemas.Errorf(schemas.CodeSkipped, "not run: %s failed and the batch stops on failure", failed),
			}
		} else {
			obs = runAction(ctx, r, a, actionTimeout)
			if obs.Error != nil && stopOnError {
				failed = obs.Tool
			}
		}
		if lc != nil {
			// Check reports what happened since it was last asked: after
			// the first action, that includes what happened between
			// batches, which belongs in the first observation too.
			obs.LimitsHit = lc.Check()
		}
		out = append(out, obs)
	}
	return out
}

func runAction(ctx context.Context, r Resolver, a schemas.Action, timeout time.Duration) schemas.Observation {
	start := time.Now()
	tool, err := r.Resolve(a.Tool)
	if err != nil {
		return schemas.Observation{Tool: a.Tool, Error: wireError(err), DurationMS: millis(start)}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := callTool(ctx, tool, a)
	obs := schemas.Observation{
		Tool:                 tool.FullName(),
		Stdout:               res.Stdout,
		Stderr:               res.Stderr,
		TerminalStillRunning: res.StillRunning,
		ExitCode:             res.ExitCode,
		Return:               res.Return,
		DurationMS:           millis(start),
	}
	if err != nil {
		obs.Error = wireError(err)
	}
	return obs
}

// callTool runs the tool and turns a panic into an error, so that one bad
// tool cannot take the executor down.
func callTool(ctx context.Context, tool tools.Tool, a schemas.Action) (res tools.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = schemas.Errorf(schemas.CodeInternal, "%s panicked: %v", tool.FullName(), p)
		}
	}()
	return tool.Call(ctx, a.Args)
}

func wireError(err error) *schemas.Error {
	var we *schemas.Error
	if errors.As(err, &we) {
		return we
	}
	code := tools.ErrorCode(err)
	if errors.Is(err, context.DeadlineExceeded) {
		return schemas.Errorf(code, "%w (the action ran past its time limit)", err)
	}
	return schemas.Errorf(code, "%w", err)
}

func millis(start time.Time) float64 {
	return float64(time.Since(start).Microseconds()) / 1000
}
