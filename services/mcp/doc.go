// Package mcp serves a sandbox's tools (the built-in families and the user's
// tool files, with their argument schemas and descriptions) as Model Context
// Protocol tools, with the official Go MCP SDK. It is a client of sandox like
// any other: it lists the tools on sandbox.<id>.tools and runs each
// tools/call as a one-action batch on sandbox.<id>.actions; the observation
// becomes the tool result.
//
// NewServer serves one existing sandbox; PerSession creates a sandbox for
// each MCP session (from a group) and ends it when the session ends. Both
// work over any MCP transport: stdio, or streamable HTTP through
// mcp.NewStreamableHTTPHandler of the SDK.
package mcp
