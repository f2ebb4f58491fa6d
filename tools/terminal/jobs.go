package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/outbox"
)

const (
	// jobChunk is the most output one JobOutput message carries.
	jobChunk = 16 << 10
	// jobKeep is how much of each stream a job keeps for job_output; the
	// job stream (schemas.JobStream) keeps all of it.
	jobKeep = 1 << 20
	// jobDrain is how long a job's output is still read after its bash
	// exited, for what its last children write; a background child that
	// keeps the pipes open longer is cut off.
	jobDrain = 2 * time.Second
	// jobEnvVar marks every process of a job (bash and what it starts)
	// with the job's id, so that kill finds the ones that left its
	// process group.
	jobEnvVar = "SANDOX_JOB"
)

// JobConfig is what the jobs of a Manager need beyond its Config.
type JobConfig struct {
	// Publish stores a job's messages in the job stream; nil keeps them in
	// the executor only (job_output still serves them).
	Publish func(ctx context.Context, subject, msgID string, data []byte) error
	// SandboxID returns the sandbox the jobs run in, for their subjects.
	SandboxID func() string
	// Budget is the sandbox's stream budget, shared with its watches: once
	// spent, a job's output is no longer published (job_output still has
	// its tail) and one truncated record says so. Nil is no limit.
	Budget *outbox.Budget
	// Webhooks are the URL prefixes a job's webhook may name (the
	// operator's allowlist, schemas.WebhookAllowed); empty refuses all.
	Webhooks []string
}

// jobSet owns the jobs of a sandbox. It is safe for concurrent use.
//
// Lock order: jobSet.mu before job.mu.
type jobSet struct {
	cfg  Config
	jcfg JobConfig
	// ctx ends when the set closes: publishers stop retrying then.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	byID   map[string]*job
	closed bool
}

func newJobSet(cfg Config, jcfg JobConfig) *jobSet {
	if jcfg.SandboxID == nil {
		jcfg.SandboxID = func() string { return "" }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &jobSet{cfg: cfg, jcfg: jcfg, ctx: ctx, cancel: cancel, byID: map[string]*job{}}
}

// job is one command running in the background, apart from any session.
type job struct {
	pub  *jobPublisher
	proc *os.Process
	done chan struct{} // closed once exit is set and published (or given up)
	// started is closed once the stream stored the job's start (or the
	// publisher gave it up).
	started <-chan struct{}

	mu   sync.Mutex
	info schemas.JobInfo
	out  [2]*streamTail // stdout, stderr
	// truncated is set once the job's truncated record is queued.
	truncated bool
}

// startRequest is what start_job asks for.
type startRequest struct {
	id, command, dir, notify, webhook string
}

// start runs the command of req as a job and returns at once. The job's id
// is req.id, or a fresh one; an id in use is schemas.CodeInvalidArgs.
func (js *jobSet) start(req startRequest) (schemas.JobInfo, error) {
	if req.id == "" {
		req.id = newJobID()
	}
	if err := schemas.ValidateID("job", req.id); err != nil {
		return schemas.JobInfo{}, fmt.Errorf("%w: %w", schemas.CodeInvalidArgs, err)
	}
	if req.notify != "" {
		if err := schemas.ValidateID("notify", req.notify); err != nil {
			return schemas.JobInfo{}, fmt.Errorf("%w: %w", schemas.CodeInvalidArgs, err)
		}
	}
	if req.webhook != "" {
		if err := schemas.WebhookAllowed(req.webhook, js.jcfg.Webhooks); err != nil {
			return schemas.JobInfo{}, err
		}
	}
	j, err := js.add(req)
	if err != nil {
		return schemas.JobInfo{}, err
	}
	// Once start_job answers, the job's start is in the stream: a reader
	// that finds no start there can tell the job does not exist. A bus
	// that is away delays the answer by startStored at most.
	select {
	case <-j.started:
	case <-time.After(startStored):
	}
	return j.snapshot(), nil
}

// startStored bounds how long start_job waits for the stream to store the
// job's start.
const startStored = 5 * time.Second

// add spawns the job of req, records it under its id and starts following
// it (a goroutine that close waits for).
func (js *jobSet) add(req startRequest) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.closed {
		return nil, errClosed
	}
	if _, ok := js.byID[req.id]; ok {
		return nil, schemas.Errorf(schemas.CodeAlreadyExists, "%w: job %q exists already", schemas.CodeInvalidArgs, req.id)
	}
	j, pipes, err := js.spawn(req)
	if err != nil {
		return nil, err
	}
	js.byID[req.id] = j
	js.wg.Add(1)
	go func() {
		defer js.wg.Done()
		js.follow(j, pipes)
	}()
	return j, nil
}

// spawn starts bash -c command in its own process group, its output on
// two pipes, and queues the job's start message.
func (js *jobSet) spawn(req startRequest) (*job, [2]*os.File, error) {
	var pipes [2]*os.File
	var writers [2]*os.File
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(pipes[:], writers[:])
			return nil, pipes, fmt.Errorf("job %s: pipe: %w", req.id, err)
		}
		pipes[i], writers[i] = r, w
	}
	cmd := exec.Command(js.cfg.Shell, "-c", req.command)
	cmd.Dir = req.dir
	cmd.Env = append(sessionEnv(js.cfg), jobEnvVar+"="+req.id)
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Start()
	closeAll(nil, writers[:]) // the job holds its own copies
	if err != nil {
		closeAll(pipes[:], nil)
		return nil, pipes, fmt.Errorf("job %s: start %s: %w", req.id, js.cfg.Shell, err)
	}
	sandbox := js.jcfg.SandboxID()
	j := &job{
		proc: cmd.Process,
		done: make(chan struct{}),
		info: schemas.JobInfo{
			JobID: req.id, SandboxID: sandbox, Command: req.command, Dir: req.dir,
			PID: cmd.Process.Pid, StartedAt: time.Now().UTC(), Notify: req.notify, Webhook: req.webhook, Running: true,
		},
		out: [2]*streamTail{{}, {}},
	}
	j.pub = newJobPublisher(js.ctx, js.jcfg.Publish, sandbox, req.id)
	j.started = j.pub.send(schemas.JobStartKind, "start", j.info)
	return j, pipes, nil
}

// follow reads the job's output until the job ended, then publishes its
// exit after the last chunk. It owns pipes.
func (js *jobSet) follow(j *job, pipes [2]*os.File) {
	var readers sync.WaitGroup
	for i, p := range pipes {
		readers.Add(1)
		go func() {
			defer readers.Done()
			js.read(j, i, p)
		}()
	}
	state, werr := j.proc.Wait()
	// What bash's children still write comes in for a while; a child that
	// holds the pipes longer is cut off (its output after this is lost).
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(jobDrain):
		for _, p := range pipes {
			_ = p.SetReadDeadline(time.Now())
		}
		<-drained
	}
	closeAll(pipes[:], nil)

	exit := j.finish(state, werr)
	j.pub.send(schemas.JobExitKind, "exit", exit)
	if j.info.Notify != "" {
		j.pub.sendTo(schemas.JobNotifySubject(j.info.SandboxID, j.info.Notify), "notify", exit)
	}
	j.pub.close()
	close(j.done)
}

// read copies stream i of the job from p into its tail and its publisher,
// in chunks of at most jobChunk bytes.
func (js *jobSet) read(j *job, i int, p *os.File) {
	name := [2]string{schemas.JobStdout, schemas.JobStderr}[i]
	buf := make([]byte, jobChunk)
	for {
		n, err := p.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			j.mu.Lock()
			off := j.out[i].add(data)
			j.mu.Unlock()
			if !js.jcfg.Budget.Take(len(data)) {
				j.truncate(name, off)
				continue
			}
			// Blocks while the publisher is behind: the job then waits
			// on a full pipe instead of its output being dropped.
			j.pub.send(schemas.JobOutputKind, fmt.Sprintf("%s-%d", name, off),
				schemas.JobOutput{JobID: j.info.JobID, Stream: name, Offset: off, Data: data})
		}
		if err != nil {
			return
		}
	}
}

// truncate queues the job's truncated record, once: the sandbox's stream
// budget is spent, and stream's output is recorded up to offset only.
func (j *job) truncate(stream string, offset int64) {
	j.mu.Lock()
	done := j.truncated
	j.truncated = true
	j.mu.Unlock()
	if !done {
		j.pub.send(schemas.JobTruncatedKind, "truncated", schemas.JobOutput{JobID: j.info.JobID, Stream: stream, Offset: offset})
	}
}

// finish records how the job ended and returns it.
func (j *job) finish(state *os.ProcessState, werr error) schemas.JobExit {
	j.mu.Lock()
	defer j.mu.Unlock()
	exit := schemas.JobExit{
		JobID: j.info.JobID, SandboxID: j.info.SandboxID, ExitCode: -1,
		StdoutBytes: j.out[0].total, StderrBytes: j.out[1].total,
		StartedAt: j.info.StartedAt, EndedAt: time.Now().UTC(),
	}
	switch {
	case werr != nil:
		exit.Error = werr.Error()
	case state != nil:
		exit.ExitCode = state.ExitCode()
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			exit.ExitCode = 128 + int(ws.Signal())
			exit.Signal = signalName(ws.Signal())
		}
	}
	j.info.Running = false
	j.info.Exit = &exit
	return exit
}

// snapshot returns the job's info as it is now.
func (j *job) snapshot() schemas.JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := j.info
	if info.Exit != nil {
		e := *info.Exit
		info.Exit = &e
	}
	return info
}

// lookup returns the job id; an unknown id is tools.ErrNotFound.
func (js *jobSet) lookup(id string) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok {
		return nil, schemas.Errorf(schemas.CodeNotFound, "job %q: %w", id, tools.ErrNotFound)
	}
	return j, nil
}

// list returns every job's info, the newest first.
func (js *jobSet) list() []schemas.JobInfo {
	js.mu.Lock()
	jobs := make([]*job, 0, len(js.byID))
	for _, j := range js.byID {
		jobs = append(jobs, j)
	}
	js.mu.Unlock()
	infos := make([]schemas.JobInfo, 0, len(jobs))
	for _, j := range jobs {
		infos = append(infos, j.snapshot())
	}
	sort.Slice(infos, func(a, b int) bool { return infos[a].StartedAt.After(infos[b].StartedAt) })
	return infos
}

// wait blocks until job j ended or ctx is done; it reports whether it
// ended.
func (j *job) wait(ctx context.Context) bool {
	select {
	case <-j.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// close kills every job's process tree and waits for the jobs to publish
// their ends (for at most a few seconds: the bus may be away), then stops
// the publishers. It is safe to call more than once.
func (js *jobSet) close() error {
	js.mu.Lock()
	js.closed = true
	jobs := make([]*job, 0, len(js.byID))
	for _, j := range js.byID {
		jobs = append(jobs, j)
	}
	js.mu.Unlock()
	for _, j := range jobs {
		// An ended job's process group id may belong to another by now.
		if info := j.snapshot(); info.Running {
			killJobTree(info.PID, info.JobID)
		}
	}
	done := make(chan struct{})
	go func() { js.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		js.cancel()
		<-done
	}
	js.cancel()
	return nil
}

// newJobID returns a fresh job id: "job-" and 12 hex digits.
func newJobID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "job-" + hex.EncodeToString(b)
}

func closeAll(a, b []*os.File) {
	for _, f := range append(append([]*os.File(nil), a...), b...) {
		if f != nil {
			_ = f.Close()
		}
	}
}

// streamTail keeps at least the last jobKeep bytes of a stream (at most
// twice that) and counts them all.
type streamTail struct {
	buf   []byte
	total int64 // bytes written so far; buf ends there
}

// add appends data and returns the offset of its first byte.
func (t *streamTail) add(data []byte) int64 {
	off := t.total
	t.total += int64(len(data))
	t.buf = append(t.buf, data...)
	// Trimmed back to jobKeep once twice that, so a long job copies its
	// tail once per MiB, not once per chunk.
	if len(t.buf) > 2*jobKeep {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-jobKeep:]...)
	}
	return off
}

// since returns what is kept from offset on, and the offset it starts at
// (later than offset when that part is no longer kept).
func (t *streamTail) since(offset int64) ([]byte, int64) {
	first := t.total - int64(len(t.buf))
	if offset < first {
		offset = first
	}
	if offset > t.total {
		offset = t.total
	}
	return append([]byte(nil), t.buf[offset-first:]...), offset
}
