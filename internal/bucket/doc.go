// Package bucket makes and reads sandox's JetStream key-value buckets: made
// so that a read goes to the stream's leader and sees the last write
// (CreateOrUpdate), and read with a retry across the instants when the
// server answers no JetStream API request (Get, Create).
package bucket
