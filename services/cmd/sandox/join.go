package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/docker/docker/client"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data/awsenv"
)

// joinOptions are the flags of `sandox up -join`: another host of a
// system whose NATS (and data and search services) run on the first host.
type joinOptions struct {
	// URL is the first host's NATS as this host reaches it.
	URL string
	// Host names this host (SANDOX_HOST of its worker).
	Host string
	// Creds is a control identity's .creds file (`sandox creds -role
	// control` on the first host).
	Creds string
	// Socket is the host directory holding the first host's NATS socket,
	// forwarded to this host; its sandboxes bind it.
	Socket string
	// Dir holds this host's disks, sandbox credentials and egress
	// sockets (disks, creds, egress), the same paths inside the worker.
	Dir  string
	Pool int
}

// hostName is what a host's name may be: a NATS subject token.
var hostName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// join starts, on the engine d drives, this host's rows of the control
// plane (the orchestrator worker) pointed at the first host's NATS, with
// the databases' settings `sandox up` passes. The images must be on the
// engine already (loaded from the first host); it builds nothing.
func join(ctx context.Context, d *docker.Client, o joinOptions) error {
	if !hostName.MatchString(o.Host) {
		return fmt.Errorf("-host %q: want a host name of letters, digits, - and _ (a second host needs one)", o.Host)
	}
	if o.Creds == "" {
		return errors.New("-join needs -creds: a control identity made on the first host with `sandox creds -role control`")
	}
	data, err := os.ReadFile(o.Creds)
	if err != nil {
		return fmt.Errorf("-creds: %w", err)
	}
	if _, err := auth.ParseCreds(data); err != nil {
		return fmt.Errorf("-creds %s: %w", o.Creds, err)
	}
	if _, err := os.Stat(neo4jPasswordFile); err != nil {
		return fmt.Errorf("the groups' neo4j password: %w (copy the first host's %s here: the data service there uses it for this host's databases too)", err, neo4jPasswordFile)
	}
	if st, err := os.Stat(o.Socket); err != nil || !st.IsDir() {
		return fmt.Errorf("-nats-socket %s: want the directory holding the first host's NATS socket, forwarded here (docs/deploy.md): %v", o.Socket, err)
	}
	if _, err := d.ImageID(ctx, build.ControlImage); err != nil {
		return fmt.Errorf("%w: load the first host's images here first (docs/deploy.md)", err)
	}
	s := upSettings{Pool: o.Pool}
	if s.Neo4jImage, err = d.NewestTag(ctx, build.Neo4jRepo); err != nil {
		fmt.Printf("%v: groups with a graph database will be refused on this host\n", err)
	}
	if _, err := d.ImageID(ctx, build.QdrantOfficialImage); err == nil {
		s.QdrantImage, s.QdrantDataDir = build.QdrantOfficialImage, "/qdrant/storage"
	} else if s.QdrantImage, err = d.NewestTag(ctx, build.QdrantEdgeRepo); err == nil {
		s.QdrantDataDir = "/data"
	} else {
		fmt.Printf("%v: groups with a vector database will be refused on this host\n", err)
	}
	for _, n := range controlPlaneNetworks {
		if _, err := d.EnsureNetwork(ctx, n.Name, map[string]string{controlPlaneRole: n.Role}); err != nil {
			return err
		}
	}
	for _, c := range controlPlane(s) {
		if !c.PerHost {
			continue
		}
		c = c.joined(o)
		if err := ensureRunning(ctx, d, c.spec("", awsenv.Settings{}), func(id string) error {
			return d.CopyDir(ctx, id, c.CopyIn.Dir, c.CopyIn.UID, map[string][]byte{"nats.creds": data})
		}); err != nil {
			return err
		}
	}
	fmt.Printf("host %s joined %s: its worker %s runs on this engine\n", o.Host, o.URL, orchContainer)
	return nil
}

// joined is the row as it runs on a host that joins another's NATS: on
// the host's network (it reaches the first host's NATS at o.URL, and its
// own databases at their bridge addresses), named after the host, its
// sandboxes binding the forwarded NATS socket, and driving the engine
// `sandox up` talks to.
func (c controlPlaneContainer) joined(o joinOptions) controlPlaneContainer {
	c.Networks = []string{"host"}
	c.Aliases = nil
	c.Env = append([]setting(nil), c.Env...)
	for i, s := range c.Env {
		switch s.Key {
		case "SANDOX_NATS_URL":
			c.Env[i].Value = o.URL
		case "SANDOX_NATS_SOCKET":
			c.Env[i].Value = o.Socket
		case "SANDOX_WORKER":
			c.Env[i].Value = "orchestrator-" + o.Host
		}
	}
	c.Env = append(c.Env, setting{Key: "SANDOX_HOST", Value: o.Host})
	// The host directories under o.Dir: a worker releases what it finds
	// in them of sandboxes its system does not know, so two systems on
	// one machine must not share them.
	dirs := map[string]string{}
	for i, s := range c.Env {
		switch s.Key {
		case "SANDOX_CREDS_DIR", "SANDOX_DISKS_DIR", "SANDOX_EGRESS_DIR":
			dirs[s.Value] = filepath.Join(o.Dir, filepath.Base(s.Value))
			c.Env[i].Value = dirs[s.Value]
		}
	}
	c.Binds = append([]string(nil), c.Binds...)
	for i, b := range c.Binds {
		src, target, _ := strings.Cut(b, ":")
		switch {
		case target == "/var/run/docker.sock":
			c.Binds[i] = engineSocket() + ":/var/run/docker.sock"
		case dirs[src] != "" && src == target:
			c.Binds[i] = dirs[src] + ":" + dirs[src]
		}
	}
	return c
}

// engineSocket is the host path of the Docker engine's socket that the
// CLI talks to: DOCKER_HOST's when it is a Unix socket.
func engineSocket() string {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = client.DefaultDockerHost
	}
	if p, ok := strings.CutPrefix(host, "unix://"); ok {
		return p
	}
	return "/var/run/docker.sock"
}
