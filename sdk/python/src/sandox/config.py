"""A group's configuration and the specs the SDK sends for it (the Go
SDK's GroupConfig, InitialSandbox and SandboxOptions, sdk/group.go)."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Sequence
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import BadRequestError
from .models import ComputeResources, DatabaseAccess, DatabaseGrant, Egress, GroupSpec, SandboxSpec
from .toolfiles import read_tools

# Group and sandbox ids (schemas.ValidateID in Go): one subject token.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")

ToolList = Sequence[Union[str, "os.PathLike[str]"]]
ComputeLike = Union[ComputeResources, dict[str, Any], None]
AccessLike = Union[DatabaseAccess, Sequence[Union[DatabaseGrant, dict[str, Any]]], None]
EgressLike = Union[Egress, dict[str, Any], None]


class InitialSandbox(BaseModel):
    """A sandbox listed in the group config: start_sandbox_group creates and
    starts it. What is left empty takes the group's default; tools are
    added to the group's."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    id: str
    tools: list[str] = Field(default_factory=list)
    compute_resources: ComputeResources | None = None
    attached_databases: DatabaseAccess | None = None
    egress: Egress | None = None


def validate_id(kind: str, id: str) -> None:
    """Raises BadRequestError unless id is 1-63 letters, digits, '-' or '_',
    starting with a letter or digit."""
    if not isinstance(id, str) or not _ID.match(id):
        raise BadRequestError(
            f"{kind} id {id!r}: want 1-63 letters, digits, '-' or '_', starting with a letter or digit"
        )


def new_group_id() -> str:
    """Returns a fresh group id, for a group the caller did not name."""
    return "group-" + uuid.uuid4().hex[:12]


def compute(value: ComputeLike) -> ComputeResources | None:
    """Returns compute resources given as a model or a dict."""
    if value is None or isinstance(value, ComputeResources):
        return value
    try:
        return ComputeResources.model_validate(value)
    except ValidationError as e:
        raise BadRequestError(f"compute resources: {e}") from e


def access(value: AccessLike) -> DatabaseAccess | None:
    """Returns database access given as a model or a list of grants."""
    if value is None or isinstance(value, DatabaseAccess):
        return value
    try:
        return DatabaseAccess.model_validate(
            [g.model_dump() if isinstance(g, DatabaseGrant) else g for g in value]
        )
    except (TypeError, ValidationError) as e:
        raise BadRequestError(f"database access: {e}") from e


def egress(value: EgressLike) -> Egress | None:
    """Returns an egress policy given as a model or a dict, checked as
    schemas.Egress.Validate does: none and open list nothing, an allowlist
    lists something."""
    if value is None:
        return None
    try:
        e = value if isinstance(value, Egress) else Egress.model_validate(value)
    except ValidationError as err:
        raise BadRequestError(f"egress: {err}") from err
    if e.policy == "allowlist" and not e.allow:
        raise BadRequestError("egress allowlist: allow lists nothing (use none)")
    if e.policy != "allowlist" and e.allow:
        raise BadRequestError(f"egress {e.policy}: allow is only for the allowlist policy")
    return e


def sandbox_spec(
    id: str,
    tools: ToolList | None,
    compute_resources: ComputeLike,
    attached_databases: AccessLike,
    egress_policy: EgressLike = None,
) -> SandboxSpec:
    """Validates a sandbox's settings and reads its tool files."""
    validate_id("sandbox", id)
    files, families = read_tools([os.fspath(t) for t in tools or []])
    return SandboxSpec(
        id=id,
        tools=files or None,
        families=families or None,
        compute=compute(compute_resources),
        databases=access(attached_databases),
        egress=egress(egress_policy),
    )


def group_spec(
    id: str,
    database_access: AccessLike,
    compute_resources: ComputeLike,
    tools: ToolList | None,
    population_config: str | os.PathLike[str] | None,
    sandboxes: Sequence[InitialSandbox | dict[str, Any]] | None,
    overcommit: float | None,
    egress_policy: EgressLike = None,
    placement: str | None = None,
) -> GroupSpec:
    """Validates a group's configuration and reads the tool files and the
    population config it names. Raises BadRequestError naming the field or
    file at fault."""
    validate_id("group", id)
    if placement not in (None, "spread", "pack"):
        raise BadRequestError(f'placement {placement!r}: want "spread" or "pack"')
    files, families = read_tools([os.fspath(t) for t in tools or []])
    population = None
    if population_config:
        try:
            with open(population_config, encoding="utf-8") as f:
                population = f.read()
        except OSError as e:
            raise BadRequestError(f"population config: {e}") from e
    specs = []
    for sb in sandboxes or []:
        if not isinstance(sb, InitialSandbox):
            try:
                sb = InitialSandbox.model_validate(sb)
            except ValidationError as e:
                raise BadRequestError(f"initial sandbox: {e}") from e
        specs.append(sandbox_spec(sb.id, sb.tools, sb.compute_resources, sb.attached_databases, sb.egress))
    return GroupSpec(
        id=id,
        tools=files or None,
        families=families or None,
        compute=compute(compute_resources) or ComputeResources(),
        database_access=access(database_access),
        population_config=population,
        sandboxes=specs or None,
        overcommit=overcommit,
        egress=egress(egress_policy),
        placement=placement,
    )
