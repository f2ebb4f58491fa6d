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
// printed when the test fails.
type proc struct {
	name string
	bin  string
	args []string
	env  []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// start runs the process; it runs until kill or the test's end.
func (p *proc) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	fmt.Fprintf(f, "==== %s start %s\n", p.name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	require.NoError(t, cmd.Start(), "start %s", p.name)
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
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
	p.mu.Lock()
	cmd, done := p.cmd, p.done
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
