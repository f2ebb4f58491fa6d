package python

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// process is one running host. Only stop, release and capture.read are safe
// for concurrent use; Host serializes the rest.
type process struct {
	cmd       *exec.Cmd
	requests  *os.File // write end of fd 3
	responses *os.File // read end of fd 4
	capture   *capture // the files behind fds 5 and 6
	log       *tailBuffer
	hello     hello

	lines chan []byte   // lines read from responses; closed at EOF
	quit  chan struct{} // closed by stop: the reader gives up
	wg    sync.WaitGroup

	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // cmd.Wait's error, set before exited closes

	nextID   uint64
	stopOnce sync.Once
}

// errExited reports a host that exited while the executor waited for it.
type errExited struct{ state string }

func (e *errExited) Error() string { return "python tool host exited (" + e.state + ")" }

// startProcess launches the host script on cfg.Dir and waits for its hello
// until ctx is done, or for startTimeout when ctx has no deadline.
func startProcess(ctx context.Context, cfg Config, script string) (*process, error) {
	p, err := launch(cfg, script)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	if err := p.awaitHello(ctx); err != nil {
		p.stop(0)
		p.release()
		return nil, err
	}
	return p, nil
}

// launch starts the host process with its protocol pipes and capture files.
func launch(cfg Config, script string) (_ *process, err error) {
	var cleanup []func()
	defer func() {
		if err != nil {
			for i := len(cleanup) - 1; i >= 0; i-- {
				cleanup[i]()
			}
		}
	}()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, func() { reqR.Close(); reqW.Close() })
	respR, respW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, func() { respR.Close(); respW.Close() })
	capt, err := newCapture()
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, capt.close)

	p := &process{
		requests:  reqW,
		responses: respR,
		capture:   capt,
		log:       &tailBuffer{max: 8 << 10},
		lines:     make(chan []byte),
		quit:      make(chan struct{}),
		exited:    make(chan struct{}),
	}
	p.cmd = exec.Command(cfg.Python, script, cfg.Dir)
	p.cmd.Dir = cfg.Dir
	p.cmd.Env = hostEnv(cfg.Env)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log // the host's own output, not a call's
	p.cmd.ExtraFiles = make([]*os.File, 4)
	p.cmd.ExtraFiles[fdRequests] = reqR
	p.cmd.ExtraFiles[fdResponses] = respW
	p.cmd.ExtraFiles[fdStdout] = capt.stdout
	p.cmd.ExtraFiles[fdStderr] = capt.stderr
	p.cmd.WaitDelay = time.Second // in case a child process keeps the output pipe open
	ownProcessGroup(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", cfg.Python, err)
	}
	reqR.Close() // the child's ends
	respW.Close()
	p.wg.Add(2)
	go p.read()
	go p.wait()
	return p, nil
}

// awaitHello reads the host's first message.
func (p *process) awaitHello(ctx context.Context) error {
	line, err := p.receive(ctx)
	if err != nil {
		return p.startError(err)
	}
	if err := json.Unmarshal(line, &p.hello); err != nil || p.hello.Op != "hello" {
		return fmt.Errorf("python tool host: want a hello message, got %.200q", line)
	}
	if p.hello.Protocol != protocolVersion {
		return fmt.Errorf("python tool host speaks protocol %d, want %d", p.hello.Protocol, protocolVersion)
	}
	return nil
}

func (p *process) startError(err error) error {
	var exited *errExited
	if errors.As(err, &exited) {
		if out := strings.TrimSpace(p.log.String()); out != "" {
			return fmt.Errorf("python tool host exited before it was ready (%s): %s", exited.state, out)
		}
		return fmt.Errorf("python tool host exited before it was ready (%s)", exited.state)
	}
	return fmt.Errorf("python tool host not ready: %w", err)
}

// hostEnv is env (the executor's environment when nil) with the settings the
// host relies on in front, so env can still override them.
func hostEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append([]string{
		"PYTHONUNBUFFERED=1", // prints and child output interleave in order
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONIOENCODING=utf-8",
	}, env...)
}

// read forwards the lines the host writes until EOF or stop.
func (p *process) read() {
	defer p.wg.Done()
	defer close(p.lines)
	r := bufio.NewReader(p.responses)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		select {
		case p.lines <- line:
		case <-p.quit:
			return
		}
	}
}

func (p *process) wait() {
	defer p.wg.Done()
	p.waitErr = p.cmd.Wait()
	close(p.exited)
}

// receive returns the host's next line. Errors are ctx's, or *errExited.
func (p *process) receive(ctx context.Context) ([]byte, error) {
	select {
	case line, ok := <-p.lines:
		if ok {
			return line, nil
		}
		<-p.exited
	case <-p.exited:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return nil, &errExited{state: p.exitState()}
}

func (p *process) exitState() string {
	if st := p.cmd.ProcessState; st != nil {
		return st.String()
	}
	return p.waitErr.Error()
}

// call sends req and waits for its response. Errors are ctx's, *errExited,
// or a protocol error; after any of them the process is no longer usable.
func (p *process) call(ctx context.Context, req request) (response, error) {
	p.nextID++
	req.ID = p.nextID
	req.Op = "call"
	line, err := json.Marshal(req)
	if err != nil {
		return response{}, err
	}
	dl, _ := ctx.Deadline() // zero, no deadline, when ctx has none
	p.requests.SetWriteDeadline(dl)
	if _, err := p.requests.Write(append(line, '\n')); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return response{}, context.DeadlineExceeded
		}
		select { // a broken pipe: the host is gone or going
		case <-p.exited:
			return response{}, &errExited{state: p.exitState()}
		case <-ctx.Done():
			return response{}, ctx.Err()
		}
	}
	line, err = p.receive(ctx)
	if err != nil {
		return response{}, err
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return response{}, fmt.Errorf("python tool host protocol: %w", err)
	}
	if resp.ID != req.ID {
		return response{}, fmt.Errorf("python tool host protocol: got reply %d, want %d", resp.ID, req.ID)
	}
	return resp, nil
}

// stop ends the host: it closes the request pipe (an idle host then exits
// by itself), waits up to grace, then kills the host's process group, which
// also ends what tool functions left running. It blocks until the host has
// exited and the reader has returned. The capture files stay readable until
// release. Calling stop again is a no-op.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		p.requests.Close()
		if grace > 0 {
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
		}
		killProcessGroup(p.cmd.Process)
		<-p.exited
		close(p.quit)
		p.responses.Close()
		p.wg.Wait()
	})
}

// release closes the capture files. It is safe to call more than once.
func (p *process) release() { p.capture.close() }

// tailBuffer keeps the last max bytes written to it. It is safe for
// concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, data...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(data), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
