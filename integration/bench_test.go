package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// BenchmarkSandbox measures, on real containers, what an agent waits for:
// creating and starting a sandbox whose image exists, and one action batch
// round trip (SDK -> NATS -> executor -> tool -> back) for a built-in Go
// tool, a shell command and a Python user tool.
//
//	go test -run '^$' -bench . -benchtime 50x ./integration/
func BenchmarkSandbox(b *testing.B) {
	ctx := b.Context()
	tool := filepathFor(b, "bench_tools.py", "def ping() -> str:\n    return 'pong'\n")
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "it-bench", Tools: []string{tool}}, sdk.WithConn(env.nc))
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.End(ctx) })

	var sb *sdk.Sandbox
	createStart := func(prefix string, opts sdk.SandboxOptions) func(*testing.B) {
		return func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				s, err := g.CreateSandbox(ctx, fmt.Sprintf("%s-%d", prefix, i), opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Start(ctx); err != nil {
					b.Fatal(err)
				}
				if sb != nil {
					b.StopTimer()
					_ = sb.End(ctx)
					b.StartTimer()
				}
				sb = s
			}
		}
	}
	// With a disk limit, creating includes making, formatting and
	// attaching the sandbox's ext4 image.
	b.Run("create+start/disk-1GiB", createStart("it-bench-disk", sdk.SandboxOptions{
		ComputeResources: &schemas.ComputeResources{Disk: "1GiB"},
	}))
	b.Run("create+start", createStart("it-bench", sdk.SandboxOptions{}))
	if sb == nil { // the create benchmarks were filtered out
		if sb, err = g.CreateSandbox(ctx, "it-bench-actions", sdk.SandboxOptions{}); err == nil {
			err = sb.Start(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, tool, args string }{
		{"action/filesystem", "filesystem_tools.stat_path", `{"path": "/workspace"}`},
		{"action/terminal", "terminal_tools.run", `{"command": "true"}`},
		{"action/python", "bench_tools.ping", `{}`},
	} {
		actions := schemas.Actions{{Tool: bc.tool, Args: json.RawMessage(bc.args)}}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				obs, err := sb.SendActions(ctx, actions)
				if err != nil || obs[0].Error != nil {
					b.Fatalf("%v %+v", err, obs)
				}
			}
		})
	}
}

func filepathFor(b *testing.B, name, content string) string {
	b.Helper()
	p := b.TempDir() + "/" + name
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}
