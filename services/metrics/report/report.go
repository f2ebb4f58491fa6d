// Package report answers the metrics exporter's request for the metrics a
// control-plane service measures itself (schemas.ServiceMetricsSubject):
// the service keeps them in its own Prometheus registry, and report sends
// them, labelled with the instance that measured them, in the Prometheus
// text format.
package report

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/sandox/sandox/schemas"
)

// InstanceLabel is the label report adds to every metric it sends: the
// instance of the service that measured it, so that the series of several
// instances stay apart when the exporter merges them.
const InstanceLabel = "service_instance"

// Instance names this process: its host name (a container's id under
// Docker) and its process id.
func Instance() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

// Answer subscribes nc to schemas.ServiceMetricsSubject (no queue group:
// every instance answers) and answers each request with what g gathers,
// each metric labelled InstanceLabel=instance, the header
// schemas.HeaderService set to service. It returns at once; unsubscribe
// (or drain) the subscription to stop. A gathering that fails in part
// sends what it gathered.
func Answer(nc *nats.Conn, service, instance string, g prometheus.Gatherer) (*nats.Subscription, error) {
	sub, err := nc.Subscribe(schemas.ServiceMetricsSubject, func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		body, _ := Encode(g, instance)
		reply := nats.NewMsg(m.Reply)
		reply.Header.Set(schemas.HeaderService, service)
		reply.Data = body
		_ = m.RespondMsg(reply)
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", schemas.ServiceMetricsSubject, err)
	}
	return sub, nil
}

// Encode gathers g and writes its metrics in the Prometheus text format,
// each labelled InstanceLabel=instance. The error says what could not be
// gathered or written; the bytes hold what could.
func Encode(g prometheus.Gatherer, instance string) ([]byte, error) {
	families, gerr := g.Gather()
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	name, value := InstanceLabel, instance
	for _, f := range families {
		for _, m := range f.Metric {
			m.Label = append(m.Label, &dto.LabelPair{Name: &name, Value: &value})
		}
		if err := enc.Encode(f); err != nil {
			return buf.Bytes(), fmt.Errorf("encode %s: %w", f.GetName(), err)
		}
	}
	return buf.Bytes(), gerr
}
