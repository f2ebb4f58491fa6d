// Package orchestrator runs sandox's lifecycle commands. A Worker consumes
// the SANDOX_COMMANDS work queue through a durable consumer that every
// worker shares, so several workers split the work and a command whose
// worker dies is redelivered to another. For each command it changes the
// world (builds a sandbox's image, creates, starts or removes its
// container), records the new state in the JetStream key-value buckets,
// publishes the result on sandox.evt.result.<command id>, and only then
// acknowledges the command.
package orchestrator
