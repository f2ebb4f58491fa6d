package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	orchruntime "github.com/sandox/sandox/services/orchestrator/runtime"
)

var (
	statAction   = schemas.Actions{{Tool: "filesystem_tools.stat_path", Args: json.RawMessage(`{"path": "/workspace"}`)}}
	termAction   = schemas.Actions{{Tool: "terminal_tools.run", Args: json.RawMessage(`{"command": "true"}`)}}
	pythonAction = schemas.Actions{{Tool: "bench_tools.ping", Args: json.RawMessage(`{}`)}}
)

func numCPU() int { return runtime.NumCPU() }

// send runs one batch and checks its one observation.
func send(ctx context.Context, sb *sdk.Sandbox, a schemas.Actions) error {
	obs, err := sb.SendActions(ctx, a)
	if err != nil {
		return err
	}
	if len(obs) != 1 || obs[0].Error != nil {
		return fmt.Errorf("%s: %+v", a[0].Tool, obs)
	}
	return nil
}

// docker runs the docker client and times it.
func docker(ctx context.Context, args ...string) (time.Duration, error) {
	t := time.Now()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("docker %v: %w: %s", args, err, out)
	}
	return time.Since(t), nil
}

// create creates and starts a sandbox.
func (b *bench) create(ctx context.Context, g *sdk.SandboxGroup, id string) (*sdk.Sandbox, error) {
	sb, err := g.CreateSandbox(ctx, id, sdk.SandboxOptions{})
	if err != nil {
		return nil, err
	}
	return sb, sb.Start(ctx)
}

// claim times a create+start+first action in the group without tool
// files, which the warm pool serves (sandox up -pool), and ends the
// sandbox; fromPool says whether it came from the pool. It first waits
// until a pooled container runs: the pool refills after each claim.
func (b *bench) claim(ctx context.Context, g *sdk.SandboxGroup) (_ time.Duration, fromPool bool, err error) {
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := exec.CommandContext(ctx, "docker", "ps", "--filter", "label="+orchruntime.LabelManaged+"=true", "--format", `{{.Label "`+orchruntime.LabelSandbox+`"}}`).Output()
		if err != nil {
			return 0, false, fmt.Errorf("docker ps: %w", err)
		}
		if strings.Contains(string(out), schemas.PoolIDPrefix) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The executor of a pool container that just started announces
	// itself within a few hundred milliseconds.
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	sb, err := g.CreateSandbox(ctx, b.newID("claimed"), sdk.SandboxOptions{})
	if err != nil {
		return 0, false, err
	}
	if err := sb.Start(ctx); err != nil {
		return 0, false, err
	}
	if err := send(ctx, sb, statAction); err != nil {
		return 0, false, err
	}
	d := time.Since(t0)
	fromPool = sb.Status().FromPool
	return d, fromPool, sb.End(ctx)
}

// coldStart times new sandbox to first answer (create, start, one action),
// then `docker run --rm` of the same image, then llm-sandbox opening a
// session and running its first command, in turn.
func (b *bench) coldStart(ctx context.Context) error {
	var total, create, start, first, end, run, peerFirst, peerClose, pooled, pooledFree samples
	misses := 0
	for i := 0; i < b.cfg.cold; i++ {
		t0 := time.Now()
		sb, err := b.group.CreateSandbox(ctx, b.newID("cold"), sdk.SandboxOptions{})
		if err != nil {
			return err
		}
		t1 := time.Now()
		if err := sb.Start(ctx); err != nil {
			return err
		}
		t2 := time.Now()
		if err := send(ctx, sb, statAction); err != nil {
			return err
		}
		t3 := time.Now()
		total, create, start, first = append(total, t3.Sub(t0)), append(create, t1.Sub(t0)), append(start, t2.Sub(t1)), append(first, t3.Sub(t2))
		if i == 0 { // the first builds nothing but warms the engine's caches
			total, create, start, first = nil, nil, nil, nil
		}
		image := sb.Status().Image
		t4 := time.Now()
		if err := sb.End(ctx); err != nil {
			return err
		}
		end = append(end, time.Since(t4))
		// The image's entrypoint is the executor: run `true` instead.
		d, err := docker(ctx, "run", "--rm", "--entrypoint", "true", image)
		if err != nil {
			return err
		}
		run = append(run, d)
		if b.peer != nil {
			a, err := b.peer.ask("cold")
			if err != nil {
				return err
			}
			peerFirst, peerClose = append(peerFirst, msDuration(a.FirstMS)), append(peerClose, msDuration(a.CloseMS))
		}
		for _, c := range []struct {
			g *sdk.SandboxGroup
			s *samples
		}{{b.pool, &pooled}, {b.poolFree, &pooledFree}} {
			d, fromPool, err := b.claim(ctx, c.g)
			if err != nil {
				return err
			}
			if fromPool {
				*c.s = append(*c.s, d)
			} else {
				misses++
			}
		}
	}
	b.t.times("new sandbox", "sandox cold: create+start+first action", total, "cached image, user tool file; first run dropped")
	b.t.times("new sandbox", "  create (command answered)", create, "")
	b.t.times("new sandbox", "  start (executor ready)", start, "")
	b.t.times("new sandbox", "  first action (filesystem)", first, "")
	b.t.times("new sandbox", "sandox from the pool: create+start+first action", pooled, fmt.Sprintf("a group without tool files, CPU and memory limits set by docker update; %d of %d creates in both pool rows found the pool empty (made fresh, not counted)", misses, 2*b.cfg.cold))
	b.t.times("new sandbox", "sandox from the pool, the pool's limits", pooledFree, "a group without tool files or limits: no docker update")
	b.t.times("new sandbox", "docker run --rm --entrypoint true IMAGE", run, "the engine's floor, same image")
	if b.peer != nil {
		b.t.times("new sandbox", "llm-sandbox open+first command", peerFirst, "local image "+b.cfg.peerImage+", no pull, no env setup")
	}
	b.t.times("end", "sandox end sandbox", end, "")
	if b.peer != nil {
		b.t.times("end", "llm-sandbox close", peerClose, "")
	}
	return nil
}

// roundTrip times one-action batches for a filesystem tool, a terminal
// command and a Python user tool in one sandbox, with `docker exec true`
// of the same container and an llm-sandbox command every few of them.
func (b *bench) roundTrip(ctx context.Context) error {
	sb, err := b.create(ctx, b.group, b.newID("rt"))
	if err != nil {
		return err
	}
	defer sb.End(context.WithoutCancel(ctx))
	container := orchruntime.ContainerName(sb.ID())
	if b.peer != nil {
		if _, err := b.peer.ask("open"); err != nil {
			return err
		}
		defer b.peer.ask("close")
	}
	kinds := []schemas.Actions{statAction, termAction, pythonAction}
	for _, a := range kinds { // warm up each path once
		if err := send(ctx, sb, a); err != nil {
			return err
		}
	}
	var direct *sdk.Sandbox
	if b.direct != nil {
		direct = b.direct.Attach(sb.ID())
		if err := send(ctx, direct, termAction); err != nil {
			return err
		}
	}
	times := make([]samples, len(kinds))
	var exec, peerCmd, directTerm samples
	for i := 0; i < b.cfg.roundTrips; i++ {
		for k, a := range kinds {
			t := time.Now()
			if err := send(ctx, sb, a); err != nil {
				return err
			}
			times[k] = append(times[k], time.Since(t))
		}
		if direct != nil {
			t := time.Now()
			if err := send(ctx, direct, termAction); err != nil {
				return err
			}
			directTerm = append(directTerm, time.Since(t))
		}
		if i%b.cfg.every != 0 {
			continue
		}
		d, err := docker(ctx, "exec", container, "true")
		if err != nil {
			return err
		}
		exec = append(exec, d)
		if b.peer != nil && len(peerCmd) < 100 {
			a, err := b.peer.ask("cmd")
			if err != nil {
				return err
			}
			peerCmd = append(peerCmd, msDuration(a.MS))
		}
	}
	b.t.times("round trip", "sandox filesystem stat_path", times[0], "")
	b.t.times("round trip", "sandox terminal run true", times[1], "")
	b.t.times("round trip", "sandox Python user tool", times[2], "")
	if direct != nil {
		b.t.times("round trip", "sandox terminal run true, direct", directTerm, "to the NATS container's address, not through the published port's docker-proxy")
	}
	b.t.times("round trip", "docker exec CONTAINER true", exec, "same container")
	if b.peer != nil {
		b.t.times("round trip", "llm-sandbox execute_command true", peerCmd, "one session")
	}
	if p50 := times[1].pct(50); p50 > 0 {
		b.t.figure("round trip", "docker exec p50 / sandox terminal p50", 0, fmt.Sprintf("%.0fx", float64(exec.pct(50))/float64(p50)), "target >= 60x")
		if b.peer != nil {
			b.t.figure("round trip", "llm-sandbox p50 / sandox terminal p50", 0, fmt.Sprintf("%.0fx", float64(peerCmd.pct(50))/float64(p50)), "target >= 20x")
		}
	}
	return nil
}

// createMany creates and starts n sandboxes, four at a time.
func (b *bench) createMany(ctx context.Context, g *sdk.SandboxGroup, prefix string, n int) ([]*sdk.Sandbox, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.newID(prefix)
	}
	out := make([]*sdk.Sandbox, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sb, err := b.create(ctx, g, id)
			out[i] = sb
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return out, <-errs
}

// endMany ends sandboxes, four at a time.
func endMany(ctx context.Context, sbs []*sdk.Sandbox) {
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, sb := range sbs {
		if sb == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_ = sb.End(context.WithoutCancel(ctx))
		}()
	}
	wg.Wait()
}

// throughput runs clients that send trivial actions to sandboxes as fast as
// they are answered, for a set time, and reads the host's CPU use.
func (b *bench) throughput(ctx context.Context) error {
	sbs, err := b.createMany(ctx, b.group, "tp", b.cfg.sandboxes)
	defer endMany(ctx, sbs)
	if err != nil {
		return err
	}
	for _, sb := range sbs {
		if err := send(ctx, sb, statAction); err != nil {
			return err
		}
	}
	total0, idle0, err := cpuTimes()
	if err != nil {
		return err
	}
	procs0 := procCPU()
	var count atomic.Int64
	lat := make([]samples, b.cfg.clients)
	errs := make([]error, b.cfg.clients)
	fmt.Fprintf(os.Stderr, "throughput: load for %s\n", b.cfg.duration)
	deadline := time.Now().Add(b.cfg.duration)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range b.cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb := sbs[c%len(sbs)]
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := send(ctx, sb, statAction); err != nil {
					errs[c] = err
					return
				}
				lat[c] = append(lat[c], time.Since(t))
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	total1, idle1, err := cpuTimes()
	if err != nil {
		return err
	}
	split := cpuSplit(procs0, procCPU(), total1-total0)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	var all samples
	for _, l := range lat {
		all = append(all, l...)
	}
	busy := 100 * (1 - float64(idle1-idle0)/float64(total1-total0))
	note := fmt.Sprintf("%d sandboxes, %d clients, %s; host CPU %.0f%% busy of %d cores", b.cfg.sandboxes, b.cfg.clients, b.cfg.duration, busy, numCPU())
	b.t.figure("throughput", "actions/s (filesystem stat_path)", int(count.Load()), fmt.Sprintf("%.0f", float64(count.Load())/took.Seconds()), note+"; target >= 5,000")
	b.t.times("throughput", "  latency under load", all, "")
	b.t.figure("throughput", "  CPU by command, % of all cores", 0, "", split)
	return nil
}

// density starts idle sandboxes and reads how much more memory the host
// uses, and what the executors and their children hold, in rounds: each
// round starts b.cfg.idle sandboxes, lets them settle, reads, and ends
// them. The host figure of a round is the difference of two medians of
// five readings of MemTotal-MemAvailable; the table gives the median round
// and every round in its note. The process figures are the last round's.
func (b *bench) density(ctx context.Context) error {
	var perRound []float64
	var execRSS, execPSS, execAnon, allRSS, cgroupMem samples // in KiB, kept as durations to reuse pct
	var memTotal int64
	for round := range b.cfg.rounds {
		time.Sleep(2 * time.Second) // let the previous sandboxes go
		used0, total, err := memUsedMedian()
		if err != nil {
			return err
		}
		memTotal = total
		sbs, err := b.createMany(ctx, b.dense, fmt.Sprintf("idle%d", round), b.cfg.idle)
		if err != nil {
			endMany(ctx, sbs)
			return err
		}
		time.Sleep(5 * time.Second) // idle: let start-up allocations settle
		used1, _, err := memUsedMedian()
		if err != nil {
			endMany(ctx, sbs)
			return err
		}
		perRound = append(perRound, float64(used1-used0)/float64(b.cfg.idle))
		if round == b.cfg.rounds-1 {
			var ids []string
			for _, sb := range sbs {
				ids = append(ids, sb.Status().Container)
			}
			execRSS, execPSS, execAnon, allRSS, cgroupMem = sandboxMemory(ids)
		}
		endMany(ctx, sbs)
	}
	slices.Sort(perRound)
	per := perRound[len(perRound)/2]
	mib := func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
	var rounds []string
	for _, v := range perRound {
		rounds = append(rounds, mib(v))
	}
	b.t.figure("density", "host memory per idle sandbox", b.cfg.idle, mib(per), fmt.Sprintf("median of %d rounds of %d idle sandboxes (%s): MemTotal-MemAvailable before and after, each the median of 5 readings; target <= 10 MiB", b.cfg.rounds, b.cfg.idle, strings.Join(rounds, ", ")))
	how := fmt.Sprintf("extrapolated linearly from the %d measured", b.cfg.idle)
	if b.cfg.idle >= 1000 {
		how = fmt.Sprintf("measured: %d ran at once", b.cfg.idle)
	}
	b.t.figure("density", "1,000 idle sandboxes", 0, fmt.Sprintf("%.1f GiB", per*1000/(1<<30)), fmt.Sprintf("%s; host has %.1f GiB", how, float64(memTotal)/(1<<30)))
	b.t.sizes("density", "sandbox cgroup memory, MiB", cgroupMem, "memory.usage_in_bytes of each container: its processes, page cache and kernel memory charged to it, not the engine's shim")
	b.t.sizes("density", "executor RSS, MiB", execRSS, "target <= 10 MB")
	b.t.sizes("density", "executor PSS, MiB", execPSS, "the binary's pages shared by all sandboxes counted once")
	b.t.sizes("density", "executor anonymous memory, MiB", execAnon, "its own heap and stacks")
	b.t.sizes("density", "all processes of a sandbox, RSS MiB", allRSS, "init, executor, Python tool host, shell")
	return nil
}

// sandboxMemory reads, for the containers ids, the RSS, PSS and anonymous
// memory of each executor, the RSS of all of each sandbox's processes and
// each container's cgroup memory, in KiB.
func sandboxMemory(ids []string) (execRSS, execPSS, execAnon, allRSS, cgroupMem samples) {
	for _, pids := range containerProcs(ids) {
		var sum int64
		for _, pid := range pids {
			rss, name := procRSS(pid)
			sum += rss
			if name == "sandox-executor" {
				pss, anon := procMem(pid)
				execRSS = append(execRSS, time.Duration(rss>>10))
				execPSS = append(execPSS, time.Duration(pss>>10))
				execAnon = append(execAnon, time.Duration(anon>>10))
			}
		}
		allRSS = append(allRSS, time.Duration(sum>>10))
		if len(pids) > 0 {
			if n, ok := cgroupMemory(pids[0]); ok {
				cgroupMem = append(cgroupMem, time.Duration(n>>10))
			}
		}
	}
	return execRSS, execPSS, execAnon, allRSS, cgroupMem
}
