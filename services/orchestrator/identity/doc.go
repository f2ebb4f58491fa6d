// Package identity gives each sandbox its own NATS identity: it asks the
// auth service to mint one, writes the credentials where the sandbox's
// container binds them (one file, or for a pooled sandbox a directory
// whose file a claim replaces), revokes it when the sandbox ends, and
// lists the sandboxes that hold one for reconciliation.
package identity
