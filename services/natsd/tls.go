package natsd

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// TLSConfig turns on TLS for client connections. The listener stays on
// Host; to serve remote clients, listen on a routable address and set Cert
// and Key. With ClientCA set, clients must also present a certificate that
// CA signed (mutual TLS) on top of their NATS credentials.
type TLSConfig struct {
	// Cert and Key are PEM files of the server's certificate and key.
	Cert, Key string
	// ClientCA is a PEM file of the CA that signs client certificates;
	// "" asks for no client certificate.
	ClientCA string
}

func (t TLSConfig) apply(opts *server.Options) error {
	if t.Cert == "" && t.Key == "" {
		return nil
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: t.Cert,
		KeyFile:  t.Key,
		CaFile:   t.ClientCA,
		Verify:   t.ClientCA != "",
	})
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	opts.TLSConfig = tc
	opts.TLS = true
	opts.TLSVerify = t.ClientCA != ""
	opts.TLSTimeout = 2
	return nil
}
