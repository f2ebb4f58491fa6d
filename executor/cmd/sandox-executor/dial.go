package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// unixScheme marks a NATS URL that is a Unix socket path: a sandbox has no
// network and reaches NATS through a socket mounted into it.
const unixScheme = "unix://"

// socketHost names the i-th socket of a URL list for nats.go, which only
// knows host:port servers; unixDialer maps it back to the socket's path.
func socketHost(i int) string { return fmt.Sprintf("nats-socket-%d:4222", i) }

// unixDialer dials the socket of each socketHost address, and any other
// address (a nats:// URL of a mixed list) over TCP.
type unixDialer struct{ paths map[string]string }

func (d unixDialer) Dial(network, address string) (net.Conn, error) {
	dialer := net.Dialer{Timeout: 5 * time.Second}
	if path, ok := d.paths[address]; ok {
		return dialer.Dial("unix", path)
	}
	return dialer.Dial(network, address)
}

// dialTarget returns the URL list to give nats.Connect and the options
// that make it dial the unix:// URLs of list, a comma-separated NATS URL
// list as SANDOX_NATS_URL holds it. With several sockets, one per node of
// a cluster, the first is the one to use (the host's own node) and the
// connection moves to the next when its node dies. The servers a cluster
// advertises are not added: they are network addresses, which a sandbox
// without a network cannot reach.
func dialTarget(list string) (string, []nats.Option) {
	urls := strings.Split(list, ",")
	paths := map[string]string{}
	for i, u := range urls {
		u = strings.TrimSpace(u)
		if path, ok := strings.CutPrefix(u, unixScheme); ok {
			host := socketHost(i)
			paths[host] = path
			u = "nats://" + host
		}
		urls[i] = u
	}
	if len(paths) == 0 {
		return list, nil
	}
	return strings.Join(urls, ","), []nats.Option{nats.SetCustomDialer(unixDialer{paths: paths}), nats.IgnoreDiscoveredServers(), nats.DontRandomize()}
}
