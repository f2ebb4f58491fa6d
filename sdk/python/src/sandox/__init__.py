"""sandox: sandboxes for AI agents, from Python.

    from sandox import SandboxGroup, ComputeResources, DatabaseAccess

    group = SandboxGroup(
        database_access=DatabaseAccess([]),
        compute_resources=ComputeResources(cpu="1", memory="512MiB"),
        tools=["filesystem_tools.py", "terminal_tools.py", "my_tools.py"],
        initial_database_population_config="population.yml",
    )
    group.start_sandbox_group()
    sandbox = group.create_sandbox(id="sb-1")
    sandbox.start()
    observations = sandbox.send_actions(actions)
    future = sandbox.send_actions(actions, async_=True)   # or: await ...
    observations = future.result()
    sandbox.end()
    group.end_sandbox_group()

sandox.aio is the asyncio-native client this API wraps. docs/python.md is
the guide; docs/subjects.md the protocol both follow.
"""

from .config import InitialSandbox
from .errors import (
    AccessDeniedError,
    AlreadyExistsError,
    BadRequestError,
    ClosedError,
    PausedError,
    ConflictError,
    InternalError,
    NotFoundError,
    ResourceExhaustedError,
    SandboxGoneError,
    SandoxError,
    TimeoutError,
    UnavailableError,
    UnsupportedError,
)
from .models import (
    Action,
    ActionCall,
    Actions,
    ComputeResources,
    DatabaseAccess,
    DatabaseGrant,
    Egress,
    LimitHit,
    Observation,
    SandboxStatus,
    SandboxUsage,
    ToolDescription,
)
from .sync import ActionFuture, Sandbox, SandboxGroup
from .toolformats import ToolNames, model_tool_name

__all__ = [
    "AccessDeniedError",
    "Action",
    "ActionCall",
    "ActionFuture",
    "Actions",
    "AlreadyExistsError",
    "BadRequestError",
    "ClosedError",
    "PausedError",
    "ComputeResources",
    "ConflictError",
    "DatabaseAccess",
    "DatabaseGrant",
    "Egress",
    "InitialSandbox",
    "InternalError",
    "LimitHit",
    "NotFoundError",
    "Observation",
    "ResourceExhaustedError",
    "Sandbox",
    "SandboxGoneError",
    "SandboxGroup",
    "SandboxStatus",
    "SandboxUsage",
    "SandoxError",
    "TimeoutError",
    "ToolDescription",
    "ToolNames",
    "UnavailableError",
    "UnsupportedError",
    "model_tool_name",
]
