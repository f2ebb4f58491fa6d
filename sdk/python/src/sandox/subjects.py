"""The NATS subjects and headers of sandox (schemas/subjects.go in Go).

docs/subjects.md describes each one.
"""

COMMAND_STREAM = "SANDOX_COMMANDS"
COMMAND_SUBJECT_PREFIX = "sandox.cmd."
REQUEST_SUBJECT_PREFIX = "sandox.req."

HEADER_BATCH_ID = "Sandox-Batch-Id"
HEADER_STOP_ON_ERROR = "Sandox-Stop-On-Error"
HEADER_MSG_ID = "Nats-Msg-Id"
HEADER_CALLER_JWT = "Sandox-Caller-Jwt"
HEADER_CALLER_SIG = "Sandox-Caller-Sig"

# The event kinds after which a batch in flight will not be answered
# (schemas.EventKind.LosesBatches in Go).
LOSES_BATCHES = frozenset({"start_failed", "restarted", "exited", "expired", "ended"})


def command(kind: str) -> str:
    """The subject a command of the given kind is published on."""
    return COMMAND_SUBJECT_PREFIX + kind


def result(command_id: str) -> str:
    """Where the orchestrator publishes a command's result."""
    return "sandox.evt.result." + command_id


def sandbox_events(sandbox_id: str) -> str:
    """The state changes of one sandbox."""
    return "sandox.evt.sandbox." + sandbox_id


def actions(sandbox_id: str) -> str:
    """The subject a sandbox's executor serves action batches on."""
    return "sandbox." + sandbox_id + ".actions"


def tools(sandbox_id: str) -> str:
    """Answers with the descriptions of the sandbox's tools."""
    return "sandbox." + sandbox_id + ".tools"


def observations(sandbox_id: str, batch_id: str) -> str:
    """The reply subject of an action batch sent by the SDK."""
    return "sandox.obs." + sandbox_id + "." + batch_id


def sandbox_status(sandbox_id: str) -> str:
    """Asks the orchestrator for a sandbox's recorded status."""
    return REQUEST_SUBJECT_PREFIX + "status.sandbox." + sandbox_id


def group_status(group_id: str) -> str:
    """Asks the orchestrator for a group's status and its sandboxes'."""
    return REQUEST_SUBJECT_PREFIX + "status.group." + group_id


def sandbox_stats(sandbox_id: str) -> str:
    """Asks the orchestrator for a live reading of a sandbox's use."""
    return REQUEST_SUBJECT_PREFIX + "stats.sandbox." + sandbox_id
