package natsd

import (
	"fmt"
	"net/url"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster makes the server one node of a NATS cluster: it listens for
// routes on Host:Port and connects to Routes (nats-route://host:port, the
// other nodes; its own address may be among them). JetStream then runs
// clustered, and streams and buckets can be replicated (see
// state.Replicas in services/orchestrator/state). Port 0 leaves the server alone.
type Cluster struct {
	Name   string
	Host   string
	Port   int
	Routes []string
}

func (c Cluster) apply(opts *server.Options) error {
	if c.Port == 0 {
		return nil
	}
	if c.Name == "" {
		return fmt.Errorf("cluster: no name")
	}
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: c.Host, Port: c.Port}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		if err != nil {
			return fmt.Errorf("cluster route %q: %w", r, err)
		}
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}
