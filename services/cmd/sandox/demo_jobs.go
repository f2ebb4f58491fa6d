package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/sandox/sandox/sdk"
)

// demoJobs shows a job (docs/jobs.md): a command that answers at once and
// runs on, whose output a reader that stopped half way resumes from the
// last stream sequence it saw, every byte once, then the exit code.
func demoJobs(ctx context.Context, sandbox *sdk.Sandbox) error {
	step("a background job: its output read half, then resumed from the last sequence seen")
	job, info, err := sandbox.StartJob(ctx, "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.2; done; exit 3", sdk.JobOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("job %s started (pid %d); the call answered at once\n", job.ID(), info.PID)
	var last uint64
	lines := 0
	for ev, err := range job.Output(ctx, 0) {
		if err != nil {
			return err
		}
		last = ev.Seq
		if ev.Output != nil {
			fmt.Printf("  seq %d: %s", ev.Seq, ev.Output.Data)
			if lines += strings.Count(string(ev.Output.Data), "\n"); lines >= 3 {
				break // a reader that goes away half way
			}
		}
	}
	fmt.Printf("(the reader stopped after seq %d; a new one resumes from there)\n", last)
	for ev, err := range job.Output(ctx, last) {
		if err != nil {
			return err
		}
		if ev.Output != nil {
			fmt.Printf("  seq %d: %s", ev.Seq, ev.Output.Data)
		}
		if ev.Exit != nil {
			fmt.Printf("  seq %d: exit code %d\n", ev.Seq, ev.Exit.ExitCode)
		}
	}
	return nil
}
