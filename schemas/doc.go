// Package schemas holds the data contracts of sandox: every message that
// crosses NATS, as Go types, together with the JSON Schema files (embedded
// from jsonschema/) that describe the same messages for other languages and
// for the NATS CLI. A test keeps the two in agreement.
//
// Every component (SDK, orchestrator, executor) speaks only these types.
package schemas
