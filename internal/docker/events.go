package docker

import (
	"context"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// Event is a change in the life of a container.
type Event struct {
	// Action is "oom", "die", "start", ... as the engine names it.
	Action      string
	ContainerID string
	Labels      map[string]string
	// ExitCode is set on "die".
	ExitCode int
	Time     time.Time
}

// Events streams the events of containers that carry every label
// ("key=value"), from since (zero: from now) until ctx ends or the stream
// fails; the event channel is then closed and, when the stream failed, the
// error channel says why.
func (c *Client) Events(ctx context.Context, since time.Time, labels ...string) (<-chan Event, <-chan error) {
	f := filters.NewArgs(filters.Arg("type", string(events.ContainerEventType)))
	for _, l := range labels {
		f.Add("label", l)
	}
	opts := events.ListOptions{Filters: f}
	if !since.IsZero() {
		opts.Since = strconv.FormatFloat(float64(since.UnixNano())/1e9, 'f', 9, 64)
	}
	msgs, errs := c.api.Events(ctx, opts)
	out, errc := make(chan Event), make(chan error, 1)
	go func() {
		defer close(out)
		for {
			select {
			case m := <-msgs:
				ev := Event{
					Action:      string(m.Action),
					ContainerID: m.Actor.ID,
					Labels:      m.Actor.Attributes,
					Time:        time.Unix(0, m.TimeNano),
				}
				ev.ExitCode, _ = strconv.Atoi(m.Actor.Attributes["exitCode"])
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			case err := <-errs:
				errc <- err
				return
			}
		}
	}()
	return out, errc
}
