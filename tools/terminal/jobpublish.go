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
// within the job. It blocks while the queue is full.
func (p *jobPublisher) send(kind, key string, v any) {
	p.sendTo(schemas.JobSubject(p.sandbox, p.job, kind), key, v)
}

// sendTo queues v on subject.
func (p *jobPublisher) sendTo(subject, key string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // the job types always encode
	}
	m := jobMessage{subject: subject, msgID: p.sandbox + "/" + p.job + "/" + key, data: data}
	select {
	case p.queue <- m:
	case <-p.ctx.Done():
	}
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
		if p.publish == nil || p.ctx.Err() != nil {
			continue
		}
		for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
			ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
			err := p.publish(ctx, m.subject, m.msgID, m.data)
			cancel()
			if err == nil {
				break
			}
			select {
			case <-time.After(wait):
			case <-p.ctx.Done():
			}
			if p.ctx.Err() != nil {
				break
			}
		}
	}
}
