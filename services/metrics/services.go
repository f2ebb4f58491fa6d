package metrics

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sandox/sandox/schemas"
)

// serviceGatherer gathers the metrics the control-plane services measure
// themselves (services/metrics/report): at each gathering it asks
// schemas.ServiceMetricsSubject once and reads every answer that comes
// within wait, each instance's metrics labelled with the instance. It adds
// sandox_service_instances, the answers by service. It is safe for
// concurrent use.
type serviceGatherer struct {
	nc   *nats.Conn
	wait time.Duration
}

var _ prometheus.Gatherer = (*serviceGatherer)(nil)

// instancesName is the metric that counts the answers by service.
const instancesName = "sandox_service_instances"

// Gather asks the services for their metrics. Nothing answering is not an
// error (no service may be running): sandox_service_instances is then
// empty. An answer that does not parse is left out and reported in the
// error, beside the metrics of the others.
func (g *serviceGatherer) Gather() ([]*dto.MetricFamily, error) {
	if !g.nc.IsConnected() {
		return nil, nil // sandox_up{source="audit_stream"} says so
	}
	inbox := g.nc.NewRespInbox()
	sub, err := g.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, fmt.Errorf("ask the services for their metrics: %w", err)
	}
	defer sub.Unsubscribe()
	if err := g.nc.PublishRequest(schemas.ServiceMetricsSubject, inbox, nil); err != nil {
		return nil, fmt.Errorf("ask the services for their metrics: %w", err)
	}
	deadline := time.Now().Add(g.wait)
	families := map[string]*dto.MetricFamily{}
	instances := map[string]int{}
	var errs []error
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break // the wait is over
		}
		if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			break // no responders
		}
		service := m.Header.Get(schemas.HeaderService)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		got, err := parser.TextToMetricFamilies(bytes.NewReader(m.Data))
		if err != nil {
			errs = append(errs, fmt.Errorf("the metrics of service %q: %w", service, err))
			continue
		}
		instances[service]++
		for name, f := range got {
			if have, ok := families[name]; ok && have.GetType() == f.GetType() {
				have.Metric = append(have.Metric, f.Metric...)
			} else if !ok {
				families[name] = f
			}
		}
	}
	out := make([]*dto.MetricFamily, 0, len(families)+1)
	for _, f := range families {
		for _, m := range f.Metric {
			slices.SortFunc(m.Label, func(a, b *dto.LabelPair) int { return cmp.Compare(a.GetName(), b.GetName()) })
		}
		out = append(out, f)
	}
	out = append(out, instancesFamily(instances))
	return out, errors.Join(errs...)
}

// instancesFamily is sandox_service_instances: how many instances of each
// service answered.
func instancesFamily(instances map[string]int) *dto.MetricFamily {
	name, help, label := instancesName, "Instances of a control-plane service that answered the request for their metrics, by service.", "service"
	f := &dto.MetricFamily{Name: &name, Help: &help, Type: dto.MetricType_GAUGE.Enum()}
	for service, n := range instances {
		v := float64(n)
		f.Metric = append(f.Metric, &dto.Metric{
			Label: []*dto.LabelPair{{Name: &label, Value: &service}},
			Gauge: &dto.Gauge{Value: &v},
		})
	}
	return f
}
