package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator"
)

// pki is a CA and certificates it signed, as PEM files in a temp dir.
type pki struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandox test CA"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &pki{dir: t.TempDir(), ca: ca, caKey: key}
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pki) write(t *testing.T, name, kind string, der []byte) string {
	t.Helper()
	f := filepath.Join(p.dir, name)
	require.NoError(t, os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return f
}

// issue returns the cert and key files of a new leaf for ip (a server) or
// for a client.
func (p *pki) issue(t *testing.T, name string, ip net.IP) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+"-key.pem", "EC PRIVATE KEY", kder)
}

// TestTLSRemoteClient runs a second sandox system whose NATS listens with
// TLS and asks clients for a certificate: the SDK, with credentials and a
// client certificate, runs a batch in a real sandbox over it; a client
// without TLS, or without a certificate, is refused.
func TestTLSRemoteClient(t *testing.T) {
	p := newPKI(t)
	serverCert, serverKey := p.issue(t, "server", net.ParseIP("127.0.0.1"))
	clientCert, clientKey := p.issue(t, "client", nil)

	a, err := auth.NewAuthority()
	require.NoError(t, err)
	sock := t.TempDir()
	require.NoError(t, os.Chmod(sock, 0o755))
	s := natstest.Start(t, natstest.Auth(a), func(c *natsd.Config) {
		c.Socket = filepath.Join(sock, "nats.sock")
		c.TLS = natsd.TLSConfig{Cert: serverCert, Key: serverKey, ClientCA: p.caFile}
	})
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)

	// The worker, a control-plane client, also connects with TLS.
	ctl, err := a.Mint("tls worker", auth.RoleControl, "")
	require.NoError(t, err)
	wnc, err := nats.Connect(url, ctl.Option(), nats.RootCAs(p.caFile), nats.ClientCert(clientCert, clientKey))
	require.NoError(t, err)
	t.Cleanup(wnc.Close)
	ocfg := orchestrator.DefaultConfig()
	ocfg.Worker, ocfg.Network, ocfg.NATSSocket = "it-tls-worker", env.network, sock
	ocfg.DisksDir, ocfg.CredsDir = "", t.TempDir()
	w, err := orchestrator.NewWorker(t.Context(), wnc, docker.NewRuntime(env.docker).Engine(), ocfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() { cancel(); <-done })

	client, err := a.Mint("tls client", auth.RoleClient, "")
	require.NoError(t, err)
	credsFile := filepath.Join(t.TempDir(), "client.creds")
	data, err := client.File()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(credsFile, data, 0o600))

	t.Run("refused without TLS or without a client certificate", func(t *testing.T) {
		_, err := nats.Connect(s.ClientURL(), client.Option(), nats.NoReconnect())
		assert.Error(t, err, "plain connection")
		_, err = nats.Connect(url, client.Option(), nats.RootCAs(p.caFile), nats.NoReconnect())
		assert.Error(t, err, "no client certificate")
	})

	t.Run("the SDK runs a batch over TLS", func(t *testing.T) {
		g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "it-tls", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}},
			sdk.WithURL(url), sdk.WithCredentials(credsFile), sdk.WithTLS(p.caFile, clientCert, clientKey))
		require.NoError(t, err)
		require.NoError(t, g.Start(t.Context()))
		t.Cleanup(func() { _ = g.End(context.Background()) })
		sb, err := g.CreateSandbox(t.Context(), "it-tls-1", sdk.SandboxOptions{})
		require.NoError(t, err)
		require.NoError(t, sb.Start(t.Context()))
		obs, err := sb.SendActionsJSON(t.Context(), []byte(`{"terminal_tools.run": {"args": {"command": "echo over tls"}}}`))
		require.NoError(t, err)
		require.Len(t, obs, 1)
		mustOK(t, obs[0])
		assert.Equal(t, "over tls", strings.TrimSpace(obs[0].Stdout))
	})
}
