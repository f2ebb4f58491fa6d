package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// Service runs inside the NATS server's process. It configures the server
// to trust the authority, and answers the control plane's requests to mint
// a sandbox's identity (MintSubject) and to revoke it (RevokeSubject). Its
// state, the revoked users and the users of each live sandbox, is kept in a
// file so that revocations outlive a restart. It is safe for concurrent use.
type Service struct {
	auth     *Authority
	path     string
	log      *slog.Logger
	resolver *server.MemAccResolver

	mu    sync.Mutex // guards state and the account's claims on the server
	state serviceState
	srv   *server.Server
	nc    *nats.Conn
}

type serviceState struct {
	// Revoked maps a user key to the Unix time of its revocation.
	Revoked map[string]int64 `json:"revoked"`
	// Sandboxes maps a live sandbox to the users minted for it.
	Sandboxes map[string][]string `json:"sandboxes"`
}

// NewService returns a service for a, keeping its state in the file at
// statePath (read now when it exists).
func NewService(a *Authority, statePath string, log *slog.Logger) (*Service, error) {
	s := &Service{auth: a, path: statePath, log: log, resolver: &server.MemAccResolver{}}
	data, err := os.ReadFile(statePath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, &s.state); err != nil {
			return nil, fmt.Errorf("auth state %s: %w", statePath, err)
		}
	}
	// A new state, or a file without (or with null) maps.
	if s.state.Revoked == nil {
		s.state.Revoked = map[string]int64{}
	}
	if s.state.Sandboxes == nil {
		s.state.Sandboxes = map[string][]string{}
	}
	return s, nil
}

// Configure sets opts to operator mode under the authority: the server
// trusts its operator, and resolves the SANDOX and system accounts from
// memory. Every connection must then present a user the account signed.
func (s *Service) Configure(opts *server.Options) error {
	oc, err := s.auth.OperatorClaims()
	if err != nil {
		return err
	}
	acc, err := s.auth.AccountJWT(s.auth.AccountClaims(s.state.Revoked))
	if err != nil {
		return err
	}
	sys, err := s.auth.SystemAccountJWT()
	if err != nil {
		return err
	}
	if err := s.resolver.Store(s.auth.AccountKey(), acc); err != nil {
		return err
	}
	if err := s.resolver.Store(s.auth.SystemKey(), sys); err != nil {
		return err
	}
	opts.TrustedOperators = []*jwt.OperatorClaims{oc}
	opts.SystemAccount = s.auth.SystemKey()
	opts.AccountResolver = s.resolver
	return nil
}

// Start connects to srv in process and serves the control plane's
// requests until srv shuts down.
func (s *Service) Start(srv *server.Server) error {
	creds, err := s.selfCreds()
	if err != nil {
		return err
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv), creds.Option(), nats.Name("sandox-auth"), nats.NoReconnect())
	if err != nil {
		return fmt.Errorf("auth service: connect: %w", err)
	}
	s.mu.Lock()
	s.srv, s.nc = srv, nc
	s.mu.Unlock()
	for subject, h := range map[string]nats.MsgHandler{MintSubject: s.serveMint, RevokeSubject: s.serveRevoke} {
		if _, err := nc.Subscribe(subject, h); err != nil {
			nc.Close()
			return fmt.Errorf("auth service: subscribe %s: %w", subject, err)
		}
	}
	return nc.Flush()
}

// selfCreds are the service's own identity: it hears its two subjects and
// answers.
func (s *Service) selfCreds() (Creds, error) {
	return s.auth.signUser("sandox-auth", func(uc *jwt.UserClaims) {
		uc.Sub.Allow.Add(MintSubject, RevokeSubject)
		uc.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	})
}

// request and reply are the service's wire messages.
type request struct {
	SandboxID string `json:"sandbox_id"`
	// Grants are the sandbox's database grants (mint only).
	Grants []schemas.DatabaseGrant `json:"grants,omitempty"`
	// SocketOnly (mint only) makes the identity valid on the server's Unix
	// socket alone.
	SocketOnly bool `json:"socket_only,omitempty"`
}

type reply struct {
	// Creds is the sandbox's .creds file (mint only).
	Creds string `json:"creds,omitempty"`
	// Revoked counts the users revoked (revoke only).
	Revoked int    `json:"revoked,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (s *Service) serveMint(m *nats.Msg) {
	var req request
	if err := json.Unmarshal(m.Data, &req); err != nil {
		s.respond(m, reply{Error: "bad request: " + err.Error()})
		return
	}
	creds, err := s.MintSandbox(req.SandboxID, req.SocketOnly, req.Grants...)
	if err != nil {
		s.respond(m, reply{Error: err.Error()})
		return
	}
	file, err := creds.File()
	if err != nil {
		s.respond(m, reply{Error: err.Error()})
		return
	}
	s.respond(m, reply{Creds: string(file)})
}

func (s *Service) serveRevoke(m *nats.Msg) {
	var req request
	if err := json.Unmarshal(m.Data, &req); err != nil {
		s.respond(m, reply{Error: "bad request: " + err.Error()})
		return
	}
	n, err := s.RevokeSandbox(req.SandboxID)
	if err != nil {
		s.respond(m, reply{Error: err.Error()})
		return
	}
	s.respond(m, reply{Revoked: n})
}

func (s *Service) respond(m *nats.Msg, r reply) {
	data, _ := json.Marshal(r)
	if err := m.Respond(data); err != nil {
		s.log.Warn("auth service: reply", "subject", m.Subject, "err", err)
	}
}

// MintSandbox issues a new identity for the sandbox id, allowed the
// database subjects of grants (see Authority.MintSandbox), and remembers
// it, so that RevokeSandbox can revoke it.
func (s *Service) MintSandbox(id string, socketOnly bool, grants ...schemas.DatabaseGrant) (Creds, error) {
	creds, err := s.auth.MintSandbox(id, socketOnly, grants...)
	if err != nil {
		return Creds{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.Sandboxes[id] = append(s.state.Sandboxes[id], creds.User)
	if err := s.save(); err != nil {
		return Creds{}, err
	}
	s.log.Info("sandbox identity minted", "sandbox", id, "user", creds.User)
	return creds, nil
}

// RevokeSandbox revokes every identity minted for the sandbox id: the
// server drops their connections at once and refuses them from now on. It
// returns how many it revoked; a sandbox with none is not an error.
func (s *Service) RevokeSandbox(id string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	users := s.state.Sandboxes[id]
	if len(users) == 0 {
		return 0, nil
	}
	now := time.Now().Unix()
	for _, u := range users {
		s.state.Revoked[u] = now
	}
	delete(s.state.Sandboxes, id)
	if err := s.save(); err != nil {
		return 0, err
	}
	if err := s.pushAccount(); err != nil {
		return 0, err
	}
	s.log.Info("sandbox identity revoked", "sandbox", id, "users", len(users))
	return len(users), nil
}

// pushAccount re-signs the SANDOX account with the current revocations and
// hands it to the running server, which closes revoked users' connections.
// Callers hold s.mu.
func (s *Service) pushAccount() error {
	tok, err := s.auth.AccountJWT(s.auth.AccountClaims(s.state.Revoked))
	if err != nil {
		return err
	}
	if err := s.resolver.Store(s.auth.AccountKey(), tok); err != nil {
		return err
	}
	if s.srv == nil {
		return nil
	}
	ac, err := jwt.DecodeAccountClaims(tok)
	if err != nil {
		return err
	}
	acc, err := s.srv.LookupAccount(s.auth.AccountKey())
	if err != nil {
		return fmt.Errorf("account %s: %w", AccountName, err)
	}
	s.srv.UpdateAccountClaims(acc, ac)
	return nil
}

// save writes the state file. Callers hold s.mu.
func (s *Service) save() error {
	data, err := json.Marshal(s.state)
	if err != nil {
		return err
	}
	return writeSecret(s.path, data)
}
