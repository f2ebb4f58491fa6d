package auth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
)

// startServer starts an embedded server under a fresh authority.
func startServer(t *testing.T) (*server.Server, *auth.Authority) {
	t.Helper()
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	cfg := natsd.DefaultConfig()
	cfg.Port, cfg.StoreDir, cfg.Auth = -1, t.TempDir(), a
	s, err := natsd.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s, a
}

// conn connects with creds and returns the connection and the errors the
// server sends it asynchronously (permissions violations).
func conn(t *testing.T, url string, creds auth.Creds) (*nats.Conn, <-chan error) {
	t.Helper()
	errs := make(chan error, 16)
	nc, err := nats.Connect(url, creds.Option(), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc, errs
}

func mint(t *testing.T, a *auth.Authority, role auth.Role, sandbox string) auth.Creds {
	t.Helper()
	c, err := a.Mint("test "+string(role), role, sandbox)
	require.NoError(t, err)
	return c
}

// violation waits for the server's refusal of op on subject.
func violation(t *testing.T, errs <-chan error, op, subject string) {
	t.Helper()
	want := "permissions violation for " + op + ` to "` + subject + `"`
	deadline := time.After(2 * time.Second)
	for {
		select {
		case err := <-errs:
			if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
				return
			}
		case <-deadline:
			t.Fatalf("got no %q from the server", want)
		}
	}
}

func TestNoCredentialsRefused(t *testing.T) {
	s, _ := startServer(t)
	_, err := nats.Connect(s.ClientURL(), nats.NoReconnect())
	require.Error(t, err)
	assert.ErrorIs(t, err, nats.ErrAuthorization)
}

func TestForeignAuthorityRefused(t *testing.T) {
	s, _ := startServer(t)
	other, err := auth.NewAuthority()
	require.NoError(t, err)
	_, err = nats.Connect(s.ClientURL(), mint(t, other, auth.RoleClient, "").Option(), nats.NoReconnect())
	assert.ErrorIs(t, err, nats.ErrAuthorization)
}

func TestSandboxPermissions(t *testing.T) {
	s, a := startServer(t)
	url := s.ClientURL()
	client, _ := conn(t, url, mint(t, a, auth.RoleClient, ""))
	sb, sbErrs := conn(t, url, mint(t, a, auth.RoleSandbox, "sb-a"))

	// The sandbox serves its own subjects and answers requests.
	_, err := sb.Subscribe("sandbox.sb-a.actions", func(m *nats.Msg) { _ = m.Respond([]byte("done")) })
	require.NoError(t, err)
	require.NoError(t, sb.Flush())
	resp, err := client.Request("sandbox.sb-a.actions", []byte("{}"), 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "done", string(resp.Data))

	subs := []string{">", "sandbox.sb-b.>", "sandbox.sb-b.actions", "sandbox.sb-b.jobs.>", "sandbox.*.jobs.>", "sandox.evt.job.>", "_INBOX.>", "sandox.>", "sandox.evt.>", "$JS.API.>", "$KV.>", "$SYS.>"}
	for _, subject := range subs {
		t.Run("subscribe "+subject, func(t *testing.T) {
			_, err := sb.SubscribeSync(subject)
			require.NoError(t, err) // refused asynchronously
			violation(t, sbErrs, "subscription", subject)
		})
	}
	pubs := []string{"sandbox.sb-b.actions", "sandbox.sb-b.jobs.j1.out", "sandbox.sb-b.jobs.j1.exit", "sandox.evt.job.sb-b.done", "sandox.evt.job.sb-a.done.more", "sandox.cmd.end_group", "sandox.auth.mint", "$JS.API.INFO", "$KV.sandox_sandboxes.sb-a", "sandbox.sb-a.actions"}
	for _, subject := range pubs {
		t.Run("publish "+subject, func(t *testing.T) {
			require.NoError(t, sb.Publish(subject, []byte("x")))
			violation(t, sbErrs, "publish", subject)
		})
	}
	// Its own jobs' messages and notify records get through.
	control, _ := conn(t, url, mint(t, a, auth.RoleControl, ""))
	jobs, err := control.SubscribeSync("sandbox.sb-a.jobs.>")
	require.NoError(t, err)
	notify, err := control.SubscribeSync("sandox.evt.job.sb-a.*")
	require.NoError(t, err)
	require.NoError(t, control.Flush())
	require.NoError(t, sb.Publish("sandbox.sb-a.jobs.j1.out", []byte("x")))
	require.NoError(t, sb.Publish("sandox.evt.job.sb-a.done", []byte("x")))
	_, err = jobs.NextMsg(2 * time.Second)
	require.NoError(t, err, "the sandbox publishes its own job output")
	_, err = notify.NextMsg(2 * time.Second)
	require.NoError(t, err, "the sandbox publishes its own jobs' notify records")

	// Still working after every refusal.
	resp, err = client.Request("sandbox.sb-a.actions", []byte("{}"), 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "done", string(resp.Data))
}

func TestClientPermissions(t *testing.T) {
	s, a := startServer(t)
	tests := []struct {
		name    string
		role    auth.Role
		op      string
		subject string
	}{
		{"client writes a bucket", auth.RoleClient, "publish", "$KV.sandox_sandboxes.sb-a"},
		{"client sends a notice", auth.RoleClient, "publish", "sandbox.sb-a.notice"},
		{"client forges job output", auth.RoleClient, "publish", "sandbox.sb-a.jobs.j1.out"},
		{"client forges a job's exit", auth.RoleClient, "publish", "sandox.evt.job.sb-a.done"},
		{"client deletes a stream", auth.RoleClient, "publish", "$JS.API.STREAM.DELETE.SANDOX_EVENTS"},
		{"client takes commands", auth.RoleClient, "publish", "$JS.API.CONSUMER.MSG.NEXT.SANDOX_COMMANDS.orchestrator"},
		{"client mints identities", auth.RoleClient, "publish", auth.MintSubject},
		{"client reads sandbox traffic", auth.RoleClient, "subscription", "sandbox.>"},
		{"client sends a command to a host", auth.RoleClient, "publish", "sandox.cmd.host.host-a.end_group"},
		{"client asks a host for stats", auth.RoleClient, "publish", "sandox.req.host.host-a.stats.sandbox.sb-a"},
		{"audit sends a command", auth.RoleAudit, "publish", "sandox.cmd.end_group"},
		{"audit sends a batch", auth.RoleAudit, "publish", "sandbox.sb-a.actions"},
		{"audit sends a request", auth.RoleAudit, "publish", "sandox.req.status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, errs := conn(t, s.ClientURL(), mint(t, a, tt.role, ""))
			if tt.op == "publish" {
				require.NoError(t, nc.Publish(tt.subject, []byte("x")))
			} else {
				_, err := nc.SubscribeSync(tt.subject)
				require.NoError(t, err)
			}
			violation(t, errs, tt.op, tt.subject)
		})
	}
}

func TestRevokeDropsAndRefuses(t *testing.T) {
	s, a := startServer(t)
	control, _ := conn(t, s.ClientURL(), mint(t, a, auth.RoleControl, ""))
	c := auth.Client{NC: control}
	ctx := context.Background()

	file, err := c.MintSandbox(ctx, "sb-r", false)
	require.NoError(t, err)
	creds, err := auth.ParseCreds(file)
	require.NoError(t, err)
	other, err := c.MintSandbox(ctx, "sb-other", false)
	require.NoError(t, err)
	otherCreds, err := auth.ParseCreds(other)
	require.NoError(t, err)

	closed := make(chan struct{})
	sb, err := nats.Connect(s.ClientURL(), creds.Option(), nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	require.NoError(t, err)
	defer sb.Close()
	survivor, _ := conn(t, s.ClientURL(), otherCreds)

	start := time.Now()
	require.NoError(t, c.RevokeSandbox(ctx, "sb-r"))
	select {
	case <-closed:
		t.Logf("connection dropped %s after the revocation", time.Since(start))
	case <-time.After(2 * time.Second):
		t.Fatal("the revoked sandbox's connection is still open after 2s")
	}
	_, err = nats.Connect(s.ClientURL(), creds.Option(), nats.NoReconnect())
	require.Error(t, err)
	assert.ErrorIs(t, err, nats.ErrAuthorization)
	assert.True(t, survivor.IsConnected(), "another sandbox's connection must stay")

	// Revoking again, or a sandbox never minted, is no error.
	require.NoError(t, c.RevokeSandbox(ctx, "sb-r"))
	require.NoError(t, c.RevokeSandbox(ctx, "never"))
}

func TestRevocationOutlivesRestart(t *testing.T) {
	a, err := auth.NewAuthority()
	require.NoError(t, err)
	cfg := natsd.DefaultConfig()
	cfg.Port, cfg.StoreDir, cfg.Auth = -1, t.TempDir(), a
	s, err := natsd.Start(cfg)
	require.NoError(t, err)
	control, err := nats.Connect(s.ClientURL(), mint(t, a, auth.RoleControl, "").Option())
	require.NoError(t, err)
	file, err := auth.Client{NC: control}.MintSandbox(context.Background(), "sb-p", false)
	require.NoError(t, err)
	require.NoError(t, auth.Client{NC: control}.RevokeSandbox(context.Background(), "sb-p"))
	control.Close()
	s.Shutdown()
	s.WaitForShutdown()

	s, err = natsd.Start(cfg)
	require.NoError(t, err)
	defer s.Shutdown()
	creds, err := auth.ParseCreds(file)
	require.NoError(t, err)
	_, err = nats.Connect(s.ClientURL(), creds.Option(), nats.NoReconnect())
	assert.ErrorIs(t, err, nats.ErrAuthorization)
}

func TestPermissionsNeedSandboxOnlyForSandboxRole(t *testing.T) {
	tests := []struct {
		name    string
		role    auth.Role
		sandbox string
	}{
		{"sandbox without id", auth.RoleSandbox, ""},
		{"client with id", auth.RoleClient, "sb-1"},
		{"sandbox with a wildcard", auth.RoleSandbox, "*"},
		{"unknown role", auth.Role("root"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := auth.Permissions(tt.role, tt.sandbox)
			assert.Error(t, err)
		})
	}
}

func TestSocketOnlySandboxRefusedOverTCP(t *testing.T) {
	s, a := startServer(t)
	creds, err := a.MintSandbox("sb-s", true)
	require.NoError(t, err)
	_, err = nats.Connect(s.ClientURL(), creds.Option(), nats.NoReconnect())
	assert.ErrorIs(t, err, nats.ErrAuthorization, "over TCP")
	nc, err := nats.Connect("", nats.InProcessServer(s), creds.Option(), nats.NoReconnect())
	require.NoError(t, err, "in process, as through the socket")
	nc.Close()
}

// TestSandboxAsksTheSearchService shows that a sandbox may send the search
// service a request and get the answer in its own inbox, and no one else's.
func TestSandboxAsksTheSearchService(t *testing.T) {
	s, a := startServer(t)
	url := s.ClientURL()
	service, serviceErrs := conn(t, url, mint(t, a, auth.RoleSearch, ""))
	_, err := service.QueueSubscribe(schemas.SearchSubjects, "sandox-search", func(m *nats.Msg) { _ = m.Respond([]byte("results")) })
	require.NoError(t, err)
	require.NoError(t, service.Flush())

	errs := make(chan error, 16)
	sb, err := nats.Connect(url, mint(t, a, auth.RoleSandbox, "sb-a").Option(), nats.NoReconnect(),
		nats.CustomInboxPrefix(schemas.SandboxInboxPrefix("sb-a")),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	require.NoError(t, err)
	t.Cleanup(sb.Close)
	resp, err := sb.Request(schemas.SandboxSearchSubject("sb-a"), []byte(`{"query":"q"}`), 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "results", string(resp.Data))

	// It may not ask in another sandbox's name (and spend its quota).
	require.NoError(t, sb.Publish(schemas.SandboxSearchSubject("sb-b"), []byte(`{"query":"q"}`)))
	violation(t, errs, "publish", schemas.SandboxSearchSubject("sb-b"))

	// Another sandbox's inbox stays closed to it.
	_, err = sb.SubscribeSync(schemas.SandboxInboxPrefix("sb-b") + ".>")
	require.NoError(t, err)
	violation(t, errs, "subscription", schemas.SandboxInboxPrefix("sb-b")+".>")

	// The search service publishes replies and nothing else.
	require.NoError(t, service.Publish("sandox.cmd.end_group", []byte("x")))
	violation(t, serviceErrs, "publish", "sandox.cmd.end_group")
	_, err = service.SubscribeSync("sandbox.sb-a.>")
	require.NoError(t, err)
	violation(t, serviceErrs, "subscription", "sandbox.sb-a.>")
}

func TestSandboxDatabaseGrants(t *testing.T) {
	s, a := startServer(t)
	grants := []schemas.DatabaseGrant{
		{Database: "neo4j", Namespace: "pub", Read: true},
		{Database: "qdrant", Namespace: "work", Read: true, Write: true},
	}
	creds, err := a.Mint("sb", auth.RoleSandbox, "sb-g", grants...)
	require.NoError(t, err)
	sb, errs := conn(t, s.ClientURL(), creds)
	data, _ := conn(t, s.ClientURL(), mint(t, a, auth.RoleData, ""))
	got := make(chan string, 16)
	_, err = data.Subscribe("sandox.db.>", func(m *nats.Msg) { got <- m.Subject })
	require.NoError(t, err)
	require.NoError(t, data.Flush())

	tests := []struct {
		subject string
		allowed bool
	}{
		{"sandox.db.sb-g.neo4j.pub.read", true},
		{"sandox.db.sb-g.neo4j.pub.write", false},
		{"sandox.db.sb-g.qdrant.work.read", true},
		{"sandox.db.sb-g.qdrant.work.write", true},
		{"sandox.db.sb-g.list", true},
		{"sandox.db.sb-g.neo4j.work.read", false},
		{"sandox.db.sb-other.neo4j.pub.read", false},
		{"sandox.db.sb-other.list", false},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			require.NoError(t, sb.Publish(tt.subject, []byte("{}")))
			if !tt.allowed {
				violation(t, errs, "publish", tt.subject)
				return
			}
			select {
			case s := <-got:
				assert.Equal(t, tt.subject, s)
			case <-time.After(2 * time.Second):
				t.Fatalf("the data service got nothing on %s", tt.subject)
			}
		})
	}

	_, err = a.Mint("sb", auth.RoleSandbox, "sb-g", schemas.DatabaseGrant{Database: "mysql", Namespace: "x", Read: true})
	require.Error(t, err)
	_, err = a.Mint("sb", auth.RoleSandbox, "sb-g", schemas.DatabaseGrant{Database: "neo4j", Namespace: "a.b", Read: true})
	require.Error(t, err)
}

// TestServiceMetricsRequest shows that the audit role may ask every
// instance of the data and search services for their own metrics, each
// answering with its own reply, and that a sandbox may neither ask nor
// listen there.
func TestServiceMetricsRequest(t *testing.T) {
	s, a := startServer(t)
	url := s.ClientURL()
	for _, role := range []auth.Role{auth.RoleData, auth.RoleSearch} {
		svc, errs := conn(t, url, mint(t, a, role, ""))
		_, err := svc.Subscribe(schemas.ServiceMetricsSubject, func(m *nats.Msg) { _ = m.Respond([]byte(role)) })
		require.NoError(t, err)
		require.NoError(t, svc.Flush())
		t.Cleanup(func() { assert.Empty(t, errs, "%s answers without a refusal", role) })
	}
	audit, _ := conn(t, url, mint(t, a, auth.RoleAudit, ""))
	inbox := audit.NewRespInbox()
	replies, err := audit.SubscribeSync(inbox)
	require.NoError(t, err)
	require.NoError(t, audit.PublishRequest(schemas.ServiceMetricsSubject, inbox, nil))
	var got []string
	for range 2 {
		m, err := replies.NextMsg(2 * time.Second)
		require.NoError(t, err)
		got = append(got, string(m.Data))
	}
	assert.ElementsMatch(t, []string{"data", "search"}, got)

	sb, sbErrs := conn(t, url, mint(t, a, auth.RoleSandbox, "sb-m"))
	require.NoError(t, sb.Publish(schemas.ServiceMetricsSubject, nil))
	violation(t, sbErrs, "publish", schemas.ServiceMetricsSubject)
	_, err = sb.SubscribeSync(schemas.ServiceMetricsSubject)
	require.NoError(t, err)
	violation(t, sbErrs, "subscription", schemas.ServiceMetricsSubject)
}
