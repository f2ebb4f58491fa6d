// Package executor is the daemon inside every sandbox container. It serves
// the sandbox's NATS subjects: action batches on sandbox.<id>.actions (each
// action resolved in a tools.Registry and run in order, the observations
// sent back on the message's reply subject), readiness pings on
// sandbox.<id>.ping, and tool descriptions on sandbox.<id>.tools.
//
// Batches run one at a time: the tools are stateful (a shell's working
// directory, a Python host), and an agent's actions are a sequence.
package executor
