"""Background jobs from the asyncio client against the real system: a
client that disconnects mid-stream resumes from the last sequence it saw and
gets every byte once (docs/jobs.md)."""

from __future__ import annotations

import pytest

from sandox import NotFoundError, aio
from sandox.aio.jobs import Job, list_jobs, start_job


async def test_job_output_resumes_after_a_disconnect() -> None:
    lines = 40
    async with aio.SandboxGroup(id="py-jobs", tools=["terminal_tools"]) as creator:
        await creator.start_sandbox_group()
        try:
            sb = await creator.create_sandbox(id="py-jobs-sb")
            await sb.start()

            first = aio.SandboxGroup(id="py-jobs")
            job = await start_job(
                first.attach(sb.id),
                f'for i in $(seq 1 {lines}); do echo "line $i"; echo "err $i" >&2; sleep 0.05; done; exit 4',
                id="py-resume",
            )
            assert job.info is not None and job.info.running
            got = {"stdout": b"", "stderr": b""}
            last = 0
            async for ev in job.output():
                assert ev.exit is None, "the job ended before the client disconnected"
                assert ev.seq > last
                last = ev.seq
                assert ev.offset == len(got[ev.stream]), "a byte lost or repeated"
                got[ev.stream] += ev.data
                if got["stdout"].count(b"\n") >= 10:
                    break
            await first.close()  # mid-stream: the job goes on

            second = aio.SandboxGroup(id="py-jobs")
            exit = None
            async for ev in Job(second.attach(sb.id), "py-resume").output(after=last):
                assert ev.seq > last
                last = ev.seq
                if ev.exit is not None:
                    exit = ev.exit
                    continue
                assert ev.offset == len(got[ev.stream]), "a byte lost or repeated"
                got[ev.stream] += ev.data
            assert got["stdout"] == "".join(f"line {i}\n" for i in range(1, lines + 1)).encode()
            assert got["stderr"] == "".join(f"err {i}\n" for i in range(1, lines + 1)).encode()
            assert exit is not None and exit.exit_code == 4

            again = await Job(second.attach(sb.id), "py-resume").wait(timeout=30)
            assert again.exit_code == 4
            assert [j.job_id for j in await list_jobs(second.attach(sb.id))] == ["py-resume"]
            with pytest.raises(NotFoundError):
                await Job(second.attach(sb.id), "never").wait(timeout=5)
            await second.close()
        finally:
            await creator.end_sandbox_group()


def test_jobs_from_the_synchronous_api() -> None:
    from sandox import SandboxGroup
    from sandox.jobs import Job as SyncJob
    from sandox.jobs import start_job as sync_start_job

    group = SandboxGroup(id="py-jobs-sync", tools=["terminal_tools"])
    group.start_sandbox_group()
    try:
        sb = group.create_sandbox(id="py-jobs-sync-sb")
        sb.start()
        job = sync_start_job(sb, "echo one; sleep 0.5; echo two >&2; exit 2", id="sync-1")
        assert job.wait(timeout=60).exit_code == 2
        events = list(SyncJob(sb, "sync-1").output())
        assert b"".join(e.data for e in events if e.stream == "stdout") == b"one\n"
        assert b"".join(e.data for e in events if e.stream == "stderr") == b"two\n"
        assert events[-1].exit is not None and events[-1].exit.exit_code == 2
        long = sync_start_job(sb, "sleep 300 & sleep 301")
        info = long.kill()
        assert info.exit is not None and info.exit.signal == "SIGKILL"
    finally:
        group.end_sandbox_group()
        group.close()
