package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
)

// conn is a group's link to sandox.
type conn struct {
	opts  options
	nc    *nats.Conn
	js    jetstream.JetStream
	owned bool
	// who signs the commands, when the client connected with a .creds file.
	who *caller

	muxMu sync.Mutex
	muxes map[string]*replyMux // by sandbox id (demux.go)
}

func dial(o options) (*conn, error) {
	c := &conn{opts: o, nc: o.conn}
	if c.nc == nil {
		nopts := []nats.Option{nats.Name("sandox-sdk"), nats.MaxReconnects(-1)}
		creds := o.creds
		if creds == "" {
			creds = DefaultCredentials()
		}
		if creds != "" {
			nopts = append(nopts, nats.UserCredentials(creds))
			who, err := loadCaller(creds)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
			}
			c.who = who
		}
		nopts = append(nopts, o.tls...)
		nc, err := nats.Connect(o.url, nopts...)
		if err != nil {
			return nil, fmt.Errorf("%w: connect to NATS at %s: %w (is sandox up? run `sandox up`)", ErrUnavailable, o.url, err)
		}
		c.nc, c.owned = nc, true
	}
	js, err := jetstream.New(c.nc)
	if err != nil {
		c.close()
		return nil, err
	}
	c.js = js
	return c, nil
}

func (c *conn) close() {
	c.closeMuxes()
	if c.owned {
		c.nc.Close()
	}
}

// withDefault gives ctx a deadline d unless it has one.
func withDefault(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// command publishes a lifecycle command and waits for its result. It
// subscribes to the result subject before publishing, so the result cannot
// be missed.
func (c *conn) command(ctx context.Context, cmd schemas.Command) (schemas.CommandResult, error) {
	ctx, cancel := withDefault(ctx, c.opts.commandTimeout)
	defer cancel()
	cmd.ID = uuid.NewString()
	cmd.IssuedAt = time.Now().UTC()
	data, err := json.Marshal(cmd)
	if err != nil {
		return schemas.CommandResult{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	sub, err := c.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	if err != nil {
		return schemas.CommandResult{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer sub.Unsubscribe()
	defer c.followProgress(cmd.GroupID)()
	msg := nats.NewMsg(schemas.CommandSubject(cmd.Kind))
	msg.Data = data
	if err := c.who.sign(msg, []byte(cmd.ID)); err != nil {
		return schemas.CommandResult{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if err := c.publish(ctx, msg, cmd.ID); err != nil {
		if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
			return schemas.CommandResult{}, fmt.Errorf("%w: no %s stream answers: is an orchestrator running? (sandox up)", ErrUnavailable, schemas.CommandStream)
		}
		return schemas.CommandResult{}, fmt.Errorf("%w: publish %s: %w", ErrUnavailable, cmd.Kind, err)
	}
	reply, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		return schemas.CommandResult{}, fmt.Errorf("%w: %s %s: no result: %w", ErrTimeout, cmd.Kind, target(cmd), ctx.Err())
	}
	var res schemas.CommandResult
	if err := json.Unmarshal(reply.Data, &res); err != nil {
		return res, fmt.Errorf("%w: decode %s result: %w", ErrInternal, cmd.Kind, err)
	}
	if res.Error != nil {
		return res, fmt.Errorf("%s %s: %w", cmd.Kind, target(cmd), fromWire(res.Error))
	}
	return res, nil
}

// publishAckWait bounds the wait for the command stream's acknowledgement
// of one publish.
const publishAckWait = 5 * time.Second

// publish stores msg in the command stream under the message id id. A
// publish that gets no acknowledgement within publishAckWait (its node
// died, or the stream's leader moved while it was in flight) is sent again
// with the same id until ctx is done: the stream stores one message per id
// within its duplicate window (two minutes), so the command is stored at
// most once.
func (c *conn) publish(ctx context.Context, msg *nats.Msg, id string) error {
	for {
		actx, cancel := context.WithTimeout(ctx, publishAckWait)
		_, err := c.js.PublishMsg(actx, msg, jetstream.WithMsgID(id))
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			return err
		}
	}
}

func target(cmd schemas.Command) string {
	if cmd.SandboxID != "" {
		return "sandbox " + cmd.SandboxID
	}
	return "group " + cmd.GroupID
}
