"""The pending answer to an action batch (the Go SDK's sdk/future.go).

A Future settles on the first of: the batch's answer, the server's
no-responders status (no executor took the batch), an event whose kind
loses batches, or a status check saying the sandbox cannot answer; see
docs/subjects.md#detecting-a-gone-sandbox.
"""

from __future__ import annotations

import asyncio
import json
from typing import Callable

import nats.errors
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from pydantic import ValidationError

from .. import subjects
from ..errors import (
    ClosedError,
    InternalError,
    NotFoundError,
    PausedError,
    SandboxGoneError,
    SandoxError,
    TimeoutError,
    UnavailableError,
    from_wire,
)
from ..models import BatchResult, Observation
from .conn import Conn

FIRST_STATUS_CHECK = 1.0
"""Seconds after sending before the first status check; then doubling."""
MAX_STATUS_CHECK = 10.0
"""The longest interval between two status checks."""
STATUS_CHECK_TIMEOUT = 5.0
"""Bounds one status check."""


class Future:
    """The pending answer to an action batch sent with send_actions(async_=True).

    wait() blocks for it; poll() checks without waiting; close() gives it
    up. The answer, once in, is kept: wait() returns it again. Concurrent
    waiters are served one at a time. It belongs to the event loop it was
    made on.
    """

    def __init__(self, conn: Conn, sandbox_id: str, batch_id: str, on_settle: Callable[[Future], None]) -> None:
        self._conn = conn
        self.sandbox_id = sandbox_id
        self.batch_id = batch_id
        """Identifies the batch; its observations are recorded under
        sandox.obs.<sandbox>.<batch id>."""
        self._on_settle = on_settle
        self._replies: Subscription | None = None
        self._events: Subscription | None = None
        self._reply_task: asyncio.Task | None = None
        self._event_task: asyncio.Task | None = None
        self._lock = asyncio.Lock()
        self._done = False
        self._obs: list[Observation] = []
        self._err: SandoxError | None = None
        self._sent = 0.0
        self._next_check = 0.0
        self._interval = FIRST_STATUS_CHECK

    async def _open(self, payload: bytes, stop_on_error: bool) -> None:
        """Subscribes to the reply subject and the sandbox's events, then
        publishes the batch: neither the answer nor an event that loses the
        batch can be missed."""
        nc = self._conn.nc
        reply = subjects.observations(self.sandbox_id, self.batch_id)
        try:
            self._replies = await nc.subscribe(reply)
            self._events = await nc.subscribe(subjects.sandbox_events(self.sandbox_id))
            await nc.publish(
                subjects.actions(self.sandbox_id),
                payload,
                reply=reply,
                headers={
                    subjects.HEADER_BATCH_ID: self.batch_id,
                    subjects.HEADER_STOP_ON_ERROR: "true" if stop_on_error else "false",
                    **(self._conn.caller.batch_headers(self.batch_id, payload) if self._conn.caller else {}),
                },
            )
        except nats.errors.Error as e:
            await self._release()
            raise UnavailableError(f"send actions to sandbox {self.sandbox_id}: {e!r}") from e
        loop = asyncio.get_running_loop()
        self._sent = loop.time()
        self._next_check = self._sent + FIRST_STATUS_CHECK

    def done(self) -> bool:
        """Reports whether the future is settled: its answer arrived, the
        sandbox was found gone, or close() was called."""
        return self._done

    async def wait(self, timeout: float | None = None) -> list[Observation]:
        """Waits until the observations arrive (one per action, in order)
        and returns them.

        Raises SandboxGoneError or NotFoundError when the sandbox will not
        answer, the batch's own error when the batch was refused as a whole
        (BadRequestError, ResourceExhaustedError, ...), ClosedError after
        close(), and TimeoutError when nothing settles it within timeout
        seconds (default: the group's action timeout). After a timeout the
        batch may still finish, and wait() can be called again.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout or self._conn.opts.action_timeout)
        async with self._lock:
            while not self._done:
                now = loop.time()
                if now >= deadline:
                    await self._timed_out()
                    break
                self._arm()
                assert self._reply_task is not None and self._event_task is not None
                wake = min(deadline, self._next_check) - now
                done, _ = await asyncio.wait(
                    {self._reply_task, self._event_task},
                    timeout=max(0.0, wake),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if self._reply_task in done:
                    await self._take_reply()
                elif self._event_task in done:
                    await self._take_event()
                elif loop.time() >= self._next_check and loop.time() < deadline:
                    await self._check_status()
            return self._result()

    async def poll(self) -> tuple[list[Observation], bool]:
        """Returns (observations, done) without waiting for the answer.
        Raises as wait() does once the future is settled with an error."""
        async with self._lock:
            if not self._done:
                self._arm()
                await asyncio.sleep(0)  # let arrived messages reach the tasks
                while not self._done and self._reply_task is not None and self._reply_task.done():
                    await self._take_reply()
                while not self._done and self._event_task is not None and self._event_task.done():
                    await self._take_event()
                    if not self._done:
                        self._arm()
                        await asyncio.sleep(0)
            if not self._done:
                return [], False
            return self._result(), True

    async def close(self) -> None:
        """Gives the future up: its subscriptions are released, and wait()
        and poll() raise ClosedError from then on, unless the answer had
        arrived. The batch itself still runs in the sandbox. Idempotent."""
        await self._settle([], ClosedError(f"sandbox {self.sandbox_id}: batch {self.batch_id}: closed"))

    def _result(self) -> list[Observation]:
        if self._err is not None:
            raise self._err
        return self._obs

    def _arm(self) -> None:
        """Makes sure a task waits for the next message of each subscription."""
        if self._reply_task is None and self._replies is not None:
            self._reply_task = asyncio.ensure_future(self._replies.next_msg(timeout=None))
            self._reply_task.add_done_callback(_retrieve)
        if self._event_task is None and self._events is not None:
            self._event_task = asyncio.ensure_future(self._events.next_msg(timeout=None))
            self._event_task.add_done_callback(_retrieve)

    async def _take_reply(self) -> None:
        task, self._reply_task = self._reply_task, None
        assert task is not None
        try:
            msg = task.result()
        except (nats.errors.Error, asyncio.CancelledError) as e:
            await self._settle([], UnavailableError(f"sandbox {self.sandbox_id}: waiting for observations: {e!r}"))
            return
        await self._settle_reply(msg)

    async def _take_event(self) -> None:
        task, self._event_task = self._event_task, None
        assert task is not None
        try:
            msg = task.result()
        except (nats.errors.Error, asyncio.CancelledError) as e:
            await self._settle([], UnavailableError(f"sandbox {self.sandbox_id}: waiting for events: {e!r}"))
            return
        await self._on_event(msg)

    async def _settle_reply(self, msg: Msg) -> None:
        """Settles with the batch's answer, or, for the server's
        no-responders status, with why the sandbox does not answer."""
        if not msg.data and msg.headers and msg.headers.get("Status") == "503":
            err = await self._gone_error(no_responders=True)
            if err is None:
                err = SandboxGoneError(
                    f"sandbox {self.sandbox_id}: no executor serves {subjects.actions(self.sandbox_id)}"
                )
            await self._settle([], err)
            return
        try:
            res = BatchResult.model_validate_json(msg.data)
        except ValidationError as e:
            await self._settle([], InternalError(f"decode observations of sandbox {self.sandbox_id}: {e}"))
            return
        if res.error is not None:
            await self._settle(res.observations, from_wire(res.error, f"sandbox {self.sandbox_id}"))
            return
        await self._settle(res.observations, None)

    async def _on_event(self, msg: Msg) -> None:
        """Settles the future as lost when the event's kind says an
        unanswered batch will not be answered. The executor answers on the
        same server before the orchestrator can see it gone, so an answer
        sent before the loss has already reached the reply subscription and
        is taken first."""
        try:
            ev = json.loads(msg.data)
        except ValueError:
            return
        if not isinstance(ev, dict) or ev.get("kind") not in subjects.LOSES_BATCHES:
            return
        if self._replies is not None and (
            (self._reply_task is not None and self._reply_task.done()) or self._replies.pending_msgs > 0
        ):
            self._arm()
            assert self._reply_task is not None
            await asyncio.wait({self._reply_task}, timeout=STATUS_CHECK_TIMEOUT)
            if self._reply_task.done():
                await self._take_reply()
                return
        why = ev.get("reason") or ev.get("message") or ""
        await self._settle(
            [],
            SandboxGoneError(
                f"sandbox {self.sandbox_id}: {ev['kind']} ({why}) while the batch ran; its observations are lost"
            ),
        )

    async def _check_status(self) -> None:
        err = await self._gone_error()
        if err is not None:
            await self._settle([], err)
            return
        self._interval = min(2 * self._interval, MAX_STATUS_CHECK)
        self._next_check = asyncio.get_running_loop().time() + self._interval

    async def _timed_out(self) -> None:
        err = await self._gone_error()
        if err is not None:
            await self._settle([], err)
            return
        waited = asyncio.get_running_loop().time() - self._sent
        raise TimeoutError(f"sandbox {self.sandbox_id}: no observations after {waited:.3f}s")

    async def _gone_error(self, no_responders: bool = False) -> SandoxError | None:
        """Asks the orchestrator whether the sandbox can still answer: says
        why not, or None when it may (or no orchestrator answers). A paused
        sandbox answers a batch it had taken after its resume; one that
        no executor took (no_responders) is PausedError."""
        try:
            st = await self._conn.sandbox_status(self.sandbox_id, STATUS_CHECK_TIMEOUT)
        except NotFoundError as e:
            return NotFoundError(f"sandbox {self.sandbox_id}: {e.message} (it was ended or never created)", e.code)
        except SandoxError:
            return None
        if st.state == "paused":
            if no_responders:
                return PausedError(f"sandbox {self.sandbox_id} is paused: resume it to send actions", "paused")
            return None
        if st.state != "running":
            return SandboxGoneError(f"sandbox {self.sandbox_id} is {st.state}: {st.reason or ''}")
        return None

    async def _settle(self, obs: list[Observation], err: SandoxError | None) -> None:
        """Records the outcome once and releases the subscriptions."""
        if self._done:
            return
        self._done = True
        self._obs, self._err = list(obs), err
        await self._release()
        self._on_settle(self)

    async def _release(self) -> None:
        for task in (self._reply_task, self._event_task):
            if task is not None and not task.done():
                task.cancel()
        self._reply_task = self._event_task = None
        for sub in (self._replies, self._events):
            if sub is not None:
                try:
                    await sub.unsubscribe()
                except nats.errors.Error:
                    pass
        self._replies = self._events = None


def _retrieve(task: asyncio.Task) -> None:
    """Marks the outcome of a waiting task as seen: one cancelled while the
    connection closes ends with ConnectionClosedError, which nobody reads."""
    if not task.cancelled():
        task.exception()
