"""The event loop thread that runs the synchronous API on the asyncio one."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """Returns the SDK's event loop, started on a daemon thread at first use
    and shared by every synchronous group of the process."""
    global _loop
    with _lock:
        if _loop is None:
            lp = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(lp)
                lp.call_soon(ready.set)
                lp.run_forever()

            threading.Thread(target=run, name="sandox-loop", daemon=True).start()
            ready.wait()
            _loop = lp
        return _loop


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedules coro on the SDK's loop and returns at once."""
    return asyncio.run_coroutine_threadsafe(coro, loop())


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Runs coro on the SDK's loop and blocks until it is done. Refuses to
    run on the loop's own thread, where it would wait for itself."""
    lp = loop()
    try:
        if asyncio.get_running_loop() is lp:
            coro.close()
            raise RuntimeError("sandox: a synchronous call on the SDK's own event loop; use sandox.aio")
    except RuntimeError as e:
        if "sandox" in str(e):
            raise
    return submit(coro).result()
