// Command sandox-bench measures a running sandox system (as `sandox up`
// runs it) and prints one table: new sandbox to first answer beside
// `docker run --rm IMAGE true`, one-action round trips beside `docker exec
// CONTAINER true` of the same container, throughput across sandboxes with
// the CPU it took, host memory per idle sandbox, and the same steps done by
// llm-sandbox (the peer), the compared items interleaved so that the
// machine's drift affects both alike. build/scripts/bench.sh brings the
// system up, runs it and brings the system down.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// config is what one run measures, and how much.
type config struct {
	url        string
	directURL  string
	python     string
	peerImage  string
	cold       int
	roundTrips int
	every      int
	sandboxes  int
	clients    int
	duration   time.Duration
	idle       int
	rounds     int
	only       string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sandox-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var c config
	fs := flag.NewFlagSet("sandox-bench", flag.ContinueOnError)
	fs.StringVar(&c.url, "nats", "nats://127.0.0.1:4222", "NATS URL of the running system")
	fs.StringVar(&c.directURL, "direct-nats", "", "NATS URL of the NATS container's own address, to time round trips without the engine's port proxy as well (empty: not measured)")
	fs.StringVar(&c.python, "python", "", "a Python with llm-sandbox installed (empty: no peer run)")
	fs.StringVar(&c.peerImage, "peer-image", "sandox/base:bookworm", "the local image llm-sandbox runs")
	fs.IntVar(&c.cold, "cold", 15, "new sandboxes (and docker runs, and peer sessions) to time")
	fs.IntVar(&c.roundTrips, "round-trips", 300, "round trips per action kind")
	fs.IntVar(&c.every, "every", 3, "one docker exec and one peer command every this many round trips")
	fs.IntVar(&c.sandboxes, "sandboxes", 20, "sandboxes in the throughput run")
	fs.IntVar(&c.clients, "clients", 40, "concurrent clients in the throughput run")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "length of the throughput run")
	fs.IntVar(&c.idle, "idle", 100, "idle sandboxes in each round of the density run")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of the density run (the host figure is the median round)")
	fs.StringVar(&c.only, "only", "", "run only the phases named, comma-separated (new-sandbox, round-trip, throughput, density, pause, checkpoint); empty: all")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.rounds = max(c.rounds, 1)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()

	dir, err := os.MkdirTemp("", "sandox-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	toolFile := dir + "/bench_tools.py"
	if err := os.WriteFile(toolFile, []byte("def ping() -> str:\n    return 'pong'\n"), 0o644); err != nil {
		return err
	}
	// The groups of the bench, each ended when it returns: g has a user tool
	// file; dense is g without a CPU limit, so that a density round of
	// -idle 1000 fits the host's admission (2 cores x overcommit 50 = 100
	// cores would stop it); pool and poolFree have no tool files, so the
	// warm pool serves their creates.
	var groups []*sdk.SandboxGroup
	defer func() {
		for _, g := range groups {
			if err := g.End(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(os.Stderr, "end the bench group %s: %v\n", g.ID(), err)
			}
			g.Close()
		}
	}()
	open := func(cfg sdk.GroupConfig) (*sdk.SandboxGroup, error) {
		cfg.ID += uuid.NewString()[:8]
		g, err := sdk.NewSandboxGroup(cfg, sdk.WithURL(c.url))
		if err != nil {
			return nil, err
		}
		if err := g.Start(ctx); err != nil {
			g.Close()
			return nil, err
		}
		groups = append(groups, g)
		return g, nil
	}
	g, err := open(sdk.GroupConfig{ID: "bench-", Tools: []string{toolFile},
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "256MiB"}, Overcommit: 50})
	if err != nil {
		return err
	}
	dense, err := open(sdk.GroupConfig{ID: "bench-dense-", Tools: []string{toolFile},
		ComputeResources: schemas.ComputeResources{Memory: "256MiB"}, Overcommit: 50})
	if err != nil {
		return err
	}
	pool, err := open(sdk.GroupConfig{ID: "bench-pool-",
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "256MiB"}, Overcommit: 50})
	if err != nil {
		return err
	}
	poolFree, err := open(sdk.GroupConfig{ID: "bench-pool-free-"})
	if err != nil {
		return err
	}
	var direct *sdk.SandboxGroup
	if c.directURL != "" {
		// The same group through another connection: Attach gives handles
		// on its sandboxes; Close (not End) lets it go.
		if direct, err = sdk.NewSandboxGroup(sdk.GroupConfig{ID: g.ID()}, sdk.WithURL(c.directURL)); err != nil {
			return err
		}
		defer direct.Close()
	}
	p, err := startPeer(c.python, c.peerImage, dir)
	if err != nil {
		return err
	}
	defer p.stop()

	b := &bench{cfg: c, group: g, dense: dense, pool: pool, poolFree: poolFree, direct: direct, peer: p, t: &table{}}
	started := time.Now()
	for _, phase := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"new sandbox", b.coldStart},
		{"round trip", b.roundTrip},
		{"throughput", b.throughput},
		{"density", b.density},
		{"pause", b.pauseResume},
		{"checkpoint", b.checkpoints},
	} {
		if c.only != "" && !slices.Contains(strings.Split(c.only, ","), strings.ReplaceAll(phase.name, " ", "-")) {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s (%s in)\n", phase.name, time.Since(started).Round(time.Second))
		if err := phase.run(ctx); err != nil {
			b.t.print(os.Stdout)
			return fmt.Errorf("%s: %w", phase.name, err)
		}
	}
	fmt.Printf("sandox-bench: %s, %d CPUs, measured in %s\n\n", time.Now().UTC().Format(time.RFC3339), numCPU(), time.Since(started).Round(time.Second))
	b.t.print(os.Stdout)
	return nil
}

// bench holds one run's group, peer and table.
type bench struct {
	cfg   config
	group *sdk.SandboxGroup
	dense *sdk.SandboxGroup // group without a CPU limit: the density rounds'
	pool  *sdk.SandboxGroup // no tool files: its creates fit the warm pool
	// poolFree has no limits either: its claims need no docker update.
	poolFree *sdk.SandboxGroup
	direct   *sdk.SandboxGroup // nil unless -direct-nats
	peer     *peer
	t        *table
	seq      int
}

// newID is a fresh sandbox id with prefix.
func (b *bench) newID(prefix string) string {
	b.seq++
	return fmt.Sprintf("%s-%d", prefix, b.seq)
}
