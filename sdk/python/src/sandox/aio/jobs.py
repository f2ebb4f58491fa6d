"""Background jobs of a sandbox, asyncio-native (the Go SDK's sdk/jobs.go
and sdk/joboutput.go; docs/jobs.md).

    from sandox.aio.jobs import start_job

    job = await start_job(sandbox, "make test", id="test-1")
    last = 0
    async for ev in job.output():          # from the start
        last = ev.seq
        if ev.exit is None:
            print(ev.stream, ev.data)
    async for ev in job.output(after=last):  # resume after a disconnect
        ...
    exit = await job.wait()

Start, list, signal and kill are actions (terminal_tools.*_job); output and
wait read the SANDOX_JOBS stream, so they need no answer from the sandbox.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import nats.errors
from pydantic import TypeAdapter, ValidationError

from ..errors import InternalError
from ..errors import TimeoutError as SandoxTimeoutError
from ..models import JobExit, JobInfo, JobOutput
from ._records import RecordHandle, call_tool, unsubscribe

if TYPE_CHECKING:
    from .sandbox import Sandbox

JOB_STREAM = "SANDOX_JOBS"
"""The stream that keeps every job's records (schemas.JobStream)."""

_job_list = TypeAdapter(list[JobInfo])


def job_subject(sandbox_id: str, job_id: str, kind: str) -> str:
    """The subject of a job's records of kind "start", "out" or "exit"
    (schemas.JobSubject)."""
    return f"sandbox.{sandbox_id}.jobs.{job_id}.{kind}"


@dataclass
class JobEvent:
    """One record of a job: a chunk of output or, last, the exit."""

    seq: int
    """The record's sequence in SANDOX_JOBS: output(after=seq) resumes after it."""
    stream: str = ""
    """"stdout" or "stderr" for a chunk."""
    offset: int = 0
    """The chunk's first byte's position in its stream."""
    data: bytes = b""
    exit: JobExit | None = None
    """How the job ended; set on the last event only."""
    truncated: bool = False
    """The sandbox spent its stream budget: stream and offset say where the
    recorded output stops; only the exit follows."""


async def _call(sandbox: Sandbox, tool: str, args: dict[str, Any], timeout: float | None) -> Any:
    """Runs terminal_tools.<tool> (call_tool)."""
    return await call_tool(sandbox, "terminal_tools." + tool, args, timeout)


async def start_job(
    sandbox: Sandbox,
    command: str,
    *,
    id: str | None = None,
    dir: str | None = None,
    notify: str | None = None,
    webhook: str | None = None,
    timeout: float | None = None,
) -> Job:
    """Starts command (bash -c) as a job in the sandbox and returns once it
    runs and its start is recorded, without waiting for it. An id in use
    raises AlreadyExistsError; a bad id or notify name BadRequestError; a
    webhook URL the operator does not allow AccessDeniedError (the control
    plane POSTs the exit there, docs/jobs.md)."""
    args: dict[str, Any] = {"command": command}
    for k, v in (("job_id", id), ("dir", dir), ("notify", notify), ("webhook", webhook)):
        if v:
            args[k] = v
    ret = await _call(sandbox, "start_job", args, timeout)
    try:
        info = JobInfo.model_validate(ret)
    except ValidationError as e:
        raise InternalError(f"start_job: {e}") from e
    return Job(sandbox, info.job_id, info)


async def list_jobs(sandbox: Sandbox, timeout: float | None = None) -> list[JobInfo]:
    """The sandbox's jobs, running or ended, newest first."""
    ret = await _call(sandbox, "list_jobs", {}, timeout)
    return _job_list.validate_python(ret or [])


class Job(RecordHandle[JobInfo]):
    """A job of a sandbox, started by this client or another."""

    _stream = JOB_STREAM
    _what = "job"
    _subject = staticmethod(job_subject)

    info: JobInfo | None
    """The job as start_job reported it, when this handle started it."""

    def __init__(self, sandbox: Sandbox, id: str, info: JobInfo | None = None) -> None:
        super().__init__(sandbox, id, info)

    async def signal(self, sig: str, timeout: float | None = None) -> None:
        """Sends sig ("TERM", "INT", "KILL", …) to every process of the job."""
        await _call(self.sandbox, "signal_job", {"job_id": self.id, "signal": sig}, timeout)

    async def kill(self, timeout: float | None = None) -> JobInfo:
        """Kills the job's whole process tree and returns once it ended."""
        return JobInfo.model_validate(await _call(self.sandbox, "kill_job", {"job_id": self.id}, timeout))

    async def output(self, after: int = 0) -> AsyncIterator[JobEvent]:
        """Yields the job's records after stream sequence after (0 for all),
        in order, ending with the exit; it follows a running job as it
        writes. A chunk repeated by the sandbox is dropped by its offset.
        A job that never started raises NotFoundError."""
        await self._check_exists()
        sub = await self._follow(">", after)
        seen: dict[str, int] = {}
        try:
            while True:
                msg = await sub.next_msg(timeout=None)
                seq = msg.metadata.sequence.stream
                kind = msg.subject.rsplit(".", 1)[1]
                if kind == "exit":
                    yield JobEvent(seq=seq, exit=JobExit.model_validate_json(msg.data))
                    return
                if kind == "truncated":
                    cut = JobOutput.model_validate_json(msg.data)
                    yield JobEvent(seq=seq, stream=cut.stream, offset=cut.offset, truncated=True)
                    continue
                if kind != "out":
                    continue
                out = JobOutput.model_validate_json(msg.data)
                data, offset = base64.b64decode(out.data), out.offset
                want = seen.get(out.stream)
                if want is not None:
                    if offset + len(data) <= want:
                        continue
                    if offset < want:
                        data, offset = data[want - offset :], want
                seen[out.stream] = offset + len(data)
                yield JobEvent(seq=seq, stream=out.stream, offset=offset, data=data)
        finally:
            await unsubscribe(sub)

    async def wait(self, timeout: float | None = None) -> JobExit:
        """Waits until the job ended and returns its exit, read from
        SANDOX_JOBS (at once for a job that ended long ago). A job that
        never started raises NotFoundError."""
        await self._check_exists()
        sub = await self._follow("exit", 0)
        try:
            msg = await sub.next_msg(timeout=timeout)
        except nats.errors.TimeoutError as e:
            raise SandoxTimeoutError(f"job {self.id}: no exit within {timeout}s") from e
        finally:
            await unsubscribe(sub)
        try:
            return JobExit.model_validate_json(msg.data)
        except ValidationError as e:
            raise InternalError(f"job {self.id}: exit: {e}") from e


__all__ = ["JOB_STREAM", "Job", "JobEvent", "job_subject", "list_jobs", "start_job"]
