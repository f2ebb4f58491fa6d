package sdk

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// Option configures how a group reaches sandox.
type Option func(*options) error

type options struct {
	url            string
	creds          string
	tls            []nats.Option
	conn           *nats.Conn
	commandTimeout time.Duration
	actionTimeout  time.Duration
	progress       func(schemas.Progress) // WithProgress
}

func defaultOptions() options {
	return options{
		url:            DefaultURL(),
		commandTimeout: 5 * time.Minute,
		actionTimeout:  10 * time.Minute,
	}
}

// WithURL sets the NATS server URL. Without it the SDK uses DefaultURL:
// $SANDOX_NATS_URL, or nats://127.0.0.1:4222.
func WithURL(url string) Option {
	return func(o *options) error {
		if url == "" {
			return errors.New("sdk.WithURL: empty URL")
		}
		o.url = url
		return nil
	}
}

// WithCredentials authenticates with a NATS credentials file. Without it
// the SDK uses DefaultCredentials: $SANDOX_NATS_CREDS, or the client
// credentials `sandox up` wrote.
func WithCredentials(file string) Option {
	return func(o *options) error { o.creds = file; return nil }
}

// WithConn uses an existing NATS connection, which the caller keeps owning.
func WithConn(nc *nats.Conn) Option {
	return func(o *options) error {
		if nc == nil {
			return errors.New("sdk.WithConn: nil connection")
		}
		o.conn = nc
		return nil
	}
}

// WithCommandTimeout bounds a lifecycle call whose context has no deadline
// (default 5 minutes: a first sandbox start may build an image).
func WithCommandTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("sdk.WithCommandTimeout: timeout must be positive")
		}
		o.commandTimeout = d
		return nil
	}
}

// WithActionTimeout bounds an action batch whose context has no deadline
// (default 10 minutes).
func WithActionTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("sdk.WithActionTimeout: timeout must be positive")
		}
		o.actionTimeout = d
		return nil
	}
}

// WithTLS connects with TLS (a tls:// URL): caFile is the PEM CA that
// signed the server's certificate ("" trusts the system's roots), and
// certFile and keyFile a client certificate for a server that asks for one
// ("" for none).
func WithTLS(caFile, certFile, keyFile string) Option {
	return func(o *options) error {
		if (certFile == "") != (keyFile == "") {
			return errors.New("sdk.WithTLS: a client certificate needs both its file and its key")
		}
		o.tls = append(o.tls, nats.Secure())
		if caFile != "" {
			o.tls = append(o.tls, nats.RootCAs(caFile))
		}
		if certFile != "" {
			o.tls = append(o.tls, nats.ClientCert(certFile, keyFile))
		}
		return nil
	}
}
