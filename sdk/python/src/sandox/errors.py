"""Typed exceptions, mirroring the Go SDK's sentinels (sdk/errors.go).

Every error the SDK raises for a refused request is a SandoxError; its
subclass is the error's class, as a Go sentinel is: catch NotFoundError
where Go tests errors.Is(err, sdk.ErrNotFound). A wire error keeps its
code and message (`code`, `message`); a client-side error keeps its cause
as `__cause__` (raise ... from cause). docs/subjects.md#error-codes lists
the codes.
"""

from __future__ import annotations

from .models import Error


class SandoxError(Exception):
    """The base class of every sandox error.

    code is the wire code when sandox answered with one (see
    docs/subjects.md#error-codes), else None; message is its text.
    """

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code
        self.message = message
        self.result = None
        """The CommandResult of a refused lifecycle command, when there is one."""


class BadRequestError(SandoxError):
    """The request is malformed or invalid (Go: ErrBadRequest)."""


class NotFoundError(SandoxError):
    """No such group or sandbox (Go: ErrNotFound)."""


class AlreadyExistsError(SandoxError):
    """The id is taken (Go: ErrAlreadyExists)."""


class ConflictError(SandoxError):
    """Wrong state for the call (Go: ErrConflict)."""


class SandboxGoneError(SandoxError):
    """The sandbox does not answer: the batch will not be answered (Go: ErrSandboxGone)."""


class TimeoutError(SandoxError):  # noqa: A001 - the Go sentinel's name
    """A deadline passed (Go: ErrTimeout)."""


class AccessDeniedError(SandoxError):
    """The sandbox was not granted this (Go: ErrAccessDenied)."""


class ResourceExhaustedError(SandoxError):
    """A limit was hit or cannot be granted (Go: ErrResourceExhausted)."""


class UnsupportedError(SandoxError):
    """The host cannot do what was asked (Go: ErrUnsupported)."""


class UnavailableError(SandoxError):
    """NATS, the command stream or every orchestrator is unreachable (Go: ErrUnavailable)."""


class InternalError(SandoxError):
    """A bug or an unexpected failure (Go: ErrInternal)."""


class PausedError(SandoxError):
    """The sandbox is paused: resume it first (Go: ErrPaused; docs/pause.md)."""


class ClosedError(SandoxError):
    """The future or group was closed by its owner (Go: ErrClosed)."""


# The class of each wire code, as sdk/errors.go's codeErrors maps them.
CODE_ERRORS: dict[str, type[SandoxError]] = {
    "bad_request": BadRequestError,
    "invalid_args": BadRequestError,
    "unknown_tool": BadRequestError,
    "ambiguous_tool": BadRequestError,
    "not_found": NotFoundError,
    "already_exists": AlreadyExistsError,
    "conflict": ConflictError,
    "timeout": TimeoutError,
    "access_denied": AccessDeniedError,
    "resource_exhausted": ResourceExhaustedError,
    "unsupported": UnsupportedError,
    "unavailable": UnavailableError,
    "internal": InternalError,
    "paused": PausedError,
}


def from_wire(err: Error, context: str = "") -> SandoxError:
    """Returns the exception for a wire error; a code this SDK does not
    know is an InternalError that keeps the code."""
    cls = CODE_ERRORS.get(str(err.code), InternalError)
    msg = f"{context}: {err.message}" if context else err.message
    return cls(msg, code=str(err.code))
