// Package dashboard serves sandox's web dashboard: a read-only view of a
// running system for its operator. It shows the hosts, the warm pools, the
// groups with their databases and grants, the sandboxes with their state,
// limits and live use, a live feed of the audit log (commands, events,
// action batches with each tool's duration and error) and a sandbox's
// action history with its observations.
//
// The pages are rendered on the server with html/template; a small script
// (embedded, no external resource) keeps the live parts current through
// Server-Sent Events. Everything is read from NATS: the key-value buckets
// of groups, sandboxes and hosts, the audit stream SANDOX_EVENTS (read as
// services/audit reads it), and the stats request the SDK uses for a
// sandbox's live use. The server never writes to NATS except that request.
//
// The HTTP side answers GET and HEAD only. On a loopback listener it
// accepts only loopback Host headers, so that a web page elsewhere cannot
// reach it through DNS rebinding; with Options.Token it also wants the
// token (a bearer header, or a cookie set by visiting any page with
// ?token=). docs/dashboard.md describes it for operators.
package dashboard
