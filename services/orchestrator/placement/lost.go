package placement

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// detectLost marks lost every other host not heard from for LostAfter,
// judged on this worker's clock (state.Store.HostSilence): it runs every
// heartbeat, so the judgement follows each host's record. The
// compare-and-set on the host's record lets one worker do it; that worker
// marks the host's sandboxes lost, releases its ledger and answers the
// commands queued for it (Lost.FailQueued).
func (h *Hosts) detectLost(ctx context.Context) {
	names, err := h.store.HostNames(ctx)
	if err != nil {
		h.log.Warn("list hosts", "err", err)
		return
	}
	for _, name := range names {
		if name == h.cfg.Host {
			continue
		}
		rec, silent, err := h.store.HostSilence(ctx, name)
		if err != nil || rec.State != schemas.HostUp || silent <= h.cfg.LostAfter {
			continue
		}
		claimed := false
		rec, err = h.store.UpdateHost(ctx, name, state.ErrUnchanged, func(hs *schemas.HostStatus) error {
			claimed = false // a retry after another worker's write starts afresh
			// A heartbeat since the read (another LastSeen) is a sign of
			// life, whatever the clocks say.
			if hs.State != schemas.HostUp || !hs.LastSeen.Equal(rec.LastSeen) {
				return state.ErrUnchanged
			}
			hs.State, hs.LostAt, claimed = schemas.HostLost, time.Now().UTC(), true
			return nil
		})
		if err != nil || !claimed {
			continue
		}
		h.log.Warn("host lost: no heartbeat", "host", name, "last_seen", rec.LastSeen)
		if err := h.markHostLost(ctx, rec); err != nil {
			h.log.Warn("mark the sandboxes of a lost host", "host", name, "err", err)
		}
		if err := h.lost.FailQueued(ctx, name); err != nil {
			h.log.Warn("answer the commands queued for a lost host", "host", name, "err", err)
		}
	}
}

// markHostLost marks lost, with an exited event (reason host_lost), every
// sandbox on host rec; forgets its pooled sandboxes that no one claimed;
// and releases everything the host's ledger holds.
func (h *Hosts) markHostLost(ctx context.Context, rec schemas.HostStatus) error {
	ids, err := h.store.SandboxIDs(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		st, _, err := h.store.Sandbox(ctx, id)
		if err != nil || st.Host != rec.Name {
			continue
		}
		if st.Pooled && st.ClaimedBy == "" {
			errs = append(errs, h.store.DeleteSandbox(ctx, id))
			continue
		}
		if st.Pooled {
			continue // the link of a claimed sandbox, which is marked itself
		}
		h.lost.MarkLost(ctx, id, "", schemas.LostHost, fmt.Sprintf("its host %s has not been heard from since %s", rec.Name, rec.LastSeen.Format(time.RFC3339)))
	}
	if rec.EngineID != "" {
		errs = append(errs, h.store.UpdateLedger(ctx, state.LedgerKey(rec.EngineID), func(l *resources.Ledger) error {
			if len(l.Allocations) == 0 {
				return state.ErrUnchanged
			}
			clear(l.Allocations)
			return nil
		}))
	}
	return errors.Join(errs...)
}
