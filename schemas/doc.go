// Package schemas holds the data contracts of sandox: every message that
// crosses NATS, as Go types. Package schemas/jsonschema holds the JSON
// Schema files generated from them, which describe the same messages for
// other languages and for the NATS CLI, and validates messages against
// them; a test keeps the two in agreement.
//
// Every component (SDK, orchestrator, executor) speaks only these types.
package schemas

//go:generate go run ./cmd/genschema -dir jsonschema
