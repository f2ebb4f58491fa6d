package auth

import (
	"fmt"
	"time"

	"github.com/nats-io/jwt/v2"

	"github.com/sandox/sandox/schemas"
)

// Role is what an identity may do on the bus.
type Role string

// The roles.
const (
	// RoleControl is the control plane (orchestrator workers, the data
	// service to come): everything in the SANDOX account. It drives the
	// Docker engine, which is root on the host in any case.
	RoleControl Role = "control"
	// RoleClient is a user of sandox (the SDK, the CLI, the NATS CLI, the
	// MCP server): lifecycle commands and their results, requests on
	// sandox.req.> and for the services' metrics
	// (schemas.ServiceMetricsSubject), action batches and the sandboxes'
	// other request subjects, events and observations, and reading the
	// streams and buckets. It cannot write the buckets, change or delete streams, take
	// commands off the work queue, or send notices to sandboxes.
	RoleClient Role = "client"
	// RoleAudit reads events, observations, streams and buckets, asks the
	// control-plane services for their own metrics
	// (schemas.ServiceMetricsSubject), and sends nothing to sandboxes or
	// the orchestrator.
	RoleAudit Role = "audit"
	// RoleSandbox is one sandbox's executor: it subscribes to
	// sandbox.<id>.> only, and publishes replies to requests it received,
	// the audit records of its own batches and answers, its readiness
	// announcement, its jobs' messages (sandbox.<id>.jobs.>,
	// sandox.evt.job.<id>.*), its watches' messages
	// (sandbox.<id>.watch.>), and requests to the control-plane services (schemas.SandboxServiceSubjects).
	RoleSandbox Role = "sandbox"
	// RoleSearch is the web search service: it takes requests on
	// schemas.SearchSubjects (one subject per sandbox) and on
	// schemas.ServiceMetricsSubject, and publishes only its replies.
	RoleSearch Role = "search"
	// RoleData is the data service: it takes database requests on
	// sandox.db.>, population requests on schemas.PopulateSubject and
	// requests for its metrics on schemas.ServiceMetricsSubject, publishes its replies, its population events and their progress (schemas.ProgressSubjects)
	// (sandox.evt.data.>), and reads the buckets of groups and sandboxes
	// (the recorded grants and database endpoints).
	RoleData Role = "data"
)

// Where the Service answers the control plane.
const (
	MintSubject   = "sandox.auth.mint"
	RevokeSubject = "sandox.auth.revoke"
)

// userInfoSubject answers a connection with its own user and account
// (AccountOf): the audit log's readers learn there the account that
// verified callers must come from.
const userInfoSubject = "$SYS.REQ.USER.INFO"

// responseTTL is how long a sandbox may take to answer a request: longer
// than a full queue of batches may wait.
const responseTTL = 24 * time.Hour

// jsWrites are the JetStream API calls only the control plane may make:
// changing or deleting streams and their messages, and taking commands off
// the work queue.
var jsWrites = []string{
	"$JS.API.STREAM.CREATE.>",
	"$JS.API.STREAM.UPDATE.>",
	"$JS.API.STREAM.DELETE.>",
	"$JS.API.STREAM.PURGE.>",
	"$JS.API.STREAM.MSG.DELETE.>",
	"$JS.API.STREAM.RESTORE.>",
	"$JS.API.STREAM.SNAPSHOT.>",
	"$JS.API.CONSUMER.CREATE." + schemas.CommandStream,
	"$JS.API.CONSUMER.CREATE." + schemas.CommandStream + ".>",
	"$JS.API.CONSUMER.DURABLE.CREATE." + schemas.CommandStream + ".>",
	"$JS.API.CONSUMER.DELETE." + schemas.CommandStream + ".>",
	"$JS.API.CONSUMER.MSG.NEXT." + schemas.CommandStream + ".>",
	"$JS.API.CONSUMER.PAUSE.>",
	"$JS.API.CONSUMER.UNPIN.>",
	"$JS.API.ACCOUNT.PURGE.>",
	"$JS.API.SERVER.>",
	"$JS.API.META.>",
}

// Permissions returns the permissions of role; sandboxID names the sandbox
// of RoleSandbox and must be empty otherwise. grants, for RoleSandbox, are
// the sandbox's database grants: it may publish exactly their subjects
// (schemas.DatabaseGrantSubjects), a read grant the .read subject only.
func Permissions(role Role, sandboxID string, grants ...schemas.DatabaseGrant) (jwt.Permissions, error) {
	var p jwt.Permissions
	if (role == RoleSandbox) != (sandboxID != "") {
		return p, fmt.Errorf("role %s with sandbox %q: only the sandbox role names a sandbox", role, sandboxID)
	}
	switch role {
	case RoleControl:
		// Empty permissions: everything in the account.
	case RoleClient:
		p.Pub.Allow.Add(
			schemas.CommandSubjectPrefix+">",
			"sandox.req.>",
			"sandbox.*.actions", "sandbox.*.tools", "sandbox.*.stats", "sandbox.*.ping",
			"$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "_INBOX.>", userInfoSubject,
			schemas.ServiceMetricsSubject,
		)
		p.Pub.Deny.Add(jsWrites...)
		// The subjects of commands and requests passed to one host are
		// the workers' own: a client's go through placement.
		p.Pub.Deny.Add(schemas.HostCommandPrefix+">", schemas.RequestSubjectPrefix+"host.>")
		p.Sub.Allow.Add("sandox.evt.>", "sandox.obs.>", "_INBOX.>")
	case RoleAudit:
		p.Pub.Allow.Add("$JS.API.>", "$JS.FC.>", "_INBOX.>", userInfoSubject, schemas.ServiceMetricsSubject)
		p.Pub.Deny.Add(jsWrites...)
		p.Sub.Allow.Add("sandox.evt.>", "sandox.obs.>", "_INBOX.>")
	case RoleSandbox:
		if err := schemas.ValidateID("sandbox", sandboxID); err != nil {
			return p, err
		}
		// Besides replies to requests it received (the response
		// permission), a sandbox publishes only the audit records of its
		// own batches and answers, and requests to the control-plane
		// services, whose replies come back under its own subjects
		// (schemas.SandboxInboxPrefix).
		p.Pub.Allow.Add(
			schemas.BatchRecordSubject(sandboxID),
			schemas.ObservationSubject(sandboxID, "*"),
			schemas.ReadySubject(sandboxID),
			// Its jobs' messages (kept in schemas.JobStream) and their
			// exit records on the notify subjects it names.
			schemas.SandboxJobSubjects(sandboxID),
			schemas.JobNotifySubject(sandboxID, "*"),
			// Its file watches' messages (kept in schemas.WatchStream).
			schemas.SandboxWatchSubjects(sandboxID),
		)
		p.Pub.Allow.Add(schemas.SandboxServiceSubjects(sandboxID)...)
		if len(grants) > 0 {
			if err := schemas.DatabaseAccess(grants).Validate(); err != nil {
				return p, err
			}
			p.Pub.Allow.Add(schemas.DatabaseGrantSubjects(sandboxID, grants)...)
		}
		p.Sub.Allow.Add(schemas.SandboxSubjects(sandboxID))
		p.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: responseTTL}
	case RoleSearch:
		p.Sub.Allow.Add(schemas.SearchSubjects, schemas.ServiceMetricsSubject)
		p.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	case RoleData:
		p.Sub.Allow.Add(schemas.DatabaseSubjectPrefix+">", schemas.PopulateSubject, schemas.ServiceMetricsSubject, "_INBOX.>")
		p.Pub.Allow.Add("$JS.API.>", "_INBOX.>", "sandox.evt.data.>", schemas.ProgressSubjects)
		p.Pub.Deny.Add(jsWrites...)
		p.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	default:
		return p, fmt.Errorf("unknown role %q (want control, client, audit, sandbox, search or data)", role)
	}
	return p, nil
}
