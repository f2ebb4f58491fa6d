// Package integration holds sandox's end-to-end tests. They run against a
// real Docker engine and a real NATS server with JetStream: TestMain builds
// the images (skipping any that is current), creates a Docker network for
// the run, starts NATS listening on that network's gateway address (so that
// sandbox containers reach it), and runs an orchestrator worker in-process.
//
// The tests need a Docker engine: build/scripts/test.sh starts one.
package integration
