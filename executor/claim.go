package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// AwaitClaim is the life of a pooled executor before it is claimed: on nc,
// connected with the pool identity of poolID, it answers pings and serves
// schemas.ClaimSubject(poolID) only, announces that it is ready on
// schemas.ReadySubject(poolID), and returns the first valid claim, which
// it acknowledges with an empty answer when it is a request. It
// runs no action: a pooled sandbox has never run a tenant's action. The
// caller then closes nc and serves the claimed sandbox with the
// credentials the orchestrator put in place of the pool's.
func AwaitClaim(ctx context.Context, nc *nats.Conn, poolID string, log *slog.Logger) (schemas.PoolClaim, error) {
	claims := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe(schemas.ClaimSubject(poolID), claims)
	if err != nil {
		return schemas.PoolClaim{}, fmt.Errorf("subscribe to %s: %w", schemas.ClaimSubject(poolID), err)
	}
	defer sub.Unsubscribe()
	ready, err := json.Marshal(schemas.ExecutorReady{})
	if err != nil {
		return schemas.PoolClaim{}, err
	}
	ping, err := nc.Subscribe(schemas.PingSubject(poolID), func(m *nats.Msg) { _ = m.Respond(ready) })
	if err != nil {
		return schemas.PoolClaim{}, fmt.Errorf("subscribe to %s: %w", schemas.PingSubject(poolID), err)
	}
	defer ping.Unsubscribe()
	if err := nc.Flush(); err != nil {
		return schemas.PoolClaim{}, fmt.Errorf("flush subscriptions: %w", err)
	}
	if err := nc.Publish(schemas.ReadySubject(poolID), ready); err != nil {
		log.Warn("announce readiness", "sandbox", poolID, "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return schemas.PoolClaim{}, ctx.Err()
		case m := <-claims:
			var c schemas.PoolClaim
			if err := json.Unmarshal(m.Data, &c); err != nil {
				log.Warn("a claim that is not a PoolClaim", "sandbox", poolID, "err", err)
				continue
			}
			if err := schemas.ValidateID("sandbox", c.SandboxID); err != nil || schemas.IsPoolID(c.SandboxID) {
				log.Warn("a claim of a sandbox id that is not valid", "sandbox", poolID, "claimed", c.SandboxID)
				continue
			}
			// The answer tells the orchestrator the claim arrived: it
			// revokes the pool identity while this executor reconnects.
			if m.Reply != "" {
				if err := m.Respond(nil); err == nil {
					err = nc.Flush()
				}
				if err != nil {
					log.Warn("acknowledge the claim", "sandbox", poolID, "err", err)
				}
			}
			return c, nil
		}
	}
}

// ReadClaim reads the claim the orchestrator left beside the credentials
// file creds (schemas.ClaimFile): a pooled sandbox that was claimed and
// then restarted serves the claimed sandbox at once. No file (or no
// credentials) is the zero claim and no error.
func ReadClaim(creds string) (schemas.PoolClaim, error) {
	var c schemas.PoolClaim
	if creds == "" {
		return c, nil
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(creds), schemas.ClaimFile))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	} else if err != nil {
		return c, fmt.Errorf("read the claim: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("read the claim: %w", err)
	}
	if err := schemas.ValidateID("sandbox", c.SandboxID); err != nil {
		return c, fmt.Errorf("read the claim: %w", err)
	}
	return c, nil
}
