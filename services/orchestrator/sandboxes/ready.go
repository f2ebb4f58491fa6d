package sandboxes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// Readiness: the executor announces on schemas.ReadySubject once it serves
// (executor.Server.announceReady). The worker subscribes there before it
// starts or restarts a container, so a start waits for that message and
// for nothing else. As a fallback (an executor that does not announce, an
// announcement lost), it pings with the reply subject set to
// schemas.ReadySubject, at intervals doubling from readyPingFirst to
// readyPingMax, and checks at each ping that the container still runs.
const (
	readyPingFirst = 20 * time.Millisecond
	readyPingMax   = 250 * time.Millisecond
)

// readyWatch receives a sandbox's readiness announcement and the answers
// to the worker's pings. Close it when done.
type readyWatch struct {
	id  string
	sub *nats.Subscription
	ch  chan *nats.Msg
}

// watchReady subscribes to sandbox id's readiness subject and flushes, so
// that an announcement sent after it returns is not missed. Call it before
// starting the container.
func (s *Service) watchReady(id string) (*readyWatch, error) {
	rw := &readyWatch{id: id, ch: make(chan *nats.Msg, 8)}
	sub, err := s.nc.ChanSubscribe(schemas.ReadySubject(id), rw.ch)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: subscribe to its readiness: %w", id, err)
	}
	rw.sub = sub
	if err := s.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("sandbox %s: subscribe to its readiness: %w", id, err)
	}
	return rw, nil
}

// Close drops the subscription.
func (rw *readyWatch) Close() { _ = rw.sub.Unsubscribe() }

// waitReady waits until the sandbox's executor is ready (see awaitReady).
func (s *Service) waitReady(ctx context.Context, st schemas.SandboxStatus, rw *readyWatch) error {
	_, err := s.awaitReady(ctx, st, rw)
	return err
}

// awaitReady waits until the sandbox's executor announces it is ready or
// answers a ping, the container stops (an error with its last log lines),
// or ReadyTimeout passes (CodeTimeout). It returns the executor's answer:
// the tool modules it serves. An answer that is not an ExecutorReady (an
// executor older than the answer) counts as ready, with no modules.
func (s *Service) awaitReady(ctx context.Context, st schemas.SandboxStatus, rw *readyWatch) (schemas.ExecutorReady, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	wait := readyPingFirst
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m := <-rw.ch:
			if len(m.Data) == 0 && m.Header.Get("Status") != "" {
				continue // no responders to a ping: not serving yet
			}
			var ready schemas.ExecutorReady
			if err := json.Unmarshal(m.Data, &ready); err != nil {
				s.log.Warn("the executor's ready answer is not an ExecutorReady", "sandbox", st.ID, "err", err)
			}
			return ready, nil
		case <-timer.C:
		case <-ctx.Done():
			return schemas.ExecutorReady{}, schemas.Errorf(schemas.CodeTimeout, "sandbox %s did not answer within %s", st.ID, s.cfg.ReadyTimeout)
		}
		if err := s.nc.PublishRequest(schemas.PingSubject(st.ID), schemas.ReadySubject(st.ID), nil); err != nil {
			s.log.Warn("ping sandbox", "sandbox", st.ID, "err", err)
		}
		if err := s.checkAlive(ctx, st); err != nil {
			return schemas.ExecutorReady{}, err
		}
		wait = min(2*wait, readyPingMax)
		timer.Reset(wait)
	}
}

// checkAlive returns an error with the container's last log lines when it
// is no longer running.
func (s *Service) checkAlive(ctx context.Context, st schemas.SandboxStatus) error {
	state, err := s.rt.Inspect(ctx, st.Container)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		if ctx.Err() != nil {
			return schemas.Errorf(schemas.CodeTimeout, "sandbox %s did not answer within %s", st.ID, s.cfg.ReadyTimeout)
		}
		return fmt.Errorf("sandbox %s: %w", st.ID, err)
	}
	if err == nil && !state.Running {
		logs, _ := s.rt.Logs(context.WithoutCancel(ctx), st.Container, 20)
		return schemas.Errorf(schemas.CodeUnavailable, "sandbox %s exited during start (exit code %d, oom killed %t): %s", st.ID, state.ExitCode, state.OOMKilled, logs)
	}
	return nil
}
