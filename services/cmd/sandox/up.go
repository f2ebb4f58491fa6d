package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/docker"
)

// The control plane's Docker names.
const (
	networkName   = "sandox"
	natsContainer = "sandox-nats"
	orchContainer = "sandox-orchestrator"
	// upSystem is the system name of what `sandox up` runs (the label
	// dev.sandox.system on its sandboxes): `sandox down` removes those only.
	upSystem         = "local"
	searchContainer  = "sandox-search"
	dataContainer    = "sandox-data"
	databaseNetwork  = "sandox-data"
	secretsDir       = "/var/lib/sandox/secrets"
	populateDir      = "/var/lib/sandox/populate"
	disksDir         = "/var/lib/sandox/disks"
	natsVolume       = "sandox-nats-data"
	natsSocketVolume = "sandox-nats-socket"
	natsSocketDir    = "/run/sandox-nats"
	egressNetwork    = "sandox-egress"
	egressDir        = "/var/lib/sandox/egress"
	localNATSURL     = "nats://127.0.0.1:4222"
	internalNATSURL  = "nats://sandox-nats:4222"
	controlPlaneRole = "dev.sandox.role"
)

func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	root := fs.String("repo", ".", "the sandox source tree (images are built from it)")
	pool := fs.Int("pool", 2, "sandboxes the orchestrator keeps started and ready to be claimed (docs/pools.md); 0 turns the warm pool off")
	if err := fs.Parse(args); err != nil {
		return err
	}
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

	ids, err := loadIdentities()
	if err != nil {
		return err
	}
	authority := ids.authority.AccountKey()
	authFiles, err := ids.authority.Files()
	if err != nil {
		return err
	}
	ctlFiles, err := serviceCreds(ids.authority, "orchestrator", auth.RoleControl, orchCredsFile)
	if err != nil {
		return err
	}
	searchFiles, err := serviceCreds(ids.authority, "search", auth.RoleSearch, searchCredsFile)
	if err != nil {
		return err
	}

	dataFiles, err := serviceCreds(ids.authority, "data", auth.RoleData, dataCredsFile)
	if err != nil {
		return err
	}
	neo4jPassword, err := neo4jSecret()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(populateDir, 0o755); err != nil {
		return err
	}
	dataFiles[filepath.Base(dataPasswordFile)] = neo4jPassword
	aws, err := dataAWS()
	if err != nil {
		return err
	}
	maps.Copy(dataFiles, aws.Files)

	images, err := buildImages(ctx, d, *root)
	if err != nil {
		return err
	}
	neo4jImage, qdrant := images.Neo4j, images.Qdrant
	// The groups' databases: a network of their own, which sandboxes never
	// join; the orchestrator (health checks) and the data service do.
	if _, err := d.EnsureNetwork(ctx, databaseNetwork, map[string]string{controlPlaneRole: "database-network"}); err != nil {
		return err
	}
	if _, err := d.EnsureNetwork(ctx, networkName, map[string]string{controlPlaneRole: "network"}); err != nil {
		return err
	}
	// Sandboxes whose egress is open go on bridges that the orchestrator
	// makes when the first needs one (sandox-egress, sandox-egress-1, …),
	// on subnets of its own address pool (docs/security.md).
	if err := ensureRunning(ctx, d, docker.ContainerSpec{
		Name:    natsContainer,
		Image:   build.ControlImage,
		Cmd:     []string{"sandox-nats", "-store", "/var/lib/sandox/nats", "-auth", natsAuthDir, "-socket", natsSocketDir + "/nats.sock"},
		User:    "10002:10002",
		Network: networkName,
		Aliases: []string{natsContainer},
		Labels:  map[string]string{controlPlaneRole: "nats", authorityLabel: authority},
		// The socket's volume is also mounted, read-only, into every
		// sandbox: their only way to NATS.
		Binds:                []string{natsVolume + ":/var/lib/sandox/nats", natsSocketVolume + ":" + natsSocketDir},
		PublishLocal:         map[string]string{"4222/tcp": "4222"},
		Hardened:             true,
		RestartUnlessStopped: true,
	}, func(id string) error {
		// The authority's seeds, readable by the server's uid only.
		return d.CopyDir(ctx, id, natsAuthDir, 10002, authFiles)
	}); err != nil {
		return err
	}
	nc, err := waitForNATS(ctx, localNATSURL, 30*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := ensureRunning(ctx, d, docker.ContainerSpec{
		Name:    orchContainer,
		Image:   build.ControlImage,
		Cmd:     []string{"sandox-orchestrator"},
		Network: networkName,
		Labels:  map[string]string{controlPlaneRole: "orchestrator", authorityLabel: authority},
		Env: []string{
			"SANDOX_NATS_CREDS=" + orchCredsFile,
			"SANDOX_CREDS_DIR=" + sandboxCredsDir,
			"SANDOX_NATS_URL=" + internalNATSURL,
			"SANDOX_NATS_SOCKET=" + natsSocketVolume,
			"SANDOX_WORKER=orchestrator-1",
			"SANDOX_DATABASE_NETWORK=" + databaseNetwork,
			"SANDOX_NEO4J_IMAGE=" + neo4jImage,
			"SANDOX_NEO4J_PASSWORD_FILE=" + neo4jPasswordFile,
			"SANDOX_QDRANT_IMAGE=" + qdrant.Ref,
			"SANDOX_QDRANT_DATA_DIR=" + qdrant.DataDir,
			"SANDOX_SYSTEM=" + upSystem,
			"SANDOX_POOL_SIZE=" + strconv.Itoa(*pool),
		},
		// The orchestrator drives the engine; sandboxes never get the socket.
		// It attaches the loop devices of disk limits: CAP_SYS_ADMIN for the
		// loop ioctls, CAP_MKNOD and the loop devices (block major 7, and
		// /dev/loop-control) for their nodes, the host's /dev so that loop
		// devices made after it started appear, and the disk images on the
		// host, where the engine mounts them.
		Binds: []string{
			"/var/run/docker.sock:/var/run/docker.sock",
			"/dev:/dev",
			disksDir + ":" + disksDir,
			// Each sandbox's credentials file, and its allowlist proxy's
			// socket, bound from the host into it.
			sandboxCredsDir + ":" + sandboxCredsDir,
			egressDir + ":" + egressDir,
		},
		CapAdd:               []string{"SYS_ADMIN", "MKNOD"},
		DeviceRules:          []string{"b 7:* rwm", "c 10:237 rwm"},
		RestartUnlessStopped: true,
	}, func(id string) error {
		if err := d.ConnectNetwork(ctx, databaseNetwork, id); err != nil {
			return err
		}
		return d.CopyDir(ctx, id, orchCredsDir, 0, ctlFiles)
	}); err != nil {
		return err
	}
	if err := ensureRunning(ctx, d, docker.ContainerSpec{
		Name:    dataContainer,
		Image:   build.ControlImage,
		Cmd:     []string{"sandox-data"},
		User:    "10002:10002",
		Network: networkName,
		Labels:  map[string]string{controlPlaneRole: "data", authorityLabel: authority, awsLabel: aws.Digest},
		// The embedding endpoint's key, like the databases' password and the
		// AWS credentials of s3:// sources, stays in the control plane
		// (docs/databases.md).
		Env: slices.Concat([]string{"SANDOX_NATS_URL=" + internalNATSURL, "SANDOX_NATS_CREDS=" + dataCredsFile,
			"SANDOX_NEO4J_PASSWORD_FILE=" + dataPasswordFile, "SANDOX_POPULATE_DIR=" + populateDir},
			prefixedEnv("SANDOX_EMBED_"), prefixedEnv("SANDOX_POPULATE_ALLOW="), aws.Env),
		// Local population sources (the demo's data set among them).
		Binds:                []string{populateDir + ":" + populateDir + ":ro"},
		Hardened:             true,
		RestartUnlessStopped: true,
	}, func(id string) error {
		if err := d.ConnectNetwork(ctx, databaseNetwork, id); err != nil {
			return err
		}
		return d.CopyDir(ctx, id, dataCredsDir, 10002, dataFiles)
	}); err != nil {
		return err
	}
	if err := ensureRunning(ctx, d, docker.ContainerSpec{
		Name:                 searchContainer,
		Image:                build.ControlImage,
		Cmd:                  []string{"sandox-search"},
		User:                 "10002:10002",
		Network:              networkName,
		Labels:               map[string]string{controlPlaneRole: "search", authorityLabel: authority},
		Env:                  append([]string{"SANDOX_NATS_URL=" + internalNATSURL, "SANDOX_NATS_CREDS=" + searchCredsFile}, searchEnv()...),
		Hardened:             true,
		RestartUnlessStopped: true,
	}, func(id string) error {
		return d.CopyDir(ctx, id, searchCredsDir, 10002, searchFiles)
	}); err != nil {
		return err
	}
	if err := waitForConsumer(ctx, nc, 60*time.Second); err != nil {
		return err
	}
	if err := writeNATSContext(localNATSURL, ids.clientCreds); err != nil {
		return err
	}
	fmt.Printf("sandox is up: NATS at %s, orchestrator consuming %s, client credentials in %s\n", localNATSURL, schemas.CommandStream, ids.clientCreds)
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

// prefixedEnv passes the operator's variables with prefix to a container.
func prefixedEnv(prefix string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// Where the search service's container gets its NATS credentials.
const (
	searchCredsDir  = "/etc/sandox-search"
	searchCredsFile = searchCredsDir + "/nats.creds"
)

// searchEnv passes the search service's settings (SANDOX_SEARCH_*: the
// providers' keys and endpoints) from the operator's environment to its
// container. They go to the control plane only, never to a sandbox.
func searchEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SANDOX_SEARCH_") {
			out = append(out, kv)
		}
	}
	return out
}

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
