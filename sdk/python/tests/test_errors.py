import typing

import pytest

import sandox
from sandox.errors import CODE_ERRORS, from_wire
from sandox.models import Error, ErrorCode

CASES = [
    ("bad_request", sandox.BadRequestError),
    ("invalid_args", sandox.BadRequestError),
    ("unknown_tool", sandox.BadRequestError),
    ("ambiguous_tool", sandox.BadRequestError),
    ("not_found", sandox.NotFoundError),
    ("already_exists", sandox.AlreadyExistsError),
    ("conflict", sandox.ConflictError),
    ("timeout", sandox.TimeoutError),
    ("access_denied", sandox.AccessDeniedError),
    ("resource_exhausted", sandox.ResourceExhaustedError),
    ("unsupported", sandox.UnsupportedError),
    ("unavailable", sandox.UnavailableError),
    ("internal", sandox.InternalError),
    ("a_code_from_the_future", sandox.InternalError),
]


@pytest.mark.parametrize("code,cls", CASES, ids=[c for c, _ in CASES])
def test_from_wire(code: str, cls: type) -> None:
    err = from_wire(Error(code=code, message="why"), "sandbox sb-1")
    assert type(err) is cls
    assert isinstance(err, sandox.SandoxError)
    assert err.code == code
    assert str(err) == f"{code}: sandbox sb-1: why"


def test_every_error_code_but_observation_only_ones_is_mapped() -> None:
    """Every wire code maps to a class, as sdk/errors.go's codeErrors does;
    tool_error and skipped appear only in observations."""
    codes = set(typing.get_args(ErrorCode))
    assert codes - set(CODE_ERRORS) == {"tool_error", "skipped"}
