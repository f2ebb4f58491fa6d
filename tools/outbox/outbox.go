package outbox

import (
	"context"
	"time"
)

// Queue is how many records an Outbox holds before Send blocks.
const Queue = 64

// PublishFunc stores data on subject in a stream, with msgID as its
// Nats-Msg-Id (tools.Env.Publish), and returns once the stream stored it.
type PublishFunc func(ctx context.Context, subject, msgID string, data []byte) error

// record is one record on its way to the stream.
type record struct {
	subject, msgID string
	data           []byte
	// sent is closed once the record is stored or given up.
	sent chan struct{}
}

// Outbox sends the records of one piece of work (a job, a watch) to the
// stream one at a time, in the order they were queued, each retried until
// the stream stored it; a retried record that did arrive is dropped by the
// stream as a duplicate of its Nats-Msg-Id. One goroutine per Outbox,
// ended by Close. Send and Close may be called from different goroutines,
// but Send not after Close.
type Outbox struct {
	ctx      context.Context
	publish  PublishFunc
	prefix   string
	queue    chan record
	finished chan struct{}
}

// New starts an outbox whose records get the Nats-Msg-Id prefix+"/"+key.
// With publish nil (no bus) it drops every record. ctx ends the retries:
// records not stored by then are given up.
func New(ctx context.Context, publish PublishFunc, prefix string) *Outbox {
	o := &Outbox{ctx: ctx, publish: publish, prefix: prefix,
		queue: make(chan record, Queue), finished: make(chan struct{})}
	go o.run()
	return o
}

// Send queues data for subject, key naming the record uniquely within the
// outbox's work. It blocks while the queue is full (or until the outbox's
// context ends). The returned channel is closed once the record is stored
// or given up.
func (o *Outbox) Send(subject, key string, data []byte) <-chan struct{} {
	r := record{subject: subject, msgID: o.prefix + "/" + key, data: data, sent: make(chan struct{})}
	select {
	case o.queue <- r:
	case <-o.ctx.Done():
		close(r.sent)
	}
	return r.sent
}

// Close waits until every queued record went out (or the outbox's context
// ended).
func (o *Outbox) Close() {
	close(o.queue)
	<-o.finished
}

func (o *Outbox) run() {
	defer close(o.finished)
	for r := range o.queue {
		o.deliver(r)
		close(r.sent)
	}
}

// deliver publishes r, retrying with a backoff from 50 ms to 2 s until it
// is stored or the outbox's context ends.
func (o *Outbox) deliver(r record) {
	if o.publish == nil {
		return
	}
	for wait := 50 * time.Millisecond; o.ctx.Err() == nil; wait = min(2*wait, 2*time.Second) {
		ctx, cancel := context.WithTimeout(o.ctx, 5*time.Second)
		err := o.publish(ctx, r.subject, r.msgID, r.data)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-time.After(wait):
		case <-o.ctx.Done():
		}
	}
}
