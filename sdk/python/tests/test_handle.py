"""The handles' shared parts (sandox._handle, sandox.aio._records): the
synchronous reading of records closes the stream's reader when the caller
stops, and a handle shows and names itself as before."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sandox import aio
from sandox._handle import RecordHandle
from sandox.aio import jobs as aiojobs
from sandox.aio import watch as aiowatch
from sandox.jobs import Job
from sandox.sync import SandboxGroup
from sandox.watch import Watch


class _Reader:
    """An async generator of n records that notes when it was closed."""

    def __init__(self, n: int, fail_at: int = -1) -> None:
        self.n, self.fail_at, self.closed = n, fail_at, False

    async def records(self) -> AsyncIterator[int]:
        try:
            for i in range(self.n):
                if i == self.fail_at:
                    raise ValueError(f"record {i}")
                yield i
        finally:
            self.closed = True


def test_records_yields_every_record_then_closes() -> None:
    r = _Reader(5)
    assert list(RecordHandle._records(r.records())) == [0, 1, 2, 3, 4]
    assert r.closed


def test_records_closes_the_reader_when_the_caller_stops() -> None:
    r = _Reader(100)
    it = RecordHandle._records(r.records())
    for i in it:
        if i == 2:
            break
    assert not r.closed, "a generator left by break closes when closed or collected"
    it.close()
    assert r.closed


def test_records_raises_what_the_reader_raises() -> None:
    r = _Reader(5, fail_at=3)
    got: list[int] = []
    with pytest.raises(ValueError, match="record 3"):
        for i in RecordHandle._records(r.records()):
            got.append(i)
    assert got == [0, 1, 2]
    assert r.closed


def test_handles_show_and_name_themselves() -> None:
    group = SandboxGroup(id="g-handle")
    sb = group.attach("sb-1")
    job, watch = Job(sb, "j1"), Watch(sb, "w1")
    assert (repr(job), job.id, job.info) == ("Job(id='j1', sandbox='sb-1')", "j1", None)
    assert (repr(watch), watch.id, watch.info) == ("Watch(id='w1', sandbox='sb-1')", "w1", None)

    asb = aio.SandboxGroup(id="g-handle").attach("sb-2")
    assert repr(aiojobs.Job(asb, "j2")) == "Job(id='j2', sandbox='sb-2')"
    assert repr(aiowatch.Watch(asb, "w2")) == "Watch(id='w2', sandbox='sb-2')"
    assert aiojobs.Job._subject("sb-2", "j2", "exit") == "sandbox.sb-2.jobs.j2.exit"
    assert aiowatch.Watch._subject("sb-2", "w2", "start") == "sandbox.sb-2.watch.w2.start"
