// Package outbox delivers the records a sandbox's long-running work (jobs,
// file watches) writes into a JetStream stream: in order, each retried
// until the stream stored it, so that a bus that is away delays records
// but loses none. Budget bounds how many bytes of such records one
// sandbox may put into the streams, so that a sandbox that writes without
// end does not fill JetStream for every other.
package outbox
