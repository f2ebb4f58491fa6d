// Package bucket makes and reads sandox's JetStream key-value buckets: made
// as nats.go makes them (CreateOrUpdate), and read with a retry across the
// instants when the server answers no JetStream API request (Get, Create).
package bucket
