// Package metrics exports sandox's metrics in the Prometheus text format,
// and optionally pushes them over OTLP/HTTP. It instruments nothing: it
// derives every number from what the system already records, so that it
// needs no change in the orchestrator, works across any number of
// orchestrator workers and hosts, and can run anywhere NATS is reachable.
//
// Two sources feed it. The audit stream SANDOX_EVENTS (read as
// services/audit reads it, every command once) gives the counters and
// histograms: command results with their duration and error code (a
// resource_exhausted create is an admission refusal), sandbox events (a
// created event's status says whether its image was built or reused),
// batches and their observations with each action's tool, duration, error
// code and limits hit, the data service's population events, and the NATS
// server's refusals. The key-value buckets of sandboxes, groups and hosts
// give the gauges, read afresh at each scrape: sandboxes by state, warm
// pool depth, hosts and their capacity and allocation.
//
// Counters derived from the stream count what the stream holds: an
// Exporter reads it from its first message when it starts, so two
// exporters, or one restarted, agree. When the stream is deleted and made
// again (sandox down --purge, then up) the counters start again from zero,
// which Prometheus takes as a counter reset. docs/metrics.md lists every
// metric.
package metrics
