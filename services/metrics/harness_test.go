package metrics

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/natsd"
)

// system is an embedded NATS server with the audit stream and the buckets
// an orchestrator makes, and an exporter following it.
type system struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	exp *Exporter
}

// startSystem starts NATS on a free port with a temporary store, makes the
// audit stream and the buckets, and runs an exporter of it until the test
// ends.
func startSystem(t *testing.T) *system {
	t.Helper()
	cfg := natsd.DefaultConfig()
	cfg.Port = -1
	cfg.StoreDir = t.TempDir()
	ns, err := natsd.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(t.Context(), jetstream.StreamConfig{Name: schemas.EventStream, Subjects: schemas.EventSubjects(), Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	for _, b := range []string{schemas.HostsBucket, schemas.GroupBucket, schemas.SandboxBucket} {
		_, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: b, Storage: jetstream.MemoryStorage})
		require.NoError(t, err)
	}
	s := &system{nc: nc, js: js}
	s.exp = s.run(t)
	return s
}

// run starts another exporter of the system, until the test ends.
func (s *system) run(t *testing.T) *Exporter {
	t.Helper()
	exp, err := New(s.nc, Options{})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		exp.Run(t.Context())
	}()
	t.Cleanup(func() { <-done })
	return exp
}

// record stores data on subject in the audit stream, with headers hdr
// (pairs of name and value), and returns its stream sequence.
func (s *system) record(t *testing.T, subject string, data any, hdr ...string) uint64 {
	t.Helper()
	body, err := json.Marshal(data)
	require.NoError(t, err)
	msg := nats.NewMsg(subject)
	msg.Data = body
	for i := 0; i+1 < len(hdr); i += 2 {
		msg.Header.Set(hdr[i], hdr[i+1])
	}
	ack, err := s.js.PublishMsg(t.Context(), msg)
	require.NoError(t, err)
	return ack.Sequence
}

// put records v under key in bucket.
func (s *system) put(t *testing.T, bucket, key string, v any) {
	t.Helper()
	kv, err := s.js.KeyValue(t.Context(), bucket)
	require.NoError(t, err)
	data, err := json.Marshal(v)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), key, data)
	require.NoError(t, err)
}

// waitSeq waits until exp has counted the audit stream up to seq.
func waitSeq(t *testing.T, exp *Exporter, seq uint64) {
	t.Helper()
	poll.Until(t, 10*time.Second, "the exporter to count the stream", func() bool {
		got, _ := exp.follow.Status()
		return got >= seq
	})
}

// sample is one series of a gathered family: a counter's or gauge's
// value, or a histogram's count and sum.
type sample struct {
	value, count, sum float64
	found             bool
}

// gather returns the series of family name whose labels are exactly
// labels (pairs of name and value).
func gather(t *testing.T, g prometheus.Gatherer, name string, labels ...string) sample {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !sameLabels(m.GetLabel(), want) {
				continue
			}
			switch {
			case m.Counter != nil:
				return sample{value: m.GetCounter().GetValue(), found: true}
			case m.Gauge != nil:
				return sample{value: m.GetGauge().GetValue(), found: true}
			case m.Histogram != nil:
				return sample{count: float64(m.GetHistogram().GetSampleCount()), sum: m.GetHistogram().GetSampleSum(), found: true}
			}
		}
	}
	return sample{}
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}
