// Package lifetime ends sandboxes and groups whose lifetime is over: a
// sandbox's TTL and idle timeout, a group's TTL. Every worker sweeps the
// records; a compare-and-set on each record's Expired field lets one of
// them announce the expiry and put the end command on the work queue,
// which any worker then runs like a client's.
package lifetime
