package sdk

import (
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// replyMux routes the answers and events of one sandbox's batches to their
// futures. Per sandbox and connection it holds two subscriptions, made on
// the first batch and kept: sandox.obs.<id>.* for the answers (each batch's
// reply subject ends in its batch id) and sandox.evt.sandbox.<id> for the
// events, instead of two subscriptions made and dropped per batch. Both are
// made before the first batch is published on the same connection, so the
// server has them before it has the batch.
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
	}{{schemas.ObservationSubject(sandbox, "*"), m.onReply}, {schemas.SandboxEventSubject(sandbox), m.onEvent}} {
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

// add registers f to get its batch's answer and the sandbox's events; the
// returned func removes it.
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

// onReply hands an answer (or the server's no-responders status) to the
// future of the batch id that ends its subject; answers to batches of
// other clients are dropped.
func (m *replyMux) onReply(msg *nats.Msg) {
	batch := msg.Subject[strings.LastIndexByte(msg.Subject, '.')+1:]
	m.mu.Lock()
	f := m.futures[batch]
	m.mu.Unlock()
	if f == nil {
		return
	}
	select {
	case f.replies <- msg:
	default: // a duplicate: the first answer settles the future
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
