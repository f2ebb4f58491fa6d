package sdk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// The seed's walkthrough: a group with default resources, database access
// and a tool file; a sandbox created at run time; a synchronous and an
// asynchronous batch; then the end of both. It needs a running sandox
// (`sandox up`), so it is compiled but not run by go test.
func Example() {
	ctx := context.Background()
	group, err := sdk.NewSandboxGroup(sdk.GroupConfig{
		ID:               "research",
		DatabaseAccess:   schemas.DatabaseAccess{{Database: "qdrant", Namespace: "docs", Read: true}},
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "512MiB", Disk: "2GiB"},
		Tools:            []string{"my_tools.py"},
		Sandboxes: []sdk.InitialSandbox{
			{ID: "reader", SandboxOptions: sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{CPU: "25%"}}},
		},
	}, sdk.WithURL("nats://127.0.0.1:4222"))
	if err != nil {
		log.Fatal(err)
	}
	if err := group.Start(ctx); err != nil { // also starts "reader"
		log.Fatal(err)
	}
	defer group.End(ctx)

	sandbox, err := group.CreateSandbox(ctx, "writer", sdk.SandboxOptions{Tools: []string{"extra_tools.py"}})
	if err != nil {
		log.Fatal(err)
	}
	if err := sandbox.Start(ctx); err != nil {
		log.Fatal(err)
	}
	observations, err := sandbox.SendActionsJSON(ctx, []byte(`{
		"filesystem_tools.write_file": {"description": "take a note", "args": {"path": "notes.txt", "content": "hi"}},
		"terminal_tools.run": {"description": "run it", "args": {"command": "uv run main.py"}}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range observations {
		fmt.Println(o.Tool, o.Stdout, o.Stderr, o.TerminalStillRunning)
	}

	actions, _ := schemas.ParseActions([]byte(`{"my_tools.summarize": {"args": {"path": "notes.txt"}}}`))
	future, err := sandbox.SendActionsAsync(ctx, actions)
	if err != nil {
		log.Fatal(err)
	}
	// ... do other work ...
	observations, err = future.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(observations))
	_ = sandbox.End(ctx)
}
