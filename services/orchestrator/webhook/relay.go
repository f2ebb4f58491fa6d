package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// Consumer is the durable consumer of SANDOX_JOBS the relays of every
// worker share.
const Consumer = "sandox-webhooks"

// exitFilter matches the exit record of every job of every sandbox.
const exitFilter = "sandbox.*.jobs.*." + schemas.JobExitKind

// Config configures a Relay.
type Config struct {
	// Allow are the URL prefixes a webhook may name
	// (schemas.WebhookAllowed); empty posts nothing.
	Allow []string
	// MaxElapsed bounds the retries of one post; then the exit is given
	// up (and logged).
	MaxElapsed time.Duration
	// Timeout bounds one HTTP request.
	Timeout time.Duration
	// Client makes the requests; nil is a client with Timeout.
	Client *http.Client
}

// DefaultConfig allows no webhook and retries a post for two minutes,
// each request for at most ten seconds.
func DefaultConfig() Config {
	return Config{MaxElapsed: 2 * time.Minute, Timeout: 10 * time.Second}
}

// Relay posts job exits to their webhooks. Run it once per worker.
type Relay struct {
	js  jetstream.JetStream
	cfg Config
	log *slog.Logger
}

// New returns a relay reading the stream through js.
func New(js jetstream.JetStream, cfg Config, log *slog.Logger) *Relay {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout,
			// A webhook's URL is the allowlist's: a redirect could lead
			// anywhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Relay{js: js, cfg: cfg, log: log}
}

// Run follows the job exits until ctx ends; it blocks. With no allowlist
// it returns at once: no webhook can be posted. The error is one of
// setting up the consumer; later failures are logged per exit.
func (r *Relay) Run(ctx context.Context) error {
	if len(r.cfg.Allow) == 0 {
		return nil
	}
	cons, err := r.js.CreateOrUpdateConsumer(ctx, schemas.JobStream, jetstream.ConsumerConfig{
		Durable:       Consumer,
		Description:   "orchestrator workers post job exits to their webhooks",
		FilterSubject: exitFilter,
		// Exits before the first relay started are not posted: the
		// consumer starts with the records that come.
		DeliverPolicy: jetstream.DeliverNewPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       r.cfg.MaxElapsed + time.Minute,
		MaxDeliver:    5,
	})
	if err != nil {
		return fmt.Errorf("consumer %s: %w", Consumer, err)
	}
	msgs, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("consume %s: %w", Consumer, err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		msgs.Stop()
	}()
	defer func() { msgs.Stop(); <-stopped }()
	for {
		m, err := msgs.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			r.log.Warn("webhook relay: next exit", "err", err)
			continue
		}
		r.handle(ctx, m)
	}
}

// handle posts the exit m to its job's webhook, if it has one, and acks
// it once posted or given up; a relay that stops meanwhile leaves it for
// another.
func (r *Relay) handle(ctx context.Context, m jetstream.Msg) {
	var exit schemas.JobExit
	if err := json.Unmarshal(m.Data(), &exit); err != nil {
		r.log.Warn("webhook relay: a job exit that does not decode", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	log := r.log.With("sandbox", exit.SandboxID, "job", exit.JobID)
	info, err := r.start(ctx, m.Subject())
	if err != nil {
		log.Warn("webhook relay: the job's start record", "err", err)
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	if info.Webhook == "" {
		_ = m.Ack()
		return
	}
	if err := schemas.WebhookAllowed(info.Webhook, r.cfg.Allow); err != nil {
		log.Warn("webhook relay: refused", "err", err)
		_ = m.Term()
		return
	}
	err = r.post(ctx, m, info.Webhook, exit.SandboxID+"/"+exit.JobID, m.Data())
	switch {
	case ctx.Err() != nil:
		_ = m.Nak() // another worker, or this one restarted, posts it
	case err != nil:
		log.Warn("webhook relay: gave up", "url", info.Webhook, "err", err)
		_ = m.Term()
	default:
		log.Info("webhook relay: posted", "url", info.Webhook)
		_ = m.Ack()
	}
}

// start returns the JobInfo recorded at the start of the job whose exit
// subject is subject.
func (r *Relay) start(ctx context.Context, exitSubject string) (schemas.JobInfo, error) {
	var info schemas.JobInfo
	stream, err := r.js.Stream(ctx, schemas.JobStream)
	if err != nil {
		return info, err
	}
	subject := strings.TrimSuffix(exitSubject, "."+schemas.JobExitKind) + "." + schemas.JobStartKind
	raw, err := stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return info, fmt.Errorf("%s: %w", subject, err)
	}
	if err := json.Unmarshal(raw.Data, &info); err != nil {
		return info, fmt.Errorf("%s: %w", subject, err)
	}
	return info, nil
}

// post sends body to url, retrying a network error or a 5xx or 429 answer
// with an exponential backoff for at most MaxElapsed, telling the stream
// the exit is in progress meanwhile; another 4xx is final. key is sent as
// Idempotency-Key: a post repeated after a relay restarted carries the
// same one.
func (r *Relay) post(ctx context.Context, m jetstream.Msg, url, key string, body []byte) error {
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		_ = m.InProgress()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return struct{}{}, backoff.Permanent(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("User-Agent", "sandox-webhook")
		resp, err := r.cfg.Client.Do(req)
		if err != nil {
			return struct{}{}, err
		}
		_ = resp.Body.Close()
		switch {
		case resp.StatusCode < 300:
			return struct{}{}, nil
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			return struct{}{}, fmt.Errorf("%s answered %s", url, resp.Status)
		default:
			return struct{}{}, backoff.Permanent(fmt.Errorf("%s answered %s", url, resp.Status))
		}
	}, backoff.WithBackOff(backoff.NewExponentialBackOff()), backoff.WithMaxElapsedTime(r.cfg.MaxElapsed))
	return err
}
