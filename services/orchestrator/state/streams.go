package state

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Retention bounds what SANDOX_EVENTS, the audit log, keeps: messages
// older than MaxAge or beyond MaxBytes (the oldest first) are dropped.
// Zero means no limit of that kind.
type Retention struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// DefaultRetention keeps a week of events, at most 1 GiB.
func DefaultRetention() Retention { return Retention{MaxAge: 7 * 24 * time.Hour, MaxBytes: 1 << 30} }

// jobRetention bounds SANDOX_JOBS: a week of job output, at most 1 GiB,
// the oldest dropped first.
var jobRetention = Retention{MaxAge: 7 * 24 * time.Hour, MaxBytes: 1 << 30}

// Setup is SetupWith the DefaultRetention, with replicas as the cluster
// allows (Replicas(nc, 0)).
func Setup(ctx context.Context, js jetstream.JetStream) error {
	return SetupWith(ctx, js, DefaultRetention(), Replicas(js.Conn(), 0))
}

// Replicas is how many copies of each stream and bucket to keep: want when
// above 0, else 3 when the server's cluster has three or more nodes (the
// servers nc knows of, itself and those the cluster advertised), else 1.
func Replicas(nc *nats.Conn, want int) int {
	if want > 0 {
		return want
	}
	if len(nc.Servers()) >= 3 {
		return 3
	}
	return 1
}

// SetupWith creates, or updates to the current configuration, the streams
// and key-value buckets sandox uses, with events kept as ret says and
// replicas copies of each (the consumers follow their stream). It is
// idempotent; every worker calls it at start. The number of replicas of an
// existing stream can be raised or lowered by an update; a bucket's cannot.
func SetupWith(ctx context.Context, js jetstream.JetStream, ret Retention, replicas int) error {
	maxBytes := ret.MaxBytes
	if maxBytes == 0 {
		maxBytes = -1
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        schemas.CommandStream,
		Description: "sandox lifecycle commands, consumed once by one orchestrator worker",
		Subjects:    []string{schemas.CommandSubjectPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      24 * time.Hour,
		Duplicates:  2 * time.Minute,
		Replicas:    replicas,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", schemas.CommandStream, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        schemas.EventStream,
		Description: "sandox audit log: commands and their results, sandbox events, action batches, observations and refusals",
		Subjects:    schemas.EventSubjects(),
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      ret.MaxAge,
		MaxBytes:    maxBytes,
		Replicas:    replicas,
		// The stream acknowledges what is published with a reply
		// subject: the command records (Worker.recordCommand), which
		// must be stored before their command runs. Results, events,
		// batch records and observations are plain publishes and get no
		// ack. (No request is captured here: a captured request would
		// get the stream's ack as its answer.)
	}); err != nil {
		return fmt.Errorf("stream %s: %w", schemas.EventStream, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        schemas.JobStream,
		Description: "sandox jobs: the start, output chunks and exit of every sandbox's background jobs, read back from any sequence",
		Subjects:    []string{schemas.JobStreamSubjects},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      jobRetention.MaxAge,
		MaxBytes:    jobRetention.MaxBytes,
		// Executors publish with Nats-Msg-Id and retry until stored: a
		// repeat within the window is dropped (readers also skip a chunk
		// whose offset they passed).
		Duplicates: 2 * time.Minute,
		Replicas:   replicas,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", schemas.JobStream, err)
	}
	if err := setupWatchStream(ctx, js, replicas); err != nil {
		return err
	}
	for _, bucket := range []string{schemas.GroupBucket, schemas.SandboxBucket, schemas.LedgerBucket, schemas.HostsBucket} {
		if _, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   bucket,
			History:  5,
			Storage:  jetstream.FileStorage,
			Replicas: replicas,
		}); err != nil {
			return fmt.Errorf("bucket %s: %w", bucket, err)
		}
	}
	return nil
}
