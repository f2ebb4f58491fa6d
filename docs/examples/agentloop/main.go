// Command agentloop is the example agent loop of docs/agent-loop.md: it
// hands a sandbox's tools to a model (OpenAI Chat Completions or the
// Anthropic Messages API), sends the model's tool calls to the sandbox as
// actions, and gives the observations back to the model until it answers
// without calling a tool.
//
//	OPENAI_API_KEY=... go run ./docs/examples/agentloop -provider openai -model gpt-4.1-mini -task "..."
//	ANTHROPIC_API_KEY=... go run ./docs/examples/agentloop -provider anthropic -model claude-sonnet-4-5 -task "..."
//
// Without -sandbox it creates a group and a sandbox (sandox must be up) and
// ends them at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/sandox/sandox/sdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	provider := fs.String("provider", "openai", "openai or anthropic")
	model := fs.String("model", "gpt-4.1-mini", "the model's name")
	task := fs.String("task", "Write a Python script that prints the first 10 primes, run it with uv, and tell me its output.", "what the agent should do")
	natsURL := fs.String("nats", "nats://127.0.0.1:4222", "NATS URL of sandox")
	sandbox := fs.String("sandbox", "", "use this running sandbox instead of creating one")
	steps := fs.Int("max-steps", 20, "stop after this many model turns")
	if err := fs.Parse(args); err != nil {
		return err
	}

	sb, end, err := openSandbox(ctx, *natsURL, *sandbox)
	if err != nil {
		return err
	}
	defer end()

	var c chat
	hc := &http.Client{Timeout: 5 * time.Minute}
	switch *provider {
	case "openai":
		key := os.Getenv("OPENAI_API_KEY")
		if key == "" {
			return errors.New("set OPENAI_API_KEY")
		}
		base := os.Getenv("OPENAI_BASE_URL")
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		c = &openAIChat{http: hc, url: base + "/chat/completions", key: key, model: *model}
	case "anthropic":
		key := os.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return errors.New("set ANTHROPIC_API_KEY")
		}
		c = &anthropicChat{http: hc, url: "https://api.anthropic.com/v1/messages", key: key, model: *model}
	default:
		return fmt.Errorf("unknown provider %q", *provider)
	}
	answer, err := agentLoop(ctx, sb, c, *task, *steps, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Println(answer)
	return nil
}

// openSandbox attaches to a running sandbox, or creates a group with one
// sandbox and returns the func that ends the group.
func openSandbox(ctx context.Context, url, id string) (*sdk.Sandbox, func(), error) {
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: "agentloop"}, sdk.WithURL(url))
	if err != nil {
		return nil, nil, err
	}
	if id != "" {
		return g.Attach(id), func() {}, nil
	}
	if err := g.Start(ctx); err != nil {
		return nil, nil, err
	}
	end := func() { _ = g.End(context.WithoutCancel(ctx)) }
	sb, err := g.CreateSandbox(ctx, "agentloop-1", sdk.SandboxOptions{})
	if err == nil {
		err = sb.Start(ctx)
	}
	if err != nil {
		end()
		return nil, nil, err
	}
	return sb, end, nil
}
