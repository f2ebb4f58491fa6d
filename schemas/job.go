package schemas

import "time"

// The output streams of a job.
const (
	JobStdout = "stdout"
	JobStderr = "stderr"
)

// The kinds of message a job publishes, the last token of JobSubject.
const (
	// JobStartKind carries a JobInfo when the job starts.
	JobStartKind = "start"
	// JobOutputKind carries a JobOutput per chunk of output.
	JobOutputKind = "out"
	// JobExitKind carries the JobExit, the last message of a job.
	JobExitKind = "exit"
	// JobTruncatedKind carries a JobOutput without data, once, when the
	// sandbox spent its stream budget: Stream and Offset say where the
	// recorded output stops. No output follows, only the exit.
	JobTruncatedKind = "truncated"
)

// JobInfo describes a job: the answer of terminal_tools.start_job (in the
// observation's return), one entry of list_jobs, and the first message of
// the job on JobSubject(sandbox, job, JobStartKind).
type JobInfo struct {
	// JobID names the job within its sandbox: 1-63 letters, digits, '-' or
	// '_' (ValidateID), so it is one subject token.
	JobID string `json:"job_id"`
	// SandboxID is the sandbox the job runs in.
	SandboxID string `json:"sandbox_id"`
	// Command is the bash command line the job runs.
	Command string `json:"command"`
	// Dir is the directory the command started in.
	Dir string `json:"dir,omitempty"`
	// PID is the process id of the job's bash, which leads its process
	// group.
	PID int `json:"pid"`
	// StartedAt is when the job started.
	StartedAt time.Time `json:"started_at"`
	// Notify, when set, names the subject token under which the job's
	// JobExit is also published: JobNotifySubject(sandbox, notify).
	Notify string `json:"notify,omitempty"`
	// Webhook, when set, is the http(s) URL the control plane POSTs the
	// job's JobExit to (package services/orchestrator/webhook); only URLs
	// the operator's allowlist permits (WebhookAllowed).
	Webhook string `json:"webhook,omitempty"`
	// Running is true until the job ended.
	Running bool `json:"running"`
	// Exit is the job's end, once it ended.
	Exit *JobExit `json:"exit,omitempty"`
}

// JobOutput is one chunk of a job's output, published on
// JobSubject(sandbox, job, JobOutputKind) in the order the job wrote it.
// Offset counts the bytes of Stream before Data, so a reader can tell a
// repeated chunk from a new one.
type JobOutput struct {
	JobID string `json:"job_id"`
	// Stream is JobStdout or JobStderr.
	Stream string `json:"stream" jsonschema:"enum=stdout,enum=stderr"`
	// Offset is the position of Data's first byte in Stream.
	Offset int64 `json:"offset"`
	// Data is the bytes, base64-encoded in JSON.
	Data []byte `json:"data"`
}

// JobExit is how a job ended, published after its last output on
// JobSubject(sandbox, job, JobExitKind) (and on JobNotifySubject when the
// job names one).
type JobExit struct {
	JobID     string `json:"job_id"`
	SandboxID string `json:"sandbox_id"`
	// ExitCode is bash's exit status; 128+n when a signal n ended it.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the job ("SIGKILL"), if one did.
	Signal string `json:"signal,omitempty"`
	// StdoutBytes and StderrBytes are the sizes of the two streams: the
	// offsets a complete reader ends at.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
	// StartedAt and EndedAt bound the job's run.
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Error says why the job could not run or report, if so.
	Error string `json:"error,omitempty"`
}
