package natsd

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/logger"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// refusalLog is the server's logger. It passes every line on to next (when
// set) and turns the server's permission violations into refusals, which
// the recorder publishes on schemas.RefusalSubject. The NATS server emits
// no system event per refused message; its log line, which names the
// connection, is the one place it reports one.
type refusalLog struct {
	next    server.Logger
	pending chan string
}

// violation matches the lines of (*client).pubPermissionViolation,
// subPermissionViolation and replySubjectViolation; the client's prefix
// carries "cid:N".
var (
	violation = regexp.MustCompile(`(Publish|Subscription) Violation - (Subject|Reply) "([^"]*)"`)
	clientID  = regexp.MustCompile(`\bcid:(\d+)\b`)
	// accountUser is the "account/user" part of the prefix under
	// operator mode.
	accountUser = regexp.MustCompile(`"[^"/ ]+/(U[A-Z2-7]{55})"`)
)

func (l *refusalLog) Noticef(format string, v ...any) {
	if l.next != nil {
		l.next.Noticef(format, v...)
	}
}

func (l *refusalLog) Warnf(format string, v ...any) {
	if l.next != nil {
		l.next.Warnf(format, v...)
	}
}

func (l *refusalLog) Fatalf(format string, v ...any) {
	if l.next != nil {
		l.next.Fatalf(format, v...)
	}
}

func (l *refusalLog) Debugf(format string, v ...any) {
	if l.next != nil {
		l.next.Debugf(format, v...)
	}
}

func (l *refusalLog) Tracef(format string, v ...any) {
	if l.next != nil {
		l.next.Tracef(format, v...)
	}
}

// Errorf never blocks the server: a refusal that finds the queue full is
// dropped (and counted in the server's own log when it logs).
func (l *refusalLog) Errorf(format string, v ...any) {
	if l.next != nil {
		l.next.Errorf(format, v...)
	}
	if !strings.Contains(format, "Violation") {
		return
	}
	select {
	case l.pending <- fmt.Sprintf(format, v...):
	default:
	}
}

// parseRefusal reads a violation line; ok is false for any other line.
func parseRefusal(line string) (r schemas.Refusal, ok bool) {
	m := violation.FindStringSubmatch(line)
	if m == nil {
		return r, false
	}
	switch {
	case m[1] == "Subscription":
		r.Op = "subscribe"
	case m[2] == "Reply":
		r.Op = "reply"
	default:
		r.Op = "publish"
	}
	r.Subject = m[3]
	if c := clientID.FindStringSubmatch(line); c != nil {
		r.ClientID, _ = strconv.ParseUint(c[1], 10, 64)
	}
	if u := accountUser.FindStringSubmatch(line); u != nil {
		r.User = u[1]
	}
	return r, true
}

// installRefusals makes s log through a refusalLog and starts the recorder
// that publishes the refusals, over an in-process connection, until s
// shuts down. With authority set it connects as the control plane.
func installRefusals(s *server.Server, cfg Config) *refusalLog {
	l := &refusalLog{pending: make(chan string, 256)}
	if cfg.Debug {
		l.next = logger.NewStdLogger(true, true, false, false, false)
	}
	s.SetLoggerV2(l, cfg.Debug, false, false)
	return l
}

// record connects in process and publishes the refusals until the
// connection closes, which the server's shutdown does.
func (l *refusalLog) record(s *server.Server, cfg Config, log *slog.Logger) error {
	opts := []nats.Option{nats.InProcessServer(s), nats.Name("sandox-refusals"), nats.NoReconnect()}
	if cfg.Auth != nil {
		creds, err := cfg.Auth.Mint("sandox-refusals", auth.RoleControl, "")
		if err != nil {
			return fmt.Errorf("refusals: %w", err)
		}
		opts = append(opts, creds.Option())
	}
	closed := make(chan struct{})
	opts = append(opts, nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return fmt.Errorf("refusals: connect: %w", err)
	}
	name := subjectToken(s.Name())
	go func() {
		for {
			select {
			case <-closed:
				return
			case line := <-l.pending:
				r, ok := parseRefusal(line)
				if !ok {
					continue
				}
				r.Server, r.Time = s.Name(), time.Now().UTC()
				describeClient(s, &r)
				data, _ := json.Marshal(r)
				if err := nc.Publish(schemas.RefusalSubject(name), data); err != nil {
					log.Warn("record refusal", "subject", r.Subject, "err", err)
				}
			}
		}
	}()
	return nil
}

// describeClient fills in who the refused connection is, from the
// server's view of it (its user key, its JWT's name and role tag).
func describeClient(s *server.Server, r *schemas.Refusal) {
	if r.ClientID == 0 {
		return
	}
	cz, err := s.Connz(&server.ConnzOptions{CID: r.ClientID, Username: true})
	if err != nil || len(cz.Conns) == 0 {
		return
	}
	ci := cz.Conns[0]
	r.Name = ci.Name
	if ci.AuthorizedUser != "" {
		r.User = ci.AuthorizedUser
	}
	if uc, err := jwt.DecodeUserClaims(ci.JWT); err == nil {
		r.UserName = uc.Name
		for _, tag := range uc.Tags {
			if role, ok := strings.CutPrefix(tag, "role:"); ok {
				r.Role = role
			}
		}
	}
}

// subjectToken makes name usable as one subject token.
func subjectToken(name string) string {
	t := strings.Map(func(r rune) rune {
		if r == '.' || r == '*' || r == '>' || r <= ' ' {
			return '_'
		}
		return r
	}, name)
	if t == "" {
		return "nats"
	}
	return t
}
