package sdk

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// replyMux hands one sandbox's events to its open futures. Per sandbox and
// connection it holds one subscription to sandox.evt.sandbox.<id>, made on
// the first batch and kept, instead of one made and dropped per batch. It
// is made before the first batch is published on the same connection, so
// the server has it before it has the batch. Each batch's answer still
// comes on a subscription of its own reply subject (a channel the
// connection fills directly: a shared subscription's handler would put one
// more goroutine between the answer and Future.Wait, which cost about
// 0.15 ms per round trip on the project's machine).
type replyMux struct {
	sandbox string
	subs    []*nats.Subscription

	mu      sync.Mutex
	futures map[string]*Future // open futures by batch id
}

// mux returns the connection's replyMux of sandbox, subscribing on first
// use. It is safe for concurrent use.
func (c *conn) mux(sandbox string) (*replyMux, error) {
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	if m := c.muxes[sandbox]; m != nil {
		return m, nil
	}
	m := &replyMux{sandbox: sandbox, futures: map[string]*Future{}}
	for _, sub := range []struct {
		subject string
		handle  nats.MsgHandler
	}{{schemas.SandboxEventSubject(sandbox), m.onEvent}} {
		ns, err := c.nc.Subscribe(sub.subject, sub.handle)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("%w: subscribe to %s: %w", ErrUnavailable, sub.subject, err)
		}
		m.subs = append(m.subs, ns)
	}
	if c.muxes == nil {
		c.muxes = map[string]*replyMux{}
	}
	c.muxes[sandbox] = m
	return m, nil
}

// dropMux unsubscribes the replyMux of sandbox when it has no open future
// (after the sandbox ended).
func (c *conn) dropMux(sandbox string) {
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	m := c.muxes[sandbox]
	if m == nil {
		return
	}
	m.mu.Lock()
	open := len(m.futures)
	m.mu.Unlock()
	if open == 0 {
		m.close()
		delete(c.muxes, sandbox)
	}
}

// closeMuxes unsubscribes every replyMux of the connection.
func (c *conn) closeMuxes() {
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	for id, m := range c.muxes {
		m.close()
		delete(c.muxes, id)
	}
}

func (m *replyMux) close() {
	for _, s := range m.subs {
		_ = s.Unsubscribe()
	}
}

// add registers f to get the sandbox's events; the returned func removes
// it.
func (m *replyMux) add(f *Future) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.futures[f.batchID] = f
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.futures, f.batchID)
	}
}

// onEvent hands a sandbox event to every open future of the sandbox.
func (m *replyMux) onEvent(msg *nats.Msg) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.futures {
		select {
		case f.events <- msg:
		default: // the future is not waiting; later events say the same
		}
	}
}
