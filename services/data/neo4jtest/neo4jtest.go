// Package neo4jtest starts a real Neo4j Community for tests on this
// machine, without Docker: the image's own Main (build/neo4j/Main.java) on
// the host's JDK, from the jars that build/scripts/neo4j-jars.sh fetches
// into the cache. Integration tests run the image instead.
package neo4jtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Server is a running Neo4j.
type Server struct {
	Address  string
	Password string
	cmd      *exec.Cmd
	home     string
}

// Start fetches the jars if needed and starts Neo4j on a free loopback
// port with a fresh home, and waits until Bolt answers (about 15 s).
func Start(ctx context.Context) (*Server, error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	// The cache build.DefaultConfig uses, which neo4j-jars.sh defaults to
	// as well: one copy of the jars per machine, not per checkout.
	userCache, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(userCache, "sandox", "neo4j")
	prep := exec.CommandContext(ctx, "bash", filepath.Join(root, "build", "scripts", "neo4j-jars.sh"), filepath.Join(cache, "lib"))
	prep.Dir, prep.Stdout, prep.Stderr = root, os.Stderr, os.Stderr
	if err := prep.Run(); err != nil {
		return nil, fmt.Errorf("neo4j jars: %w", err)
	}
	home, err := os.MkdirTemp("", "sandox-neo4j")
	if err != nil {
		return nil, err
	}
	s := &Server{Password: "test-password-1", home: home}
	pw := filepath.Join(home, "password")
	if err := os.WriteFile(pw, []byte(s.Password), 0o600); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s.Address = fmt.Sprintf("127.0.0.1:%d", port)
	log, err := os.Create(filepath.Join(home, "neo4j.log"))
	if err != nil {
		return nil, err
	}
	// A test's Neo4j lives for seconds to minutes: the client compiler
	// alone and the serial collector start it on about half the CPU time
	// (13 s instead of 23 s here), which the test packages that run side
	// by side share.
	s.cmd = exec.Command("java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", filepath.Join(cache, "classes")+":"+filepath.Join(cache, "lib", "*"), "Main")
	s.cmd.Env = append(os.Environ(), "NEO4J_HOME="+filepath.Join(home, "db"), "NEO4J_PASSWORD_FILE="+pw, fmt.Sprintf("NEO4J_BOLT_PORT=%d", port))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start neo4j: %w", err)
	}
	if err := s.wait(ctx, 90*time.Second); err != nil {
		s.Stop()
		out, _ := os.ReadFile(filepath.Join(home, "neo4j.log"))
		return nil, fmt.Errorf("%w\n%s", err, out)
	}
	return s, nil
}

func (s *Server) wait(ctx context.Context, max time.Duration) error {
	d, err := neo4j.NewDriverWithContext("bolt://"+s.Address, neo4j.BasicAuth("neo4j", s.Password, ""))
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	deadline := time.Now().Add(max)
	for {
		err := d.VerifyConnectivity(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("neo4j at %s not ready after %s: %w", s.Address, max, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Stop ends the server and removes its home.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		_, _ = s.cmd.Process.Wait()
	}
	_ = os.RemoveAll(s.home)
}
