package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	dockerapi "github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/sdk"
)

// pauseResume times, -cold times each and interleaved, pausing a sandbox
// whose job is running, resuming it up to its first answered action, and
// the engine's floor (docker pause and docker unpause of a container of the
// same image, by the CLI and by the API); then reattaching to a job's stream (Job.Output from a
// sequence to the first record it hands on).
func (b *bench) pauseResume(ctx context.Context) error {
	sb, err := b.create(ctx, b.group, b.newID("pause"))
	if err != nil {
		return err
	}
	defer sb.End(context.WithoutCancel(ctx))
	// A job that prints 200 lines, then runs on quietly: its stream has
	// records to reattach to, and a process to freeze. seqs are the
	// sequences of its output records.
	job, _, err := sb.StartJob(ctx, "seq 1 200; sleep 3600", sdk.JobOptions{})
	if err != nil {
		return err
	}
	var seqs []uint64
	for ev, err := range job.Output(ctx, 0) {
		if err != nil {
			return err
		}
		seqs = append(seqs, ev.Seq)
		if ev.Output != nil && strings.HasSuffix(string(ev.Output.Data), "200\n") {
			break
		}
	}
	floorOut, err := exec.CommandContext(ctx, "docker", "run", "-d", "--rm", "--entrypoint", "sleep", sb.Status().Image, "3600").Output()
	if err != nil {
		return fmt.Errorf("docker run a container for the floor: %w", err)
	}
	floor := strings.TrimSpace(string(floorOut))
	defer exec.Command("docker", "rm", "-f", floor).Run()

	api, err := dockerapi.New(ctx)
	if err != nil {
		return err
	}
	var pause, resume, resumeFirst, dockerPause, dockerUnpause, apiPause, apiUnpause, reattach samples
	for i := 0; i < b.cfg.cold; i++ {
		t0 := time.Now()
		if err := sb.Pause(ctx); err != nil {
			return err
		}
		t1 := time.Now()
		if err := sb.Resume(ctx); err != nil {
			return err
		}
		t2 := time.Now()
		if err := send(ctx, sb, termAction); err != nil {
			return err
		}
		t3 := time.Now()
		pause, resume, resumeFirst = append(pause, t1.Sub(t0)), append(resume, t2.Sub(t1)), append(resumeFirst, t3.Sub(t1))
		d, err := docker(ctx, "pause", floor)
		if err != nil {
			return err
		}
		dockerPause = append(dockerPause, d)
		if d, err = docker(ctx, "unpause", floor); err != nil {
			return err
		}
		dockerUnpause = append(dockerUnpause, d)
		t5 := time.Now()
		if err := api.Pause(ctx, floor); err != nil {
			return err
		}
		t6 := time.Now()
		if err := api.Unpause(ctx, floor); err != nil {
			return err
		}
		apiPause, apiUnpause = append(apiPause, t6.Sub(t5)), append(apiUnpause, time.Since(t6))
		// Reattach from just before one of the stored records, as a
		// client that lost its connection there would.
		after := seqs[(i*7)%len(seqs)] - 1
		t4 := time.Now()
		for _, err := range job.Output(ctx, after) {
			if err != nil {
				return err
			}
			break
		}
		reattach = append(reattach, time.Since(t4))
	}
	b.t.times("pause", "sandox pause (command answered)", pause, "a sandbox with a running job: hold its executor, docker pause, ledger, record")
	b.t.times("pause", "docker pause", dockerPause, "the engine's floor, same image (the CLI: its own start included)")
	b.t.times("pause", "engine API pause", apiPause, "the floor without the CLI: ContainerPause, as the orchestrator calls it")
	b.t.times("pause", "sandox resume (command answered)", resume, "ledger admission, docker unpause, executor serves again, record")
	b.t.times("pause", "sandox resume to first answered action", resumeFirst, "resume + one terminal_tools.run")
	b.t.times("pause", "docker unpause", dockerUnpause, "the engine's floor, same image (the CLI)")
	b.t.times("pause", "engine API unpause", apiUnpause, "ContainerUnpause")
	b.t.times("jobs", "reattach: Job.Output(ctx, last) to first record", reattach, "a job of 200 lines; from just before one of its stored output records")
	return nil
}
