package terminal

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// jobIDArg names a job.
type jobIDArg struct {
	JobID string `json:"job_id" jsonschema:"minLength=1,maxLength=63,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"The job's id, as start_job returned it."`
}

type startJobArgs struct {
	Command string `json:"command" jsonschema:"minLength=1" jsonschema_description:"Bash command(s) to run in the background, with bash -c; its stdin is empty."`
	JobID   string `json:"job_id,omitempty" jsonschema:"maxLength=63,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Id to give the job; default a fresh one. An id in use is refused."`
	Dir     string `json:"dir,omitempty" jsonschema_description:"Directory to start in: absolute, or relative to the working directory; default the working directory."`
	Notify  string `json:"notify,omitempty" jsonschema:"maxLength=63,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Also publish the job's exit record on sandox.evt.job.<sandbox>.<notify>."`
	Webhook string `json:"webhook,omitempty" jsonschema:"maxLength=2048" jsonschema_description:"Also have the control plane POST the job's exit record (JSON) to this http(s) URL, which the operator's allowlist must permit; a URL it does not is refused here."`
}

type listJobsArgs struct{}

type waitJobArgs struct {
	jobIDArg
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"Wait at most this many seconds; default 30. A job still running then is reported as running."`
}

type jobOutputArgs struct {
	jobIDArg
	StdoutOffset int64    `json:"stdout_offset,omitempty" jsonschema:"minimum=0" jsonschema_description:"Return stdout from this byte offset on (the next_stdout_offset of the previous call); default 0."`
	StderrOffset int64    `json:"stderr_offset,omitempty" jsonschema:"minimum=0" jsonschema_description:"Return stderr from this byte offset on; default 0."`
	WaitSeconds  *float64 `json:"wait_seconds,omitempty" jsonschema:"minimum=0,maximum=86400" jsonschema_description:"First wait up to this many seconds for the job to end; default 0."`
}

type signalJobArgs struct {
	jobIDArg
	Signal string `json:"signal" jsonschema:"minLength=1" jsonschema_description:"Signal to send to the job's processes: HUP, INT, QUIT, KILL, USR1, USR2, TERM, STOP or CONT (with or without SIG)."`
}

type killJobArgs struct {
	jobIDArg
}

// jobOutputReturn is the return of job_output.
type jobOutputReturn struct {
	Job              schemas.JobInfo `json:"job"`
	StdoutOffset     int64           `json:"stdout_offset"`
	StderrOffset     int64           `json:"stderr_offset"`
	NextStdoutOffset int64           `json:"next_stdout_offset"`
	NextStderrOffset int64           `json:"next_stderr_offset"`
}

// jobTools returns start_job, list_jobs, wait_job, job_output, signal_job
// and kill_job.
func (m *Manager) jobTools() []tools.Tool {
	return []tools.Tool{
		tools.New(Family, "start_job", "Start a bash command as a background job and return at once with its job id. The job runs apart from the terminal sessions and outlives the client; its output, stdout and stderr apart, and its exit are recorded with sequence numbers in the SANDOX_JOBS stream (sandbox.<id>.jobs.<job>.>), from which a client resumes after a disconnect.", m.startJob),
		tools.New(Family, "list_jobs", "List the sandbox's jobs, newest first, running or ended, with their exit codes.", m.listJobs),
		tools.New(Family, "wait_job", "Wait for a job to end and return its exit code (or that it still runs).", m.waitJob),
		tools.New(Family, "job_output", "Return a job's output from byte offsets of stdout and stderr (the last MiB of each is kept here; the job stream keeps it all), optionally waiting for the job to end first.", m.jobOutput),
		tools.New(Family, "signal_job", "Send a signal to every process of a job (its process group and the processes that left it).", m.signalJob),
		tools.New(Family, "kill_job", "Kill a job and every process it started (SIGKILL to the whole process tree) and return how it ended.", m.killJob),
	}
}

func (m *Manager) startJob(_ context.Context, a startJobArgs) (tools.Result, error) {
	dir := m.Dir()
	if a.Dir != "" {
		dir = a.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(m.Dir(), dir)
		}
	}
	info, err := m.jobs.start(startRequest{id: a.JobID, command: a.Command, dir: dir, notify: a.Notify, webhook: a.Webhook})
	if err != nil {
		return tools.Result{}, err
	}
	return jobResult(info, fmt.Sprintf("started job %s (pid %d)\n", info.JobID, info.PID))
}

func (m *Manager) listJobs(_ context.Context, _ listJobsArgs) (tools.Result, error) {
	infos := m.jobs.list()
	var b strings.Builder
	for _, in := range infos {
		state := "running"
		if in.Exit != nil {
			state = fmt.Sprintf("exit %d", in.Exit.ExitCode)
		}
		fmt.Fprintf(&b, "%s\t%s\tpid %d\t%s\n", in.JobID, state, in.PID, firstLine(in.Command))
	}
	if len(infos) == 0 {
		b.WriteString("no jobs\n")
	}
	ret, err := json.Marshal(infos)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Stdout: b.String(), Return: ret}, nil
}

func (m *Manager) waitJob(ctx context.Context, a waitJobArgs) (tools.Result, error) {
	j, err := m.jobs.lookup(a.JobID)
	if err != nil {
		return tools.Result{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, seconds(a.TimeoutSeconds, m.cfg.DefaultTimeout))
	defer cancel()
	j.wait(wctx)
	return jobResult(j.snapshot(), "")
}

func (m *Manager) jobOutput(ctx context.Context, a jobOutputArgs) (tools.Result, error) {
	j, err := m.jobs.lookup(a.JobID)
	if err != nil {
		return tools.Result{}, err
	}
	if w := seconds(a.WaitSeconds, 0); w > 0 {
		wctx, cancel := context.WithTimeout(ctx, w)
		j.wait(wctx)
		cancel()
	}
	j.mu.Lock()
	stdout, from0 := j.out[0].since(a.StdoutOffset)
	stderr, from1 := j.out[1].since(a.StderrOffset)
	j.mu.Unlock()
	ret := jobOutputReturn{
		Job:          j.snapshot(),
		StdoutOffset: from0, StderrOffset: from1,
		NextStdoutOffset: from0 + int64(len(stdout)), NextStderrOffset: from1 + int64(len(stderr)),
	}
	res, err := jobResult(ret.Job, string(stdout))
	if err != nil {
		return res, err
	}
	res.Stderr = string(stderr)
	if res.Return, err = json.Marshal(ret); err != nil {
		return tools.Result{}, err
	}
	return res, nil
}

func (m *Manager) signalJob(_ context.Context, a signalJobArgs) (tools.Result, error) {
	sig, err := parseSignal(a.Signal)
	if err != nil {
		return tools.Result{}, err
	}
	j, err := m.jobs.lookup(a.JobID)
	if err != nil {
		return tools.Result{}, err
	}
	info := j.snapshot()
	if info.Running {
		if err := signalJob(info.PID, info.JobID, sig); err != nil {
			return tools.Result{}, err
		}
	}
	return jobResult(info, fmt.Sprintf("sent %s to job %s\n", signalName(sig), info.JobID))
}

func (m *Manager) killJob(ctx context.Context, a killJobArgs) (tools.Result, error) {
	j, err := m.jobs.lookup(a.JobID)
	if err != nil {
		return tools.Result{}, err
	}
	info := j.snapshot()
	if info.Running {
		killJobTree(info.PID, info.JobID)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		j.wait(wctx)
	}
	return jobResult(j.snapshot(), "")
}

// jobResult is an observation of a job: its info as the return, its exit
// code once it ended, and still-running otherwise.
func jobResult(info schemas.JobInfo, stdout string) (tools.Result, error) {
	ret, err := json.Marshal(info)
	if err != nil {
		return tools.Result{}, err
	}
	res := tools.Result{Stdout: stdout, Return: ret, StillRunning: info.Running}
	if info.Exit != nil {
		code := info.Exit.ExitCode
		res.ExitCode = &code
	}
	return res, nil
}
