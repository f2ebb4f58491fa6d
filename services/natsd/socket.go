package natsd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
)

// serveSocket serves NATS clients on a Unix socket at path, each connection
// joined to an in-process connection of s, until s shuts down. Sandboxes
// have no network at all and reach NATS through this socket alone. The
// socket is made connectable by every uid (0666): credentials, not file
// modes, decide who gets in.
func serveSocket(s *server.Server, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return fmt.Errorf("socket %s: %w", path, err)
	}
	var wg sync.WaitGroup
	go func() {
		s.WaitForShutdown()
		ln.Close()
	}()
	go func() {
		defer wg.Wait()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed at shutdown
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				join(s, c)
			}()
		}
	}()
	return nil
}

// join copies bytes both ways between c and a new in-process connection
// until either side closes.
func join(s *server.Server, c net.Conn) {
	defer c.Close()
	in, err := s.InProcessConn()
	if err != nil {
		return
	}
	defer in.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(in, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, in); done <- struct{}{} }()
	<-done
}
