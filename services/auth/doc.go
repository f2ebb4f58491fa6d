// Package auth gives every party on the sandox bus its own NATS identity.
//
// sandox runs NATS in operator mode with a single account, SANDOX, and a
// system account. An Authority holds the three seeds (operator, SANDOX,
// system): it signs the account JWTs the server trusts, and it mints user
// credentials (a user JWT signed by the SANDOX account plus the user's seed)
// whose permissions come from a Role: the control plane, a client, a
// read-only audit client, or one sandbox.
//
// The server checks a user JWT once, when the connection is made; nothing is
// checked per message beyond the subject permissions NATS applies anyway.
// Revoking a sandbox's identity re-signs the SANDOX account JWT with the
// user's key in its revocation list and hands it to the running server,
// which drops the user's connections at once and refuses its reconnects.
// The Service does that inside the NATS server's process, on requests from
// the control plane; Client is the control plane's side of it.
package auth
