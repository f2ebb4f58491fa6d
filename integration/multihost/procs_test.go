package multihost

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// buildBinary builds the command at pkg (a package path under the module
// root) into dir and returns the binary's path.
func buildBinary(t *testing.T, dir, name, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", out, pkg)
	cmd.Dir = "../.."
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, msg)
	return out
}

// freePort returns a TCP port free on loopback now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a process the test runs, restarted with the same arguments
// after a kill. Its output goes to a log file in the test's temp dir,
// printed when the test fails. With supervise, a process that exits by
// itself is started again a second later, as a restart policy (compose's
// restart: unless-stopped, systemd's Restart=) does; one the test kills or
// stops is not.
type proc struct {
	name      string
	bin       string
	args      []string
	env       []string
	log       string
	supervise bool

	// life orders starts against kills and stops: a supervised restart
	// never races a stop.
	life     sync.Mutex
	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	stopped  bool // by the test: kill or stop
	restarts int  // by supervision
}

// start runs the process; it runs until kill or the test's end.
func (p *proc) start(t *testing.T) {
	t.Helper()
	p.life.Lock()
	defer p.life.Unlock()
	p.mu.Lock()
	p.stopped = false
	p.mu.Unlock()
	require.NoError(t, p.launch(), "start %s", p.name)
}

// launch starts the process and the goroutine that waits for it (and,
// under supervision, starts it again when it exits by itself).
func (p *proc) launch() error {
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "==== %s start %s\n", p.name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(f, "==== %s exited %s: %v\n", p.name, time.Now().UTC().Format(time.RFC3339Nano), err)
		f.Close()
		close(done)
		p.mu.Lock()
		again := p.supervise && !p.stopped
		if again {
			p.restarts++
		}
		p.mu.Unlock()
		if again {
			time.Sleep(time.Second)
			p.life.Lock()
			defer p.life.Unlock()
			p.mu.Lock()
			stopped := p.stopped
			p.mu.Unlock()
			if !stopped {
				_ = p.launch()
			}
		}
	}()
	return nil
}

// restartCount is how many times supervision started the process again.
func (p *proc) restartCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	p.life.Lock()
	defer p.life.Unlock()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.stopped = true
	p.mu.Unlock()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL), "kill %s", p.name)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not die of SIGKILL", p.name)
	}
}

// stop ends the process with SIGTERM (SIGKILL after a while), if it runs.
func (p *proc) stop() {
	p.life.Lock()
	defer p.life.Unlock()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.stopped = true
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// dumpLogs prints the logs of procs when the test failed.
func dumpLogs(t *testing.T, procs ...*proc) {
	if !t.Failed() && os.Getenv("SANDOX_MULTIHOST_LOGS") == "" {
		return
	}
	for _, p := range procs {
		data, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		if len(data) > 64<<10 {
			data = append([]byte("...\n"), data[len(data)-64<<10:]...)
		}
		t.Logf("---- log of %s ----\n%s", p.name, bytes.TrimSpace(data))
	}
}

// eventually calls try until it returns nil, for at most d, and fails the
// test with what and try's last error when it never does.
func eventually(t *testing.T, d time.Duration, what string, try func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, d, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
