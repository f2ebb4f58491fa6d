// Package webhook posts the exit records of jobs to the webhook URLs their
// callers named. Sandboxes have no network, so the control plane does it:
// a Relay follows the job exits in SANDOX_JOBS through a durable consumer
// that the orchestrator workers share (each exit goes to one worker, and
// one that restarts takes up where the consumer stands), looks up the
// job's webhook in its start record, checks it against the operator's
// allowlist again (the sandbox's check is a courtesy: a sandbox could
// forge its records), and POSTs the JobExit, retrying with an exponential
// backoff (cenkalti/backoff) for a bounded time.
package webhook
