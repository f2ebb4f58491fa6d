package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
)

// The control plane's Docker names.
const (
	networkName   = "sandox"
	natsContainer = "sandox-nats"
	orchContainer = "sandox-orchestrator"
	// upSystem is the system name of what `sandox up` runs (the label
	// dev.sandox.system on its sandboxes): `sandox down` removes those only.
	upSystem           = "local"
	searchContainer    = "sandox-search"
	dataContainer      = "sandox-data"
	dashboardContainer = "sandox-dashboard"
	databaseNetwork    = "sandox-data"
	secretsDir         = "/var/lib/sandox/secrets"
	populateDir        = "/var/lib/sandox/populate"
	disksDir           = "/var/lib/sandox/disks"
	natsVolume         = "sandox-nats-data"
	natsSocketVolume   = "sandox-nats-socket"
	natsSocketDir      = "/run/sandox-nats"
	egressNetwork      = "sandox-egress"
	egressDir          = "/var/lib/sandox/egress"
	localNATSURL       = "nats://127.0.0.1:4222"
	internalNATSURL    = "nats://sandox-nats:4222"
	controlPlaneRole   = "dev.sandox.role"
)

func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	root := fs.String("repo", ".", "the sandox source tree (images are built from it)")
	pool := fs.Int("pool", 2, "sandboxes the orchestrator keeps started and ready to be claimed (docs/pools.md); 0 turns the warm pool off")
	var jo joinOptions
	fs.StringVar(&jo.URL, "join", "", "join the system whose NATS is at this URL as another host: start only this host's worker (docs/deploy.md)")
	fs.StringVar(&jo.Host, "host", "", "with -join: this host's name")
	fs.StringVar(&jo.Creds, "creds", "", "with -join: the worker's control credentials (`sandox creds -role control` on the first host)")
	fs.StringVar(&jo.Socket, "nats-socket", "/run/sandox-nats", "with -join: host directory of the first host's NATS socket, forwarded here")
	fs.StringVar(&jo.Dir, "dir", "/var/lib/sandox", "with -join: this host's directory of disks, sandbox credentials and egress sockets")
	if err := fs.Parse(args); err != nil {
		return err
	}
	jo.Pool = *pool
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	host, err := d.Host(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("docker engine %s (API %s), %d CPUs, %.1f GiB\n", host.Version, host.APIVersion, host.CPUs, float64(host.MemoryBytes)/(1<<30))
	if jo.URL != "" {
		return join(ctx, d, jo)
	}

	ids, src, err := prepareSecrets()
	if err != nil {
		return err
	}
	aws, dashToken := src.aws, src.dashboardToken

	images, err := buildImages(ctx, d, *root)
	if err != nil {
		return err
	}
	neo4jImage, qdrant := images.Neo4j, images.Qdrant
	for _, n := range controlPlaneNetworks {
		if _, err := d.EnsureNetwork(ctx, n.Name, map[string]string{controlPlaneRole: n.Role}); err != nil {
			return err
		}
	}
	// Sandboxes whose egress is open go on bridges that the orchestrator
	// makes when the first needs one (sandox-egress, sandox-egress-1, …),
	// on subnets of its own address pool (docs/security.md).
	authority := ids.authority.AccountKey()
	var nc *nats.Conn
	defer func() {
		if nc != nil {
			nc.Close()
		}
	}()
	for _, c := range controlPlane(upSettings{Neo4jImage: neo4jImage, QdrantImage: qdrant.Ref, QdrantDataDir: qdrant.DataDir, Pool: *pool}) {
		spec := c.spec(authority, aws)
		if c.CopyIn.wantsDashboardToken() {
			// A new token (the file was removed) recreates the container.
			spec.Labels[dashboardTokenLabel] = tokenDigest(dashToken)
		}
		if err := ensureRunning(ctx, d, spec, func(id string) error {
			for _, n := range c.Networks[1:] {
				if err := d.ConnectNetwork(ctx, n, id); err != nil {
					return err
				}
			}
			files, err := c.CopyIn.files(src)
			if err != nil {
				return err
			}
			return d.CopyDir(ctx, id, c.CopyIn.Dir, c.CopyIn.UID, files)
		}); err != nil {
			return err
		}
		if c.Name == natsContainer {
			if nc, err = waitForNATS(ctx, localNATSURL, 30*time.Second); err != nil {
				return err
			}
		}
	}
	if err := waitForConsumer(ctx, nc, 60*time.Second); err != nil {
		return err
	}
	if err := writeNATSContext(localNATSURL, ids.clientCreds); err != nil {
		return err
	}
	fmt.Printf("sandox is up: NATS at %s, orchestrator consuming %s, client credentials in %s\n", localNATSURL, schemas.CommandStream, ids.clientCreds)
	fmt.Printf("dashboard at %s\n", dashboardURL(dashToken))
	return nil
}

// Where the data service's container gets its NATS credentials and the
// neo4j password, and where that password lives on the host (bound into
// every Neo4j container by the orchestrator).
const (
	dataCredsDir      = "/etc/sandox-data"
	dataCredsFile     = dataCredsDir + "/nats.creds"
	dataPasswordFile  = dataCredsDir + "/neo4j-password"
	neo4jPasswordFile = secretsDir + "/neo4j-password"
)

// neo4jSecret returns the neo4j password of this host's groups, made once
// (32 random hex digits) in secretsDir, readable by root only.
func neo4jSecret() ([]byte, error) {
	if data, err := os.ReadFile(neo4jPasswordFile); err == nil {
		return data, nil
	}
	if err := os.MkdirAll(secretsDir, 0o700); err != nil {
		return nil, err
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	pw := []byte(hex.EncodeToString(raw))
	return pw, os.WriteFile(neo4jPasswordFile, pw, 0o600)
}

// Where the search service's container gets its NATS credentials.
const (
	searchCredsDir  = "/etc/sandox-search"
	searchCredsFile = searchCredsDir + "/nats.creds"
)

// ensureRunning starts the container named in spec, creating it first when
// it does not exist, and recreating it when its image, one of its labels
// (the authority) or one of its settings (its SANDOX_* variables, such as
// the search service's providers and the data service's embedder) changed.
// prepare runs between create and start.
func ensureRunning(ctx context.Context, d *docker.Client, spec docker.ContainerSpec, prepare func(id string) error) error {
	imageID, err := d.ImageID(ctx, spec.Image)
	if err != nil {
		return err
	}
	spec.Labels["dev.sandox.image"] = imageID
	if st, err := d.Inspect(ctx, spec.Name); err == nil {
		if st.Running && hasLabels(st.Labels, spec.Labels) && sameSettings(st.Env, spec.Env) {
			fmt.Printf("%s is running\n", spec.Name)
			return nil
		}
		if err := d.Remove(ctx, spec.Name); err != nil {
			return err
		}
	}
	id, err := d.Create(ctx, spec)
	if err != nil {
		return err
	}
	if err := prepare(id); err != nil {
		return errors.Join(err, d.Remove(context.WithoutCancel(ctx), id))
	}
	if err := d.Start(ctx, id); err != nil {
		return err
	}
	fmt.Printf("%s started\n", spec.Name)
	return nil
}

// sameSettings reports whether a container's environment got holds the
// same SANDOX_* variables as want, no more and no fewer.
func sameSettings(got, want []string) bool {
	settings := func(env []string) []string {
		out := slices.DeleteFunc(slices.Clone(env), func(e string) bool { return !strings.HasPrefix(e, "SANDOX_") })
		slices.Sort(out)
		return out
	}
	return slices.Equal(settings(got), settings(want))
}

func hasLabels(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func waitForNATS(ctx context.Context, url string, within time.Duration) (*nats.Conn, error) {
	deadline := time.Now().Add(within)
	for {
		nc, err := connect(url, time.Second)
		if err == nil {
			return nc, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("NATS at %s did not answer within %s: %w (see `docker logs %s`)", url, within, err, natsContainer)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitForConsumer waits until an orchestrator has created the shared
// command consumer, the sign that it consumes.
func waitForConsumer(ctx context.Context, nc *nats.Conn, within time.Duration) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for {
		if _, err := js.Consumer(ctx, schemas.CommandStream, schemas.CommandConsumer); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the orchestrator did not start consuming within %s (see `docker logs %s`)", within, orchContainer)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
