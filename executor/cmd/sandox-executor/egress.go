package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
)

// proxyAddr is where programs in the sandbox find the egress proxy
// (HTTP_PROXY, set by the orchestrator).
const proxyAddr = "127.0.0.1:3128"

// forwardEgress serves proxyAddr on the sandbox's loopback and joins each
// connection to the egress proxy's Unix socket, until ctx ends. The proxy
// outside decides what may pass. The returned func stops listening and
// waits for every goroutine it started.
func forwardEgress(ctx context.Context, socket string, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", proxyAddr)
	if err != nil {
		return nil, fmt.Errorf("egress proxy forwarder: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				up, err := (&net.Dialer{}).DialContext(ctx, "unix", socket)
				if err != nil {
					log.Warn("egress proxy unreachable", "err", err)
					return
				}
				defer up.Close()
				// The copies end when the deferred Closes above close
				// their connections; wg waits for them too.
				done := make(chan struct{}, 2)
				wg.Add(2)
				go func() { defer wg.Done(); _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { defer wg.Done(); _, _ = io.Copy(c, up); done <- struct{}{} }()
				select {
				case <-done:
				case <-ctx.Done():
				}
			}()
		}
	}()
	return func() { ln.Close(); wg.Wait() }, nil
}
