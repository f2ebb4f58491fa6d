package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandox/sandox/schemas"
)

// JobOptions are the choices of Sandbox.StartJob. The zero value starts the
// job in the sandbox's working directory under a fresh id.
type JobOptions struct {
	// ID names the job: 1-63 letters, digits, '-' or '_'. Empty means the
	// sandbox makes one up. Naming it lets a caller that lost the answer
	// of StartJob still find the job.
	ID string
	// Dir is the directory to start in, absolute or relative to the
	// sandbox's working directory.
	Dir string
	// Notify, when set, makes the sandbox also publish the job's
	// schemas.JobExit on schemas.JobNotifySubject(sandbox, Notify)
	// (sandox.evt.job.<sandbox>.<notify>), where any client may
	// subscribe and SANDOX_EVENTS records it.
	Notify string
	// Webhook, when set, makes the control plane POST the job's
	// schemas.JobExit as JSON to this http(s) URL once the job ended,
	// retrying for a while (docs/jobs.md). The operator's allowlist must
	// permit it (orchestrator -webhook-allow): another is ErrAccessDenied
	// at once.
	Webhook string
}

// Job is a command running in a sandbox in the background
// (terminal_tools.start_job). Its output and exit are kept in the
// SANDOX_JOBS stream, so any client can follow it, from any point, while
// it runs and after it ended; it outlives the client that started it. A
// Job is safe for concurrent use.
type Job struct {
	sandbox *Sandbox
	id      string
}

// StartJob starts command (bash -c) as a job in the sandbox and returns
// once the job runs and its start is recorded: it does not wait for the
// job. The sandbox needs terminal_tools. An id in use is ErrAlreadyExists,
// a bad id or option ErrBadRequest.
func (s *Sandbox) StartJob(ctx context.Context, command string, opts JobOptions) (*Job, schemas.JobInfo, error) {
	args := map[string]string{"command": command}
	for k, v := range map[string]string{"job_id": opts.ID, "dir": opts.Dir, "notify": opts.Notify, "webhook": opts.Webhook} {
		if v != "" {
			args[k] = v
		}
	}
	var info schemas.JobInfo
	if _, err := s.jobCall(ctx, "start_job", args, &info); err != nil {
		return nil, info, err
	}
	return s.Job(info.JobID), info, nil
}

// Job returns a handle on job id of the sandbox, started by this client or
// another. It does not check that the job exists: Wait and Output do.
func (s *Sandbox) Job(id string) *Job { return &Job{sandbox: s, id: id} }

// Jobs lists the sandbox's jobs, running or ended, newest first, as its
// executor knows them (jobs of an executor that restarted are gone from
// the list; their records stay in SANDOX_JOBS).
func (s *Sandbox) Jobs(ctx context.Context) ([]schemas.JobInfo, error) {
	var infos []schemas.JobInfo
	_, err := s.jobCall(ctx, "list_jobs", map[string]string{}, &infos)
	return infos, err
}

// ID returns the job's id.
func (j *Job) ID() string { return j.id }

// Signal sends sig ("TERM", "INT", "HUP", "KILL", "USR1", "USR2", "QUIT",
// "STOP", "CONT", with or without "SIG") to every process of the job. A
// job that ended is left alone; an unknown job is ErrNotFound.
func (j *Job) Signal(ctx context.Context, sig string) error {
	_, err := j.sandbox.jobCall(ctx, "signal_job", map[string]string{"job_id": j.id, "signal": sig}, nil)
	return err
}

// Kill kills the job and every process it started (SIGKILL to its whole
// process tree), waits for it to end, and returns its info with the exit.
func (j *Job) Kill(ctx context.Context) (schemas.JobInfo, error) {
	var info schemas.JobInfo
	_, err := j.sandbox.jobCall(ctx, "kill_job", map[string]string{"job_id": j.id}, &info)
	return info, err
}

// jobCall runs terminal_tools.<tool> with args as a one-action batch and
// decodes the observation's return into ret (when not nil). An action
// error is returned as the sentinel of its code.
func (s *Sandbox) jobCall(ctx context.Context, tool string, args any, ret any) (schemas.Observation, error) {
	data, err := json.Marshal(args)
	if err != nil {
		return schemas.Observation{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	obs, err := s.SendActions(ctx, schemas.Actions{{Tool: "terminal_tools." + tool, Args: data}})
	if err != nil {
		return schemas.Observation{}, err
	}
	if len(obs) != 1 {
		return schemas.Observation{}, fmt.Errorf("%w: %s: %d observations, want 1", ErrInternal, tool, len(obs))
	}
	o := obs[0]
	if o.Error != nil {
		return o, fmt.Errorf("sandbox %s: %s: %w", s.id, tool, fromWire(o.Error))
	}
	if ret != nil {
		if err := json.Unmarshal(o.Return, ret); err != nil {
			return o, fmt.Errorf("%w: %s: decode %s: %w", ErrInternal, tool, o.Return, err)
		}
	}
	return o, nil
}
