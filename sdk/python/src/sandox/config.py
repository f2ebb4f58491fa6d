"""A group's configuration and the specs the SDK sends for it (the Go
SDK's GroupConfig, InitialSandbox and SandboxOptions, sdk/group.go)."""

from __future__ import annotations

import ipaddress
import math
import os
import re
import urllib.parse
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import BadRequestError
from .models import CheckpointPolicy, ComputeResources, DatabaseAccess, DatabaseGrant, Egress, GroupSpec, PoolSpec, SandboxSpec
from .toolfiles import ToolEntry, read_tools

# Group and sandbox ids (schemas.ValidateID in Go): one subject token.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
# A database namespace (schemas.DatabaseAccess.Validate in Go).
_NAMESPACE = _ID

ToolList = Sequence[ToolEntry]
"""A tools list: families' names, tool files' paths, functions of tool modules."""
Seconds = Union[float, int, timedelta]
"""A lifetime: seconds, or a timedelta."""
ComputeLike = Union[ComputeResources, dict[str, Any], None]
AccessLike = Union[DatabaseAccess, Sequence[Union[DatabaseGrant, dict[str, Any]]], None]
EgressLike = Union[Egress, dict[str, Any], None]
CheckpointsLike = Union[CheckpointPolicy, dict[str, Any], None]


class InitialSandbox(BaseModel):
    """A sandbox listed in the group config: start_sandbox_group creates and
    starts it. What is left empty takes the group's default; tools are
    added to the group's."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    id: str
    tools: list[Any] = Field(default_factory=list)
    """Families' names, tool files' paths and functions, as a group's tools."""
    compute_resources: ComputeResources | None = None
    attached_databases: DatabaseAccess | None = None
    egress: Egress | None = None
    ttl: Seconds | None = None
    """Ends the sandbox this long after its creation (seconds or a timedelta)."""
    idle_timeout: Seconds | None = None
    """Ends the running sandbox after this long without an action batch."""


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
    if value is None:
        return None
    if isinstance(value, DatabaseAccess):
        a = value
    else:
        try:
            a = DatabaseAccess.model_validate(
                [g.model_dump() if isinstance(g, DatabaseGrant) else g for g in value]
            )
        except (TypeError, ValidationError) as e:
            raise BadRequestError(f"database access: {e}") from e
    for g in a.root:
        if not _NAMESPACE.match(g.namespace):
            raise BadRequestError(
                f"namespace {g.namespace!r} of {g.database}: want 1-63 letters, digits, '-' or '_', "
                "starting with a letter or digit"
            )
    return a


def lifetime(name: str, value: Seconds | None) -> float | None:
    """Returns a lifetime setting (a TTL or an idle timeout) as the wire's
    seconds, None for no limit (None or 0). Raises BadRequestError, naming
    the setting, for a negative, infinite or non-numeric value."""
    if value is None:
        return None
    if isinstance(value, timedelta):
        secs = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = float(value)
    else:
        raise BadRequestError(f"{name} {value!r}: want seconds (a number) or a timedelta")
    if math.isnan(secs) or math.isinf(secs) or secs < 0:
        raise BadRequestError(f"{name} {value!r}: want 0 (no limit) or more seconds")
    return secs or None


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
    check_package_index(e)
    return e


def check_package_index(e: Egress) -> None:
    """Checks an egress policy's package_index as schemas.Egress.Validate
    does: an http(s) URL with a host, not outside the sandbox under none, or
    the absolute path (or file:// URL) of a wheel directory."""
    index = e.package_index
    if not index:
        return
    u = urllib.parse.urlsplit(index)
    if u.scheme in ("http", "https"):
        if not u.netloc:
            raise BadRequestError(f"egress package_index {index!r}: the URL has no host")
        host = u.hostname or ""
        loopback = host == "localhost"
        try:
            loopback = loopback or ipaddress.ip_address(host).is_loopback
        except ValueError:
            pass
        if e.policy == "none" and not loopback:
            raise BadRequestError(
                f"egress none: package_index {index!r} cannot be reached without a network "
                f"(use the allowlist policy listing {host})"
            )
    elif u.scheme not in ("", "file") or not index.removeprefix("file://").startswith("/"):
        raise BadRequestError(
            f"egress package_index {index!r}: want an http(s) URL or the absolute path of a wheel directory"
        )


def tool_entries(tools: ToolList | None) -> list[ToolEntry]:
    """Returns a tools list as a list; a lone string or path is refused
    (it would be read as a list of characters)."""
    if tools is None:
        return []
    if isinstance(tools, (str, bytes, os.PathLike)) or callable(tools):
        raise BadRequestError(f"tools {tools!r}: want a list, e.g. [{tools!r}]")
    return list(tools)


def sandbox_spec(
    id: str,
    tools: ToolList | None,
    compute_resources: ComputeLike,
    attached_databases: AccessLike,
    egress_policy: EgressLike = None,
    ttl: Seconds | None = None,
    idle_timeout: Seconds | None = None,
) -> SandboxSpec:
    """Validates a sandbox's settings and reads its tool files. Raises
    BadRequestError naming the sandbox and the setting at fault."""
    validate_id("sandbox", id)
    try:
        files, families = read_tools(tool_entries(tools))
        return SandboxSpec(
            id=id,
            tools=files or None,
            families=families or None,
            compute=compute(compute_resources),
            databases=access(attached_databases),
            egress=egress(egress_policy),
            ttl_seconds=lifetime("ttl", ttl),
            idle_timeout_seconds=lifetime("idle timeout", idle_timeout),
        )
    except BadRequestError as e:
        raise BadRequestError(f"sandbox {id}: {e.message}") from e


def group_spec(
    id: str,
    database_access: AccessLike,
    compute_resources: ComputeLike,
    tools: ToolList | None,
    population_config: str | os.PathLike[str] | None,
    sandboxes: Sequence[InitialSandbox | dict[str, Any]] | None,
    overcommit: float | None,
    egress_policy: EgressLike = None,
    pool: PoolSpec | dict[str, Any] | None = None,
    placement: str | None = None,
    ttl: Seconds | None = None,
    keep_database_data: bool = False,
    checkpoints: CheckpointsLike = None,
) -> GroupSpec:
    """Validates a group's configuration and reads the tool files and the
    population config it names. Raises BadRequestError naming the field or
    file at fault."""
    validate_id("group", id)
    if placement not in (None, "spread", "pack"):
        raise BadRequestError(f'placement {placement!r}: want "spread" or "pack"')
    if not isinstance(keep_database_data, bool):
        raise BadRequestError(f"keep_database_data {keep_database_data!r}: want True or False")
    group_ttl = lifetime("group ttl", ttl)
    policy = checkpoint_policy(checkpoints)
    files, families = read_tools(tool_entries(tools))
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
        specs.append(
            sandbox_spec(sb.id, sb.tools, sb.compute_resources, sb.attached_databases, sb.egress, sb.ttl, sb.idle_timeout)
        )
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
        pool=pool_spec(pool),
        placement=placement,
        ttl_seconds=group_ttl,
        keep_database_data=keep_database_data or None,
        checkpoints=policy,
    )


def pool_spec(pool: PoolSpec | dict[str, Any] | None) -> PoolSpec | None:
    """Validates a group's warm pool ({"size": N, "idle_shrink_seconds": S});
    None is no pool. Raises BadRequestError."""
    if pool is None or isinstance(pool, PoolSpec):
        return pool
    try:
        return PoolSpec.model_validate(pool)
    except ValidationError as e:
        raise BadRequestError(f"pool: {e}") from e


# The number of automatic checkpoints kept when a policy's keep is 0
# (schemas.DefaultAutoKeep in Go).
DEFAULT_AUTO_KEEP = 10


def checkpoint_policy(value: CheckpointsLike) -> CheckpointPolicy | None:
    """Validates a group's automatic checkpoints ({"auto": True, "keep": N})
    as the Go SDK's GroupConfig.Checkpoints: keep is 0 (the default) or
    more. None is no automatic checkpoints. Raises BadRequestError."""
    if value is None:
        return None
    if isinstance(value, CheckpointPolicy):
        p = value
    else:
        if isinstance(value, dict) and isinstance(value.get("keep"), bool):
            # pydantic would take True for 1.
            raise BadRequestError(f"checkpoints.keep {value['keep']!r}: want 0 (the default, {DEFAULT_AUTO_KEEP}) or more")
        try:
            p = CheckpointPolicy.model_validate(value)
        except ValidationError as e:
            raise BadRequestError(f"checkpoints: {e}") from e
    if p.auto is not None and not isinstance(p.auto, bool):
        raise BadRequestError(f"checkpoints.auto {p.auto!r}: want True or False")
    if p.keep is not None and (isinstance(p.keep, bool) or not isinstance(p.keep, int) or p.keep < 0):
        raise BadRequestError(f"checkpoints.keep {p.keep!r}: want 0 (the default, {DEFAULT_AUTO_KEEP}) or more")
    return p
