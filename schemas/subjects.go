package schemas

import (
	"regexp"
	"sync"
)

// Streams, buckets and subjects. docs/subjects.md describes each one.
const (
	// CommandStream is the work-queue stream of lifecycle commands. All
	// orchestrator workers share its durable consumer CommandConsumer.
	CommandStream   = "SANDOX_COMMANDS"
	CommandConsumer = "orchestrator"
	// CommandSubjectPrefix prefixes every lifecycle command: sandox.cmd.<kind>.
	CommandSubjectPrefix = "sandox.cmd."

	// EventStream records, for audit and replay, every command result,
	// every state change, every action batch (as its executor received it,
	// on BatchRecordSubject) and every observation batch
	// (ObservationSubject). It does not capture ActionsSubject itself, so
	// that a request to a sandbox without an executor gets "no responders"
	// at once.
	EventStream = "SANDOX_EVENTS"

	// GroupBucket and SandboxBucket are the key-value buckets holding the
	// state of groups and sandboxes, keyed by id.
	GroupBucket   = "sandox_groups"
	SandboxBucket = "sandox_sandboxes"
	// LedgerBucket holds, under LedgerKey, the resources.Ledger of what
	// the orchestrator has handed out, updated with compare-and-set.
	LedgerBucket = "sandox_ledger"
	LedgerKey    = "host"
	// HostsBucket holds a HostStatus per orchestrator host, keyed by the
	// host's name.
	HostsBucket = "sandox_hosts"

	// Headers on messages.
	HeaderBatchID     = "Sandox-Batch-Id"
	HeaderStopOnError = "Sandox-Stop-On-Error"
	// HeaderReply, on a batch record, is the reply subject the batch was
	// sent with.
	HeaderReply = "Sandox-Reply"
)

// CommandSubject is the subject a command of the given kind is published on.
func CommandSubject(kind CommandKind) string { return CommandSubjectPrefix + string(kind) }

// SharedCommandFilter is the filter of CommandConsumer: the commands
// clients publish (sandox.cmd.<kind>), not those forwarded to one host.
const SharedCommandFilter = CommandSubjectPrefix + "*"

// HostCommandPrefix prefixes the commands forwarded to one host's workers:
// sandox.cmd.host.<host>.<kind>.
const HostCommandPrefix = CommandSubjectPrefix + "host."

// HostCommandSubject is where a command of kind for the sandboxes of host
// is forwarded; only that host's workers consume it.
func HostCommandSubject(host string, kind CommandKind) string {
	return HostCommandPrefix + host + "." + string(kind)
}

// HostCommandFilter matches every command forwarded to host.
func HostCommandFilter(host string) string { return HostCommandPrefix + host + ".*" }

// HostConsumer is the durable consumer the workers of host share.
func HostConsumer(host string) string { return CommandConsumer + "-host-" + host }

// ResultSubject is where the orchestrator publishes a command's result.
func ResultSubject(commandID string) string { return "sandox.evt.result." + commandID }

// SandboxEventSubject carries the state changes of one sandbox.
func SandboxEventSubject(sandboxID string) string { return "sandox.evt.sandbox." + sandboxID }

// ActionsSubject is the subject a sandbox's executor serves action batches on.
func ActionsSubject(sandboxID string) string { return "sandbox." + sandboxID + ".actions" }

// PingSubject answers when the sandbox's executor is ready.
func PingSubject(sandboxID string) string { return "sandbox." + sandboxID + ".ping" }

// ReadySubject is where a sandbox's executor announces, once, that it
// serves every other subject of its sandbox (an ExecutorReady). The
// orchestrator subscribes to it before it starts the container, so a start
// waits for no poll; a ping whose reply subject is ReadySubject is answered
// there too.
func ReadySubject(sandboxID string) string { return "sandox.ready." + sandboxID }

// ToolsSubject answers with the descriptions of the sandbox's tools.
func ToolsSubject(sandboxID string) string { return "sandbox." + sandboxID + ".tools" }

// StatsSubject answers with the sandbox's own reading of its disk use, a
// SandboxUsage with DiskBytes set.
func StatsSubject(sandboxID string) string { return "sandbox." + sandboxID + ".stats" }

// NoticeSubject takes, from the orchestrator, a LimitHit that the executor
// attaches to its next observation (for example after a restart).
func NoticeSubject(sandboxID string) string { return "sandbox." + sandboxID + ".notice" }

// SandboxSubjects matches every subject one sandbox's executor serves.
func SandboxSubjects(sandboxID string) string { return "sandbox." + sandboxID + ".>" }

// SandboxInboxPrefix is the inbox prefix of a sandbox executor's own
// requests (to control-plane services such as search): under
// SandboxSubjects, so the sandbox's identity may receive the replies
// without seeing anyone else's _INBOX.
func SandboxInboxPrefix(sandboxID string) string { return "sandbox." + sandboxID + ".inbox" }

// SandboxServiceSubjects are the subjects of the control-plane services
// sandbox sandboxID may send requests to, each naming the sandbox so the
// service can tell who asks. The services hold the secrets (API keys); the
// sandbox sends only its question.
func SandboxServiceSubjects(sandboxID string) []string {
	return []string{SandboxSearchSubject(sandboxID)}
}

// ObservationSubjectPrefix begins every ObservationSubject; EventStream
// records every subject under it.
const ObservationSubjectPrefix = "sandox.obs."

// ObservationSubject is the reply subject the SDK gives an action batch, so
// that the observations are recorded in EventStream and an async future can
// collect them later.
func ObservationSubject(sandboxID, batchID string) string {
	return ObservationSubjectPrefix + sandboxID + "." + batchID
}

// BatchRecordSubject is where a sandbox's executor records, for the audit
// log, each action batch it receives: the payload as sent, the sender's
// headers, and HeaderReply.
func BatchRecordSubject(sandboxID string) string { return "sandox.evt.batch." + sandboxID }

// RequestSubjectPrefix prefixes the requests the orchestrator answers
// directly, outside the command work queue: sandox.req.<what>.<kind>.<id>.
// Every worker subscribes to them in the queue group RequestQueue, so one
// worker answers each request. The reply is a StatusReply.
const RequestSubjectPrefix = "sandox.req."

// RequestQueue is the queue group of the orchestrator's request
// subscriptions.
const RequestQueue = "orchestrator"

// SandboxStatusSubject asks the orchestrator for a sandbox's recorded
// status; the reply's Sandbox is set, or its Error (not_found).
func SandboxStatusSubject(sandboxID string) string {
	return RequestSubjectPrefix + "status.sandbox." + sandboxID
}

// GroupStatusSubject asks the orchestrator for a group's recorded status
// and those of its sandboxes; the reply's Group and Sandboxes are set, or
// its Error.
func GroupStatusSubject(groupID string) string {
	return RequestSubjectPrefix + "status.group." + groupID
}

// SandboxStatsSubject asks the orchestrator for a live reading of a
// sandbox's use against its limits; the reply's Stats and Sandbox are set,
// or its Error (not_found, conflict when the sandbox is not running).
func SandboxStatsSubject(sandboxID string) string {
	return RequestSubjectPrefix + "stats.sandbox." + sandboxID
}

// HostStatsSubject is where a worker passes a SandboxStatsSubject request
// to the workers of the sandbox's host, which alone can read its container.
func HostStatsSubject(host, sandboxID string) string {
	return RequestSubjectPrefix + "host." + host + ".stats.sandbox." + sandboxID
}

// EventSubjects lists the subjects EventStream records. ActionsSubject is
// not among them: a stream that captured it would count as a responder.
func EventSubjects() []string {
	return []string{"sandox.evt.>", ObservationSubjectPrefix + ">"}
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`) })

// ValidateID checks a group or sandbox id: 1 to 63 letters, digits, '-' or
// '_', starting with a letter or digit, so that it is a single NATS subject
// token and a valid Docker name.
func ValidateID(kind, id string) error {
	if !idPattern().MatchString(id) {
		return Errorf(CodeBadRequest, "%s id %q: want 1-63 letters, digits, '-' or '_', starting with a letter or digit", kind, id)
	}
	return nil
}

// JobStream keeps what the jobs of every sandbox publish (JobSubjects): a
// reader resumes a job's output from the last stream sequence it saw. It
// captures only the jobs' own messages: job control goes through action
// batches, so no request is swallowed.
const JobStream = "SANDOX_JOBS"

// JobStreamSubjects are the subjects JobStream captures.
const JobStreamSubjects = "sandbox.*.jobs.>"

// JobSubject is where a sandbox's job publishes messages of kind
// (JobStartKind, JobOutputKind, JobExitKind).
func JobSubject(sandboxID, jobID, kind string) string {
	return "sandbox." + sandboxID + ".jobs." + jobID + "." + kind
}

// JobSubjects matches every message of one job.
func JobSubjects(sandboxID, jobID string) string {
	return "sandbox." + sandboxID + ".jobs." + jobID + ".>"
}

// SandboxJobSubjects matches every message of every job of one sandbox:
// the only job subjects its identity may publish.
func SandboxJobSubjects(sandboxID string) string { return "sandbox." + sandboxID + ".jobs.>" }

// JobNotifySubject is where a job started with a notify name also
// publishes its JobExit. It lies under sandox.evt., so SANDOX_EVENTS
// records it and clients may subscribe to it; the sandbox's identity may
// publish under its own sandbox id only.
func JobNotifySubject(sandboxID, notify string) string {
	return "sandox.evt.job." + sandboxID + "." + notify
}

// HoldSubject is where the orchestrator tells a sandbox's executor to stop
// (Hold true) or go back to (Hold false) serving the sandbox's other
// subjects, around a pause: a batch sent to a paused sandbox then meets no
// responder at once instead of waiting in a frozen process. The reply is a
// HoldReply.
func HoldSubject(sandboxID string) string { return "sandbox." + sandboxID + ".hold" }
