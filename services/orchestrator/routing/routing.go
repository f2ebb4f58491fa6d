// Package routing sends each command to the host whose workers must run
// it: it says which host that is (Route), forwards a command there on the
// host's subject (Forward), passes a create that this host's admission
// refused on to the next host (RetryElsewhere), and has another host's
// workers run a part of a group command (Delegate).
package routing

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Config is what a Router reads of the orchestrator's configuration.
type Config struct {
	// Host is the worker's host.
	Host string
	// Heartbeat is how often hosts write their records: a delegated
	// command checks that its host is still live at this interval.
	Heartbeat time.Duration
}

// Placer chooses the host of a new sandbox. *placement.Placer implements
// it; its doc comments say what each call does.
type Placer interface {
	Place(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec) (string, error)
	LiveHosts(ctx context.Context) (map[string]schemas.HostStatus, error)
	On(ctx context.Context, hosts map[string]schemas.HostStatus, g schemas.GroupStatus, spec schemas.SandboxSpec) (string, error)
}

// Hosts tells which hosts are this worker's and which are live.
// *placement.Hosts implements it.
type Hosts interface {
	Here(host string) bool
	Live(ctx context.Context, host string) bool
}

// Router routes commands between hosts. It is safe for concurrent use.
type Router struct {
	cfg    Config
	store  *state.Store
	placer Placer
	hosts  Hosts
	js     jetstream.JetStream
	nc     *nats.Conn
	// previous returns the result already published for a command id.
	previous func(ctx context.Context, id string) (schemas.CommandResult, bool)
	log      *slog.Logger
}

// New returns the router of cfg.Host. previous returns the result
// already published for a command id, so that a delegated part that was
// answered is not sent again; js stores forwarded commands and nc waits
// for their results.
func New(cfg Config, store *state.Store, placer Placer, hosts Hosts, js jetstream.JetStream, nc *nats.Conn,
	previous func(ctx context.Context, id string) (schemas.CommandResult, bool), log *slog.Logger) *Router {
	return &Router{cfg: cfg, store: store, placer: placer, hosts: hosts, js: js, nc: nc, previous: previous, log: log}
}
