package metrics

import (
	"encoding/json"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// codeOK is the code label of what succeeded.
const codeOK = "ok"

// durationBuckets are the upper bounds, in seconds, of the latency
// histograms: from a quick file read to a long build or test run.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// streamCounters are the metrics derived from the audit stream. count is
// called by one goroutine at a time (the follower's, under its lock); the
// metrics themselves are safe for concurrent use.
type streamCounters struct {
	commands        *prometheus.CounterVec
	commandDuration *prometheus.HistogramVec
	refusals        *prometheus.CounterVec
	events          *prometheus.CounterVec
	images          *prometheus.CounterVec
	batchesReceived *prometheus.CounterVec
	batches         *prometheus.CounterVec
	actions         *prometheus.CounterVec
	actionDuration  *prometheus.HistogramVec
	limitHits       *prometheus.CounterVec
	serverRefusals  *prometheus.CounterVec
	popLoaded       *prometheus.CounterVec
	popBad          *prometheus.CounterVec
	popDone         *prometheus.CounterVec
	popRunning      prometheus.Gauge

	// sources holds, for each population source not done yet, how many
	// rows it had loaded and skipped at its last event.
	sources map[sourceKey]sourceProgress
}

// sourceKey names one source of one group's population.
type sourceKey struct{ group, database, namespace, source string }

// sourceProgress is where a source's population stood at its last event.
type sourceProgress struct{ loaded, bad int }

func newStreamCounters() *streamCounters {
	return &streamCounters{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_commands_total",
			Help: "Lifecycle commands answered, by kind and result code (ok, or the error code)."}, []string{"kind", "code"}),
		commandDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sandox_command_duration_seconds",
			Help: "How long the orchestrator took to answer a lifecycle command, by kind.", Buckets: durationBuckets}, []string{"kind"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_admission_refusals_total",
			Help: "Lifecycle commands refused because the resources cannot be granted (resource_exhausted), by kind."}, []string{"kind"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_sandbox_events_total",
			Help: "Sandbox events, by kind (created, started, start_failed, oom_killed, restarted, exited, expired, ended)."}, []string{"kind"}),
		images: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_image_builds_total",
			Help: "Sandboxes created, by whether their image was built or an existing one reused (outcome built or reused)."}, []string{"outcome"}),
		batchesReceived: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_batches_received_total",
			Help: "Action batches that executors took."}, nil),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_batches_total",
			Help: "Action batches answered, by code (ok, or the error code of a batch refused as a whole)."}, []string{"code"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_actions_total",
			Help: "Actions answered, by tool and code (ok, or the error code of the observation)."}, []string{"tool", "code"}),
		actionDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sandox_action_duration_seconds",
			Help: "How long an action ran in its sandbox, by tool.", Buckets: durationBuckets}, []string{"tool"}),
		limitHits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_limit_hits_total",
			Help: "Times a sandbox ran into a limit while an action ran, by resource (memory, pids, disk)."}, []string{"resource"}),
		serverRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_nats_refusals_total",
			Help: "Permission violations the NATS server refused, by operation (publish, subscribe, reply)."}, []string{"op"}),
		popLoaded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_population_loaded_total",
			Help: "Documents, nodes, relationships or statements written by database populations, by database."}, []string{"database"}),
		popBad: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_population_bad_rows_total",
			Help: "Rows database populations skipped, by database."}, []string{"database"}),
		popDone: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandox_population_sources_done_total",
			Help: "Population sources loaded to their end, by database."}, []string{"database"}),
		popRunning: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sandox_population_sources_in_progress",
			Help: "Population sources that reported progress and not their end."}),
		sources: map[sourceKey]sourceProgress{},
	}
}

// collectors lists the metrics to register.
func (c *streamCounters) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.commands, c.commandDuration, c.refusals, c.events, c.images,
		c.batchesReceived, c.batches, c.actions, c.actionDuration, c.limitHits, c.serverRefusals,
		c.popLoaded, c.popBad, c.popDone, c.popRunning}
}

// reset forgets everything counted, for a stream made again.
func (c *streamCounters) reset() {
	for _, v := range []interface{ Reset() }{c.commands, c.commandDuration, c.refusals, c.events, c.images,
		c.batchesReceived, c.batches, c.actions, c.actionDuration, c.limitHits, c.serverRefusals, c.popLoaded, c.popBad, c.popDone} {
		v.Reset()
	}
	c.popRunning.Set(0)
	c.sources = map[sourceKey]sourceProgress{}
}

// count adds one entry of the audit log.
func (c *streamCounters) count(e audit.Entry) {
	switch e.Kind {
	case audit.KindResult:
		c.result(e)
	case audit.KindEvent:
		c.event(e)
	case audit.KindBatch:
		c.batchesReceived.WithLabelValues().Inc()
	case audit.KindObservations:
		c.observations(e)
	case audit.KindRefusal:
		c.serverRefusals.WithLabelValues(e.What).Inc()
	}
}

// codeOf is the code label of a wire error: ok when there is none.
func codeOf(err *schemas.Error) string {
	if err == nil {
		return codeOK
	}
	return string(err.Code)
}

// result counts a command's result, its duration, and an admission
// refusal.
func (c *streamCounters) result(e audit.Entry) {
	var res schemas.CommandResult
	if json.Unmarshal(e.Data, &res) != nil || res.Kind == "" {
		return
	}
	kind := string(res.Kind)
	c.commands.WithLabelValues(kind, codeOf(res.Error)).Inc()
	c.commandDuration.WithLabelValues(kind).Observe(res.DurationMS / 1000)
	if res.Error != nil && res.Error.Code == schemas.CodeResourceExhausted {
		c.refusals.WithLabelValues(kind).Inc()
	}
}

// event counts a sandbox event, and for a created one whether its image
// was built.
func (c *streamCounters) event(e audit.Entry) {
	var ev schemas.Event
	if json.Unmarshal(e.Data, &ev) != nil || ev.Kind == "" {
		return
	}
	c.events.WithLabelValues(string(ev.Kind)).Inc()
	if ev.Kind == schemas.EventCreated && ev.Sandbox != nil {
		outcome := "built"
		if ev.Sandbox.ImageReused {
			outcome = "reused"
		}
		c.images.WithLabelValues(outcome).Inc()
	}
}

// observations counts an answered batch, its actions with their tools,
// durations and codes, and the limits they hit.
func (c *streamCounters) observations(e audit.Entry) {
	var res schemas.BatchResult
	if json.Unmarshal(e.Data, &res) != nil {
		return
	}
	c.batches.WithLabelValues(codeOf(res.Error)).Inc()
	for _, o := range res.Observations {
		tool := toolLabel(o)
		c.actions.WithLabelValues(tool, codeOf(o.Error)).Inc()
		if o.Error == nil || o.Error.Code != schemas.CodeSkipped {
			c.actionDuration.WithLabelValues(tool).Observe(o.DurationMS / 1000)
		}
		for _, h := range o.LimitsHit {
			c.limitHits.WithLabelValues(h.Resource).Add(float64(max(h.Count, 1)))
		}
	}
}

// unknownTool is the tool label of an action whose tool no module defines
// (or several do): the name is whatever the sender wrote, and as a label
// it would let any sender add series without end.
const unknownTool = "(unknown)"

// toolLabel is the tool label of an observation: its tool, or unknownTool
// when the executor did not find one tool of that name.
func toolLabel(o schemas.Observation) string {
	if o.Error != nil && (o.Error.Code == schemas.CodeUnknownTool || o.Error.Code == schemas.CodeAmbiguousTool) {
		return unknownTool
	}
	return o.Tool
}
