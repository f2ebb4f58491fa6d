package routing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// ClientSubject maps the subject of a command forwarded to a host
// (schemas.HostCommandSubject) back to the one its client published it
// on, and reports whether it was forwarded.
func ClientSubject(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, schemas.HostCommandPrefix)
	if !ok {
		return subject, false
	}
	_, kind, _ := strings.Cut(rest, ".")
	return schemas.CommandSubjectPrefix + kind, true
}

// Route returns the host whose workers must run cmd, or "" when this
// worker runs it: a create goes where placement puts it; a start, end,
// pause, resume or stats request to the host of its sandbox, while that host is live and
// the sandbox is not lost. Everything else (group commands, commands on
// sandboxes that do not exist, that are lost or whose host is silent) runs
// here, and the handlers answer for what this host cannot do. A create
// that fits no host is the error.
func (r *Router) Route(ctx context.Context, cmd schemas.Command) (string, error) {
	switch cmd.Kind {
	case schemas.CreateSandbox:
		if cmd.Sandbox == nil || schemas.IsPoolID(cmd.SandboxID) {
			return "", nil
		}
		g, _, err := r.store.Group(ctx, cmd.GroupID)
		if err != nil {
			return "", nil
		}
		if st, _, err := r.store.Sandbox(ctx, cmd.SandboxID); err == nil {
			// Taken: by another command (already_exists), or by this one,
			// forwarded before a redelivery, and maybe still running on
			// its host. That host answers either way; a forward repeated
			// within the duplicate window is stored once.
			if r.hosts.Here(st.Host) || !r.hosts.Live(ctx, st.Host) {
				return "", nil
			}
			return st.Host, nil
		}
		spec := *cmd.Sandbox
		spec.ID = cmd.SandboxID
		host, err := r.placer.Place(ctx, g, spec)
		if err != nil {
			switch wire.Error(err).Code {
			case schemas.CodeResourceExhausted, schemas.CodeUnavailable:
				return "", err
			}
			return "", nil // a bad spec, which the create reports in full
		}
		return host, nil
	case schemas.StartSandbox, schemas.EndSandbox, schemas.SandboxStats, schemas.PauseSandbox, schemas.ResumeSandbox,
		schemas.TakeCheckpoint, schemas.ListCheckpoints, schemas.DiffCheckpoints, schemas.RollbackSandbox:
		st, _, err := r.store.Sandbox(ctx, cmd.SandboxID)
		if err != nil || r.hosts.Here(st.Host) || st.State == schemas.StateLost || !r.hosts.Live(ctx, st.Host) {
			return "", nil
		}
		return st.Host, nil
	}
	return "", nil
}

// Forward stores the command message msg again on host's subject, for its
// workers, and acknowledges msg once the stream has the copy. The copy's
// Nats-Msg-Id is derived from the command id, so a forward repeated after
// a redelivery is stored once; the host's worker answers the command on
// its result subject as any worker would.
//
// tried, when not empty, lists the hosts a create was sent to already
// (HeaderTried), so that the next does not send it back.
func (r *Router) Forward(ctx context.Context, msg jetstream.Msg, cmd schemas.Command, host string, tried ...string) {
	out := nats.NewMsg(schemas.HostCommandSubject(host, cmd.Kind))
	out.Data = msg.Data()
	for k, v := range msg.Headers() {
		out.Header[k] = v
	}
	out.Header.Del(nats.MsgIdHdr)
	if len(tried) > 0 {
		out.Header.Set(HeaderTried, strings.Join(tried, ","))
	}
	if _, err := r.js.PublishMsg(ctx, out, jetstream.WithMsgID(cmd.ID+"-to-"+host)); err != nil {
		r.log.Warn("forward command to its host", "command", cmd.ID, "kind", cmd.Kind, "host", host, "err", err)
		_ = msg.NakWithDelay(time.Second)
		return
	}
	if err := msg.Ack(); err != nil {
		r.log.Warn("ack forwarded command", "command", cmd.ID, "err", err)
	}
	r.log.Debug("command forwarded", "command", cmd.ID, "kind", cmd.Kind, "host", host)
}

// HeaderTried, on a create forwarded to a host, lists (comma-separated)
// the hosts whose admission refused it already.
const HeaderTried = "Sandox-Tried"

// RetryElsewhere forwards a create that this host's admission refused
// (another create took the room between placement's dry run and the
// admission) to the next host placement finds, leaving out this host and
// those in hdr's HeaderTried. It reports whether it forwarded msg; if not,
// the refusal is the answer.
func (r *Router) RetryElsewhere(ctx context.Context, msg jetstream.Msg, hdr nats.Header, cmd schemas.Command) bool {
	if cmd.Sandbox == nil {
		return false
	}
	var tried []string
	if t := hdr.Get(HeaderTried); t != "" {
		tried = strings.Split(t, ",")
	}
	tried = append(tried, r.cfg.Host)
	g, _, err := r.store.Group(ctx, cmd.GroupID)
	if err != nil {
		return false
	}
	hosts, err := r.placer.LiveHosts(ctx)
	if err != nil {
		return false
	}
	for _, t := range tried {
		delete(hosts, t)
	}
	if len(hosts) == 0 {
		return false
	}
	spec := *cmd.Sandbox
	spec.ID = cmd.SandboxID
	host, err := r.placer.On(ctx, hosts, g, spec)
	if err != nil {
		return false
	}
	r.log.Info("admission refused a placed create; trying the next host", "command", cmd.ID, "sandbox", cmd.SandboxID, "host", host, "tried", tried)
	r.Forward(ctx, msg, cmd, host, tried...)
	return true
}

// Delegate has host's workers run cmd, a part of a group command, and
// waits for its result. A command already answered (a redelivered group
// command) is answered from the audit log. It gives up with
// CodeUnavailable when the host is not, or stops being, live.
func (r *Router) Delegate(ctx context.Context, host string, cmd schemas.Command) (schemas.CommandResult, error) {
	if prev, ok := r.previous(ctx, cmd.ID); ok {
		return prev, nil
	}
	if !r.hosts.Live(ctx, host) {
		return schemas.CommandResult{}, schemas.Errorf(schemas.CodeUnavailable, "host %s is not answering", host)
	}
	sub, err := r.nc.SubscribeSync(schemas.ResultSubject(cmd.ID))
	if err != nil {
		return schemas.CommandResult{}, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	cmd.IssuedAt = time.Now().UTC()
	data, err := json.Marshal(cmd)
	if err != nil {
		return schemas.CommandResult{}, err
	}
	msg := nats.NewMsg(schemas.HostCommandSubject(host, cmd.Kind))
	msg.Data = data
	if _, err := r.js.PublishMsg(ctx, msg, jetstream.WithMsgID(cmd.ID)); err != nil {
		return schemas.CommandResult{}, fmt.Errorf("send %s %s to host %s: %w", cmd.Kind, cmd.ID, host, err)
	}
	for {
		wait, cancel := context.WithTimeout(ctx, r.cfg.Heartbeat)
		m, err := sub.NextMsgWithContext(wait)
		cancel()
		if err == nil {
			var res schemas.CommandResult
			if err := json.Unmarshal(m.Data, &res); err != nil {
				return res, fmt.Errorf("result of %s %s: %w", cmd.Kind, cmd.ID, err)
			}
			return res, nil
		}
		if ctx.Err() != nil {
			return schemas.CommandResult{}, ctx.Err()
		}
		if !r.hosts.Live(ctx, host) {
			return schemas.CommandResult{}, schemas.Errorf(schemas.CodeUnavailable, "host %s stopped answering during %s %s", host, cmd.Kind, cmd.ID)
		}
	}
}
