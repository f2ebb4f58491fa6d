package sandboxes

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/checkpoints"
	"github.com/sandox/sandox/services/orchestrator/locks"
)

// autoQueue holds the sandboxes waiting for an automatic checkpoint, each
// once however many batches changed it meanwhile. It is safe for
// concurrent use.
type autoQueue struct {
	mu      sync.Mutex
	pending map[string]bool
	wake    chan struct{}
}

func newAutoQueue() *autoQueue {
	return &autoQueue{pending: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// add queues sandbox id.
func (q *autoQueue) add(id string) {
	q.mu.Lock()
	q.pending[id] = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take removes and returns every queued sandbox.
func (q *autoQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, 0, len(q.pending))
	for id := range q.pending {
		out = append(out, id)
	}
	clear(q.pending)
	return out
}

// autoCheckpointQueue is the queue group of the subscription to batch
// results on host: every host sees each result once, and one worker of
// the host takes the checkpoint.
func autoCheckpointQueue(host string) string { return "orchestrator-checkpoints-" + host }

// RunAutoCheckpoints follows the batch results (sandox.obs.>) and, for each
// sandbox of this host whose executor said the batch changed its
// workspace (BatchResult.WorkspaceChanged, set only in groups with
// automatic checkpoints), takes an automatic checkpoint and deletes the
// automatic ones beyond the group's Keep. It returns when ctx is done.
func (s *Service) RunAutoCheckpoints(ctx context.Context) {
	if s.checkpoints == nil {
		return
	}
	q := newAutoQueue()
	sub, err := s.nc.QueueSubscribe(schemas.ObservationSubjectPrefix+">", autoCheckpointQueue(s.cfg.Host), func(m *nats.Msg) {
		if id, ok := changedWorkspace(m.Subject, m.Data); ok {
			q.add(id)
		}
	})
	if err != nil {
		s.log.Error("automatic checkpoints are off: subscribe to batch results", "err", err)
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
			for _, id := range q.take() {
				s.autoCheckpoint(ctx, id)
			}
		}
	}
}

// autoCheckpoint checkpoints sandbox id if it runs on this host and its
// group asks for automatic checkpoints, then prunes. Failures are logged:
// nobody waits for an automatic checkpoint.
func (s *Service) autoCheckpoint(ctx context.Context, id string) {
	unlock := s.locks.Lock(locks.Sandbox(id))
	defer unlock()
	st, _, err := s.store.Sandbox(ctx, id)
	if err != nil || st.Host != s.cfg.Host || st.State != schemas.StateRunning || st.Checkpoints == nil || !st.Checkpoints.Auto {
		return
	}
	log := s.log.With("sandbox", id, "group", st.GroupID)
	c, err := s.checkpoints.Take(ctx, checkpoints.Sandbox{ID: id, GroupID: st.GroupID, Container: st.Container}, "", true)
	if err != nil {
		log.Warn("automatic checkpoint", "err", err)
		return
	}
	log.Debug("automatic checkpoint", "checkpoint", c.ID, "files", c.Files, "new_bytes", c.NewBytes, "ms", c.DurationMS)
	keep := st.Checkpoints.Keep
	if keep <= 0 {
		keep = schemas.DefaultAutoKeep
	}
	if err := s.checkpoints.PruneAuto(ctx, id, keep); err != nil {
		log.Warn("prune automatic checkpoints", "err", err)
	}
}

// changedWorkspace reports which sandbox a batch result on subject says
// changed its workspace. The sandbox is the one the subject names
// (sandox.obs.<sandbox>.<batch>), which only that sandbox's executor may
// publish on; a result whose body names another sandbox is ignored, so
// that no sandbox can make another one's checkpoints.
func changedWorkspace(subject string, data []byte) (string, bool) {
	rest, ok := strings.CutPrefix(subject, schemas.ObservationSubjectPrefix)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ".")
	if !ok || id == "" {
		return "", false
	}
	var res struct {
		SandboxID        string `json:"sandbox_id"`
		WorkspaceChanged bool   `json:"workspace_changed"`
	}
	if json.Unmarshal(data, &res) != nil || !res.WorkspaceChanged || res.SandboxID != id {
		return "", false
	}
	return id, true
}
