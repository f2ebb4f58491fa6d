// Package integration holds sandox's end-to-end tests. They run against a
// real Docker engine and a real NATS server with JetStream: TestMain builds
// the images (skipping any that is current), creates a Docker network for
// the run, starts NATS listening on that network's gateway address (so that
// sandbox containers reach it), and runs an orchestrator worker in-process.
//
// The tests need a Docker engine: build/scripts/test.sh starts one.
//
// Most tests run one at a time. The longest ones that touch nothing but
// their own group, image or system (TestDocExamples, TestDatabases,
// TestPythonSDK, TestPackageIndexRecipe, TestNothingIsLost,
// TestEgressShards, TestFamilyImageNeeds, TestTerminalTools,
// TestCheckpointFullDisk and TestJobs) call t.Parallel: go test runs them
// after all the others, side by side (test.sh's -parallel, twice the
// cores), since much of their time is spent waiting on containers, Neo4j,
// image builds and restarts. A test that counts or kills what is not its
// own, restarts the test system's worker, fills the host's resources,
// changes the shared system or sets environment variables must not; a
// parallel test must leave room for the others (the host's CPUs are few).
package integration
