"""File watches from the asyncio and synchronous clients against the real
system: a client that disconnects mid-stream resumes from the last sequence
it saw and gets every event once (docs/watch.md)."""

from __future__ import annotations

import pytest

from sandox import NotFoundError, aio
from sandox.aio.watch import Watch, list_watches, start_watch


async def test_watch_events_resume_after_a_disconnect() -> None:
    files = 12
    async with aio.SandboxGroup(id="py-watch", tools=["filesystem_tools"]) as creator:
        await creator.start_sandbox_group()
        try:
            sb = await creator.create_sandbox(id="py-watch-sb")
            await sb.start()

            first = aio.SandboxGroup(id="py-watch")
            w = await start_watch(first.attach(sb.id), ".", patterns=["**/*.txt"], id="py-w")
            assert w.info is not None and w.info.running
            writes = [
                {"tool": "filesystem_tools.write_file", "args": {"path": f"d{i % 3}/f{i:02d}.txt", "content": "x"}}
                for i in range(files)
            ] + [{"tool": "filesystem_tools.write_file", "args": {"path": "skip.log", "content": "x"}}]
            await sb.send_actions(writes)

            got: list[int] = []
            paths: set[str] = set()
            last = 0
            async for ev in w.events():
                assert ev.stop is None
                assert ev.seq > last
                last = ev.seq
                assert ev.event is not None and ev.event.n == len(got) + 1, "an event lost or repeated"
                got.append(ev.event.n)
                paths.add(ev.event.path or "")
                if len(got) == 5:
                    break
            await first.close()  # mid-stream: the watch goes on

            second = aio.SandboxGroup(id="py-watch")
            info = await Watch(second.attach(sb.id), "py-w").stop()
            assert not info.running
            stop = None
            async for ev in Watch(second.attach(sb.id), "py-w").events(after=last):
                assert ev.seq > last
                last = ev.seq
                if ev.stop is not None:
                    stop = ev.stop
                    continue
                assert ev.event is not None and ev.event.n == len(got) + 1, "an event lost or repeated"
                got.append(ev.event.n)
                paths.add(ev.event.path or "")
            assert stop is not None and stop.events == len(got)
            assert paths == {f"d{i % 3}/f{i:02d}.txt" for i in range(files)}
            assert [x.watch_id for x in await list_watches(second.attach(sb.id))] == ["py-w"]
            with pytest.raises(NotFoundError):
                async for _ in Watch(second.attach(sb.id), "never").events():
                    pass
            await second.close()
        finally:
            await creator.end_sandbox_group()


def test_watch_from_the_synchronous_api() -> None:
    from sandox import SandboxGroup
    from sandox.watch import start_watch as sync_start_watch

    group = SandboxGroup(id="py-watch-sync", tools=["filesystem_tools"])
    group.start_sandbox_group()
    try:
        sb = group.create_sandbox(id="py-watch-sync-sb")
        sb.start()
        w = sync_start_watch(sb, ".", id="sync-w")
        sb.send_actions([{"tool": "filesystem_tools.write_file", "args": {"path": "a.txt", "content": "x"}}])
        w.stop()
        events = list(w.events())
        assert any(e.event is not None and e.event.path == "a.txt" for e in events)
        assert events[-1].stop is not None
    finally:
        group.end_sandbox_group()
        group.close()
