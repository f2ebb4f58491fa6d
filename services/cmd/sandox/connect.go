package main

import (
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/sdk"
)

// connect reaches NATS at url as the SDK does: with the credentials of
// sdk.DefaultCredentials ($SANDOX_NATS_CREDS, or the client credentials
// `sandox up` wrote).
func connect(url string, timeout time.Duration) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("sandox-cli"), nats.Timeout(timeout)}
	if f := sdk.DefaultCredentials(); f != "" {
		opts = append(opts, nats.UserCredentials(f))
	}
	return nats.Connect(url, opts...)
}

// envOr returns the value of the environment variable key, or def when it
// is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
