"""Background jobs of a sandbox, synchronous (sandox.aio.jobs on the SDK's
event loop; docs/jobs.md).

    from sandox.jobs import start_job

    job = start_job(sandbox, "make test", id="test-1")
    last = 0
    for ev in job.output():             # from the start
        last = ev.seq
    for ev in job.output(after=last):   # resume after a disconnect
        ...
    exit = job.wait(timeout=60)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from . import _loop
from ._handle import RecordHandle
from .aio import jobs as aiojobs
from .aio.jobs import JOB_STREAM, JobEvent, job_subject
from .models import JobExit, JobInfo

if TYPE_CHECKING:
    from .sync import Sandbox


def start_job(
    sandbox: Sandbox,
    command: str,
    *,
    id: str | None = None,
    dir: str | None = None,
    notify: str | None = None,
    webhook: str | None = None,
    timeout: float | None = None,
) -> Job:
    """Starts command (bash -c) as a job and returns once it runs, without
    waiting for it (aio.jobs.start_job)."""
    inner = _loop.run(
        aiojobs.start_job(sandbox._inner, command, id=id, dir=dir, notify=notify, webhook=webhook, timeout=timeout)
    )
    return Job(sandbox, inner.id, inner.info)


def list_jobs(sandbox: Sandbox, timeout: float | None = None) -> list[JobInfo]:
    """The sandbox's jobs, running or ended, newest first."""
    return _loop.run(aiojobs.list_jobs(sandbox._inner, timeout))


class Job(RecordHandle[aiojobs.Job]):
    """A job of a sandbox (sandox.aio.jobs.Job, synchronous)."""

    def __init__(self, sandbox: Sandbox, id: str, info: JobInfo | None = None) -> None:
        super().__init__(aiojobs.Job(sandbox._inner, id, info))

    @property
    def info(self) -> JobInfo | None:
        """The job as start_job reported it, when this handle started it."""
        return self._inner.info

    def output(self, after: int = 0) -> Iterator[JobEvent]:
        """Yields the job's records after stream sequence after, ending with
        the exit (aio.jobs.Job.output)."""
        yield from self._records(self._inner.output(after))

    def wait(self, timeout: float | None = None) -> JobExit:
        """Waits until the job ended and returns its exit."""
        return _loop.run(self._inner.wait(timeout))

    def signal(self, sig: str, timeout: float | None = None) -> None:
        """Sends sig ("TERM", "INT", "KILL", …) to every process of the job."""
        _loop.run(self._inner.signal(sig, timeout))

    def kill(self, timeout: float | None = None) -> JobInfo:
        """Kills the job's whole process tree and returns once it ended."""
        return _loop.run(self._inner.kill(timeout))


__all__ = ["JOB_STREAM", "Job", "JobEvent", "job_subject", "list_jobs", "start_job"]
