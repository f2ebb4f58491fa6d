package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// checkpointMiB is the size of the workspace the checkpoint phase saves.
const checkpointMiB = 100

// shell runs command in sb and fails unless it exits 0.
func shell(ctx context.Context, sb *sdk.Sandbox, command string) error {
	args, err := json.Marshal(map[string]any{"command": command, "timeout_seconds": 300})
	if err != nil {
		return err
	}
	obs, err := sb.SendActions(ctx, schemas.Actions{{Tool: "terminal_tools.run", Args: args}})
	if err != nil {
		return err
	}
	if len(obs) != 1 || obs[0].Error != nil || obs[0].ExitCode == nil || *obs[0].ExitCode != 0 {
		return fmt.Errorf("%q: %+v", command, obs)
	}
	return nil
}

// checkpoints times, on a workspace of checkpointMiB MiB (100 files of
// 1 MiB of random bytes): the first checkpoint, which stores everything;
// checkpoints after one 1 MiB file changed, which store that file only;
// rollbacks to the first checkpoint; and a fork of 10 sandboxes from it
// beside creating and starting 10 plain sandboxes.
func (b *bench) checkpoints(ctx context.Context) error {
	sb, err := b.create(ctx, b.dense, b.newID("ckpt"))
	if err != nil {
		return err
	}
	defer func() { _ = sb.End(context.WithoutCancel(ctx)) }()
	if err := shell(ctx, sb, fmt.Sprintf(`mkdir -p data && for i in $(seq 1 %d); do head -c 1M /dev/urandom > data/f$i; done`, checkpointMiB)); err != nil {
		return err
	}
	t0 := time.Now()
	base, err := sb.Checkpoint(ctx, "")
	if err != nil {
		return err
	}
	b.t.figure("checkpoint", fmt.Sprintf("first checkpoint, %d MiB workspace", checkpointMiB), 1, ms(time.Since(t0)),
		fmt.Sprintf("%d entries; stores all %.1f MiB; server-side %.0f ms", base.Files, float64(base.NewBytes)/(1<<20), base.DurationMS))
	var again, rollback samples
	var stored int64
	const rounds = 5
	for i := range rounds {
		if err := shell(ctx, sb, fmt.Sprintf(`head -c 1M /dev/urandom > data/f%d`, i+1)); err != nil {
			return err
		}
		t := time.Now()
		c, err := sb.Checkpoint(ctx, "")
		if err != nil {
			return err
		}
		again = append(again, time.Since(t))
		stored += c.NewBytes
		t = time.Now()
		if _, err := sb.Rollback(ctx, base.ID); err != nil {
			return err
		}
		rollback = append(rollback, time.Since(t))
	}
	b.t.times("checkpoint", fmt.Sprintf("checkpoint after 1 MiB changed, %d MiB workspace", checkpointMiB), again,
		fmt.Sprintf("stores %.1f MiB each on average: only the changed file", float64(stored)/rounds/(1<<20)))
	b.t.times("checkpoint", fmt.Sprintf("rollback, %d MiB workspace", checkpointMiB), rollback, "stage every file from the store, then swap")

	const forks = 10
	ids := make([]string, forks)
	for i := range ids {
		ids[i] = b.newID("fork")
	}
	t0 = time.Now()
	made, err := sb.Fork(ctx, base.ID, ids, sdk.SandboxOptions{})
	forkTime := time.Since(t0)
	endMany(ctx, made)
	if err != nil {
		return err
	}
	plain := make([]*sdk.Sandbox, forks)
	for i := range ids {
		ids[i] = b.newID("plain")
	}
	var eg errgroup.Group
	t0 = time.Now()
	for i, id := range ids {
		eg.Go(func() (err error) {
			plain[i], err = b.create(ctx, b.dense, id)
			return err
		})
	}
	err = eg.Wait()
	plainTime := time.Since(t0)
	endMany(ctx, plain)
	if err != nil {
		return err
	}
	b.t.figure("checkpoint", fmt.Sprintf("fork %d sandboxes from a %d MiB checkpoint", forks, checkpointMiB), forks, ms(forkTime),
		"create, restore and start, all at once, until every one runs")
	b.t.figure("checkpoint", fmt.Sprintf("create+start %d plain sandboxes", forks), forks, ms(plainTime), "beside it: the same, without files to restore")
	return nil
}
