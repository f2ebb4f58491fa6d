// Command sandox brings a local sandox system up and down, runs a demo and
// reports its state.
//
//	sandox up       check the Docker engine, build the images, start NATS and the orchestrator
//	sandox images   build the images only
//	sandox demo     run the walkthrough against a running system
//	sandox status   list groups and sandboxes
//	sandox stats ID show a sandbox's live use against its limits
//	sandox tools ID print a sandbox's tools for a model API (--format openai|anthropic|mcp|jsonschema)
//	sandox mcp      serve a sandbox's tools over MCP (stdio or streamable HTTP)
//	sandox audit    replay the audit log (filter, follow, rebuild a sandbox's session)
//	sandox dashboard serve the web dashboard on localhost
//	sandox creds    issue NATS credentials (client, audit or control)
//	sandox secrets  write the control plane's secrets for compose.yaml
//	sandox down     end every group and stop NATS and the orchestrator
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: sandox <command> [flags]

commands:
  up       check the Docker engine, build the images, start NATS and the orchestrator
  images   build the images (base, sandbox, control plane) without starting anything
  demo     run the walkthrough (group, sandbox, sync and async actions, bad input, end)
  status   list groups and sandboxes
  stats    show a sandbox's live CPU, memory and process use: sandox stats SANDBOX
  tools    print a sandbox's tools for a model API: sandox tools SANDBOX --format openai|anthropic|mcp|jsonschema
  mcp      serve a sandbox's tools as MCP tools: sandox mcp --sandbox ID | --group-config FILE [--http ADDR]
  audit    replay the audit log: sandox audit [-group G] [-sandbox S] [-since 1h] [-kind K,...] [-follow] [-json] [-session SANDBOX]
  dashboard serve the web dashboard: sandox dashboard [-addr 127.0.0.1:8089] [-role client|audit|control] [-creds FILE]
  creds    issue NATS credentials: sandox creds [-role client|audit|control] [-name N] [-o FILE]
  secrets  write each control-plane service's secrets for compose.yaml: sandox secrets [-o /etc/sandox]
  down     end every group, stop NATS and the orchestrator (--purge also drops NATS data)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sandox:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "up":
		return up(ctx, rest)
	case "images":
		return images(ctx, rest)
	case "demo":
		return demo(ctx, rest)
	case "status":
		return status(ctx, rest)
	case "stats":
		return stats(ctx, rest)
	case "tools":
		return tools(ctx, rest)
	case "mcp":
		return serveMCP(ctx, rest)
	case "audit":
		return auditLog(ctx, rest)
	case "dashboard":
		return serveDashboard(ctx, rest)
	case "creds":
		return creds(rest)
	case "secrets":
		return secrets(rest)
	case "down":
		return down(ctx, rest)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}
