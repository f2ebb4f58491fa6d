"""The asyncio-native sandox client, for frameworks that run an event loop.

    from sandox.aio import SandboxGroup

    group = SandboxGroup(tools=["filesystem_tools.py", "my_tools.py"])
    await group.start_sandbox_group()
    sandbox = await group.create_sandbox(id="sb-1")
    await sandbox.start()
    observations = await sandbox.send_actions(actions)
    future = await sandbox.send_actions(actions, async_=True)
    observations = await future.wait()
    await sandbox.end()
    await group.end_sandbox_group()

The synchronous API in sandox wraps this one.
"""

from .conn import Options
from .future import Future
from .group import SandboxGroup
from .sandbox import Sandbox

__all__ = ["Future", "Options", "Sandbox", "SandboxGroup"]
