// Package executor is the daemon inside every sandbox container. It serves
// the sandbox's NATS subjects: action batches on sandbox.<id>.actions (each
// action resolved in a tools.Registry and run in order, the observations
// sent back on the message's reply subject), readiness pings on
// sandbox.<id>.ping, tool descriptions on sandbox.<id>.tools, the
// workspace's disk use on sandbox.<id>.stats, and limit notices from the
// orchestrator on sandbox.<id>.notice.
//
// The tools are the built-in families the executor's environment names
// (schemas.ExecutorEnv.Families, as listed in package tools/catalog and
// opened by package tools/builtin) and the user's Python tool files; the ping's answer lists
// the modules served (schemas.ExecutorReady).
//
// Batches run one at a time: the tools are stateful (a shell's working
// directory, a Python host), and an agent's actions are a sequence.
//
// Each observation lists the limits the sandbox ran into while its action
// ran (package limits watches them): processes killed for memory, forks
// refused, a full disk. What happened between batches, and the notices
// received, go into the first observation of the next batch.
package executor
