package terminal

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sandox/sandox/schemas"
)

// jobQueue is how many messages a job's publisher holds before the job's
// readers wait (and, through its full pipes, the job itself).
const jobQueue = 64

// jobMessage is one message of a job on its way to the stream.
type jobMessage struct {
	subject, msgID string
	data           []byte
	// sent is closed once the message is stored or given up.
	sent chan struct{}
}

// jobPublisher sends a job's messages to the job stream one at a time, in
// the order they were queued, each retried until the stream stored it: a
// bus that is away (a NATS restart) delays the messages but loses none,
// and a retried message that did arrive is dropped by the stream as a
// duplicate of its Nats-Msg-Id. One goroutine per job, ended by close
// after the last message.
type jobPublisher struct {
	ctx      context.Context
	publish  func(ctx context.Context, subject, msgID string, data []byte) error
	sandbox  string
	job      string
	queue    chan jobMessage
	finished chan struct{}
}

// newJobPublisher starts the publisher of job in sandbox. With publish nil
// (no bus) it drops every message. ctx ends the retries.
func newJobPublisher(ctx context.Context, publish func(ctx context.Context, subject, msgID string, data []byte) error, sandbox, job string) *jobPublisher {
	p := &jobPublisher{ctx: ctx, publish: publish, sandbox: sandbox, job: job,
		queue: make(chan jobMessage, jobQueue), finished: make(chan struct{})}
	go p.run()
	return p
}

// send queues v on the job's subject of kind, with key naming it uniquely
// within the job. It blocks while the queue is full. The returned channel
// is closed once the message is stored or given up.
func (p *jobPublisher) send(kind, key string, v any) <-chan struct{} {
	return p.sendTo(schemas.JobSubject(p.sandbox, p.job, kind), key, v)
}

// sendTo queues v on subject.
func (p *jobPublisher) sendTo(subject, key string, v any) <-chan struct{} {
	m := jobMessage{subject: subject, msgID: p.sandbox + "/" + p.job + "/" + key, sent: make(chan struct{})}
	data, err := json.Marshal(v)
	if err != nil {
		close(m.sent) // the job types always encode
		return m.sent
	}
	m.data = data
	select {
	case p.queue <- m:
	case <-p.ctx.Done():
		close(m.sent)
	}
	return m.sent
}

// close waits until every queued message went out (or the publisher's
// context ended).
func (p *jobPublisher) close() {
	close(p.queue)
	<-p.finished
}

func (p *jobPublisher) run() {
	defer close(p.finished)
	for m := range p.queue {
		p.deliver(m)
		close(m.sent)
	}
}

// deliver publishes m, retrying until it is stored or the publisher's
// context ends.
func (p *jobPublisher) deliver(m jobMessage) {
	if p.publish == nil {
		return
	}
	for wait := 50 * time.Millisecond; p.ctx.Err() == nil; wait = min(2*wait, 2*time.Second) {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		err := p.publish(ctx, m.subject, m.msgID, m.data)
		cancel()
		if err == nil {
			return
		}
		select {
		case <-time.After(wait):
		case <-p.ctx.Done():
		}
	}
}
