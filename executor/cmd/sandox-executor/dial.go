package main

import (
	"net"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// unixScheme marks a NATS URL that is a Unix socket path: a sandbox has no
// network and reaches NATS through a socket mounted into it.
const unixScheme = "unix://"

// unixDialer dials the socket whatever address nats.go asks for.
type unixDialer struct{ path string }

func (d unixDialer) Dial(_, _ string) (net.Conn, error) {
	return (&net.Dialer{Timeout: 5 * time.Second}).Dial("unix", d.path)
}

// dialTarget returns the URL to give nats.Connect and the options that
// make it dial a unix:// URL's socket.
func dialTarget(url string) (string, []nats.Option) {
	path, ok := strings.CutPrefix(url, unixScheme)
	if !ok {
		return url, nil
	}
	return "nats://nats-socket:4222", []nats.Option{nats.SetCustomDialer(unixDialer{path: path})}
}
