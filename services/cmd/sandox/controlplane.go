package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data/awsenv"
)

// controlPlaneContainer is one container of the control plane: what
// `sandox up` creates, and what compose.yaml describes the same way
// (TestComposeMatchesTable compares the two).
type controlPlaneContainer struct {
	// Service is its name in compose.yaml, Name its container's name and
	// Role its dev.sandox.role label.
	Service, Name, Role string
	Cmd                 []string
	// User is "uid:gid"; "" runs as the image's user (root).
	User string
	// Networks are joined in order: the first when the container is
	// created (with Aliases), the others before it starts.
	Networks []string
	Aliases  []string
	// Binds are "host-path-or-volume:container-path[:ro]".
	Binds []string
	// Env are its fixed settings and those `sandox up` computes; Pass
	// the prefixes of the operator's variables it gets as they are (a
	// prefix ending in "=" is one variable).
	Env  []setting
	Pass []string
	// CapAdd and DeviceRules are what it gets beyond the engine's default;
	// Hardened drops every capability and forbids gaining privileges.
	CapAdd      []string
	DeviceRules []string
	Hardened    bool
	// Publish maps container ports ("4222/tcp") to ports on 127.0.0.1.
	Publish map[string]string
	// AWS gives it the operator's AWS settings (awsenv.ForContainer: the
	// AWS_* variables, the shared files copied in with its secrets), and
	// the label awsLabel with their digest, so that new settings recreate
	// it.
	AWS bool
	// CopyIn are the secrets copied into it between create and start.
	// Compose cannot copy: it binds the same files read-only instead.
	CopyIn secretDir
	// PerHost marks what runs on every Docker host (the orchestrator
	// worker); the others run once, on the first host, beside NATS.
	PerHost bool
}

// setting is one SANDOX_* variable of a control-plane container.
type setting struct {
	Key, Value string
	// Variable marks a value `sandox up` computes (an image it built, a
	// flag): compose.yaml takes it from the variable of the same name.
	Variable bool
}

// secretDir is a directory of secret files copied into a container,
// owned by UID, each file readable by that uid only.
type secretDir struct {
	Dir   string
	UID   int
	Files []secret
}

// secret is one file of a secretDir, or, for the authority's seeds, all
// of the directory.
type secret struct {
	// Name is the file's name in the directory; "" with Authority.
	Name string
	// Authority: the NATS authority's seed files (the whole directory).
	Authority bool
	// Identity and Role: NATS credentials of that role, minted for it.
	Identity string
	Role     auth.Role
	// Neo4jPassword: the groups' neo4j password.
	Neo4jPassword bool
	// AWS: copies of the operator's shared AWS files (with their own
	// names, which the container's AWS_* variables name).
	AWS bool
	// DashboardToken: the token the dashboard's pages want
	// (~/.config/sandox/dashboard.token, made once).
	DashboardToken bool
}

// controlPlaneNetwork is a network of the control plane with its
// dev.sandox.role label.
type controlPlaneNetwork struct{ Name, Role string }

// controlPlaneNetworks are made before any container, in this order: the
// groups' databases' network, which sandboxes never join (the
// orchestrator health-checks the databases there and the data service
// talks to them), and the control plane's own.
var controlPlaneNetworks = []controlPlaneNetwork{
	{databaseNetwork, "database-network"},
	{networkName, "network"},
}

// upSettings are what `sandox up` computes before it starts the control
// plane: the databases' images it built and its flags.
type upSettings struct {
	Neo4jImage    string
	QdrantImage   string
	QdrantDataDir string
	Pool          int
}

// controlPlane returns the control plane's containers in the order
// `sandox up` starts them (NATS first: the others connect to it).
func controlPlane(s upSettings) []controlPlaneContainer {
	return []controlPlaneContainer{
		{
			Service: "nats", Name: natsContainer, Role: "nats",
			Cmd:      []string{"sandox-nats", "-store", "/var/lib/sandox/nats", "-auth", natsAuthDir, "-socket", natsSocketDir + "/nats.sock"},
			User:     "10002:10002",
			Networks: []string{networkName},
			Aliases:  []string{natsContainer},
			// The socket's volume is also mounted, read-only, into every
			// sandbox: their only way to NATS.
			Binds:    []string{natsVolume + ":/var/lib/sandox/nats", natsSocketVolume + ":" + natsSocketDir},
			Publish:  map[string]string{"4222/tcp": "4222"},
			Hardened: true,
			// The authority's seeds, readable by the server's uid only.
			CopyIn: secretDir{Dir: natsAuthDir, UID: 10002, Files: []secret{{Authority: true}}},
		},
		{
			Service: "orchestrator", Name: orchContainer, Role: "orchestrator",
			Cmd:      []string{"sandox-orchestrator"},
			Networks: []string{networkName, databaseNetwork},
			Env: []setting{
				{Key: "SANDOX_NATS_CREDS", Value: orchCredsFile},
				{Key: "SANDOX_CREDS_DIR", Value: sandboxCredsDir},
				{Key: "SANDOX_DISKS_DIR", Value: disksDir},
				{Key: "SANDOX_EGRESS_DIR", Value: egressDir},
				{Key: "SANDOX_NATS_URL", Value: internalNATSURL},
				{Key: "SANDOX_NATS_SOCKET", Value: natsSocketVolume},
				{Key: "SANDOX_WORKER", Value: "orchestrator-1"},
				{Key: "SANDOX_DATABASE_NETWORK", Value: databaseNetwork},
				{Key: "SANDOX_NEO4J_IMAGE", Value: s.Neo4jImage, Variable: true},
				{Key: "SANDOX_NEO4J_PASSWORD_FILE", Value: neo4jPasswordFile},
				{Key: "SANDOX_QDRANT_IMAGE", Value: s.QdrantImage, Variable: true},
				{Key: "SANDOX_QDRANT_DATA_DIR", Value: s.QdrantDataDir, Variable: true},
				{Key: "SANDOX_SYSTEM", Value: upSystem},
				{Key: "SANDOX_POOL_SIZE", Value: strconv.Itoa(s.Pool), Variable: true},
			},
			// The worker's tuning, as the operator sets it (docs/settings.md):
			// none of it changes where things are, only how the worker
			// behaves; what up and down depend on (networks, directories,
			// the sandboxes' NATS URL) stays fixed above.
			Pass: []string{
				"SANDOX_RUNTIME=", "SANDOX_SANDBOX_IMAGE=", "SANDOX_CONCURRENCY=", "SANDOX_READY_TIMEOUT=",
				"SANDOX_RESTART_GRACE=", "SANDOX_BUS_WAIT=", "SANDOX_HOST_HEARTBEAT=", "SANDOX_HOST_LOST_AFTER=",
				"SANDOX_REPLICAS=", "SANDOX_EVENTS_MAX_AGE=", "SANDOX_EVENTS_MAX_BYTES=", "SANDOX_IMAGE_GC_INTERVAL=",
				"SANDOX_IMAGE_GC_MAX_AGE=", "SANDOX_IMAGE_GC_KEEP=", "SANDOX_POOL_IDLE=", "SANDOX_EGRESS_SHARD_CAPACITY=",
				"SANDOX_EGRESS_POOL=", "SANDOX_EGRESS_POOL_SIZE=", "SANDOX_STREAM_BUDGET=", "SANDOX_WEBHOOK_ALLOW=",
			},
			// The orchestrator drives the engine; sandboxes never get the
			// socket. It attaches the loop devices of disk limits:
			// CAP_SYS_ADMIN for the loop ioctls, CAP_MKNOD and the loop
			// devices (block major 7, and /dev/loop-control) for their
			// nodes, the host's /dev so that loop devices made after it
			// started appear, and the disk images on the host, where the
			// engine mounts them.
			Binds: []string{
				"/var/run/docker.sock:/var/run/docker.sock",
				"/dev:/dev",
				disksDir + ":" + disksDir,
				// Each sandbox's credentials file, and its allowlist
				// proxy's socket, bound from the host into it.
				sandboxCredsDir + ":" + sandboxCredsDir,
				egressDir + ":" + egressDir,
			},
			CapAdd:      []string{"SYS_ADMIN", "MKNOD"},
			DeviceRules: []string{"b 7:* rwm", "c 10:237 rwm"},
			CopyIn:      secretDir{Dir: orchCredsDir, UID: 0, Files: []secret{{Name: "nats.creds", Identity: "orchestrator", Role: auth.RoleControl}}},
			PerHost:     true,
		},
		{
			Service: "data", Name: dataContainer, Role: "data",
			Cmd:      []string{"sandox-data"},
			User:     "10002:10002",
			Networks: []string{networkName, databaseNetwork},
			// The embedding endpoint's key, like the databases' password,
			// stays in the control plane (docs/databases.md).
			Env: []setting{
				{Key: "SANDOX_NATS_URL", Value: internalNATSURL},
				{Key: "SANDOX_NATS_CREDS", Value: dataCredsFile},
				{Key: "SANDOX_NEO4J_PASSWORD_FILE", Value: dataPasswordFile},
				{Key: "SANDOX_POPULATE_DIR", Value: populateDir},
			},
			Pass: []string{"SANDOX_EMBED_", "SANDOX_POPULATE_ALLOW=", "SANDOX_NEO4J_ADDR=", "SANDOX_QDRANT_ADDR="},
			// The AWS credentials of s3:// sources, for this service only.
			AWS: true,
			// Local population sources (the demo's data set among them).
			Binds:    []string{populateDir + ":" + populateDir + ":ro"},
			Hardened: true,
			CopyIn: secretDir{Dir: dataCredsDir, UID: 10002, Files: []secret{
				{Name: "nats.creds", Identity: "data", Role: auth.RoleData},
				{Name: "neo4j-password", Neo4jPassword: true},
				{AWS: true},
			}},
		},
		{
			Service: "search", Name: searchContainer, Role: "search",
			Cmd:      []string{"sandox-search"},
			User:     "10002:10002",
			Networks: []string{networkName},
			Env: []setting{
				{Key: "SANDOX_NATS_URL", Value: internalNATSURL},
				{Key: "SANDOX_NATS_CREDS", Value: searchCredsFile},
			},
			// The search providers' keys and endpoints go to the control
			// plane only, never to a sandbox.
			// The providers' calls honour an HTTP proxy.
			Pass:     []string{"SANDOX_SEARCH_", "HTTPS_PROXY=", "HTTP_PROXY=", "NO_PROXY=", "https_proxy=", "http_proxy=", "no_proxy="},
			Hardened: true,
			CopyIn:   secretDir{Dir: searchCredsDir, UID: 10002, Files: []secret{{Name: "nats.creds", Identity: "search", Role: auth.RoleSearch}}},
		},
		{
			Service: "dashboard", Name: dashboardContainer, Role: "dashboard",
			Cmd:      []string{"sandox-dashboard"},
			User:     "10002:10002",
			Networks: []string{networkName},
			Env: []setting{
				{Key: "SANDOX_NATS_URL", Value: internalNATSURL},
				{Key: "SANDOX_NATS_CREDS", Value: dashboardCredsFile},
				{Key: "SANDOX_DASHBOARD_TOKEN_FILE", Value: dashboardTokenFile},
			},
			// Its metrics' OTLP push (docs/metrics.md).
			Pass: []string{"SANDOX_OTLP_ENDPOINT=", "SANDOX_OTLP_INTERVAL="},
			// Published on the host's loopback only; inside the container
			// it listens on every address, so it wants the token.
			Publish:  map[string]string{"8089/tcp": dashboardPort},
			Hardened: true,
			// The client role, as `sandox dashboard` mints by default:
			// a sandbox's live use is a request (sandbox.<id>.stats) that
			// audit may not send, so audit credentials would show
			// everything but it. Client could also send commands; the
			// dashboard's code sends none (its pages are GET only), and
			// client can neither write the buckets nor take commands.
			CopyIn: secretDir{Dir: dashboardCredsDir, UID: 10002, Files: []secret{
				{Name: "nats.creds", Identity: "dashboard", Role: auth.RoleClient},
				{Name: "token", DashboardToken: true},
			}},
		},
	}
}

// environ is the container's environment: its settings, then the
// operator's variables that Pass names, from environ (os.Environ()).
func (c controlPlaneContainer) environ(environ []string) []string {
	var out []string
	for _, s := range c.Env {
		out = append(out, s.Key+"="+s.Value)
	}
	for _, prefix := range c.Pass {
		for _, kv := range environ {
			if strings.HasPrefix(kv, prefix) {
				out = append(out, kv)
			}
		}
	}
	return out
}

// spec is the container's Docker spec, labelled with the authority's
// account key, with aws when the row takes the operator's AWS settings.
func (c controlPlaneContainer) spec(authority string, aws awsenv.Settings) docker.ContainerSpec {
	s := docker.ContainerSpec{
		Name:                 c.Name,
		Image:                build.ControlImage,
		Cmd:                  c.Cmd,
		User:                 c.User,
		Network:              c.Networks[0],
		Aliases:              c.Aliases,
		Labels:               map[string]string{controlPlaneRole: c.Role, authorityLabel: authority},
		Env:                  c.environ(os.Environ()),
		Binds:                c.Binds,
		CapAdd:               c.CapAdd,
		DeviceRules:          c.DeviceRules,
		Hardened:             c.Hardened,
		PublishLocal:         c.Publish,
		RestartUnlessStopped: true,
	}
	if c.AWS {
		s.Env = append(s.Env, aws.Env...)
		s.Labels[awsLabel] = aws.Digest
	}
	return s
}

// secretSources are what the secrets of a secretDir are made from.
type secretSources struct {
	authority     *auth.Authority
	neo4jPassword []byte
	aws           awsenv.Settings
	// dashboardToken is the dashboard's token, without a newline.
	dashboardToken string
}

// wantsDashboardToken reports whether the directory holds the
// dashboard's token.
func (d secretDir) wantsDashboardToken() bool {
	for _, s := range d.Files {
		if s.DashboardToken {
			return true
		}
	}
	return false
}

// files makes the directory's files.
func (d secretDir) files(src secretSources) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, s := range d.Files {
		switch {
		case s.Authority:
			files, err := src.authority.Files()
			if err != nil {
				return nil, err
			}
			for name, data := range files {
				out[name] = data
			}
		case s.Neo4jPassword:
			out[s.Name] = src.neo4jPassword
		case s.DashboardToken:
			if src.dashboardToken == "" {
				return nil, fmt.Errorf("secret %q of %s: no dashboard token", s.Name, d.Dir)
			}
			out[s.Name] = []byte(src.dashboardToken + "\n")
		case s.AWS:
			for name, data := range src.aws.Files {
				out[name] = data
			}
		case s.Role != "":
			data, err := mintFile(src.authority, s.Identity, s.Role)
			if err != nil {
				return nil, fmt.Errorf("credentials of %s: %w", s.Identity, err)
			}
			out[s.Name] = data
		default:
			return nil, fmt.Errorf("secret %q of %s: no source", s.Name, d.Dir)
		}
	}
	return out, nil
}
