package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// The program the README shows (TestREADMEShowsTheExample keeps the two
// the same): a group with a tool file, a sandbox, a batch in the user's
// JSON format, a batch built in Go and sent asynchronously, then the end.
// It needs a running sandox (`sandox up`) and a my_tools.py defining
// greet(name), so it is compiled but not run by go test.
func Example_readme() {
	ctx := context.Background()
	// sandox up serves NATS on nats://127.0.0.1:4222, the SDK's default.
	group, err := sdk.NewSandboxGroup(sdk.GroupConfig{
		ID:               "research",
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "512MiB"},
		Tools:            []string{"my_tools.py"},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := group.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer group.End(ctx)

	sandbox, err := group.CreateSandbox(ctx, "sb-1", sdk.SandboxOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := sandbox.Start(ctx); err != nil {
		log.Fatal(err)
	}

	// A batch in the user's JSON format: one key per call, run in the
	// order written. SendActionsJSON blocks until the observations come.
	obs, err := sandbox.SendActionsJSON(ctx, []byte(`{
  "filesystem_tools.write_file": {"description": "take a note", "args": {"path": "notes.txt", "content": "hi"}},
  "terminal_tools.run":          {"description": "look",        "args": {"command": "cat notes.txt"}},
  "my_tools.greet":              {"description": "user tool",   "args": {"name": "Ada"}}
}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range obs {
		fmt.Printf("%s: stdout %q, stderr %q, still running %t\n", o.Tool, o.Stdout, o.Stderr, o.TerminalStillRunning)
	}

	// The same kind of batch built in Go. A list can call one tool twice.
	actions := schemas.Actions{
		{Tool: "terminal_tools.run", Description: "count", Args: json.RawMessage(`{"command": "seq 3"}`)},
		{Tool: "terminal_tools.run", Description: "count again", Args: json.RawMessage(`{"command": "seq 3"}`)},
	}
	future, err := sandbox.SendActionsAsync(ctx, actions) // returns at once
	if err != nil {
		log.Fatal(err)
	}
	// ... other work ...
	obs, err = future.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(obs), "observations")

	if err := sandbox.End(ctx); err != nil {
		log.Fatal(err)
	}
}
