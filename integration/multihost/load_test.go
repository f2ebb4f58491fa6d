package multihost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// Deadlines of the load: every wait has one, so nothing can hang. A create
// may wait for a redelivery (the command's AckWait, 30 s) after its worker
// is killed, and then for the sandbox to start.
const (
	commandTimeout = 90 * time.Second
	batchTimeout   = 30 * time.Second
)

// typedErrors are the error classes a batch may end with when the bus or a
// worker goes under it: anything else (an untyped error) fails the test.
var typedErrors = []error{sdk.ErrSandboxGone, sdk.ErrTimeout, sdk.ErrUnavailable, sdk.ErrNotFound, sdk.ErrClosed}

// typed reports whether err wraps one of the SDK's error classes.
func typed(err error) bool {
	for _, e := range typedErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// batchOutcome is what one batch got: its observations, or an error.
type batchOutcome struct {
	sandbox string
	marker  string
	obs     []schemas.Observation
	err     error
	sent    time.Time
	took    time.Duration
}

// ok reports whether the batch got its one observation, successful and
// with the marker it echoed.
func (b batchOutcome) ok() bool {
	return b.err == nil && len(b.obs) == 1 && b.obs[0].Error == nil && strings.Contains(b.obs[0].Stdout, b.marker)
}

// sandboxRun is what the load did with one sandbox.
type sandboxRun struct {
	group, id string
	sb        *sdk.Sandbox
	createErr error
	startErr  error
	// creates and starts count the tries of each command; existed, the
	// creates answered already_exists.
	creates, starts, existed int
	// remade counts the half-made sandboxes ended and made again.
	remade  int
	started time.Time // when its start returned
	batches []batchOutcome
}

// load drives the sandboxes of the test: it records every outcome and
// calls onStarted each time a sandbox starts.
type load struct {
	mu   sync.Mutex
	runs []*sandboxRun
	// started counts the sandboxes started so far.
	started   int
	onStarted func(n int)
}

// echoBatch is a batch of one shell command that echoes marker.
func echoBatch(marker string) schemas.Actions {
	return schemas.Actions{{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command": "echo ` + marker + `"}`)}}
}

// send runs one batch on sb and records it.
func (l *load) send(ctx context.Context, run *sandboxRun, marker string) batchOutcome {
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	out := batchOutcome{sandbox: run.id, marker: marker, sent: time.Now()}
	out.obs, out.err = run.sb.SendActions(ctx, echoBatch(marker))
	out.took = time.Since(out.sent)
	l.mu.Lock()
	run.batches = append(run.batches, out)
	l.mu.Unlock()
	return out
}

// driveGroup creates and starts the sandboxes of g one after another, as
// one client of the group does, so that spread placement sees each one
// before it places the next; each sandbox, once it runs, is sent batches
// batches one after another while the next is created.
func (l *load) driveGroup(ctx context.Context, g *sdk.SandboxGroup, ids []string, batches int) {
	var senders sync.WaitGroup
	defer senders.Wait()
	for _, id := range ids {
		run := l.createAndStart(ctx, g, id)
		if run.createErr != nil || run.startErr != nil {
			continue
		}
		senders.Go(func() {
			for k := range batches {
				l.send(ctx, run, fmt.Sprintf("%s-b%d", id, k))
			}
		})
	}
}

// createAndStart creates and starts sandbox id of g, and records the run.
func (l *load) createAndStart(ctx context.Context, g *sdk.SandboxGroup, id string) *sandboxRun {
	run := &sandboxRun{group: g.ID(), id: id}
	l.mu.Lock()
	l.runs = append(l.runs, run)
	l.mu.Unlock()
	var sb *sdk.Sandbox
	err := retry(ctx, &run.creates, func(ctx context.Context, again bool) (err error) {
		sb, err = g.CreateSandbox(ctx, id, sdk.SandboxOptions{})
		if !errors.Is(err, sdk.ErrAlreadyExists) {
			return err
		}
		// No one else makes this run's ids: a try that seemed lost made
		// it, or (on the first try) the command was redelivered after its
		// worker died partway and its own earlier delivery made the record
		// (docs/architecture.md, known gaps). The sandbox exists once; a
		// lost one is ended and made again, as its error says to.
		run.existed++
		sb = g.Attach(id)
		st, serr := sb.Refresh(ctx)
		if errors.Is(serr, sdk.ErrNotFound) {
			// An earlier try's create, redelivered, found its sandbox
			// half-made and is removing it to make it again: for a moment
			// there is no record. The next try finds the sandbox or makes
			// it.
			return fmt.Errorf("%w: sandbox %s was being made again: %w", sdk.ErrUnavailable, id, serr)
		}
		if serr != nil {
			return serr
		}
		if st.State == schemas.StateLost {
			if eerr := sb.End(ctx); eerr != nil {
				return eerr
			}
			return fmt.Errorf("%w: sandbox %s was lost; made again", sdk.ErrUnavailable, id)
		}
		return nil
	})
	l.mu.Lock()
	run.sb, run.createErr = sb, err
	l.mu.Unlock()
	if err != nil {
		return run
	}
	err = retry(ctx, &run.starts, func(ctx context.Context, _ bool) error { return sb.Start(ctx) })
	if err != nil && run.existed > 0 && errors.Is(err, sdk.ErrConflict) && run.remade == 0 {
		// A create whose worker died between recording the sandbox and
		// creating its container leaves a record without a container
		// until the work queue delivers that create again (after its 30 s
		// ack wait), which then finishes it (Worker.redeliveredCreate).
		// A retry of the create under a new command id meanwhile answers
		// already_exists, and a start answers conflict. The client does
		// not wait for the redelivery: it ends the sandbox and makes it
		// again, once.
		run.remade++
		if eerr := sb.End(ctx); eerr == nil || errors.Is(eerr, sdk.ErrNotFound) {
			err = retry(ctx, &run.creates, func(ctx context.Context, _ bool) (err error) {
				sb, err = g.CreateSandbox(ctx, id, sdk.SandboxOptions{})
				return err
			})
			if err == nil {
				run.sb = sb
				err = retry(ctx, &run.starts, func(ctx context.Context, _ bool) error { return sb.Start(ctx) })
			}
		}
	}
	l.mu.Lock()
	run.startErr, run.started = err, time.Now()
	if err == nil {
		l.started++
	}
	n := l.started
	l.mu.Unlock()
	if err == nil && l.onStarted != nil {
		l.onStarted(n)
	}
	return run
}

// running returns the runs whose sandbox was created and started.
func (l *load) running() []*sandboxRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*sandboxRun
	for _, r := range l.runs {
		if r.createErr == nil && r.startErr == nil {
			out = append(out, r)
		}
	}
	return out
}

// maxTries bounds the tries of a lifecycle command; a try that found no
// stream (ErrUnavailable: the cluster was electing the stream's leader,
// which takes up to about ten seconds) waits longer before each next one.
const maxTries = 5

// retry calls try, each time with its own deadline, until it succeeds,
// fails for good, or maxTries were made. A client does what the SDK's
// errors tell it to: a command that could not be published while the
// cluster moved its leader (ErrUnavailable) or got no result in time
// (ErrTimeout) is sent again, as a new command; the others are final. again
// is true from the second try on; tries counts them.
func retry(ctx context.Context, tries *int, try func(ctx context.Context, again bool) error) error {
	var err error
	for *tries < maxTries {
		*tries++
		cctx, cancel := context.WithTimeout(ctx, commandTimeout)
		err = try(cctx, *tries > 1)
		cancel()
		if err == nil || !errors.Is(err, sdk.ErrUnavailable) && !errors.Is(err, sdk.ErrTimeout) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(1<<(*tries-1)) * time.Second):
		}
	}
	return err
}
