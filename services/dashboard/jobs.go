package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// readJobs returns the jobs of sandbox id as its executor recorded them in
// schemas.JobStream: each job's start, with its exit once it ended (Running
// false, Exit set), oldest first. None when the stream does not exist. It
// reads the starts and exits only (not the output), and blocks until it
// has read those the stream held when it began.
func readJobs(ctx context.Context, js jetstream.JetStream, id string) ([]schemas.JobInfo, error) {
	stream, err := js.Stream(ctx, schemas.JobStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("stream %s: %w", schemas.JobStream, err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{
		schemas.JobSubject(id, "*", schemas.JobStartKind), schemas.JobSubject(id, "*", schemas.JobExitKind),
	}})
	if err != nil {
		return nil, fmt.Errorf("jobs of %s: %w", id, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs of %s: %w", id, err)
	}
	var order []string
	jobs := map[string]*schemas.JobInfo{}
	job := func(jobID string) *schemas.JobInfo {
		j, ok := jobs[jobID]
		if !ok {
			j = &schemas.JobInfo{JobID: jobID, SandboxID: id}
			jobs[jobID], order = j, append(order, jobID)
		}
		return j
	}
	for left := int(info.NumPending); left > 0; {
		batch, err := cons.Fetch(min(left, 256), jetstream.FetchMaxWait(maxWait(ctx)))
		if err != nil {
			return nil, fmt.Errorf("jobs of %s: %w", id, err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			kind := msg.Subject()[strings.LastIndexByte(msg.Subject(), '.')+1:]
			switch kind {
			case schemas.JobStartKind:
				var ji schemas.JobInfo
				if json.Unmarshal(msg.Data(), &ji) == nil && ji.JobID != "" {
					j := job(ji.JobID)
					exit := j.Exit
					*j = ji
					j.Running, j.Exit = exit == nil, exit
				}
			case schemas.JobExitKind:
				var ex schemas.JobExit
				if json.Unmarshal(msg.Data(), &ex) == nil && ex.JobID != "" {
					j := job(ex.JobID)
					j.Running, j.Exit = false, &ex
				}
			}
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("jobs of %s: %w", id, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("jobs of %s: %w", id, context.DeadlineExceeded)
		}
		left -= n
	}
	out := make([]schemas.JobInfo, len(order))
	for i, jobID := range order {
		out[i] = *jobs[jobID]
	}
	return out, nil
}

// maxWait is how long one fetch may wait: until ctx's deadline, at most
// 5 s.
func maxWait(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(min(time.Until(d), 5*time.Second), 100*time.Millisecond)
	}
	return 5 * time.Second
}
