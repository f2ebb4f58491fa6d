package integration

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/disks"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator"
	"github.com/sandox/sandox/services/orchestrator/groupdb"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// env is the system under test, shared by every test of the package.
var env struct {
	docker  *docker.Client
	nats    *server.Server
	url     string // NATS as the test process and the sandboxes see it
	network string
	disks   string          // the orchestrator's disks directory
	nc      *nats.Conn      // a client identity
	auth    *auth.Authority // signs every identity of the test system
	// dbGroups are the groups whose database volumes teardown removes
	// (keepDatabaseVolumes adds one).
	dbGroups   []string
	dbGroupsMu sync.Mutex
	// worker is the configuration of the test system's orchestrator
	// worker, for tests that run another one beside it.
	worker orchestrator.Config
}

// keepDatabaseVolumes has the teardown remove group's database volumes,
// which a group that keeps its database data leaves behind. It is safe for
// tests that run in parallel.
func keepDatabaseVolumes(group string) {
	env.dbGroupsMu.Lock()
	defer env.dbGroupsMu.Unlock()
	env.dbGroups = append(env.dbGroups, group)
}

// connectAs connects to the test system's NATS with a new identity of role.
func connectAs(role auth.Role) (*nats.Conn, error) {
	creds, err := env.auth.Mint("integration "+string(role), role, "")
	if err != nil {
		return nil, err
	}
	return nats.Connect(env.url, creds.Option())
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	stop, err := setup(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration setup:", err)
		return 1
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "integration teardown:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func setup(ctx context.Context) (func() error, error) {
	d, err := docker.New(ctx)
	if err != nil {
		return nil, err
	}
	env.docker = d
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	cfg := build.DefaultConfig(root)
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	// The sandbox and database images build side by side (build.All).
	images, err := build.NewBuilder(d, cfg).All(ctx, build.SandboxImages|build.DatabaseImages)
	if err != nil {
		return nil, err
	}

	env.network = fmt.Sprintf("sandox-it-%d", os.Getpid())
	gateway, err := d.EnsureNetwork(ctx, env.network, map[string]string{"dev.sandox.test": "true"})
	if err != nil {
		return nil, err
	}
	store, err := os.MkdirTemp("", "sandox-it-nats")
	if err != nil {
		return nil, err
	}
	authority, err := auth.NewAuthority()
	if err != nil {
		return nil, err
	}
	env.auth = authority
	ncfg := natsd.DefaultConfig()
	ncfg.Host, ncfg.Port, ncfg.StoreDir, ncfg.Auth = gateway, -1, store, authority
	// Sandboxes have no network: they reach NATS through a socket in a
	// directory bound into them.
	sockDir, err := os.MkdirTemp("", "sandox-it-sock")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(sockDir, 0o755); err != nil {
		return nil, err
	}
	ncfg.Socket = filepath.Join(sockDir, "nats.sock")
	ns, err := natsd.Start(ncfg)
	if err != nil {
		return nil, err
	}
	env.nats = ns
	env.url = ns.ClientURL()
	// The tests are a client like any other; the worker is the control plane.
	env.nc, err = connectAs(auth.RoleClient)
	if err != nil {
		return nil, err
	}
	control, err := connectAs(auth.RoleControl)
	if err != nil {
		return nil, err
	}

	ocfg := orchestrator.DefaultConfig()
	ocfg.Worker = "it-worker"
	// This run's sandboxes carry its own system label; the teardown
	// removes those only, not another run's or `sandox up`'s.
	ocfg.System = env.network
	ocfg.Network = env.network
	ocfg.NATSSocket = sockDir
	// Open egress joins this network; allowlist proxies listen in egressDir.
	ocfg.EgressNetwork = env.network + "-egress"
	if err := d.EnsureIsolatedNetwork(ctx, ocfg.EgressNetwork, map[string]string{"dev.sandox.test": "true"}); err != nil {
		return nil, err
	}
	egressDir, err := os.MkdirTemp("", "sandox-it-egress")
	if err != nil {
		return nil, err
	}
	ocfg.EgressDir = egressDir
	ocfg.ReadyTimeout = 90 * time.Second
	disksDir, err := os.MkdirTemp("", "sandox-it-disks")
	if err != nil {
		return nil, err
	}
	ocfg.DisksDir = disksDir
	env.disks = disksDir
	credsDir, err := os.MkdirTemp("", "sandox-it-creds")
	if err != nil {
		return nil, err
	}
	ocfg.CredsDir = credsDir
	if err := setupDatabaseConfig(images, &ocfg); err != nil {
		return nil, err
	}
	env.worker = ocfg
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := orchestrator.NewWorker(ctx, control, docker.NewRuntime(d).Engine(), ocfg, log)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	dataEnv.stop, err = startDataService(ctx)
	if err != nil {
		cancel()
		return nil, err
	}

	return func() error {
		cancel()
		werr := <-done
		dataEnv.stop()
		os.RemoveAll(dataEnv.passwordDir)
		env.nc.Close()
		control.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
		os.RemoveAll(store)
		os.RemoveAll(sockDir)
		// Anything a failed test left behind goes with the network.
		left, _ := d.List(context.Background(), runtime.LabelSystem+"="+ocfg.System)
		for _, c := range left {
			_ = d.Remove(context.Background(), c.ID)
			_ = d.RemoveVolume(context.Background(), runtime.VolumeName(c.Labels[runtime.LabelSandbox]))
		}
		for _, g := range env.dbGroups {
			for _, db := range []string{"neo4j", "qdrant"} {
				_ = d.RemoveVolume(context.Background(), groupdb.Name(g, db))
			}
		}
		nerr := errors.Join(d.RemoveNetwork(context.Background(), env.network), d.RemoveNetwork(context.Background(), ocfg.EgressNetwork),
			d.RemoveNetwork(context.Background(), ocfg.DatabaseNetwork))
		os.RemoveAll(egressDir)
		// And their disks go once their volumes are gone.
		_ = (&disks.Pool{Dir: disksDir}).DetachAll()
		os.RemoveAll(disksDir)
		os.RemoveAll(credsDir)
		d.Close()
		if werr != nil {
			return werr
		}
		return nerr
	}, nil
}
