// Package sdk is the Go SDK of sandox. It mirrors the interface the user
// sketched:
//
//	group, err := sdk.NewSandboxGroup(sdk.GroupConfig{
//		ID:               "research",
//		DatabaseAccess:   schemas.DatabaseAccess{{Database: "qdrant", Namespace: "docs", Read: true}},
//		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "512MiB"},
//		Tools:            []string{"filesystem_tools.py", "terminal_tools.py", "my_tools.py"},
//		PopulationConfig: "initial_database_population_config.yml",
//	})
//	err = group.Start(ctx)
//	sandbox, err := group.CreateSandbox(ctx, "sb-1", sdk.SandboxOptions{})
//	err = sandbox.Start(ctx)
//	observations, err := sandbox.SendActions(ctx, actions)
//	future, err := sandbox.SendActionsAsync(ctx, actions)
//	observations, err = future.Wait(ctx)
//	err = sandbox.End(ctx)
//	err = group.End(ctx)
//
// Lifecycle calls publish commands to the SANDOX_COMMANDS JetStream work
// queue and wait for the orchestrator's result; status and stats are
// requests the orchestrator answers on sandox.req.*; action batches go
// straight to the sandbox's executor on sandbox.<id>.actions. The SDK never
// reads the orchestrator's buckets: docs/subjects.md ("The client
// protocol") is everything it relies on, and what another SDK follows.
//
// GroupConfig and SandboxOptions carry every lifecycle setting of the wire's
// GroupSpec and SandboxSpec (lifetimes, egress, resources, database access,
// tools, keeping database data); docs/python.md#lifecycle-options lists them
// next to the Python SDK's names for the same settings.
//
// A Future that is no longer wanted is released with Close, and a group
// with Close (a successful End releases the same), so that nothing stays
// subscribed. The SDK starts no goroutine of its own. Errors match the
// sentinels in errors.go with errors.Is.
package sdk
