// Package integration holds sandox's end-to-end tests. They run against a
// real Docker engine and a real NATS server with JetStream: TestMain builds
// the images (skipping any that is current), creates a Docker network for
// the run, starts NATS listening on that network's gateway address (so that
// sandbox containers reach it), and runs an orchestrator worker in-process.
//
// The tests need a Docker engine: build/scripts/test.sh starts one.
//
// Most tests run one at a time. The longest ones that touch nothing but
// their own group (TestDocExamples, TestDatabases, TestPythonSDK and
// TestPackageIndexRecipe) call t.Parallel: they run after the others,
// side by side (go test's -parallel, GOMAXPROCS by default), since much of
// their time is spent waiting on containers, Neo4j and image builds. A test
// that counts or kills what is not its own, restarts a worker or changes
// the shared system must not.
package integration
