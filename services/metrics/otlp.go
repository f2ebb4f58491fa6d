package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promBridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// OTLPOptions says where and how often PushOTLP pushes.
type OTLPOptions struct {
	// Endpoint is the OTLP/HTTP receiver's URL, http:// or https://. A URL
	// without a path gets the standard /v1/metrics.
	Endpoint string
	// Interval is the time between two pushes; 30 s when zero.
	Interval time.Duration
	// Headers are sent with every push (a collector's API key).
	Headers map[string]string
}

// otlpURL checks an OTLP endpoint and adds the standard path to one
// without a path.
func otlpURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("OTLP endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL with a host, like http://localhost:4318", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/metrics"
	}
	return u.String(), nil
}

// CheckOTLP reports what is wrong with o's endpoint, nil when it is
// usable, so that a command refuses it before it starts.
func CheckOTLP(o OTLPOptions) error {
	_, err := otlpURL(o.Endpoint)
	return err
}

// PushOTLP pushes the metrics g gathers to an OTLP/HTTP receiver every
// o.Interval until ctx is done, then once more, through the OpenTelemetry
// SDK's periodic reader and its Prometheus bridge: counters become
// cumulative sums, gauges gauges, histograms explicit-bucket histograms,
// under the service name sandox. It blocks. It returns an error for a bad
// endpoint, or when the last push fails; a failed periodic push is
// reported to OpenTelemetry's error handler (logged) and retried at the
// next interval.
func PushOTLP(ctx context.Context, g prometheus.Gatherer, o OTLPOptions) error {
	endpoint, err := otlpURL(o.Endpoint)
	if err != nil {
		return err
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(endpoint)}
	if len(o.Headers) > 0 {
		opts = append(opts, otlpmetrichttp.WithHeaders(o.Headers))
	}
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		return fmt.Errorf("OTLP exporter: %w", err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(o.Interval),
		sdkmetric.WithProducer(promBridge.NewMetricProducer(promBridge.WithGatherer(g))))
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "sandox"))))
	<-ctx.Done()
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := provider.Shutdown(shut); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("OTLP push to %s: %w", endpoint, err)
	}
	return nil
}
